"""Per-GPU-type columns of a job table: `alpha_<type>` (seconds per iteration on that type), with optional
`alpha_max_<type>` and `alpha_spread_<type>` (that type's declared worst case and spread-placement time).

They belong to rows with `alpha` (fixed-alpha jobs): an empty `alpha_<type>` cell means the job cannot run
on that type, a type without a column runs at `alpha` (cluster.GPU_TYPES; a zoo job, with model + config,
runs every type at that type's compute speed instead and leaves these cells empty). A type's missing
alpha_max / spread cell means alpha_<type> on every placement of that type.
"""

from __future__ import annotations

import difflib

import numpy as np
import pandas as pd

from ..cluster import GPU_TYPES, Cluster
from ..core import MAX_SECONDS, MIN_ALPHA, ConfigError, TrainingPlan
from ..rules import shown
from .parsing import location

KINDS = ("alpha_max_", "alpha_spread_", "alpha_")
BASE = ("alpha", "alpha_max", "alpha_spread")
"""Column prefixes of a type's values, longest first (so `alpha_max_k80` is never read as type `max_k80`)."""
NOT_TYPED = ("alpha_min_estimate",)
"""alpha_ columns of another meaning: model assignment's alpha~min estimate (the walltime predictor's divisor)."""
MEASURED_TYPES = "measured_types"
"""A loader's table attribute: the GPU types its alpha_<type> columns measure in full (Gavel's K80, P100,
V100), so columns of types the cluster lacks are not the user's mistake and are left out."""


def typed_columns(columns: pd.Index | list[str], source: str) -> dict[str, dict[str, str]]:
    """GPU type -> {kind prefix: column} of every per-type column; an `alpha_<name>` whose name is no GPU
    type is refused naming the column."""
    found: dict[str, dict[str, str]] = {}
    for column in columns:
        name = str(column)
        if name in BASE or name in NOT_TYPED or not name.startswith("alpha_"):
            continue
        kind = next(prefix for prefix in KINDS if name.startswith(prefix))
        gpu_type = name[len(kind):]
        if gpu_type not in GPU_TYPES and difflib.get_close_matches(name, BASE, n=1, cutoff=0.8):
            continue  # a misspelt alpha_max or alpha_spread: the loader names it as an unknown column
        if gpu_type not in GPU_TYPES:
            raise ConfigError(f"{source}: column {name!r}: unknown GPU type {gpu_type!r}; per-type columns are "
                              f"alpha_<type>, alpha_max_<type>, alpha_spread_<type> with <type> one of {list(GPU_TYPES)}")
        found.setdefault(gpu_type, {})[kind] = name
    for gpu_type, kinds in found.items():
        if "alpha_" not in kinds:
            other = next(iter(kinds.values()))
            raise ConfigError(f"{source}: column {other!r} needs column 'alpha_{gpu_type}' (the type's alpha)")
    return found


def _where(source: str, row: int, column: str) -> str:
    return location(source, row, column, header_lines=1)


def check_typed_columns(table: pd.DataFrame, source: str) -> pd.DataFrame:
    """The per-type columns as floats, checked (a value > 0, alpha_max and spread >= the type's alpha and
    only beside it, only on rows with `alpha`, within float64's exact range); errors name row and column."""
    for gpu_type, kinds in typed_columns(table.columns, source).items():
        for column in kinds.values():
            raw = table[column]
            values = pd.to_numeric(raw, errors="coerce")
            bad = (values.isna() & raw.notna() & (raw.astype(str).str.strip() != "")) | ~np.isfinite(values.fillna(0))
            _refuse_first(bad, source, column, lambda row: f"not a finite number: {shown(raw.iloc[row])}")
            table[column] = values.astype(float)
        alpha = table[kinds["alpha_"]]
        present = table[list(kinds.values())].notna().any(axis=1)
        _refuse_first(present & table["alpha"].isna(), source, kinds["alpha_"],
                      lambda row: "a per-type alpha needs the row's alpha (a zoo job, with model and config, runs "
                                  "each type at that type's compute speed)")
        _refuse_first(alpha <= 0, source, kinds["alpha_"], lambda row: f"must be > 0, got {shown(alpha.iloc[row])}")
        _refuse_first(alpha < MIN_ALPHA, source, kinds["alpha_"],
                      lambda row: f"must be >= {MIN_ALPHA:g} s (no training iteration is shorter than a microsecond), "
                                  f"got {shown(alpha.iloc[row])}")
        _refuse_first(alpha > MAX_SECONDS, source, kinds["alpha_"],
                      lambda row: f"must be <= {MAX_SECONDS:.0e} s, got {shown(alpha.iloc[row])}")
        _refuse_first(alpha * table["iterations"] > MAX_SECONDS, source, kinds["alpha_"],
                      lambda row: f"iterations x alpha must be <= {MAX_SECONDS:.0e} s")
        for kind in ("alpha_max_", "alpha_spread_"):
            if kind in kinds:
                other = table[kinds[kind]]
                _refuse_first(other.notna() & alpha.isna(), source, kinds[kind],
                              lambda row: f"needs {kinds['alpha_']} (the job cannot run on {gpu_type} without it)")
                _refuse_first(other < alpha, source, kinds[kind],
                              lambda row: f"must be >= {kinds['alpha_']}, got {shown(other.iloc[row])}")
    return table


def _refuse_first(bad: pd.Series, source: str, column: str, problem) -> None:
    rows = bad.fillna(False).to_numpy(dtype=bool)
    if rows.any():
        row = int(np.flatnonzero(rows)[0])
        raise ConfigError(f"{_where(source, row, column)}: {problem(row)}")


def for_cluster(table: pd.DataFrame, cluster: Cluster, source: str) -> pd.DataFrame:
    """The table's per-type columns for the cluster's types: a column of a type the cluster lacks is refused,
    unless the loader measured that type among others (attrs `measured_types`), then it is left out."""
    measured = set(table.attrs.get(MEASURED_TYPES, ()))
    drop = []
    for gpu_type, kinds in typed_columns(table.columns, source).items():
        if gpu_type in cluster.types:
            continue
        if gpu_type not in measured:
            raise ConfigError(f"{source}: column {kinds['alpha_']!r} is for GPU type {gpu_type!r}, which the cluster "
                              f"lacks ({cluster.describe()}); drop the column or add a pool of that type")
        drop.extend(kinds.values())
    if not drop:
        return table
    kept = table.drop(columns=drop)
    kept.attrs.update(table.attrs)
    return kept


def _effective(plan: TrainingPlan) -> tuple[float, float, float]:
    """(alpha, alpha_max, spread alpha) a fixed plan gives, with the undeclared ones at alpha."""
    alpha = float(plan.declared_alpha)  # type: ignore[arg-type]
    return (alpha, alpha if plan.declared_alpha_max is None else plan.declared_alpha_max,
            alpha if plan.declared_alpha_spread is None else plan.declared_alpha_spread)


def row_type_plans(row: dict, base: TrainingPlan, kinds: dict[str, dict[str, str]],
                   plans: dict[tuple, TrainingPlan]) -> tuple[tuple[str, TrainingPlan | None], ...]:
    """(type, plan or None) per typed type of one alpha row whose plan is `base`; a type with base's values
    runs `base` itself, and equal values share one plan object (`plans`)."""
    gpus = base.gpus
    listed = []
    for gpu_type, columns in kinds.items():
        alpha = row[columns["alpha_"]]
        if alpha is None or pd.isna(alpha):
            listed.append((gpu_type, None))
            continue
        extra = [row.get(columns[kind]) if kind in columns else None for kind in ("alpha_max_", "alpha_spread_")]
        alpha_max, spread = (None if value is None or pd.isna(value) else float(value) for value in extra)
        alpha = float(alpha)
        if (alpha, alpha if alpha_max is None else alpha_max, alpha if spread is None else spread) == _effective(base):
            listed.append((gpu_type, base))
            continue
        key = (gpus, alpha, alpha_max, spread)
        plan = plans.get(key)
        if plan is None:
            plan = plans[key] = TrainingPlan.fixed(gpus, float(alpha), alpha_max, spread)
        listed.append((gpu_type, plan))
    return tuple(listed)
