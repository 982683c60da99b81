"""plot_*(table) -> Figure: every paper figure from a collected results table (asrpt-bench-collect).

Each function takes the tidy table (one row per run, or run x scheduler), keeps complete runs,
averages over seeds and draws the mean with a 95% Student-t confidence interval over seeds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.axes import Axes
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


def geometric_ci(table: pd.DataFrame, by: list[str], value: str, confidence: float = 0.95) -> pd.DataFrame:
    """`mean_ci` of log(value), mapped back: geometric mean and an interval that stays positive, for
    ratios and for quantities drawn on a log axis."""
    summary = mean_ci(table.assign(**{value: np.log(table[value].astype(float))}), by, value, confidence)
    summary[["mean", "low", "high"]] = np.exp(summary[["mean", "low", "high"]])
    return summary


def plot_band(axes: Axes, summary: pd.DataFrame, x: str, x_scale: float = 1.0, **style: object) -> None:
    """A mean line with its confidence band (rows of `mean_ci`) against column `x`."""
    part = summary.sort_values(x)
    xs = part[x].to_numpy(dtype=float) * x_scale
    axes.plot(xs, part["mean"], **style)
    axes.fill_between(xs, part["low"], part["high"], alpha=0.15, color=style.get("color"))


def _log_lines(table: pd.DataFrame, x: str, value: str, series: str, x_scale: float = 1.0) -> Figure:
    """One band per series on a log y axis: geometric mean and its interval, which stays positive."""
    summary = geometric_ci(table, [series, x], value)
    figure, axes = plt.subplots()
    for name, part in summary.groupby(series, sort=False):
        plot_band(axes, part, x, x_scale, label=label(str(name)), **series_style(str(name)))
    seeds = int(summary["n"].max()) if len(summary) else 0
    axes.legend(title=f"geometric mean, 95% CI over {seeds} seed(s)", title_fontsize=8)
    axes.set_yscale("log")
    return figure


def plot_total_jct_vs_num_jobs(table: pd.DataFrame) -> Figure:
    """Fig 6: total JCT vs the number of jobs, one line per scheduler; the top axis gives each job
    count's mean offered load when the table has it (a job count hides the load)."""
    table = complete_runs(table)
    require(table, ["workload.num_jobs", "scheduler", "total_jct"], "Fig 6")
    with figure_style():
        figure = _log_lines(table, "workload.num_jobs", "total_jct", "scheduler")
        axes = figure.axes[0]
        axes.set_xlabel("number of jobs")
        axes.set_ylabel("total JCT (s)")
        axes.set_title("Total JCT vs number of jobs")
        if "offered_load" in table.columns:
            loads = table.groupby("workload.num_jobs")["offered_load"].mean()
            top = axes.secondary_xaxis("top")
            top.set_xticks(loads.index.to_numpy(dtype=float), [f"{v:.2g}" for v in loads])
            top.set_xlabel("offered load (mean over seeds)")
    return figure


def plot_total_jct_vs_single_gpu_share(table: pd.DataFrame) -> Figure:
    """Fig 7: total JCT vs the percentage of single-GPU jobs, one line per scheduler."""
    table = complete_runs(table)
    require(table, ["workload.single_gpu_share", "scheduler", "total_jct"], "Fig 7")
    with figure_style():
        figure = _log_lines(table, "workload.single_gpu_share", "total_jct", "scheduler", x_scale=100.0)
        axes = figure.axes[0]
        axes.set_xlabel("single-GPU jobs (%)")
        axes.set_ylabel("total JCT (s)")
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


def plot_accuracy(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Fig 4 for one fitted predictor: percentage of jobs per error bucket of
    `prediction.accuracy_table`, seen and unseen jobs stacked."""
    figure, axes = plt.subplots(figsize=(6.0, 3.6), layout="constrained")
    total = table["jobs"].sum()
    scale = 100.0 / total if total else 0.0
    positions = np.arange(len(table))
    seen = table["seen_jobs"].to_numpy() * scale
    unseen = table["unseen_jobs"].to_numpy() * scale
    axes.bar(positions, seen, color="#4477aa", label="seen group")
    axes.bar(positions, unseen, bottom=seen, color="#ee6677", label="unseen group")
    axes.set_xticks(positions, table["bucket"].tolist())
    unit = "relative error" if table.attrs.get("error_column") == "rel_error" else "absolute error (iterations)"
    axes.set_xlabel(f"prediction error: {unit}")
    axes.set_ylabel("jobs (%)")
    axes.legend(frameon=False)
    if title:
        axes.set_title(title)
    return figure


def plot_placement_quality(table: pd.DataFrame) -> Figure:
    """Heavy-Edge vs ILP per Heavy-Edge mode: alpha penalty over the ILP optimum (mean and worst case
    per run) and median time per placement, as mean and 95% CI over seeds."""
    table = complete_runs(table)
    mode = "placement.mode"
    penalty = ["alpha_penalty_mean", "alpha_penalty_max"]
    require(table, [mode] + penalty + ["heavy_edge_time_median_s", "ilp_time_median_s"], "Heavy-Edge vs ILP")
    modes = list(dict.fromkeys(table[mode]))
    width = 0.8 / len(modes)
    with figure_style():
        figure, panels = plt.subplots(1, 2, figsize=(9.0, 3.6))
        for k, name in enumerate(modes):
            part = table[table[mode] == name]
            long = part.melt(id_vars=[SEED] if SEED in part.columns else [], value_vars=penalty,
                             var_name="column", value_name="value")
            summary = mean_ci(long, ["column"], "value").set_index("column").loc[penalty]
            positions = np.arange(len(penalty)) + (k - (len(modes) - 1) / 2) * width
            panels[0].bar(positions, 100 * summary["mean"], width, label=name,
                          yerr=[100 * (summary["mean"] - summary["low"]), 100 * (summary["high"] - summary["mean"])],
                          capsize=3)
        panels[0].set_xticks(np.arange(len(penalty)), ["mean", "worst"])
        panels[0].set_ylabel("Heavy-Edge alpha / ILP alpha - 1 (%)")
        panels[0].legend(title="Heavy-Edge mode")
        times = [(f"Heavy-Edge {name}", table[table[mode] == name], "heavy_edge_time_median_s") for name in modes]
        times.append((label("ilp"), table, "ilp_time_median_s"))
        for k, (name, part, column) in enumerate(times):
            summary = mean_ci(part.assign(all="all"), ["all"], column)
            panels[1].bar(k, 1e3 * summary["mean"].iloc[0], capsize=3,
                          yerr=[[1e3 * (summary["mean"] - summary["low"]).iloc[0]],
                                [1e3 * (summary["high"] - summary["mean"]).iloc[0]]])
        panels[1].set_xticks(range(len(times)), [name for name, _, _ in times], rotation=20, ha="right")
        panels[1].set_ylabel("median time per placement (ms)")
        panels[1].set_yscale("log")
        figure.suptitle("Heavy-Edge vs the ILP optimum")
    return figure


def plot_sensitivity(table: pd.DataFrame) -> Figure:
    """COMM_HEAVY x tau heatmaps of A-SRPT's mean total JCT, one panel per prediction error epsilon,
    all relative to the best cell of the whole study, so both the parameter and the error effect show."""
    table = complete_runs(table)
    keys = ["scheduler.comm_heavy", "scheduler.tau", "predictor.epsilon"]
    require(table, keys + ["total_jct"], "sensitivity")
    summary = mean_ci(table, keys, "total_jct")
    summary["relative"] = summary["mean"] / summary["mean"].min()
    low, high = summary["relative"].min(), summary["relative"].max()
    epsilons = sorted(summary["predictor.epsilon"].unique())
    with figure_style():
        figure, panels = plt.subplots(1, len(epsilons), figsize=(3.4 * len(epsilons), 3.4), squeeze=False)
        for axes, epsilon in zip(panels[0], epsilons):
            part = summary[summary["predictor.epsilon"] == epsilon]
            grid = part.pivot(index="scheduler.comm_heavy", columns="scheduler.tau", values="relative")
            image = axes.imshow(grid.to_numpy(), origin="lower", cmap="viridis_r", aspect="auto",
                                vmin=low, vmax=max(high, low * (1 + 1e-6)))
            axes.set_xticks(range(len(grid.columns)), [f"{v:g}" for v in grid.columns])
            axes.set_yticks(range(len(grid.index)), [f"{v:g}" for v in grid.index])
            middle = (low + high) / 2
            for (i, j), value in np.ndenumerate(grid.to_numpy()):
                axes.text(j, i, f"{value:.3f}", ha="center", va="center", fontsize=7,
                          color="white" if value > middle else "black")
            axes.set_xlabel("tau")
            axes.set_ylabel("COMM_HEAVY")
            axes.set_title(f"epsilon = {epsilon:g}")
            axes.grid(False)
        figure.colorbar(image, ax=panels[0].tolist(), label="total JCT / best cell")
        figure.suptitle("A-SRPT sensitivity (mean over seeds)")
    return figure


def plot_scheduler_comparison(table: pd.DataFrame) -> Figure:
    """Total JCT per scheduler on the default workload, geometric mean and 95% CI over seeds (log axis)."""
    table = complete_runs(table)
    require(table, ["scheduler", "total_jct"], "comparison")
    summary = geometric_ci(table, ["scheduler"], "total_jct")
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
        axes.set_title(f"Total JCT per scheduler{placers_note(table)}")
    return figure


def placers_note(table: pd.DataFrame) -> str:
    """' (A-SRPT: Heavy-Edge; baselines: First-fit)' when the baselines used another placer, else ''."""
    if "placer" not in table:
        return ""
    ours = table["scheduler"].str.startswith("asrpt")
    mine, theirs = set(table.loc[ours, "placer"]), set(table.loc[~ours, "placer"])
    if not theirs or theirs == mine:
        return ""
    return (f" (A-SRPT: {', '.join(label(p) for p in sorted(mine))}; "
            f"baselines: {', '.join(label(p) for p in sorted(theirs))})")
