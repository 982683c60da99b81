"""Model assignment (paper-notes 9.2, section 10 items 21-23): traces carry durations, not models.

Per job group (recurring jobs share a model; a job without a group is its own group), from a
generator seeded by (seed, "assign"):
- the group's GPU demands are rounded to the nearest GPU count the zoo realises (log scale,
  ties to the smaller count), after capping at `max_gpus` if given;
- the group draws a model uniformly among those having a configuration for every rounded demand
  (1-GPU groups: the models that train on one GPU), else among all models (each then rounds to
  its own nearest count);
- each distinct demand of the group draws one of that model's configurations for the rounded
  count; the group's jobs of that demand share it, and their gpus become g(config);
- iterations n_i = max(1, round(duration_i / alpha~min)), alpha~min being the Heavy-Edge (or
  given placer) alpha on the empty cluster (placement.estimates.alpha_min_estimate).

Rows that already have model + config or alpha keep them (unless overwrite=True); rows with a
duration and no iterations get iterations from their alpha~min (fixed-alpha rows: from alpha).
Jobs larger than the cluster keep their size (the simulator drops or rejects them); their alpha~min
is taken on a cluster of the same server shape just large enough to hold them.
"""

from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import replace
from typing import Sequence

import numpy as np
import pandas as pd

from ..core import Cluster, ConfigError, TrainingPlan
from ..placement.base import Placer
from ..placement.estimates import alpha_min_estimate
from ..profiles import available_gpu_counts, build_plan, configurations, model_names
from ..profiles.zoo import DEFAULT_GPU_COUNTS, DEFAULT_GPU_MEMORY_GB
from ..timing import DEFAULT_TIMING, TimingModel
from .seeding import component_rng


def assign_models(table: pd.DataFrame, cluster: Cluster, seed: int, *, timing: TimingModel = DEFAULT_TIMING,
                  placer: Placer | None = None, models: Sequence[str] | None = None,
                  gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS, max_gpus: int | None = None,
                  gpu_memory_gb: float = DEFAULT_GPU_MEMORY_GB, overwrite: bool = False) -> pd.DataFrame:
    """A copy of the job table with model, config, gpus and iterations filled in (see module doc).

    models: zoo model names to draw from (default: the whole zoo).
    gpu_counts: GPU counts a configuration may have (default 1, 2, 4, 8, 16, 32).
    max_gpus: cap the trace's GPU demand before rounding (e.g. the cluster size).
    The trace's own GPU demand is kept in column `trace_gpus`, each job's alpha~min in `alpha_min_estimate`.
    """
    catalogue = _catalogue(models, gpu_counts, max_gpus, gpu_memory_gb)
    result = table.copy()
    result.attrs.update(table.attrs)
    if "trace_gpus" not in result.columns:
        result["trace_gpus"] = result["gpus"].astype(np.int64)
    has_model = result["model"].notna() & result["config"].notna()
    has_alpha = result["alpha"].notna()
    to_assign = (~has_alpha & (overwrite | ~has_model)).to_numpy()
    if to_assign.any():
        demand = result.loc[to_assign, "trace_gpus"].to_numpy(dtype=np.int64)
        if max_gpus is not None:
            demand = np.minimum(demand, max_gpus)
        chosen = _choose(result.loc[to_assign], demand, catalogue, gpu_memory_gb, component_rng(seed, "assign"))
        result.loc[to_assign, "model"] = [m for m, _ in chosen]
        result.loc[to_assign, "config"] = [c for _, c in chosen]
        recompute = to_assign & result["duration"].notna().to_numpy()
        result.loc[recompute, "iterations"] = np.nan
    _fill_iterations(result, cluster, timing, placer, gpu_memory_gb)
    return result


def _catalogue(models: Sequence[str] | None, gpu_counts: Sequence[int], max_gpus: int | None,
               gpu_memory_gb: float) -> dict[str, tuple[int, ...]]:
    """model -> GPU counts it has a configuration for (among the allowed counts)."""
    if max_gpus is not None and (not isinstance(max_gpus, (int, np.integer)) or max_gpus < 1):
        raise ConfigError(f"assign.max_gpus must be a positive integer or null, got {max_gpus!r}")
    names = tuple(model_names() if models is None else models)
    known = set(model_names())
    unknown = [m for m in names if m not in known]
    if unknown or not names:
        raise ConfigError(f"assign.models: unknown model(s) {unknown or names}; known: {sorted(known)}")
    allowed = tuple(sorted(int(g) for g in gpu_counts if max_gpus is None or g <= max_gpus))
    if not allowed:
        raise ConfigError(f"assign.gpu_counts {list(gpu_counts)} has no count <= max_gpus={max_gpus}")
    catalogue = {m: available_gpu_counts(m, allowed, gpu_memory_gb) for m in names}
    catalogue = {m: counts for m, counts in catalogue.items() if counts}
    if not catalogue:
        raise ConfigError(f"no model among {list(names)} has a configuration for GPU counts {list(allowed)}")
    return catalogue


def nearest_count(demand: int, counts: Sequence[int]) -> int:
    """The count nearest to `demand` on a log scale; ties go to the smaller count."""
    return min(sorted(counts), key=lambda g: (Fraction(max(g, demand), min(g, demand)), g))


def _choose(rows: pd.DataFrame, demand: np.ndarray, catalogue: dict[str, tuple[int, ...]],
            gpu_memory_gb: float, rng: np.random.Generator) -> list[tuple[str, str]]:
    """(model, config) per row, drawn per group (sorted keys) and per distinct demand in a group."""
    group = rows["group"].astype(object).where(rows["group"].notna(), "job:" + rows["job_id"].astype(str))
    frame = pd.DataFrame({"group": group.to_numpy(dtype=object).astype(str), "demand": demand})
    all_counts = sorted({g for counts in catalogue.values() for g in counts})
    chosen: list[tuple[str, str] | None] = [None] * len(frame)
    for _, positions in sorted(frame.groupby("group", sort=False).indices.items()):
        demands = sorted(set(frame["demand"].to_numpy()[positions]))
        rounded = {d: nearest_count(d, all_counts) for d in demands}
        eligible = [m for m, counts in catalogue.items() if set(rounded.values()) <= set(counts)]
        model = (eligible or list(catalogue))[rng.integers(len(eligible or catalogue))]
        for d in demands:
            count = rounded[d] if model in eligible else nearest_count(d, catalogue[model])
            options = configurations(model, count, gpu_memory_gb)
            config = options[rng.integers(len(options))].name
            for position in positions[frame["demand"].to_numpy()[positions] == d]:
                chosen[position] = (model, config)
    return chosen  # type: ignore[return-value]


def _fill_iterations(table: pd.DataFrame, cluster: Cluster, timing: TimingModel, placer: Placer | None,
                     gpu_memory_gb: float) -> None:
    """iterations = max(1, round(duration / alpha~min)) where missing; gpus = g(config); alpha~min itself in
    column `alpha_min_estimate` (what a requested time limit is divided by: predictor=walltime)."""
    with_model = (table["model"].notna() & table["config"].notna() & table["alpha"].isna()).to_numpy()
    plans: dict[tuple[str, str], TrainingPlan] = {}
    alpha_min = np.full(len(table), np.nan)
    alpha_min[table["alpha"].notna().to_numpy()] = table["alpha"].dropna().to_numpy(dtype=float)
    for key, positions in table[with_model].groupby(["model", "config"], sort=True).indices.items():
        rows = np.flatnonzero(with_model)[positions]
        if key not in plans:
            plans[key] = _given_plan(table, int(rows[0]), gpu_memory_gb, timing)
        plan = plans[key]
        alpha_min[rows] = alpha_min_estimate(plan, _cluster_holding(plan, cluster), timing, placer)
        table.loc[table.index[rows], "gpus"] = plan.gpus
    need = (table["iterations"].isna() & table["duration"].notna()).to_numpy() & ~np.isnan(alpha_min)
    durations = table["duration"].to_numpy(dtype=float)
    iterations = table["iterations"].to_numpy(dtype=float, copy=True)
    iterations[need] = np.maximum(1.0, np.rint(durations[need] / alpha_min[need]))
    table["iterations"] = iterations
    table["alpha_min_estimate"] = alpha_min
    table["gpus"] = table["gpus"].astype(np.int64)


def _given_plan(table: pd.DataFrame, row: int, gpu_memory_gb: float, timing: TimingModel) -> TrainingPlan:
    """The plan of a row's own model+config; one that does not fit in GPU memory (or cannot be split into
    its stages) is refused naming the table, the row and the two columns."""
    model, config = table["model"].iloc[row], table["config"].iloc[row]
    try:
        return build_plan(model, config, gpu_memory_gb=gpu_memory_gb, timing=timing)
    except ConfigError as error:
        source = table.attrs.get("source", "the job table")
        raise ConfigError(f"{source}: row {row + 1} (line {row + 2}), columns 'model' and 'config': {error}") from None


def _cluster_holding(plan: TrainingPlan, cluster: Cluster) -> Cluster:
    """`cluster`, or one with the same server shape and just enough servers for `plan`."""
    if plan.gpus <= cluster.total_gpus:
        return cluster
    return replace(cluster, servers=math.ceil(plan.gpus / cluster.gpus_per_server))
