"""Offered load of a job set, and releases scaled to a target load.

offered load = sum_i g_i d_i / (G x (last release - first release)), the GPU-seconds the jobs
bring per GPU-second of the arrival window. d_i is the job's best-case run time
n_i x alpha~min_i: alpha~min is the per-iteration time of the Heavy-Edge placement on the empty
cluster (`placement.estimates.alpha_min_estimate`, the value model assignment derives iterations
from, so for a trace job d_i is its trace duration up to the rounding of n_i), and alpha itself
for a fixed-alpha job. Jobs larger than the cluster are left out (the simulator drops them).

Scaling every release by a factor c scales the span by c and the load by 1/c, so a target load is
met exactly by c = load / target.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import numpy as np

from ..core import Cluster, ConfigError, Job
from ..placement.estimates import alpha_min_estimate
from ..timing import TimingModel
from .schema import MAX_SECONDS


def best_durations(jobs: Sequence[Job], cluster: Cluster, timing: TimingModel) -> np.ndarray:
    """d_i = n_i x alpha~min_i per job (module doc); NaN for jobs larger than the cluster."""
    durations = np.full(len(jobs), np.nan)
    for k, job in enumerate(jobs):
        if job.gpus <= cluster.total_gpus:
            durations[k] = job.iterations * alpha_min_estimate(job.plan, cluster, timing)
    return durations


def offered_load(jobs: Sequence[Job], durations: np.ndarray, total_gpus: int) -> float:
    """sum g_i d_i / (G x release span) over the jobs that fit; NaN when the span is 0."""
    fits = ~np.isnan(durations)
    if not fits.any():
        return float("nan")
    releases = np.array([job.release for job in jobs])[fits]
    span = float(releases.max() - releases.min())
    work = float(np.sum(np.array([job.gpus for job in jobs])[fits] * durations[fits]))
    return work / (total_gpus * span) if span > 0 else float("nan")


def scale_to_load(jobs: Sequence[Job], durations: np.ndarray, total_gpus: int,
                  target: float) -> tuple[list[Job], float]:
    """The jobs with every release multiplied by load / target, and that factor (module doc).

    Refuses, naming workload.target_load, when the load cannot be set by scaling releases."""
    if not (math.isfinite(target) and target > 0):
        raise ConfigError(f"workload.target_load must be a number > 0, got {target!r}")
    load = offered_load(jobs, durations, total_gpus)
    if not math.isfinite(load) or load <= 0:
        raise ConfigError(f"workload.target_load={target:g} cannot be reached by scaling releases: the simulated "
                          f"jobs {'bring no work' if load == 0 else 'are all released at one instant'}")
    factor = load / target
    require_exact_releases(max(job.release for job in jobs) * factor, "workload.target_load", target)
    return [replace(job, release=job.release * factor) for job in jobs], factor


def require_exact_releases(latest: float, key: str, value: float) -> None:
    """Refuse, naming the key whose `value` gave them, releases that reach beyond MAX_SECONDS (the latest
    at `latest`), where float64 keeps event times exact no longer."""
    if not latest <= MAX_SECONDS:
        raise ConfigError(f"{key}={value:g} stretches the releases to {latest:.3g} s, beyond {MAX_SECONDS:.0e} s "
                          f"where float64 keeps event times exact; raise {key}")
