"""plot_*(table) -> Figure: every paper figure from a collected results table (asrpt-bench-collect).

Each function takes the tidy table (one row per run, or run x scheduler), keeps complete runs and
summarises over seeds: on a linear axis the mean with a 95% Student-t interval (`mean_ci`), on a log
axis the geometric mean with the interval computed on the log (`geometric_ci`), which stays positive.
Every band (`plot_band`) and error bar (`plot_points`) is tagged with the kind of interval it draws
(artist gid "ci:geometric" or "ci:arithmetic"), so a test can check what each log axis shows.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, Locator, LogLocator, MaxNLocator, NullFormatter
from scipy import stats

from ..core import ConfigError
from ..tasks.compare import BASELINES
from .style import figure_style, label, series_style

SEED = "seed"
WCS = ("wcs_duration", "wcs_workload", "wcs_subtime")


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
    summary = pd.DataFrame(rows)
    summary.attrs["interval"] = "arithmetic"
    return summary


def geometric_ci(table: pd.DataFrame, by: list[str], value: str, confidence: float = 0.95) -> pd.DataFrame:
    """`mean_ci` of log(value), mapped back: geometric mean and an interval that stays positive, for
    ratios and for quantities drawn on a log axis."""
    summary = mean_ci(table.assign(**{value: np.log(table[value].astype(float))}), by, value, confidence)
    summary[["mean", "low", "high"]] = np.exp(summary[["mean", "low", "high"]])
    summary.attrs["interval"] = "geometric"
    return summary


def best_wcs_ratios(table: pd.DataFrame, point: list[str], schedulers: tuple[str, ...] = ("asrpt",),
                    candidates: tuple[str, ...] = WCS) -> pd.DataFrame:
    """Per point and scheduler: the best of `candidates` (default: the WCS variants; column `best_wcs`)
    and the geometric mean, low, high (a Student-t interval on the log ratio, so it stays positive
    and a ratio and its inverse get mirrored intervals) and n of total JCT / that reference."""
    require(table, point + [SEED, "scheduler", "total_jct"], "regime map")
    keyed = table.assign(**{c: table[c].astype(object).where(table[c].notna(), "null") for c in point})
    rows = []
    for key, part in keyed.groupby(point, sort=True):
        wcs = part[part["scheduler"].isin(candidates)]
        if wcs.empty:
            raise ConfigError(f"regime map: point {dict(zip(point, key))} has no run of {list(candidates)}")
        best = wcs.groupby("scheduler")["total_jct"].mean().idxmin()
        reference = wcs[wcs["scheduler"] == best].set_index(SEED)["total_jct"]
        for name in schedulers:
            runs = part[part["scheduler"] == name].set_index(SEED)["total_jct"]
            ratio = (runs / reference).dropna().rename("ratio").reset_index().assign(scheduler=name, best_wcs=best)
            rows.append(ratio.assign(**dict(zip(point, key))))
    ratios = pd.concat(rows, ignore_index=True)
    summary = geometric_ci(ratios, point + ["scheduler", "best_wcs"], "ratio")
    summary["excludes_one"] = (summary["n"] >= 2) & ((summary["low"] > 1) | (summary["high"] < 1))
    return summary


class RatioLocator(Locator):
    """Major ticks of a log ratio axis: 1, 2 and 5 of every decade, or, when fewer than three of those
    fall inside the view (a ratio that stays within a decade, e.g. 0.8-1.6), evenly spaced round
    values, so that a reader has more than one labelled tick to read the axis by."""

    MIN_LABELLED = 3

    def __call__(self) -> np.ndarray:
        low, high = self.axis.get_view_interval()
        return self.tick_values(low, high)

    def tick_values(self, vmin: float, vmax: float) -> np.ndarray:
        low, high = sorted((float(vmin), float(vmax)))
        low = max(low, np.finfo(float).tiny)
        decades = LogLocator(subs=(1.0, 2.0, 5.0)).tick_values(low, high)
        if ((decades >= low) & (decades <= high)).sum() >= self.MIN_LABELLED:
            return decades
        even = MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]).tick_values(low, high)
        return even[even > 0]


def ratio_axis(axes: plt.Axes) -> None:
    """A log axis for ratios: plain major labels (at least three in view, RatioLocator), no minor labels,
    a line at 1."""
    axes.axhline(1.0, color="black", linewidth=0.8)
    axes.set_yscale("log")
    axes.yaxis.set_major_locator(RatioLocator())
    axes.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    axes.yaxis.set_minor_formatter(NullFormatter())


def interval_gid(summary: pd.DataFrame) -> str:
    """The gid of the artists drawing `summary`'s interval: "ci:geometric", "ci:arithmetic" or "ci:unknown"."""
    return f"ci:{summary.attrs.get('interval', 'unknown')}"


def plot_band(axes: Axes, summary: pd.DataFrame, x: str, x_scale: float = 1.0, **style: object) -> None:
    """A mean line with its confidence band (rows of `mean_ci` or `geometric_ci`) against column `x`."""
    part = summary.sort_values(x)
    xs = part[x].to_numpy(dtype=float) * x_scale
    axes.plot(xs, part["mean"], **style)
    band = axes.fill_between(xs, part["low"], part["high"], alpha=0.15, color=style.get("color"))
    band.set_gid(interval_gid(summary))


def plot_points(axes: Axes, summary: pd.DataFrame, positions: np.ndarray, scale: float = 1.0,
                **style: object) -> None:
    """Each row of `summary` (`mean_ci` or `geometric_ci`) as a point at `positions` with its interval
    as an error bar, every value times `scale`: the form for a log axis, where a bar's height means nothing."""
    mean = scale * summary["mean"].to_numpy(dtype=float)
    errors = [mean - scale * summary["low"].to_numpy(dtype=float), scale * summary["high"].to_numpy(dtype=float) - mean]
    drawn = axes.errorbar(positions, mean, yerr=errors, linestyle="none", capsize=3, **style)
    for collection in drawn.lines[2]:
        collection.set_gid(interval_gid(summary))


def coincident_labels(summary: pd.DataFrame, series: str, x: str | list[str], x_scale: float = 1.0,
                      names: Callable[[str], str] = label) -> dict[str, str]:
    """Legend label (`names`) per series of `summary`; a series whose mean equals an earlier one's says
    so, since its line hides under that one: "B (= A)" at every `x`, "B (= A at x 500, 1000)" or
    "B (= A at 12 of 18 points)" at some (the first such A; an exact match first)."""
    curves = {str(name): part.set_index(x)["mean"] for name, part in summary.groupby(series, sort=False)}
    labels: dict[str, str] = {}
    for name, curve in curves.items():
        notes = [_coincidence(names(other), curves[other], curve, x_scale) for other in labels]
        exact = [note for note in notes if note and " at " not in note]
        partial = [note for note in notes if note and " at " in note]
        labels[name] = " ".join([names(name)] + (exact or partial)[:1])
    return labels


def _coincidence(other: str, first: pd.Series, second: pd.Series, x_scale: float) -> str:
    """"(= other)" when `second` equals `first` wherever both are drawn, "(= other at ...)" when at some."""
    common = first.index.intersection(second.index)
    same = [value for value in common if np.isclose(first[value], second[value], rtol=1e-9, atol=0.0)]
    if not same:
        return ""
    if len(same) == len(common):
        return f"(= {other})"
    if isinstance(first.index, pd.MultiIndex) or len(same) > 4:
        return f"(= {other} at {len(same)} of {len(common)} points)"
    return f"(= {other} at x {', '.join(f'{float(v) * x_scale:g}' for v in same)})"


def plot_log_lines(axes: Axes, table: pd.DataFrame, x: str, value: str, series: str, x_scale: float = 1.0) -> None:
    """One band per series on a log y axis (geometric mean and its interval, which stays positive);
    coinciding series say so in the legend."""
    summary = geometric_ci(table, [series, x], value)
    labels = coincident_labels(summary, series, x, x_scale)
    for name, part in summary.groupby(series, sort=False):
        plot_band(axes, part, x, x_scale, label=labels[str(name)], **series_style(str(name)))
    seeds = int(summary["n"].max()) if len(summary) else 0
    axes.legend(title=f"geometric mean, 95% CI over {seeds} seed(s)", title_fontsize=7, fontsize=7,
                loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes.set_yscale("log")


def _ratio_panel(axes: Axes, table: pd.DataFrame, x: str, x_scale: float) -> pd.DataFrame:
    """A-SRPT / best baseline vs `x`: paired per seed, geometric mean and 95% CI on the log ratio
    (`best_wcs_ratios` over every baseline); filled markers where the CI excludes 1, each point named
    after its best baseline."""
    candidates = tuple(name for name in BASELINES if name in set(table["scheduler"]))
    summary = best_wcs_ratios(table, [x], candidates=candidates)
    summary = summary.assign(**{x: summary[x].astype(float)}).sort_values(x)
    style = series_style("asrpt")
    plot_band(axes, summary, x, x_scale, color=style["color"], label=label("asrpt"))
    for excludes, face in ((True, style["color"]), (False, "white")):
        chosen = summary[summary["excludes_one"] == excludes]
        axes.scatter(x_scale * chosen[x], chosen["mean"], s=26, facecolors=face, edgecolors=style["color"], zorder=3)
    for _, row in summary.iterrows():
        axes.annotate(f"{row['mean']:.3g}\nvs {label(row['best_wcs'])}", (x_scale * row[x], row["mean"]),
                      textcoords="offset points", xytext=(0, 7), ha="center", va="bottom", fontsize=6.5,
                      linespacing=1.0)
    ratio_axis(axes)
    axes.set_ylabel("total JCT: A-SRPT / best baseline")
    axes.legend(title=f"geometric mean, 95% CI over {int(summary['n'].max())} seeds; filled: CI excludes 1",
                title_fontsize=7, fontsize=7)
    return summary


def _trend(table: pd.DataFrame, x: str, x_scale: float, x_label: str, title: str) -> Figure:
    """Left: A-SRPT / best baseline vs `x`; right: every scheduler's total JCT (log)."""
    with figure_style():
        figure, (left, right) = plt.subplots(1, 2, figsize=(10.5, 3.9), width_ratios=(1.15, 1.0))
        _ratio_panel(left, table, x, x_scale)
        plot_log_lines(right, table, x, "total_jct", "scheduler", x_scale)
        right.set_ylabel("total JCT (s)")
        right.set_title("absolute totals", fontsize=9)
        for axes in (left, right):
            axes.set_xlabel(x_label)
        figure.suptitle(title)
    return figure


def _label_loads(axes: Axes, table: pd.DataFrame, x: str) -> None:
    """Each x tick of Fig 6 also names its mean offered load (a job count hides the load)."""
    loads = table.groupby(x)["offered_load"].mean()
    axes.set_xticks(loads.index.to_numpy(dtype=float), [f"{n:g}\nload {v:.2g}" for n, v in loads.items()])
    axes.minorticks_off()


def plot_total_jct_vs_num_jobs(table: pd.DataFrame) -> Figure:
    """Fig 6: A-SRPT / best baseline vs the number of jobs (main panel) and every scheduler's total JCT
    (right); each job count's mean offered load under its tick when the table has it."""
    table = complete_runs(table)
    x = "workload.num_jobs"
    require(table, [x, SEED, "scheduler", "total_jct"], "Fig 6")
    figure = _trend(table, x, 1.0, "number of jobs", "Fig 6: A-SRPT vs the best baseline by number of jobs")
    for axes in figure.axes:
        axes.set_xscale("log")
        if "offered_load" in table.columns:
            _label_loads(axes, table, x)
    return figure


def plot_total_jct_vs_single_gpu_share(table: pd.DataFrame) -> Figure:
    """Fig 7: A-SRPT / best baseline vs the percentage of single-GPU jobs (main panel) and every
    scheduler's total JCT (right)."""
    table = complete_runs(table)
    x = "workload.single_gpu_share"
    require(table, [x, SEED, "scheduler", "total_jct"], "Fig 7")
    return _trend(table, x, 100.0, "single-GPU jobs (%)", "Fig 7: A-SRPT vs the best baseline by single-GPU job share")


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


def worst_gap(table: pd.DataFrame) -> float:
    """Heavy-Edge's worst alpha gap: the maximum over instances of the per-instance gap
    alpha_Heavy-Edge / alpha_ILP - 1, from per-instance rows (`gap`, placement_study*.csv) or per-run rows
    (`alpha_penalty_max`, each run's maximum over its instances). The one definition the figure,
    REPRODUCTION.md and the README quote."""
    column = "gap" if "gap" in table.columns else "alpha_penalty_max"
    return float(table[column].max())


WORST_GAP_TITLE = "worst gap: max over instances\nof the per-instance gap"


def _labelled_points(axes: Axes, positions: np.ndarray, values: np.ndarray, **style: object) -> None:
    """Points with their value printed beside them, so a 0% is as visible as 200%."""
    axes.scatter(positions, values, zorder=3, **style)
    for x, value in zip(positions, values):
        axes.annotate(f"{value:.3g}%", (x, value), textcoords="offset points", xytext=(6, 0), va="center", fontsize=7)


def _placement_gaps(mean_axes: Axes, worst_axes: Axes, table: pd.DataFrame, modes: list[str]) -> None:
    """Per Heavy-Edge mode: the mean gap per run (mean, 95% CI over seeds) and the worst gap (`worst_gap`)."""
    positions = np.arange(len(modes))
    means = pd.concat([mean_ci(table[table["placement.mode"] == m].assign(all=m), ["all"], "alpha_penalty_mean")
                       for m in modes], ignore_index=True)
    plot_points(mean_axes, means, positions, scale=100.0, color="black", marker="o")
    _labelled_points(mean_axes, positions, 100 * means["mean"].to_numpy(), color="black", s=0)
    worst = np.array([100 * worst_gap(table[table["placement.mode"] == m]) for m in modes])
    _labelled_points(worst_axes, positions, worst, color="black", marker="D", s=24)
    for axes, title in ((mean_axes, "mean gap per run\n(mean, 95% CI over seeds)"), (worst_axes, WORST_GAP_TITLE)):
        axes.set_xticks(positions, modes)
        axes.set_xlim(-0.5, len(modes) - 0.3)
        axes.set_xlabel("Heavy-Edge mode")
        axes.set_ylabel("alpha_HE / alpha_ILP - 1 (%)")
        axes.set_title(title, fontsize=9)
        axes.axhline(0.0, color="grey", linewidth=0.8)


def _placement_times(axes: Axes, table: pd.DataFrame, modes: list[str]) -> None:
    """Median time per placement per run: geometric mean and 95% CI over seeds, points on a log axis."""
    times = [(f"Heavy-Edge {m}", table[table["placement.mode"] == m], "heavy_edge_time_median_s") for m in modes]
    times.append((label("ilp"), table, "ilp_time_median_s"))
    for k, (name, part, column) in enumerate(times):
        plot_points(axes, geometric_ci(part.assign(all=name), ["all"], column), np.array([k]), scale=1e3,
                    color="black", marker="o")
    axes.set_xticks(range(len(times)), [name for name, _, _ in times], rotation=20, ha="right")
    axes.set_ylabel("median time per placement (ms)")
    axes.set_title("time (geometric mean, 95% CI)", fontsize=9)
    axes.set_yscale("log")


def plot_placement_quality(table: pd.DataFrame) -> Figure:
    """Heavy-Edge vs ILP per Heavy-Edge mode: the mean alpha gap over the ILP optimum per run (mean and
    95% CI over seeds), the worst gap (`worst_gap`) and the median time per placement (geometric mean,
    95% CI, log axis); every gap is printed, so refined's 0% shows."""
    table = complete_runs(table)
    require(table, ["placement.mode", "alpha_penalty_mean", "alpha_penalty_max", "heavy_edge_time_median_s",
                    "ilp_time_median_s"], "Heavy-Edge vs ILP")
    modes = list(dict.fromkeys(table["placement.mode"]))
    with figure_style():
        figure, panels = plt.subplots(1, 3, figsize=(11.0, 3.6))
        _placement_gaps(panels[0], panels[1], table, modes)
        _placement_times(panels[2], table, modes)
        figure.suptitle(f"Heavy-Edge vs the ILP optimum ({int(table[SEED].nunique()) if SEED in table else 1} seeds)")
    return figure


def plot_scheduler_comparison(table: pd.DataFrame) -> Figure:
    """Total JCT per scheduler on the default workload: points with the geometric mean and its 95% CI
    over seeds (log axis, where a bar's height would mean nothing), each seed's value as a dot."""
    table = complete_runs(table)
    require(table, ["scheduler", "total_jct"], "comparison")
    summary = geometric_ci(table, ["scheduler"], "total_jct")
    order = [name for name in table["scheduler"].drop_duplicates()]
    summary = summary.set_index("scheduler").loc[order].reset_index()
    with figure_style():
        figure, axes = plt.subplots()
        for k, name in enumerate(order):
            style = series_style(name)
            plot_points(axes, summary.iloc[[k]], np.array([k]), color=style["color"], marker=style["marker"])
            seeds = table.loc[table["scheduler"] == name, "total_jct"]
            axes.scatter(np.full(len(seeds), k + 0.18), seeds, color=style["color"], s=6, alpha=0.6)
        axes.set_xticks(np.arange(len(order)), [label(n) for n in order], rotation=25, ha="right")
        axes.set_ylabel("total JCT (s)")
        axes.set_yscale("log")
        axes.set_title(f"Total JCT per scheduler{placers_note(table)}\n(geometric mean, 95% CI over "
                       f"{int(summary['n'].max())} seeds; dots: seeds)", fontsize=9)
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
