"""Plain-text tables of a run's result, printed by the CLI."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..io import RunResult

# (summary key, label with its unit) in the order printed; times in seconds, ratios dimensionless.
SCALARS_SHOWN: tuple[tuple[str, str], ...] = (
    ("num_jobs", "jobs simulated"),
    ("history_jobs", "earlier jobs held back as the predictor's history (not simulated)"),
    ("offered_load", "offered load, sum g_i d_i / (G x release span)"),
    ("dropped", "jobs dropped (larger than the cluster)"),
    ("total_jct", "total JCT, sum(C_i - r_i) (s)"),
    ("mean_jct", "mean JCT (s)"),
    ("p50_jct", "median JCT (s)"),
    ("p95_jct", "95th percentile JCT (s)"),
    ("p99_jct", "99th percentile JCT (s)"),
    ("mean_slowdown", "mean slowdown, JCT / (n_i x alpha~min_i) (ratio)"),
    ("p99_slowdown", "99th percentile slowdown (ratio)"),
    ("waited_share", "jobs that waited at all (fraction)"),
    ("busy_share", "GPUs held over the release span (fraction)"),
    ("mean_wait", "mean wait, JCT - service - restore (s)"),
    ("max_wait", "maximum wait (s)"),
    ("mean_first_start_delay", "mean first-start delay, start - release (s)"),
    ("mean_wait_gpus_1", "mean wait, 1-GPU jobs (s)"),
    ("mean_wait_gpus_2_4", "mean wait, 2-4-GPU jobs (s)"),
    ("mean_wait_gpus_5_8", "mean wait, 5-8-GPU jobs (s)"),
    ("mean_wait_gpus_9plus", "mean wait, 9+-GPU jobs (s)"),
    ("backfilled_starts", "backfilled starts (jobs)"),
    ("reservation_violations", "starts after the first shadow time or reservation (jobs)"),
    ("makespan", "makespan (s)"),
    ("utilization", "GPU utilization (fraction)"),
    ("sum_completion", "sum of completion times, sum C_i (s)"),
    ("lower_bound", "lower bound on the optimal sum C_i (s)"),
    ("ratio_to_lower_bound", "sum C_i / lower bound (ratio)"),
    ("theorem1_bound", "Theorem 1 bound on sum C_i / OPT (ratio)"),
    ("mae", "mean absolute error (iterations)"),
    ("median_relative_error", "median relative error (fraction)"),
    ("unseen_share", "unseen jobs (fraction)"),
    ("unseen_gpu_time_share", "their share of GPU time (fraction)"),
    ("predictor_median_rel_error_seen", "median relative error, seen jobs (fraction)"),
    ("placements", "placements studied"),
    ("ilp_optimal_share", "ILP proven optimal (fraction)"),
    ("alpha_penalty_mean", "mean alpha gap to the ILP (fraction)"),
    ("alpha_penalty_max", "max alpha gap to the ILP (fraction)"),
    ("heavy_edge_time_median_s", "Heavy-Edge time per placement, median (s)"),
    ("ilp_time_median_s", "ILP time per placement, median (s)"),
    ("ratio_to_opt_max", "max sum C_i / OPT (ratio)"),
    ("ratio_over_bound_max", "max (sum C_i / OPT) / Theorem 1 bound (ratio)"),
    ("bound_violations", "Theorem 1 violations (runs)"),
    ("best_value", "best objective found"),
    ("eq12_violation_rel", "Eq. 12 violation (relative)"),
    ("wall_time_s", "wall time (s)"),
)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def format_comparison(comparison: pd.DataFrame, reference: str = "asrpt") -> str:
    """One line per scheduler: total JCT, mean JCT and the reference scheduler's reduction relative to it."""
    label = "A-SRPT reduction" if reference == "asrpt" else f"{reference} reduction"
    table = pd.DataFrame({
        "scheduler": comparison["scheduler"],
        "total JCT (s)": comparison["total_jct"].map(lambda v: f"{v:.4e}"),
        "mean JCT (s)": comparison["mean_jct"].map(lambda v: f"{v:.4g}"),
        "makespan (s)": comparison["makespan"].map(lambda v: f"{v:.4g}"),
        label: comparison["asrpt_reduction"].map(lambda v: f"{100 * v:+.1f}%"),
    })
    return table.to_string(index=False)


def format_queueing(comparison: pd.DataFrame) -> str:
    """One line per scheduler of a `queueing` run: its M/G/1 discipline, the measured mean response time
    and the closed form."""
    table = pd.DataFrame({
        "scheduler": comparison["scheduler"],
        "M/G/1 discipline": comparison["discipline"],
        "mean response (s)": comparison["mean_response_s"].map(lambda v: f"{v:.5g}"),
        "closed form (s)": comparison["formula_mean_response_s"].map(lambda v: f"{v:.5g}"),
        "measured / closed form": comparison["response_over_formula"].map(lambda v: f"{v:.4f}"),
    })
    jobs = int(comparison["measured_jobs"].iloc[0])
    return f"{table.to_string(index=False)}\nmean response over the {jobs} measured jobs (one seed)"


def format_result(result: RunResult) -> str:
    """The comparison table for `compare`, then the headline scalars of the summary, each labelled with
    its unit, and what the run adjusted."""
    lines = [f"task: {result.task}"]
    if result.task == "queueing" and result.comparison is not None:
        lines.append(format_queueing(result.comparison))
    elif result.comparison is not None:
        reference = str(result.summary.get("reference_scheduler", "asrpt"))
        name = "A-SRPT" if reference == "asrpt" else reference
        lines.append(format_comparison(result.comparison, reference))
        lines.append(f"{name} reduction = 1 - total JCT({name}) / total JCT(scheduler); below: {name}'s run")
    shown = [(label, result.summary[key]) for key, label in SCALARS_SHOWN if key in result.summary]
    width = max((len(label) for label, _ in shown), default=0)
    lines.extend(f"{label:>{width}}: {_number(value)}" for label, value in shown)
    adjustments = result.summary.get("adjustments") or {}
    if adjustments:
        lines.append(f"{'adjustments':>{width}}: " + ", ".join(f"{k}={v}" for k, v in sorted(adjustments.items())))
    return "\n".join(lines)
