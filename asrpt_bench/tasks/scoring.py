"""Simulate one scheduler on a workload and score the schedule: the metrics of design.md 4, the
lower bound on OPT and the Theorem 1 symbols, all from one valid alpha_min per job."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Hashable, Sequence

import numpy as np
import pandas as pd

from ..build import build_placer
from ..config import RunConfig
from ..core import Cluster, ConfigError, Job
from ..placement.base import Placer
from ..schedulers import Scheduler
from ..sim import simulate
from ..sim.run import POOLED_REPLAY
from ..sim.records import comm_heavy_labels, record_column, records_frame, segments_frame
from ..theory.bound import theory_symbols
from ..theory.lower_bounds import alpha_min_for_jobs, lower_bound, typed_lower_bound
from ..workloads.pipeline import Workload
from .base import asrpt_parameter, comm_heavy_threshold
from .users import fairness, user_table

JOB_COLUMNS = ["job_id", "release", "start", "end", "gpus", "model", "config", "servers_used", "alpha", "alpha_min",
               "alpha_max", "iterations", "predicted_iterations", "comm_ratio", "comm_heavy", "eligible",
               "first_start_delay_s", "wait_s", "service_s", "restore_s", "jct", "placement", "pool", "preemptions"]

OWNER_COLUMNS = ("user", "group", "partition")
"""Who a job belongs to, copied from the job table into jobs.parquet when the workload has them."""

VOLATILE = ("sim_wall_time_s",)
"""Scalars of a scheduler run that differ between identical runs (kept out of comparison.csv)."""


def safe_alpha_min(config: RunConfig, jobs: list[Job], cluster: Cluster,
                   cache: dict[Hashable, float] | None = None) -> np.ndarray:
    """Per job, a value <= its true alpha_min from `theory.alpha_min_source` (never the scheduler's
    Heavy-Edge estimate, which can exceed it). `cache` (job_id -> value) is filled and reused, so the
    schedulers of one `compare` run share the computation; without it the values are computed for `jobs`
    alone (the same values)."""
    if cache is None:  # nothing to share: no job_id -> value dict of every job
        return np.array(alpha_min_for_jobs(jobs, cluster, config.timing, config.theory.alpha_min_source,
                                           config.solver), dtype=float)
    missing = [job for job in jobs if job.job_id not in cache]
    if missing:
        values = alpha_min_for_jobs(missing, cluster, config.timing, config.theory.alpha_min_source, config.solver)
        cache.update(zip((job.job_id for job in missing), values.tolist()))
    return np.array([cache[job.job_id] for job in jobs], dtype=float)


def schedule_lower_bound(kept: list[Job], cluster: Cluster, alpha_min: np.ndarray, source: str) -> float:
    """The lower bound on sum C_i of the kept jobs (theory.lower_bounds; typed on a cluster given as pools,
    where alpha_min is a jobs x pools matrix)."""
    columns = dict(release=[job.release for job in kept], gpus=[job.gpus for job in kept],
                   iterations=[job.iterations for job in kept])
    if cluster.pooled:
        return typed_lower_bound(**columns, alpha_min=alpha_min, sizes=[pool.total_gpus for pool in cluster.pool_list],
                                 alpha_min_source=source).value
    return lower_bound(**columns, alpha_min=alpha_min, G=cluster.total_gpus, alpha_min_source=source).value


def undefined_theorem1(reason: str) -> dict[str, Any]:
    nan = float("nan")
    return {"rho": nan, "rho_bar": nan, "epsilon_bar": nan, "g_max": nan, "theorem1_bound": nan, "theory_note": reason}


def theorem1_scalars(config: RunConfig, frame: pd.DataFrame, alpha_min: pd.Series | np.ndarray, G: int,
                     scheduler: Scheduler, alpha_min_source: str) -> dict[str, Any]:
    """Theorem 1 symbols of one schedule (paper-notes 7.2, 7.4) with the given valid alpha_min per row of
    `frame`; an oracle scheduler used the true iterations, so its epsilon-bar is 0. NaN (and the reason
    in `theory_note`) where the bound is undefined, e.g. g_max = G."""
    exact = frame[["gpus", "iterations", "predicted_iterations", "alpha_max"]].assign(
        alpha_min=np.asarray(alpha_min, dtype=float))
    if getattr(scheduler, "oracle", False):
        exact["predicted_iterations"] = exact["iterations"]
    tau = float(getattr(scheduler, "tau", asrpt_parameter(config, "tau")))
    try:
        symbols = theory_symbols(exact, G, tau, config.theory.rho_bar_definition, config.theory.eps_bar_definition,
                                 alpha_min_source=alpha_min_source)
    except ConfigError as error:
        return undefined_theorem1(str(error))
    return {"rho": symbols["rho"], "rho_bar": symbols["rho_bar"], "epsilon_bar": symbols["eps_bar"],
            "g_max": symbols["g_max"], "theorem1_bound": symbols["theorem1_bound"],
            "theory_note": f"{symbols['note']}; alpha_min: {alpha_min_source}"}


RECORDED = "recorded"


def replay_refusal(config: RunConfig, workload: Workload) -> str | None:
    """Why the log's own start times cannot be replayed on the run's jobs (None: they can): the releases
    they are relative to were rescaled or reassigned, a job the log never ran was added, a job has none, or
    the cluster is given as pools (the log does not say which GPU type a job ran on)."""
    if workload.cluster.pooled:
        return f"{POOLED_REPLAY} ({workload.cluster.describe()})"
    wl = config.workload.params
    if getattr(wl, "target_load", None) is not None:
        return "workload.target_load rescales the releases the log's start times are relative to"
    if getattr(wl, "inject_jobs", 0):
        return "workload.inject_jobs adds jobs the log never ran"
    if getattr(wl, "single_gpu_share", None) is not None and getattr(wl, "resample_releases", None) == "slots":
        return "workload.single_gpu_share with resample_releases=slots gives jobs the releases of others"
    missing = [job.job_id for job in workload.jobs if job.recorded_wait is None]
    if missing:
        return (f"{len(missing):,} of the {len(workload.jobs):,} simulated jobs have no recorded start (first: "
                f"{missing[0]!r}); only a job log's jobs (workload=slurm, swf, helios, acme, or a table with "
                "recorded_wait) have one")
    return None


def owner_table(table: pd.DataFrame) -> pd.DataFrame | None:
    """The job table's user, group and partition (those it has a value in) by job id as a string, first row
    per id; None when it has none."""
    present = [c for c in OWNER_COLUMNS if c in table.columns and table[c].notna().any()]
    if not present:
        return None
    return table[["job_id", *present]].astype({"job_id": str}).drop_duplicates("job_id")


def with_owners(jobs: pd.DataFrame, owners: pd.DataFrame | None) -> pd.DataFrame:
    """`jobs` with the owner columns of `owners` (owner_table) appended, by job id (missing for a job it
    lacks): the frame a left merge gives, without the merge's copy of every column of `jobs`."""
    if owners is None:
        return jobs
    aligned = owners.set_index("job_id").reindex(jobs["job_id"])
    return jobs.assign(**{column: aligned[column].set_axis(jobs.index) for column in aligned.columns})


def owners_in_row_order(table: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame | None:
    """`jobs` with the table's owner columns taken as they are, when the table's rows are the jobs' rows (the
    same ids, as strings, in the same order, each once); None otherwise. It is the frame `with_owners` gives
    for these rows (a left merge on job_id), without building the owner table (a copy of the owner columns
    and a hash table of every id) or reindexing it."""
    present = [c for c in OWNER_COLUMNS if c in table.columns and table[c].notna().any()]
    if not present or len(table) != len(jobs):
        return None
    ids = jobs["job_id"]
    if not (table["job_id"].astype(str).array.equals(ids.array) and ids.is_unique):
        return None
    return jobs.assign(**{column: table[column].set_axis(jobs.index) for column in present})


def kept_jobs(jobs: list[Job], ids: Sequence[Hashable]) -> list[Job]:
    """The jobs with these ids, in the order of `ids` (a schedule's records: the simulated jobs in input
    order, the dropped ones left out). Matched in one walk when `ids` follow the order of `jobs`, as the event
    loops write them, else through a job_id -> job dict."""
    walk = iter(jobs)
    kept = []
    for job_id in ids:
        for job in walk:
            if job.job_id == job_id:
                kept.append(job)
                break
        else:
            by_id = {job.job_id: job for job in jobs}
            return [by_id[job_id] for job_id in ids]
    return kept


@dataclass
class SharedScoring:
    """What the schedulers of one run on one workload share, each computed once (a `compare` run scores
    eight schedules of the same jobs; the job table has every job of the trace): each job's valid alpha_min
    (job id -> value), the table's owners (owner_table) and the lower bound of each set of kept jobs
    (by their ids in order; the run's cluster and alpha_min source are fixed)."""

    alpha_min: dict[Hashable, float] = field(default_factory=dict)
    owners: pd.DataFrame | None = None
    owners_known: bool = False
    lower_bounds: dict[tuple, float] = field(default_factory=dict)

    def owners_of(self, table: pd.DataFrame) -> pd.DataFrame | None:
        if not self.owners_known:
            self.owners, self.owners_known = owner_table(table), True
        return self.owners

    def with_owners(self, jobs: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
        """`jobs` with the owner columns of the job table (`with_owners`), read straight from the table when
        its rows are the jobs' rows (`owners_in_row_order`), else through the shared owner table."""
        aligned = owners_in_row_order(table, jobs)
        return aligned if aligned is not None else with_owners(jobs, self.owners_of(table))

    def lower_bound(self, kept: list[Job], cluster: Cluster, alpha_min: np.ndarray, source: str) -> float:
        key = tuple(job.job_id for job in kept)
        if key not in self.lower_bounds:
            self.lower_bounds[key] = schedule_lower_bound(kept, cluster, alpha_min, source) if kept else float("nan")
        return self.lower_bounds[key]


@dataclass
class SchedulerRun:
    scalars: dict[str, Any]
    jobs: pd.DataFrame
    users: pd.DataFrame
    """Per-user metrics (tasks/users.py)."""
    segments: pd.DataFrame | None = None
    """The run segments of a preemptive scheduler (None for a non-preemptive one)."""


def run_scheduler(config: RunConfig, workload: Workload, predictions: dict[Hashable, float],
                  scheduler: Scheduler, progress: bool,
                  shared: SharedScoring | None = None,
                  placer: Placer | None = None) -> SchedulerRun:
    """Simulate one scheduler on the workload; scalars of design.md 4 and the per-job table.

    `lower_bound` and the Theorem 1 symbols use the same valid alpha_min (`safe_alpha_min`);
    jobs.parquet keeps the scheduler's own estimate in `alpha_min`. `shared` carries what the schedulers
    of one run on this workload share; `placer` defaults to the placement group's."""
    alpha_min_cache = None if shared is None else shared.alpha_min
    shared = SharedScoring() if shared is None else shared
    if getattr(scheduler, "replays_log", False):
        refusal = replay_refusal(config, workload)
        if refusal is not None:
            raise ConfigError(f"scheduler={scheduler.name} cannot replay the log: {refusal}")
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = simulate(workload.jobs, workload.cluster, scheduler, placer or build_placer(config),
                          predictions=predictions,
                          timing=workload.timing, drop_oversize=workload.drop_oversize, progress=progress,
                          preemption=config.preemption)
    del predictions  # a caller that passed them on without a name frees them here
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    # Only the columns jobs.parquet keeps, the records' numbers handed over to them (not copied), then the
    # records go: a replay of millions of jobs never holds the records, the whole per-job frame and its selection
    # at once, nor the numbers twice.
    frame = records_frame(result.records, [c for c in JOB_COLUMNS if c != "comm_heavy"], take=True)
    frame.insert(JOB_COLUMNS.index("comm_heavy"), "comm_heavy", comm_heavy_labels(frame, comm_heavy_threshold(config)))
    kept = kept_jobs(workload.jobs, record_column(result.records, "job_id")) if len(frame) else []  # frame row order
    metrics, segment_list = dict(result.metrics), result.segments
    scheduler_name, placer_name = result.scheduler, result.placer
    del result
    source = config.theory.alpha_min_source
    alpha_min = safe_alpha_min(config, kept, workload.cluster, alpha_min_cache)
    lower = shared.lower_bound(kept, workload.cluster, alpha_min, source)
    if not kept:
        theorem1 = undefined_theorem1("no job was simulated")
    elif workload.cluster.pooled:
        theorem1 = undefined_theorem1("Theorem 1 assumes one pool of identical GPUs; the cluster is given as pools "
                                      f"({workload.cluster.describe()})")
    else:
        theorem1 = theorem1_scalars(config, frame, alpha_min, workload.cluster.total_gpus, scheduler, source)
    del kept, alpha_min
    scalars = {
        "scheduler": scheduler_name,
        "placer": placer_name,
        **metrics,
        "lower_bound": lower,
        "ratio_to_lower_bound": metrics["sum_completion"] / lower if lower > 0 else float("nan"),
        **theorem1,
        "sim_wall_time_s": time.perf_counter() - started,
        "warnings": " | ".join(str(w.message) for w in caught),
    }
    jobs = frame  # its columns are JOB_COLUMNS, in that order
    jobs["job_id"] = jobs["job_id"].astype(str)
    jobs = shared.with_owners(jobs, workload.table)
    segments = segments_frame(segment_list).assign(job_id=lambda f: f["job_id"].astype(str)) if segment_list else None
    del segment_list
    users = user_table(jobs, segments)
    scalars.update(fairness(users))
    return SchedulerRun(scalars, jobs, users, segments)
