"""Task `placement`: Heavy-Edge against the ILP optimum on every zoo plan and fragmentation pattern."""

from __future__ import annotations

from ..build import build_cluster, build_timing
from ..io import RunResult
from .base import Context, register_task


@register_task("placement", needs_workload=False)
def placement_study(context: Context) -> RunResult:
    """Heavy-Edge vs the ILP optimum on every zoo plan and fragmentation pattern of free GPUs."""
    from ..placement.study import run_placement_study

    config = context.config
    task = config.task
    table = run_placement_study(models=task.study_models, gpu_counts=tuple(task.study_gpu_counts),
                                cluster=build_cluster(config), patterns=task.study_patterns,
                                solver=config.solver.name, time_limit_s=config.solver.time_limit_s,
                                seed=config.seed, timing=build_timing(config), heavy_edge_mode=config.placement.mode)
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
