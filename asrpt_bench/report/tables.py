"""Plain-text tables of a run's result, printed by the CLI: times in readable units (s, min, h with
thousands separators), counts with separators, and the comparison as ratios to the reference scheduler."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..io import RunResult

# (summary key, label) in the order printed; the keys of TIME_KEYS are seconds, shown with their unit.
SCALARS_SHOWN: tuple[tuple[str, str], ...] = (
    ("num_jobs", "jobs simulated"),
    ("history_jobs", "earlier jobs held back as the predictor's history (not simulated)"),
    ("offered_load", "offered load, sum g_i d_i / (G x release span)"),
    ("dropped", "jobs dropped (larger than the cluster)"),
    ("total_jct", "total JCT, sum(C_i - r_i)"),
    ("mean_jct", "mean JCT"),
    ("p50_jct", "median JCT"),
    ("p95_jct", "95th percentile JCT"),
    ("p99_jct", "99th percentile JCT"),
    ("mean_slowdown", "mean slowdown, JCT / (n_i x alpha~min_i) (ratio)"),
    ("p99_slowdown", "99th percentile slowdown (ratio)"),
    ("waited_share", "jobs that waited at all (fraction)"),
    ("busy_share", "GPUs held over the release span (fraction)"),
    ("mean_wait", "mean wait, JCT - service - restore"),
    ("max_wait", "maximum wait"),
    ("mean_first_start_delay", "mean first-start delay, start - release"),
    ("mean_wait_gpus_1", "mean wait, 1-GPU jobs"),
    ("mean_wait_gpus_2_4", "mean wait, 2-4-GPU jobs"),
    ("mean_wait_gpus_5_8", "mean wait, 5-8-GPU jobs"),
    ("mean_wait_gpus_9plus", "mean wait, 9+-GPU jobs"),
    ("over_capacity_instants", "instants the replay holds more GPUs than the cluster has"),
    ("over_capacity_s", "time it holds more"),
    ("peak_gpus", "most GPUs it holds at once"),
    ("backfilled_starts", "backfilled starts (jobs)"),
    ("reservation_violations", "starts after the first shadow time or reservation (jobs)"),
    ("users", "users (users.csv: jobs, mean wait, mean slowdown, GPU-hours each)"),
    ("jain_user_slowdown", "Jain's index over users' mean slowdowns (1: all alike)"),
    ("worst_user_slowdown_ratio", "worst user's mean slowdown / the median user's (ratio)"),
    ("makespan", "makespan"),
    ("utilization", "GPU utilization (fraction)"),
    ("sum_completion", "sum of completion times, sum C_i"),
    ("lower_bound", "lower bound on the optimal sum C_i"),
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
    ("heavy_edge_time_median_s", "Heavy-Edge time per placement, median"),
    ("ilp_time_median_s", "ILP time per placement, median"),
    ("ratio_to_opt_max", "max sum C_i / OPT (ratio)"),
    ("ratio_over_bound_max", "max (sum C_i / OPT) / Theorem 1 bound (ratio)"),
    ("bound_violations", "Theorem 1 violations (runs)"),
    ("best_value", "best objective found"),
    ("eq12_violation_rel", "Eq. 12 violation (relative)"),
    ("wall_time_s", "wall time"),
)
TIME_KEYS = frozenset({"total_jct", "mean_jct", "p50_jct", "p95_jct", "p99_jct", "mean_wait", "max_wait",
                       "mean_first_start_delay", "mean_wait_gpus_1",
                       "mean_wait_gpus_2_4", "mean_wait_gpus_5_8", "mean_wait_gpus_9plus", "makespan",
                       "sum_completion", "lower_bound", "heavy_edge_time_median_s", "ilp_time_median_s",
                       "wall_time_s", "over_capacity_s"})
"""Summary keys in seconds."""

TIME_UNITS: tuple[tuple[str, float], ...] = (("h", 3600.0), ("min", 60.0), ("s", 1.0), ("ms", 1e-3))
"""A time is shown in the first unit of which it is at least two (below a second: ms)."""


def time_unit(seconds: float) -> tuple[str, float]:
    """The unit (name, seconds per unit) a time of this size is shown in."""
    size = abs(seconds)
    for name, scale in TIME_UNITS[:2]:
        if size >= 2 * scale:
            return name, scale
    return ("s", 1.0) if size >= 1 or size == 0 else ("ms", 1e-3)


def grouped(value: float) -> str:
    """A number with at least three significant digits and thousands separators: 36,253; 18.1; 2.07."""
    if math.isnan(value):
        return "nan"
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if size >= 10 else f"{value:.2f}"


def duration(seconds: float) -> str:
    """Seconds in a readable unit: '36,253 h', '59.7 min', '12.3 s', '0.06 ms'; 'nan' when undefined."""
    if math.isnan(seconds):
        return "nan"
    if seconds == 0:
        return "0 s"
    name, scale = time_unit(seconds)
    return f"{grouped(seconds / scale)} {name}"


def _number(key: str, value: Any) -> str:
    if key in TIME_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return duration(float(value))
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def _time_column(values: pd.Series, title: str) -> tuple[str, pd.Series]:
    """A column of seconds in one unit, the unit of its largest value, named in the header."""
    finite = values[values.notna()]
    name, scale = time_unit(float(finite.abs().max()) if len(finite) else 0.0)
    return f"{title} ({name})", values.map(lambda v: grouped(float(v) / scale))


def display_name(reference: str) -> str:
    return "A-SRPT" if reference == "asrpt" else reference


def format_comparison(comparison: pd.DataFrame, reference: str = "asrpt") -> str:
    """One line per scheduler: total JCT, mean JCT and makespan, each column in one readable unit, and the
    reference scheduler's total JCT over the scheduler's (1 - `asrpt_reduction`)."""
    columns = dict(_time_column(comparison[key], title) for key, title in
                   (("total_jct", "total JCT"), ("mean_jct", "mean JCT"), ("makespan", "makespan")))
    ratio = 1.0 - comparison["asrpt_reduction"]
    table = pd.DataFrame({"scheduler": comparison["scheduler"], **columns,
                          f"{display_name(reference)} / scheduler": ratio.map(lambda v: f"{v:.2f}")})
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


def _recorded_line(comparison: pd.DataFrame) -> list[str]:
    """What the log's own schedule (`recorded`), not checked against the cluster, would need of it."""
    rows = comparison[comparison["scheduler"] == "recorded"]
    if rows.empty or "over_capacity_instants" not in rows:
        return []
    row = rows.iloc[0]
    return [f"recorded = the log's own start times, not checked against the cluster: it holds more GPUs than the "
            f"cluster has at {int(row['over_capacity_instants']):,} instants ({duration(float(row['over_capacity_s']))}"
            f" in all; at most {int(row['peak_gpus']):,} GPUs at once)"]


def _undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_result(result: RunResult) -> str:
    """The comparison table for `compare`, then the headline scalars of the summary, each labelled with
    its unit, and what the run adjusted. A scalar the run leaves undefined (NaN, e.g. the reservation
    violations of a rule that makes no reservations) is not printed; summary.json keeps it as null."""
    lines = [f"task: {result.task}"]
    if result.task == "queueing" and result.comparison is not None:
        lines.append(format_queueing(result.comparison))
    elif result.comparison is not None:
        reference = str(result.summary.get("reference_scheduler", "asrpt"))
        name = display_name(reference)
        lines.append(format_comparison(result.comparison, reference))
        lines.append(f"{name} / scheduler = total JCT({name}) / total JCT(scheduler) (above 1: the scheduler's is "
                     "lower)")
        lines.extend(_recorded_line(result.comparison))
        lines.append(f"{name}'s run:")
    shown = [(key, label, result.summary[key]) for key, label in SCALARS_SHOWN
             if key in result.summary and not _undefined(result.summary[key])]
    width = max((len(label) for _, label, _ in shown), default=0)
    lines.extend(f"{label:>{width}}: {_number(key, value)}" for key, label, value in shown)
    adjustments = result.summary.get("adjustments") or {}
    if adjustments:
        lines.append(f"{'adjustments':>{width}}: " + ", ".join(f"{k}={v}" for k, v in sorted(adjustments.items())))
    return "\n".join(lines)
