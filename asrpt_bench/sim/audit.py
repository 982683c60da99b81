"""Schedule validator run after every simulation: a broken schedule raises, it is never reported.

Checks: every job completed exactly once; no start before release or eligibility; one
contiguous interval on a fixed set of distinct GPUs matching the recorded placement
(non-preemption); C_i = S_i + n_i * alpha_i with alpha recomputed from the placement; no GPU held by
two jobs at once and no server over capacity at any instant (sweep over time).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Hashable, Sequence

from ..core import Cluster, Job, Placement
from ..timing import DEFAULT_TIMING, TimingModel
from .records import JobRecord

RELATIVE_TOLERANCE = 1e-9


class ScheduleAuditError(AssertionError):
    """The simulated schedule violates the model; the message names the job(s) and the rule."""


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= RELATIVE_TOLERANCE * max(1.0, abs(a), abs(b))


def _check_jobs_once(records: Sequence[JobRecord], jobs: Sequence[Job]) -> dict[Hashable, Job]:
    by_id = {job.job_id: job for job in jobs}
    counts: dict[Hashable, int] = defaultdict(int)
    for record in records:
        if record.job_id not in by_id:
            raise ScheduleAuditError(f"job {record.job_id!r} has a record but is not in the workload")
        counts[record.job_id] += 1
    for job_id in by_id:
        if counts[job_id] != 1:
            raise ScheduleAuditError(f"job {job_id!r} completed {counts[job_id]} times, expected exactly once")
    return by_id


def _check_job(record: JobRecord, job: Job, cluster: Cluster, timing: TimingModel) -> None:
    name = f"job {record.job_id!r}"
    if record.start < record.release or record.release != job.release:
        raise ScheduleAuditError(f"{name} starts at {record.start} before its release {job.release}")
    if record.start < record.eligible or record.eligible < record.release:
        raise ScheduleAuditError(f"{name} starts at {record.start}, eligible at {record.eligible}, "
                                 f"released at {record.release}")
    if record.gpus != job.gpus or len(record.gpu_ids) != job.gpus or len(set(record.gpu_ids)) != job.gpus:
        raise ScheduleAuditError(f"{name} needs {job.gpus} distinct GPUs, holds {record.gpu_ids}")
    per = cluster.gpus_per_server
    if len(record.placement) != job.gpus or any(
            not 0 <= gpu < cluster.total_gpus or gpu // per != h for gpu, h in zip(record.gpu_ids, record.placement)):
        raise ScheduleAuditError(f"{name}: GPUs {record.gpu_ids} do not match placement {record.placement}")
    placement = Placement(record.placement)
    if record.servers_used != placement.servers_used:
        raise ScheduleAuditError(f"{name}: servers_used {record.servers_used} but the placement uses "
                                 f"{placement.servers_used}")
    alpha = timing.alpha(job.plan, placement, cluster)
    if not _close(alpha, record.alpha):
        raise ScheduleAuditError(f"{name}: recorded alpha {record.alpha} but its placement gives {alpha}")
    if record.iterations != job.iterations:
        raise ScheduleAuditError(f"{name}: recorded {record.iterations} iterations, true {job.iterations}")
    expected_end = record.start + job.iterations * alpha
    if not _close(record.end, expected_end):
        raise ScheduleAuditError(f"{name} ends at {record.end}, expected S + n * alpha = {expected_end}")


def _check_occupancy(records: Sequence[JobRecord], cluster: Cluster) -> None:
    """Sweep over time: at each instant releases come before starts, so back-to-back use is fine."""
    events = []
    for record in records:
        if record.end > record.start:
            events.append((record.end, 0, record))
            events.append((record.start, 1, record))
    events.sort(key=lambda e: (e[0], e[1]))
    holder: dict[int, JobRecord] = {}
    used = [0] * cluster.servers
    for time, kind, record in events:
        if kind == 0:
            for gpu, h in zip(record.gpu_ids, record.placement):
                del holder[gpu]
                used[h] -= 1
            continue
        for gpu, h in zip(record.gpu_ids, record.placement):
            other = holder.get(gpu)
            if other is not None:
                raise ScheduleAuditError(f"GPU {gpu} is held by jobs {other.job_id!r} and {record.job_id!r} "
                                         f"at time {time}")
            holder[gpu] = record
            used[h] += 1
            if used[h] > cluster.gpus_per_server:
                raise ScheduleAuditError(f"server {h} runs {used[h]} replicas at time {time}, capacity "
                                         f"{cluster.gpus_per_server}")


def audit_schedule(records: Sequence[JobRecord], cluster: Cluster, jobs: Sequence[Job],
                   timing: TimingModel = DEFAULT_TIMING) -> None:
    """Raise ScheduleAuditError naming the first violated rule; return None for a valid schedule."""
    by_id = _check_jobs_once(records, jobs)
    for record in records:
        _check_job(record, by_id[record.job_id], cluster, timing)
    _check_occupancy(records, cluster)
