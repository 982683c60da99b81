"""Scalar metrics of one simulated schedule (design.md 4: summary.json keys)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..core import Cluster
from .records import JobRecord, record_column

GPU_CLASSES = (("1", 1, 1), ("2_4", 2, 4), ("5_8", 5, 8), ("9plus", 9, None))
"""GPU-count classes of the mean-wait metrics: (key suffix, lowest count, highest count or None)."""
DISPATCH_COUNTS = ("backfilled_starts", "reservation_violations")
WAITED_TOLERANCE = 1e-9
"""A job waited when its wait_s exceeds this share of its JCT (preemptive waits are JCT minus service
minus restore, exact only to rounding)."""


def _empty() -> dict[str, float | int]:
    nan = float("nan")
    metrics: dict[str, float | int] = {
        "num_jobs": 0, "total_jct": 0.0, "sum_completion": 0.0, "mean_jct": 0.0, "p95_jct": 0.0, "makespan": 0.0,
        "utilization": 0.0, "mean_wait": 0.0, "mean_first_start_delay": 0.0, "p50_jct": 0.0, "p99_jct": 0.0,
        "mean_slowdown": nan, "p99_slowdown": nan, "max_wait": 0.0, "max_first_start_delay": 0.0,
        "waited_share": nan, "busy_share": nan}
    metrics.update({f"mean_wait_gpus_{name}": nan for name, _, _ in GPU_CLASSES})
    return metrics


def busy_share(start: np.ndarray, end: np.ndarray, gpus: np.ndarray, first_release: float, last_release: float,
               total_gpus: int) -> float:
    """GPU-seconds held inside the release span [first release, last release] over G x its length: how
    busy the cluster was while jobs were still arriving (NaN when every job arrives at one instant).
    `start`, `end`, `gpus`: the intervals GPUs were held (jobs, or segments of a preemptive run)."""
    span = last_release - first_release
    if span <= 0:
        return float("nan")
    held = np.clip(end, first_release, last_release) - np.clip(start, first_release, last_release)
    return float(np.sum(gpus * held)) / (total_gpus * span)


def schedule_metrics(records: Sequence[JobRecord], cluster: Cluster, dropped: int = 0) -> dict[str, float | int]:
    """total_jct = sum(C_i - r_i), sum_completion = sum C_i, mean and p50/p95/p99 JCT, makespan (the last
    completion), utilization = busy GPU-seconds / (G * (makespan - first release)), the mean and
    maximum wait (`wait_s`: JCT - service - restore, every second a job held no GPUs, suspensions
    included) and first-start delay (start - release), the mean wait per GPU-count class
    (`mean_wait_gpus_1`, `_2_4`, `_5_8`, `_9plus`; NaN for an empty class), mean and p99 slowdown
    JCT / (n_i * alpha~min_i) over the jobs with a positive ideal duration (NaN if none), num_jobs and
    the dropped count; and the contention: `waited_share`, the share of jobs that waited at all, and
    `busy_share`, the GPU-seconds held over the release span (see busy_share). A preemptive run replaces
    utilization and busy_share by those of its segments (sim/preemptive.py)."""
    if not records:
        return {**_empty(), "dropped": dropped}
    release, start, end, wait, alpha_min = (np.asarray(record_column(records, name), dtype=float)
                                            for name in ("release", "start", "end", "wait_s", "alpha_min"))
    gpus = np.asarray(record_column(records, "gpus"), dtype=float)
    ideal = np.asarray(record_column(records, "iterations")) * alpha_min
    jct = end - release
    first_start_delay = start - release
    makespan = float(end.max())
    span = makespan - float(release.min())
    busy = float(np.sum(gpus * (end - start)))
    p50, p95, p99 = np.percentile(jct, [50, 95, 99])
    positive = ideal > 0
    slowdown = jct[positive] / ideal[positive]
    metrics: dict[str, float | int] = {
        "num_jobs": len(records),
        "dropped": dropped,
        "total_jct": float(jct.sum()),
        "sum_completion": float(end.sum()),
        "mean_jct": float(jct.mean()),
        "p50_jct": float(p50),
        "p95_jct": float(p95),
        "p99_jct": float(p99),
        "makespan": makespan,
        "utilization": busy / (cluster.total_gpus * span) if span > 0 else 0.0,
        "mean_wait": float(np.mean(wait)),
        "max_wait": float(wait.max()),
        "mean_first_start_delay": float(np.mean(first_start_delay)),
        "max_first_start_delay": float(first_start_delay.max()),
        "waited_share": float(np.mean(wait > WAITED_TOLERANCE * np.maximum(jct, 1.0))),
        "busy_share": busy_share(start, end, gpus, float(release.min()), float(release.max()), cluster.total_gpus),
        "mean_slowdown": float(slowdown.mean()) if len(slowdown) else float("nan"),
        "p99_slowdown": float(np.percentile(slowdown, 99)) if len(slowdown) else float("nan"),
    }
    for name, low, high in GPU_CLASSES:
        members = (gpus >= low) & (gpus <= (high if high is not None else np.inf))
        metrics[f"mean_wait_gpus_{name}"] = float(wait[members].mean()) if members.any() else float("nan")
    return metrics


def type_metrics(records: Sequence[JobRecord], cluster: Cluster, metrics: dict[str, float | int],
                 busy: dict[str, float] | None = None) -> dict[str, float | int]:
    """Per GPU type of a cluster given as pools (none on the one-pool shorthand): `busy_gpu_s_<type>`, the
    GPU-seconds jobs held on that type (`busy`, from a preemptive run's segments, else each record's gpus x
    (end - start)); `utilization_<type>`, that over the type's GPUs x (makespan - first release), as
    `utilization`; `jobs_<type>` and `mean_jct_<type>`, the jobs that finished on that type (in a
    preemptive run: their last segment's) and their mean JCT (NaN for none)."""
    if not cluster.pooled:
        return {}
    type_of = {pool.name: pool.type for pool in cluster.pool_list}
    gpus_of = {gpu_type: 0 for gpu_type in cluster.types}
    for pool in cluster.pool_list:
        gpus_of[pool.type] += pool.total_gpus
    if busy is None:
        busy = dict.fromkeys(cluster.types, 0.0)
        for record in records:
            busy[type_of[record.pool]] += record.gpus * (record.end - record.start)
    span = metrics["makespan"] - min((record.release for record in records), default=0.0)
    found: dict[str, float | int] = {}
    for gpu_type in cluster.types:
        jcts = [record.end - record.release for record in records if type_of[record.pool] == gpu_type]
        found[f"busy_gpu_s_{gpu_type}"] = float(busy[gpu_type])
        found[f"utilization_{gpu_type}"] = busy[gpu_type] / (gpus_of[gpu_type] * span) if span > 0 else 0.0
        found[f"jobs_{gpu_type}"] = len(jcts)
        found[f"mean_jct_{gpu_type}"] = float(np.mean(jcts)) if jcts else float("nan")
    return found


def preemption_counts(records: Sequence[JobRecord]) -> dict[str, float]:
    """How suspensions spread over the jobs of a preemptive run: the share of jobs suspended at least once
    (`preempted_share`), the mean, 99th percentile and largest number of suspensions of a job (NaN
    without jobs)."""
    counts = np.asarray(record_column(records, "preemptions"), dtype=float)
    if not len(counts):
        nan = float("nan")
        return {"preempted_share": nan, "mean_preemptions": nan, "p99_preemptions": nan, "max_preemptions": nan}
    return {"preempted_share": float(np.mean(counts > 0)), "mean_preemptions": float(counts.mean()),
            "p99_preemptions": float(np.percentile(counts, 99)), "max_preemptions": float(counts.max())}


def dispatch_counts(scheduler: Any) -> dict[str, float]:
    """The scheduler's `backfilled_starts` (jobs started while a job ahead of them in its queue stayed
    queued) and `reservation_violations` (jobs started after the first shadow time or reservation they
    were given; NaN where the rule makes none); NaN for a scheduler that does not count them."""
    counts = getattr(scheduler, "dispatch_counts", None)
    found = counts() if callable(counts) else {}
    return {key: float(found.get(key, float("nan"))) for key in DISPATCH_COUNTS}
