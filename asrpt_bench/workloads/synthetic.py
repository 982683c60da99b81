"""Synthetic workloads with recurring job groups, for sweeps the real traces cannot provide.

Jobs belong to recurring groups (templates) owned by users, so a predictor keyed on (group, user)
has something to learn. Each group has a GPU count and a typical duration drawn from a chosen
distribution; its jobs' durations scatter around it (lognormal with `within_group_sigma`).
The share of single-GPU jobs is exact (round(single_gpu_share * num_jobs)), which the paper's
single-GPU-percentage sweep needs. Arrivals are a Poisson process. All keys are prefixed `syn-`.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..rules import job_count
from .load import require_exact_releases
from .recurrence import SYNTHETIC_PREFIX
from .schema import validate_job_table
from .seeding import component_rng

DEFAULT_GPU_MIX: Mapping[int, float] = {2: 0.3, 4: 0.35, 8: 0.3, 16: 0.05}


def _lognormal(rng: np.random.Generator, size: int, median: float = 1200.0, sigma: float = 1.5) -> np.ndarray:
    return median * np.exp(sigma * rng.standard_normal(size))


def _exponential(rng: np.random.Generator, size: int, mean: float = 3600.0) -> np.ndarray:
    return rng.exponential(mean, size)


def _pareto(rng: np.random.Generator, size: int, scale: float = 300.0, shape: float = 1.2) -> np.ndarray:
    return scale * (1.0 + rng.pareto(shape, size))


DURATION_DISTRIBUTIONS: dict[str, Callable[..., np.ndarray]] = {
    "lognormal": _lognormal,
    "exponential": _exponential,
    "pareto": _pareto,
}


def synthetic_workload(num_jobs: int, seed: int = 0, *, arrival_rate: float = 1.0 / 60.0,
                       single_gpu_share: float = 0.8, gpu_mix: Mapping[int, float] | None = None,
                       duration_distribution: str = "lognormal", duration_params: Mapping[str, float] | None = None,
                       within_group_sigma: float = 0.25, num_groups: int = 200, num_users: int = 50,
                       popularity_exponent: float = 1.0) -> pd.DataFrame:
    """A job table of `num_jobs` jobs (durations, no models: see assign_models).

    arrival_rate: jobs per second (Poisson arrivals, first job at 0).
    single_gpu_share: exact share of 1-GPU jobs; the others draw GPU counts from `gpu_mix`
    ({gpus: weight}, default DEFAULT_GPU_MIX) through their group.
    duration_distribution / duration_params: a group's typical duration, one of
    DURATION_DISTRIBUTIONS (lognormal: median, sigma; exponential: mean; pareto: scale, shape).
    within_group_sigma: lognormal scatter of a job's duration around its group's.
    num_groups, num_users: recurring groups, and users owning them; group popularity is Zipf-like
    with `popularity_exponent` (0 = uniform).
    """
    _check(num_jobs, single_gpu_share, arrival_rate, num_groups, num_users, within_group_sigma,
           popularity_exponent, duration_distribution)
    mix = _normalise_mix(DEFAULT_GPU_MIX if gpu_mix is None else gpu_mix)
    rng = component_rng(seed, "synthetic_workload")
    single_jobs = int(round(single_gpu_share * num_jobs))
    single_groups, multi_groups = _split_groups(num_groups, single_jobs, num_jobs - single_jobs)

    gpu_values = np.array(sorted(mix), dtype=np.int64)
    weights = np.array([mix[g] for g in gpu_values], dtype=float)
    group_gpus = np.concatenate([np.ones(single_groups, dtype=np.int64),
                                 rng.choice(gpu_values, size=multi_groups, p=weights / weights.sum())])
    try:
        group_duration = DURATION_DISTRIBUTIONS[duration_distribution](
            rng, single_groups + multi_groups, **dict(duration_params or {}))
    except TypeError as error:
        raise ConfigError(f"workload.duration_params {dict(duration_params or {})} do not fit "
                          f"{duration_distribution!r}: {error}") from None
    group_user = rng.integers(num_users, size=single_groups + multi_groups)

    job_group = np.concatenate([
        _draw_groups(rng, 0, single_groups, single_jobs, popularity_exponent),
        _draw_groups(rng, single_groups, multi_groups, num_jobs - single_jobs, popularity_exponent),
    ])
    job_group = job_group[rng.permutation(num_jobs)]
    scatter = np.exp(within_group_sigma * rng.standard_normal(num_jobs))
    gaps = rng.exponential(1.0 / arrival_rate, num_jobs)
    release = np.concatenate([[0.0], np.cumsum(gaps[1:])])
    require_exact_releases(float(release[-1]), "workload.arrival_rate", arrival_rate)

    table = pd.DataFrame({
        "job_id": [f"{SYNTHETIC_PREFIX}{i:06d}" for i in range(num_jobs)],
        "release": release,
        "gpus": group_gpus[job_group],
        "duration": np.maximum(group_duration[job_group] * scatter, 1.0),
        "user": [f"{SYNTHETIC_PREFIX}u-{u}" for u in group_user[job_group]],
        "group": [f"{SYNTHETIC_PREFIX}g-{g}" for g in job_group],
    })
    validated = validate_job_table(table, "synthetic workload")
    validated.attrs.update({"source": "synthetic workload", "recurrence_keys": "synthetic"})
    return validated


def _split_groups(num_groups: int, single_jobs: int, multi_jobs: int) -> tuple[int, int]:
    """Groups for single- and multi-GPU jobs, in proportion to the jobs, at least one per used pool."""
    if single_jobs == 0:
        return 0, num_groups
    if multi_jobs == 0:
        return num_groups, 0
    single = int(round(num_groups * single_jobs / (single_jobs + multi_jobs)))
    single = min(max(single, 1), num_groups - 1)
    return single, num_groups - single


def _draw_groups(rng: np.random.Generator, first: int, count: int, jobs: int, exponent: float) -> np.ndarray:
    if jobs == 0:
        return np.empty(0, dtype=np.int64)
    popularity = 1.0 / np.arange(1, count + 1) ** exponent
    return first + rng.choice(count, size=jobs, p=popularity / popularity.sum())


def _check(num_jobs: int, share: float, rate: float, groups: int, users: int, sigma: float,
           exponent: float, distribution: str) -> None:
    checks = (
        ("num_jobs", job_count().accepts(num_jobs), num_jobs, job_count().describe()),
        ("single_gpu_share", 0.0 <= share <= 1.0, share, "in [0, 1]"),
        ("arrival_rate", rate > 0, rate, "> 0 (jobs per second)"),
        ("num_groups", isinstance(groups, (int, np.integer)) and groups >= 2, groups, "an integer >= 2"),
        ("num_users", isinstance(users, (int, np.integer)) and users >= 1, users, "a positive integer"),
        ("within_group_sigma", sigma >= 0, sigma, ">= 0"),
        ("popularity_exponent", exponent >= 0, exponent, ">= 0"),
    )
    for key, ok, value, expected in checks:
        if not ok:
            raise ConfigError(f"workload.{key} must be {expected}, got {value!r}")
    if distribution not in DURATION_DISTRIBUTIONS:
        raise ConfigError(f"workload.duration_distribution {distribution!r} unknown; "
                          f"known: {sorted(DURATION_DISTRIBUTIONS)}")


def _normalise_mix(mix: Mapping[int | str, float]) -> dict[int, float]:
    """{gpus: weight} with integer keys (config files may give them as strings)."""
    try:
        normal = {int(g): float(w) for g, w in mix.items()}
    except (TypeError, ValueError):
        normal = {}
    if not normal or any(g < 2 or w < 0 for g, w in normal.items()) or sum(normal.values()) <= 0:
        raise ConfigError(f"workload.gpu_mix must map GPU counts >= 2 to non-negative weights "
                          f"with a positive sum, got {dict(mix)}")
    return normal
