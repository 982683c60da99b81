"""Simulate one scheduler on a workload and score the schedule: the metrics of design.md 4, the
lower bound on OPT and the Theorem 1 symbols, all from one valid alpha_min per job."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any, Hashable

import numpy as np
import pandas as pd

from ..build import build_placer
from ..config import RunConfig
from ..core import Cluster, ConfigError, Job
from ..placement.base import Placer
from ..schedulers import Scheduler
from ..sim import simulate
from ..sim.records import comm_heavy_labels
from ..theory.bound import theory_symbols
from ..theory.lower_bounds import alpha_min_for_jobs, lower_bound
from ..workloads.pipeline import Workload
from .base import asrpt_parameter, comm_heavy_threshold
from .users import fairness, user_table

JOB_COLUMNS = ["job_id", "release", "start", "end", "gpus", "model", "config", "servers_used", "alpha", "alpha_min",
               "alpha_max", "iterations", "predicted_iterations", "comm_ratio", "comm_heavy", "eligible",
               "first_start_delay_s", "wait_s", "service_s", "restore_s", "jct", "placement", "preemptions"]

OWNER_COLUMNS = ("user", "group", "partition")
"""Who a job belongs to, copied from the job table into jobs.parquet when the workload has them."""

VOLATILE = ("sim_wall_time_s",)
"""Scalars of a scheduler run that differ between identical runs (kept out of comparison.csv)."""


def safe_alpha_min(config: RunConfig, jobs: list[Job], cluster: Cluster,
                   cache: dict[Hashable, float] | None = None) -> np.ndarray:
    """Per job, a value <= its true alpha_min from `theory.alpha_min_source` (never the scheduler's
    Heavy-Edge estimate, which can exceed it). `cache` (job_id -> value) is filled and reused, so the
    schedulers of one `compare` run share the computation."""
    cache = {} if cache is None else cache
    missing = [job for job in jobs if job.job_id not in cache]
    if missing:
        values = alpha_min_for_jobs(missing, cluster, config.timing, config.theory.alpha_min_source, config.solver)
        cache.update(zip((job.job_id for job in missing), values.tolist()))
    return np.array([cache[job.job_id] for job in jobs], dtype=float)


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
    they are relative to were rescaled or reassigned, a job the log never ran was added, or a job has none."""
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


def with_owners(jobs: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """`jobs` with the job table's user, group and partition (those the table has a value in), by job id."""
    present = [c for c in OWNER_COLUMNS if c in table.columns and table[c].notna().any()]
    if not present:
        return jobs
    owners = table[["job_id", *present]].astype({"job_id": str}).drop_duplicates("job_id")
    return jobs.merge(owners, on="job_id", how="left", validate="one_to_one")


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
                  alpha_min_cache: dict[Hashable, float] | None = None,
                  placer: Placer | None = None) -> SchedulerRun:
    """Simulate one scheduler on the workload; scalars of design.md 4 and the per-job table.

    `lower_bound` and the Theorem 1 symbols use the same valid alpha_min (`safe_alpha_min`);
    jobs.parquet keeps the scheduler's own estimate in `alpha_min`. `placer` defaults to the placement
    group's."""
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
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    frame = result.frame()
    frame["comm_heavy"] = comm_heavy_labels(frame, comm_heavy_threshold(config))
    metrics = dict(result.metrics)
    source = config.theory.alpha_min_source
    by_id = {job.job_id: job for job in workload.jobs}
    kept = [by_id[job_id] for job_id in frame["job_id"]] if len(frame) else []  # frame row order
    alpha_min = safe_alpha_min(config, kept, workload.cluster, alpha_min_cache)
    lower = float("nan")
    if kept:
        lower = lower_bound(release=[job.release for job in kept], gpus=[job.gpus for job in kept],
                            iterations=[job.iterations for job in kept], alpha_min=alpha_min,
                            G=workload.cluster.total_gpus, alpha_min_source=source).value
    scalars = {
        "scheduler": result.scheduler,
        "placer": result.placer,
        **metrics,
        "lower_bound": lower,
        "ratio_to_lower_bound": metrics["sum_completion"] / lower if lower > 0 else float("nan"),
        **(theorem1_scalars(config, frame, alpha_min, workload.cluster.total_gpus, scheduler, source) if kept
           else undefined_theorem1("no job was simulated")),
        "sim_wall_time_s": time.perf_counter() - started,
        "warnings": " | ".join(str(w.message) for w in caught),
    }
    jobs = frame[[c for c in JOB_COLUMNS if c in frame.columns]].copy()
    jobs["job_id"] = jobs["job_id"].astype(str)
    jobs = with_owners(jobs, workload.table)
    segments = result.segments_frame().assign(job_id=lambda f: f["job_id"].astype(str)) if result.segments else None
    users = user_table(jobs, segments)
    scalars.update(fairness(users))
    return SchedulerRun(scalars, jobs, users, segments)
