"""Job table (workloads/schema.py) -> Jobs the simulator runs.

Rows with `alpha` (and optional `alpha_max`) become fixed-alpha plans, the same on every
placement (theory instances). Rows with `model` + `config` get their plan from `plan_lookup`
(default: `asrpt_bench.profiles.build_plan`), cached per (model, config).
"""

from __future__ import annotations

from typing import Callable, Mapping

import pandas as pd

from ..core import ConfigError, Job, TrainingPlan
from .schema import _where, validate_job_table

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

    fixed: dict[tuple[int, float, float | None, float | None], TrainingPlan] = {}
    jobs = []
    for index, row in enumerate(table.to_dict("records")):
        iterations = _optional(row["iterations"])
        if iterations is None:
            raise ConfigError(f"{_where(source, index, 'iterations')}: value is missing")
        plan = _row_plan(row, index, source, cached_lookup, fixed)
        duration, wait = _optional(row["duration"]), _optional(row["recorded_wait"])
        jobs.append(Job(job_id=row["job_id"], release=float(row["release"]), plan=plan,
                        iterations=int(iterations), user=_optional(row["user"]), group=_optional(row["group"]),
                        duration=None if duration is None else float(duration),
                        recorded_wait=None if wait is None else float(wait)))
    return jobs
