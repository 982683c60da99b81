"""Plain-text tables of a run's result, printed by the CLI."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..io import RunResult

SCALARS_SHOWN = ("num_jobs", "dropped", "total_jct", "mean_jct", "makespan", "utilization", "lower_bound",
                 "ratio_to_lower_bound", "theorem1_bound", "mae", "median_relative_error", "unseen_share",
                 "placements", "ilp_optimal_share", "alpha_penalty_mean", "alpha_penalty_max",
                 "heavy_edge_time_median_s", "ilp_time_median_s", "ratio_to_opt_max", "ratio_over_bound_max",
                 "bound_violations", "best_value", "eq12_violation_rel", "wall_time_s")


def _number(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def format_comparison(comparison: pd.DataFrame) -> str:
    """One line per scheduler: total JCT, mean JCT and A-SRPT's reduction relative to it."""
    table = pd.DataFrame({
        "scheduler": comparison["scheduler"],
        "total JCT (s)": comparison["total_jct"].map(lambda v: f"{v:.4e}"),
        "mean JCT (s)": comparison["mean_jct"].map(lambda v: f"{v:.4g}"),
        "makespan (s)": comparison["makespan"].map(lambda v: f"{v:.4g}"),
        "A-SRPT reduction": comparison["asrpt_reduction"].map(lambda v: f"{100 * v:+.1f}%"),
    })
    return table.to_string(index=False)


def format_result(result: RunResult) -> str:
    """The comparison table for `compare`, else the headline scalars of the summary."""
    lines = [f"task: {result.task}"]
    if result.comparison is not None:
        lines.append(format_comparison(result.comparison))
        lines.append("A-SRPT reduction = 1 - total JCT(A-SRPT) / total JCT(scheduler)")
    shown = [(key, result.summary[key]) for key in SCALARS_SHOWN if key in result.summary]
    lines.extend(f"{key:>22}: {_number(value)}" for key, value in shown)
    return "\n".join(lines)
