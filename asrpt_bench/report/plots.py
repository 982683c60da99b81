"""plot_*(table) -> Figure: every paper figure from a collected results table (asrpt-bench-collect).

Each function takes the tidy table (one row per run, or run x scheduler), keeps complete runs,
averages over seeds and draws the mean with a 95% Student-t confidence interval over seeds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
from scipy import stats

from ..core import ConfigError
from .style import figure_style, label, series_style

SEED = "seed"


def complete_runs(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of runs that completed (collect flags the others in `status`)."""
    if "status" not in table.columns:
        return table
    return table[table["status"] == "complete"]


def require(table: pd.DataFrame, columns: list[str], figure: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ConfigError(f"{figure}: the results table lacks column(s) {missing}")
    if table.empty:
        raise ConfigError(f"{figure}: the results table has no complete runs")


def mean_ci(table: pd.DataFrame, by: list[str], value: str, confidence: float = 0.95) -> pd.DataFrame:
    """Per group of `by`: mean of `value` over its rows (seeds), the t-interval bounds and n.

    With one row the interval collapses to the mean (no spread can be estimated).
    """
    rows = []
    for key, group in table.groupby(by, sort=True, dropna=False):
        values = group[value].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        n = len(values)
        mean = float(values.mean()) if n else float("nan")
        half = 0.0
        if n > 1:
            half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), "mean": mean, "low": mean - half, "high": mean + half, "n": n})
    return pd.DataFrame(rows)


def _lines(table: pd.DataFrame, x: str, value: str, series: str, x_scale: float = 1.0) -> Figure:
    summary = mean_ci(table, [series, x], value)
    figure, axes = plt.subplots()
    for name, part in summary.groupby(series, sort=False):
        part = part.sort_values(x)
        xs = part[x].to_numpy(dtype=float) * x_scale
        axes.plot(xs, part["mean"], label=label(str(name)), **series_style(str(name)))
        axes.fill_between(xs, part["low"], part["high"], alpha=0.15, color=series_style(str(name))["color"])
    seeds = int(summary["n"].max()) if len(summary) else 0
    axes.legend(title=f"mean, 95% CI over {seeds} seed(s)", title_fontsize=8)
    return figure


def plot_total_jct_vs_num_jobs(table: pd.DataFrame) -> Figure:
    """Fig 6: total JCT vs the number of jobs, one line per scheduler."""
    table = complete_runs(table)
    require(table, ["workload.num_jobs", "scheduler", "total_jct"], "Fig 6")
    with figure_style():
        figure = _lines(table, "workload.num_jobs", "total_jct", "scheduler")
        axes = figure.axes[0]
        axes.set_xlabel("number of jobs")
        axes.set_ylabel("total JCT (s)")
        axes.set_yscale("log")
        axes.set_title("Total JCT vs number of jobs")
    return figure


def plot_total_jct_vs_single_gpu_share(table: pd.DataFrame) -> Figure:
    """Fig 7: total JCT vs the percentage of single-GPU jobs, one line per scheduler."""
    table = complete_runs(table)
    require(table, ["workload.single_gpu_share", "scheduler", "total_jct"], "Fig 7")
    with figure_style():
        figure = _lines(table, "workload.single_gpu_share", "total_jct", "scheduler", x_scale=100.0)
        axes = figure.axes[0]
        axes.set_xlabel("single-GPU jobs (%)")
        axes.set_ylabel("total JCT (s)")
        axes.set_yscale("log")
        axes.set_title("Total JCT vs single-GPU job share")
    return figure


def _bucket_columns(table: pd.DataFrame, prefix: str) -> list[str]:
    columns = [c for c in table.columns if c.startswith(prefix)]
    return sorted(columns, key=lambda c: float(c[len(prefix):].split("_")[0]))


def _bucket_label(column: str, prefix: str) -> str:
    lower, upper = column[len(prefix):].split("_")
    return f">= {lower}" if upper == "inf" else f"[{lower}, {upper})"


def plot_prediction_error(table: pd.DataFrame) -> Figure:
    """Fig 4: percentage of held-out jobs per absolute-error bucket (iterations), and per relative-error
    bucket, averaged over seeds with 95% CIs."""
    table = complete_runs(table)
    absolute, relative = _bucket_columns(table, "share_abs_"), _bucket_columns(table, "share_rel_")
    require(table, absolute[:1] + relative[:1], "Fig 4")
    with figure_style():
        figure, panels = plt.subplots(1, 2, figsize=(9.0, 3.6))
        for axes, columns, prefix, title in ((panels[0], absolute, "share_abs_", "|predicted - true| (iterations)"),
                                             (panels[1], relative, "share_rel_", "|predicted - true| / true")):
            long = table.melt(id_vars=[SEED] if SEED in table.columns else [], value_vars=columns,
                              var_name="bucket", value_name="share")
            summary = mean_ci(long, ["bucket"], "share").set_index("bucket").loc[columns]
            positions = np.arange(len(columns))
            axes.bar(positions, 100 * summary["mean"], color=series_style("asrpt")["color"],
                     yerr=[100 * (summary["mean"] - summary["low"]), 100 * (summary["high"] - summary["mean"])],
                     capsize=3)
            axes.set_xticks(positions, [_bucket_label(c, prefix) for c in columns], rotation=20, ha="right")
            axes.set_xlabel(title)
            axes.set_ylabel("jobs (%)")
        figure.suptitle("Prediction error on the held-out part of the trace")
    return figure


def plot_placement_quality(table: pd.DataFrame) -> Figure:
    """Heavy-Edge vs ILP: Heavy-Edge's alpha penalty over the ILP optimum (mean and worst case per run)
    and the median time per placement of each, as mean and 95% CI over seeds."""
    table = complete_runs(table)
    penalty = ["alpha_penalty_mean", "alpha_penalty_max"]
    runtime = ["heavy_edge_time_median_s", "ilp_time_median_s"]
    require(table, penalty + runtime, "Heavy-Edge vs ILP")
    with figure_style():
        figure, panels = plt.subplots(1, 2, figsize=(9.0, 3.6))
        for axes, columns, names, ylabel, scale in (
                (panels[0], penalty, ["mean", "worst"], "Heavy-Edge alpha / ILP alpha - 1 (%)", 100.0),
                (panels[1], runtime, [label("heavy_edge"), label("ilp")], "median time per placement (ms)", 1e3)):
            long = table.melt(id_vars=[SEED] if SEED in table.columns else [], value_vars=columns,
                              var_name="column", value_name="value")
            summary = mean_ci(long, ["column"], "value").set_index("column").loc[columns]
            positions = np.arange(len(columns))
            axes.bar(positions, scale * summary["mean"],
                     color=[series_style(n)["color"] for n in ("heavy_edge", "ilp")],
                     yerr=[scale * (summary["mean"] - summary["low"]), scale * (summary["high"] - summary["mean"])],
                     capsize=3)
            axes.set_xticks(positions, names)
            axes.set_ylabel(ylabel)
        panels[1].set_yscale("log")
        figure.suptitle("Heavy-Edge vs the ILP optimum")
    return figure


def plot_sensitivity(table: pd.DataFrame) -> Figure:
    """COMM_HEAVY x tau heatmaps of A-SRPT's mean total JCT, one panel per prediction error epsilon,
    each relative to the best cell of its panel."""
    table = complete_runs(table)
    keys = ["scheduler.comm_heavy", "scheduler.tau", "predictor.epsilon"]
    require(table, keys + ["total_jct"], "sensitivity")
    summary = mean_ci(table, keys, "total_jct")
    epsilons = sorted(summary["predictor.epsilon"].unique())
    with figure_style():
        figure, panels = plt.subplots(1, len(epsilons), figsize=(3.4 * len(epsilons), 3.4), squeeze=False)
        for axes, epsilon in zip(panels[0], epsilons):
            part = summary[summary["predictor.epsilon"] == epsilon]
            grid = part.pivot(index="scheduler.comm_heavy", columns="scheduler.tau", values="mean")
            relative = grid / np.nanmin(grid.to_numpy())
            image = axes.imshow(relative.to_numpy(), origin="lower", cmap="viridis_r", aspect="auto")
            axes.set_xticks(range(len(grid.columns)), [f"{v:g}" for v in grid.columns])
            axes.set_yticks(range(len(grid.index)), [f"{v:g}" for v in grid.index])
            for (i, j), value in np.ndenumerate(relative.to_numpy()):
                axes.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7, color="white")
            axes.set_xlabel("tau")
            axes.set_ylabel("COMM_HEAVY")
            axes.set_title(f"epsilon = {epsilon:g}")
            axes.grid(False)
        figure.colorbar(image, ax=panels[0].tolist(), label="total JCT / best in panel")
        figure.suptitle("A-SRPT sensitivity (mean over seeds)")
    return figure


def plot_scheduler_comparison(table: pd.DataFrame) -> Figure:
    """Total JCT per scheduler on the default workload, mean and 95% CI over seeds."""
    table = complete_runs(table)
    require(table, ["scheduler", "total_jct"], "comparison")
    summary = mean_ci(table, ["scheduler"], "total_jct")
    order = [name for name in table["scheduler"].drop_duplicates()]
    summary = summary.set_index("scheduler").loc[order]
    with figure_style():
        figure, axes = plt.subplots()
        positions = np.arange(len(order))
        axes.bar(positions, summary["mean"], color=[series_style(n)["color"] for n in order],
                 yerr=[summary["mean"] - summary["low"], summary["high"] - summary["mean"]], capsize=3)
        axes.set_xticks(positions, [label(n) for n in order], rotation=25, ha="right")
        axes.set_ylabel("total JCT (s)")
        axes.set_yscale("log")
        axes.set_title("Total JCT per scheduler")
    return figure
