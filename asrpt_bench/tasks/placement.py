"""Task `placement`: Heavy-Edge against the ILP optimum on every zoo plan and fragmentation pattern."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import ConfigError
from ..io import RunResult
from ..params import Params, param
from ..rules import Rule
from .base import Context, register_task


def _optional_names(what: str) -> Rule:
    return Rule(f"null (all) or a non-empty list of {what}", lambda v: v is None or (
        isinstance(v, (list, tuple)) and len(v) >= 1 and all(isinstance(n, str) and n for n in v)))


@dataclass(frozen=True)
class PlacementStudyParams(Params):
    """The placement study's plans and fragmentation patterns (of the cluster group's cluster)."""

    study_models: Optional[list[str]] = param(None, _optional_names("zoo model names"), "zoo models (null: all)")
    study_gpu_counts: list[int] = param([2, 4, 8, 16, 32], Rule("a non-empty list of integers >= 1", lambda v: (
        isinstance(v, (list, tuple)) and len(v) >= 1 and all(isinstance(g, int) and not isinstance(g, bool)
                                                             and g >= 1 for g in v))), "GPU counts of the plans")
    study_patterns: Optional[list[str]] = param(None, _optional_names("pattern names"),
                                                "free-GPU fragmentation patterns (null: all)")


@register_task("placement", PlacementStudyParams, needs_workload=False)
def placement_study(context: Context) -> RunResult:
    """Heavy-Edge vs the ILP optimum on every zoo plan and fragmentation pattern of free GPUs."""
    from ..placement.study import run_placement_study

    config = context.config
    task = config.task
    if config.placement.name != "heavy_edge":
        raise ConfigError(f"task=placement studies Heavy-Edge against the ILP: placement must be heavy_edge (its "
                          f"placement.mode is the mode studied), got {config.placement.name!r}")
    table = run_placement_study(models=task.study_models, gpu_counts=tuple(task.study_gpu_counts),
                                cluster=config.cluster, patterns=task.study_patterns, solver=config.solver,
                                seed=config.seed, timing=config.timing, heavy_edge_mode=config.placement.mode)
    optimal = table["ilp_status"] == "optimal"
    summary = {**context.provenance, "placements": len(table), "ilp_optimal_share": float(optimal.mean()),
               "alpha_penalty_mean": float(table["gap"].mean()), "alpha_penalty_max": float(table["gap"].max()),
               "alpha_penalty_mean_proven": float(table.loc[optimal, "gap"].mean()),
               "heavy_edge_proven_share": float(table["he_proven"].mean()),
               "heavy_edge_time_median_s": float(table["he_wall_s"].median()),
               "heavy_edge_time_max_s": float(table["he_wall_s"].max()),
               "ilp_time_median_s": float(table["ilp_wall_s"].median()),
               "ilp_time_max_s": float(table["ilp_wall_s"].max())}
    return RunResult(task="placement", summary=summary, tables={"placement_study": table})
