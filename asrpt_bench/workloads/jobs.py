"""Job table (workloads/schema.py) -> Jobs the simulator runs.

Rows with `alpha` (and optional `alpha_max`) become fixed-alpha plans, the same on every
placement (theory instances), and their per-type columns `alpha_<type>` the job's plans on those types
(`Job.type_plans`, typed_columns.py). Rows with `model` + `config` get their plan from `plan_lookup`
(default: `asrpt_bench.profiles.build_plan`), cached per (model, config).
"""

from __future__ import annotations

from typing import Callable, Iterator, Mapping

import pandas as pd

from ..core import ConfigError, Job, TrainingPlan
from .schema import _where, validate_job_table
from .typed_columns import row_type_plans, typed_columns

PlanLookup = Callable[[str, str], TrainingPlan]


def _default_plan_lookup() -> PlanLookup:
    from ..profiles import build_plan

    return build_plan


def _optional(value: object) -> object | None:
    return None if value is None or (not isinstance(value, str) and pd.isna(value)) else value


def _row_plan(row: Mapping[str, object], index: int, source: str,
              lookup: Callable[[str, str], TrainingPlan],
              fixed: dict[tuple[int, float, float | None, float | None], TrainingPlan]) -> TrainingPlan:
    has_alpha = _optional(row["alpha"]) is not None
    has_model = _optional(row["model"]) is not None and _optional(row["config"]) is not None
    if has_alpha and has_model:
        raise ConfigError(f"{_where(source, index, 'alpha')}: give either alpha or model+config, not both")
    if has_alpha:
        alpha_max, alpha_spread = _optional(row["alpha_max"]), _optional(row.get("alpha_spread"))
        key = (int(row["gpus"]), float(row["alpha"]),  # type: ignore[arg-type]
               None if alpha_max is None else float(alpha_max),  # type: ignore[arg-type]
               None if alpha_spread is None else float(alpha_spread))  # type: ignore[arg-type]
        if key not in fixed:  # rows with the same values share one plan (and its per-plan estimates)
            fixed[key] = TrainingPlan.fixed(*key)
        return fixed[key]
    if not has_model:
        raise ConfigError(f"{_where(source, index, 'model')}: the job has neither alpha nor model+config; "
                          "assign a model and configuration first")
    try:
        plan = lookup(str(row["model"]), str(row["config"]))
    except ConfigError as error:
        raise ConfigError(f"{_where(source, index, 'model')}: {error}") from error
    if plan.gpus != int(row["gpus"]):
        raise ConfigError(f"{_where(source, index, 'gpus')}: {row['model']}/{row['config']} uses {plan.gpus} GPUs, "
                          f"the row says {int(row['gpus'])}")
    return plan


def jobs_from_table(table: pd.DataFrame, source: str, plan_lookup: PlanLookup | None = None) -> list[Job]:
    """Validate `table` and turn each row into a Job; errors name `source`, the row and the column.

    Every row needs `iterations` (derive them from durations before calling this).
    """
    table = validate_job_table(table, source)
    plans: dict[tuple[str, str], TrainingPlan] = {}
    lookup = plan_lookup

    def cached_lookup(model: str, config: str) -> TrainingPlan:
        nonlocal lookup
        if (model, config) not in plans:
            if lookup is None:
                lookup = _default_plan_lookup()
            plans[(model, config)] = lookup(model, config)
        return plans[(model, config)]

    kinds = typed_columns(table.columns, source)
    typed = [column for columns in kinds.values() for column in columns.values()]
    typed_plans: dict[tuple, TrainingPlan] = {}
    fixed: dict[tuple[int, float, float | None, float | None], TrainingPlan] = {}
    shared: dict[object, object] = {}
    jobs = []
    for index, row in _rows(table, ROW_COLUMNS + tuple(typed)):
        iterations = _optional(row["iterations"])
        if iterations is None:
            raise ConfigError(f"{_where(source, index, 'iterations')}: value is missing")
        plan = _row_plan(row, index, source, cached_lookup, fixed)
        duration, wait = _optional(row["duration"]), _optional(row["recorded_wait"])
        user, group = _optional(row["user"]), _optional(row["group"])
        type_plans = row_type_plans(row, plan, kinds, typed_plans) if kinds and plan.is_fixed else ()
        jobs.append(Job(job_id=row["job_id"], release=float(row["release"]), plan=plan,
                        iterations=int(iterations), user=shared.setdefault(user, user),
                        group=shared.setdefault(group, group), duration=None if duration is None else float(duration),
                        type_plans=type_plans, recorded_wait=None if wait is None else float(wait)))
    return jobs


ROW_COLUMNS = ("job_id", "release", "gpus", "iterations", "model", "config", "alpha", "alpha_max", "alpha_spread",
               "duration", "user", "group", "recorded_wait")
"""The columns of a validated job table a Job is built from (the per-type columns come on top)."""
CHUNK_ROWS = 1 << 16


def _rows(table: pd.DataFrame, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, object]]]:
    """(index, {column: value}) per row, with the values to_dict("records") gives, read a chunk of rows at a
    time: a table of millions of rows never exists as one dict per row at once (a few KB each)."""
    for first in range(0, len(table), CHUNK_ROWS):
        chunk = table.iloc[first:first + CHUNK_ROWS]
        values = [chunk[column].tolist() for column in columns]
        for offset, row in enumerate(zip(*values)):
            yield first + offset, dict(zip(columns, row))
