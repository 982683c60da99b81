"""The regime map and the injection study: A-SRPT's total JCT over the best work-conserving baseline.

Best WCS at a point (trace x key setting x load, or x injected jobs) is the WCS variant
(wcs_duration, wcs_workload, wcs_subtime) with the lowest mean total JCT over the point's seeds;
the ratio A-SRPT / best WCS is formed per seed against that one variant (choosing the minimum per
seed would favour WCS by the noise of three draws) and shown as the geometric mean over seeds with a
95% Student-t CI on the log ratio. A filled marker means the CI excludes 1 (A-SRPT reliably better below 1, worse above); a
point with one seed has no CI and is never filled.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .plots import SEED, best_wcs_ratios, complete_runs, plot_band, plot_log_lines, ratio_axis, require
from .style import figure_style, label, series_style

TRACE = "workload.name"
LOAD = "workload.target_load"
SIGMA = "workload.recurrence.sigma"
NEW_SHARE = "workload.recurrence.new_group_share"
INJECTED = "workload.inject_jobs"


def axis_label(value: object, axis: str) -> str:
    """How a value of the regime maps' key axis (sigma, or the new-group share) is named in a figure."""
    if axis == SIGMA:
        return "sigma = null (no information)" if value == "null" else f"sigma = {float(value):g}"
    return f"new groups = {100 * float(value):.0f}%"


def series_colours(values: pd.Series) -> dict[object, object]:
    """A sequential colour per value in increasing order (viridis), "null" (no information) last in grey."""
    known = sorted({float(v) for v in values if v != "null"})
    colours = dict(zip(known, plt.get_cmap("viridis")(np.linspace(0, 0.9, len(known)))))
    ordered = {v: colours[float(v)] for v in sorted((v for v in set(values) if v != "null"), key=float)}
    return {**ordered, **({"null": "grey"} if "null" in set(values) else {})}


def _ratio_lines(axes: plt.Axes, summary: pd.DataFrame, x: str, series: str) -> None:
    """A-SRPT / best WCS per value of `series` (band, markers filled where the CI excludes 1), and its
    oracle variant dashed in the same colour."""
    for value, colour in series_colours(summary[series]).items():
        part = summary[summary[series] == value].assign(**{x: lambda t: t[x].astype(float)}).sort_values(x)
        mine = part[part["scheduler"] == "asrpt"]
        plot_band(axes, mine, x, color=colour, label=axis_label(value, series))
        for excludes, face in ((True, colour), (False, "white")):
            chosen = mine[mine["excludes_one"] == excludes]
            axes.scatter(chosen[x], chosen["mean"], s=22, facecolors=face, edgecolors=colour, zorder=3)
        oracle = part[part["scheduler"] == "asrpt_oracle"]
        axes.plot(oracle[x], oracle["mean"], color=colour, linestyle="--", linewidth=0.9)
    ratio_axis(axes)


def _regime(table: pd.DataFrame, axis: str, title: str) -> Figure:
    table = complete_runs(table)
    require(table, [TRACE, LOAD, axis, SEED, "scheduler", "total_jct"], title)
    summary = best_wcs_ratios(table, [TRACE, axis, LOAD], schedulers=("asrpt", "asrpt_oracle"))
    traces = list(dict.fromkeys(table[TRACE]))
    seeds = int(summary["n"].max())
    with figure_style():
        figure, panels = plt.subplots(1, len(traces), figsize=(4.8 * len(traces), 4.4), squeeze=False, sharey=True,
                                      layout="constrained")
        for axes, trace in zip(panels[0], traces):
            _ratio_lines(axes, summary[summary[TRACE] == trace], LOAD, axis)
            axes.set_title(trace)
            axes.set_xlabel("offered load (workload.target_load)")
        panels[0][0].set_ylabel("total JCT: A-SRPT / best WCS")
        handles, labels = panels[0][-1].get_legend_handles_labels()
        handles.append(Line2D([], [], color="grey", linestyle="--", linewidth=0.9))
        labels.append("dashed: A-SRPT (oracle) / best WCS")
        figure.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 4),
                      title=f"geometric mean and 95% CI over {seeds} seeds; filled marker: the CI excludes 1")
        figure.suptitle(title)
    return figure


def plot_regime_map(table: pd.DataFrame) -> Figure:
    """A-SRPT / best WCS vs offered load, one line per key informativeness sigma (its oracle variant
    dashed), one panel per trace."""
    return _regime(table, SIGMA, "Regime map: A-SRPT vs the best WCS baseline by key informativeness")


def plot_regime_map_novelty(table: pd.DataFrame) -> Figure:
    """A-SRPT / best WCS vs offered load, one line per new-group share, one panel per trace."""
    return _regime(table, NEW_SHARE, "Regime map: A-SRPT vs the best WCS baseline by new-group share")


def plot_injection_study(table: pd.DataFrame) -> Figure:
    """Left: A-SRPT and its oracle variant over the best WCS vs injected unseen gang jobs; right: total
    JCT per scheduler (plots.plot_log_lines: coinciding schedulers say so in the legend)."""
    table = complete_runs(table)
    require(table, [INJECTED, SEED, "scheduler", "total_jct"], "injection study")
    summary = best_wcs_ratios(table, [INJECTED], schedulers=("asrpt", "asrpt_oracle"))
    with figure_style():
        figure, (left, right) = plt.subplots(1, 2, figsize=(10.0, 3.8))
        for name in ("asrpt", "asrpt_oracle"):
            part = summary[summary["scheduler"] == name].assign(**{INJECTED: lambda t: t[INJECTED].astype(float)})
            style = series_style(name)
            plot_band(left, part.sort_values(INJECTED), INJECTED, color=style["color"], label=label(name))
            filled = part[part["excludes_one"]]
            left.scatter(filled[INJECTED], filled["mean"], s=30, color=style["color"], zorder=3)
        ratio_axis(left)
        left.set_xlabel("injected unseen gang jobs")
        left.set_ylabel("total JCT / best WCS")
        left.legend(title=f"geometric mean, 95% CI over {int(summary['n'].max())} seeds; filled: CI excludes 1",
                    title_fontsize=7)
        plot_log_lines(right, table, INJECTED, "total_jct", "scheduler")
        right.set_xlabel("injected unseen gang jobs")
        right.set_ylabel("total JCT (s)")
        figure.suptitle("Injection study: long gang jobs of never-seen groups")
    return figure

