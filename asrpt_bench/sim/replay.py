"""The log's own schedule replayed (`scheduler=recorded`): the "as it happened" baseline of a job log.

Every job starts at release + its recorded wait (the log's start - submit) and runs its observed run time
(`duration`), so it ends when the log says it ended (a job without a duration, from a hand-made table, runs
n_i x alpha~min_i, its run time at its Heavy-Edge placement on the empty cluster, which for a log's job is
its observed run time up to the rounding of n_i). The log does not say where a job ran, so records carry
no placement (`placement` and `gpu_ids` empty, `servers_used` the
empty-cluster placement's). The replay is not checked against the simulated cluster's capacity, as a
schedule is: the cluster the log came from may have been larger or shaped otherwise. What it would take is
counted instead (`capacity_excess`): the instants at which the replay holds more GPUs than the cluster has,
the seconds it does, and its peak.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core import Cluster, ConfigError, Job
from ..placement.base import Placer
from ..schedulers.views import JobView, Scheduler
from .engine import EmptyClusterEstimate, PreparedRun, SimulationResult
from .metrics import dispatch_counts, schedule_metrics
from .records import JobRecord


def capacity_excess(records: Sequence[JobRecord], cluster: Cluster) -> dict[str, float | int]:
    """`over_capacity_instants`: event instants (starts and ends) after which more GPUs are held than the
    cluster has; `over_capacity_s`: seconds during which they are; `peak_gpus`: the most held at once. A job
    ending at t frees its GPUs before one starting at t takes them."""
    if not records:
        return {"over_capacity_instants": 0, "over_capacity_s": 0.0, "peak_gpus": 0}
    times = np.array([r.start for r in records] + [r.end for r in records])
    change = np.array([r.gpus for r in records] + [-r.gpus for r in records], dtype=np.int64)
    order = np.lexsort((change, times))  # at one instant, ends (negative changes) first
    times, held = times[order], np.cumsum(change[order])
    last_of_instant = np.append(times[1:] != times[:-1], True)
    instants, held = times[last_of_instant], held[last_of_instant]
    over = held > cluster.total_gpus
    durations = np.diff(instants, append=instants[-1])
    return {"over_capacity_instants": int(over.sum()), "over_capacity_s": float(durations[over].sum()),
            "peak_gpus": int(held.max())}


def simulate_replay(prepared: PreparedRun, cluster: Cluster, scheduler: Scheduler, placer: Placer) -> SimulationResult:
    """The replay of prepared jobs (nothing is placed or waited for)."""
    dropped = prepared.dropped
    records = replay_records(prepared.kept, prepared.take_views(), prepared.estimates)
    metrics = schedule_metrics(records, cluster, dropped=len(dropped))
    metrics.update(dispatch_counts(scheduler))
    metrics.update(capacity_excess(records, cluster))
    return SimulationResult(records, metrics, tuple(dropped), scheduler.name, placer.name)


def replay_records(kept: Sequence[Job], views: Sequence[JobView],
                   estimates: Sequence[EmptyClusterEstimate]) -> tuple[JobRecord, ...]:
    """One record per job, started at release + recorded_wait (module doc)."""
    records = []
    for job, view, estimate in zip(kept, views, estimates):
        alpha = estimate.alpha_min
        if job.recorded_wait is None:
            raise ConfigError(f"job {job.job_id!r} has no recorded start: scheduler=recorded replays a job log's own "
                              "start times (workload=slurm, swf, helios, acme, or a job table with recorded_wait)")
        start = job.release + job.recorded_wait
        run = job.duration if job.duration is not None else job.iterations * alpha
        records.append(JobRecord(
            job_id=job.job_id, release=job.release, eligible=job.release, start=start, end=start + run, gpus=job.gpus,
            model=job.model, config=job.config, servers_used=estimate.min_servers, alpha=alpha, alpha_min=alpha,
            alpha_max=estimate.alpha_max, iterations=job.iterations, predicted_iterations=view.predicted_iterations,
            comm_ratio=view.comm_ratio, placement=(), gpu_ids=(), preemptions=0, restore_s=0.0, service_s=run))
    return tuple(records)
