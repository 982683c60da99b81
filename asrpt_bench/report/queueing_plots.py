"""The simulator against queueing theory: each scheduler's mean response time on the M/G/1 queue over
the closed form of its discipline (experiment `queueing_theory`, docs/queueing-theory.md).

Per point (size variability C^2 x load x scheduler) the measured / closed-form ratio is averaged over the
seeds (independent replications) with a Student-t interval at the family-wise level: with m points
each interval has confidence 1 - 0.05 / m (Bonferroni), so with a correct simulator every closed form
lies inside its interval with probability at least 95%, and a single point outside is evidence of a
fault rather than the one-in-twenty miss that 95% intervals at every point would make likely.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from ..theory.queueing import mean_response_time
from ..workloads.queueing import size_distribution
from .plots import SEED, complete_runs, mean_ci, plot_points, require
from .style import figure_style, series_style

LOAD = "workload.load"
SCV = "workload.size_scv"
FAMILY_CONFIDENCE = 0.95
DISCIPLINE_LABELS = {"fcfs": "FCFS", "sjf": "SJF", "psjf": "PSJF", "srpt": "SRPT"}
COLUMNS = [LOAD, SCV, SEED, "scheduler", "discipline", "mean_response_s", "formula_mean_response_s",
           "mean_size_s"]


def point_confidence(points: int, family: float = FAMILY_CONFIDENCE) -> float:
    """The per-point confidence whose Bonferroni union over `points` intervals has level `family`."""
    return 1.0 - (1.0 - family) / max(points, 1)


def queueing_intervals(table: pd.DataFrame) -> pd.DataFrame:
    """Per size variability (C^2), load and scheduler: the mean over seeds of measured / closed-form mean
    response time with its family-wise interval (low, high, n), the closed form in seconds, and `inside`
    (the interval holds 1: the closed form lies inside the measurement's interval)."""
    table = complete_runs(table)
    require(table, COLUMNS, "queueing theory")
    table = table.assign(ratio=table["mean_response_s"].astype(float) / table["formula_mean_response_s"].astype(float))
    points = [SCV, LOAD, "scheduler", "discipline"]
    count = len(table.groupby(points, sort=False))
    summary = mean_ci(table, points, "ratio", confidence=point_confidence(count))
    formulas = table.groupby(points, sort=True)[["formula_mean_response_s", "mean_size_s"]].first().reset_index()
    summary = summary.merge(formulas, on=points)
    summary["inside"] = (summary["low"] <= 1.0) & (summary["high"] >= 1.0)
    summary.attrs.update(confidence=point_confidence(count), interval="arithmetic")
    return summary


def plot_queueing_theory(table: pd.DataFrame) -> Figure:
    """One panel per size variability (C^2): mean response time / mean size vs load, the closed form of each
    discipline as a line and each scheduler's measurement as a point with its family-wise interval."""
    summary = queueing_intervals(table)
    groups = list(summary.groupby(SCV, sort=True))
    loads = summary[LOAD].astype(float)
    grid = np.linspace(loads.min() - 0.02, min(loads.max() + 0.02, 0.95), 60)
    with figure_style():
        figure, panels = plt.subplots(1, len(groups), figsize=(5.0 * len(groups), 3.8), squeeze=False)
        for axes, (scv, part) in zip(panels[0], groups):
            distribution = size_distribution(1.0, float(scv))
            for (scheduler, discipline), rows in part.groupby(["scheduler", "discipline"], sort=True):
                style = series_style(str(scheduler))
                curve = [mean_response_time(str(discipline), distribution, load) for load in grid]
                axes.plot(grid, curve, color=style["color"], linewidth=1.0,
                          label=f"{DISCIPLINE_LABELS[str(discipline)]}: {scheduler}")
                formula = rows["formula_mean_response_s"] / rows["mean_size_s"]
                scaled = rows[["mean", "low", "high"]].mul(formula, axis=0)
                scaled.attrs.update(summary.attrs)
                plot_points(axes, scaled, rows[LOAD].to_numpy(dtype=float), marker=style["marker"],
                            color=style["color"], markersize=4, linewidth=0.8)
            axes.set_title(f"{distribution.name} sizes, C$^2$ = {float(scv):g}")
            axes.set_xlabel("load $\\rho$")
            axes.set_ylabel("mean response time / mean size")
        confidence = summary.attrs["confidence"]
        panels[0][0].legend(fontsize=7, title=f"lines: M/G/1 closed forms; points: simulated, mean over "
                                              f"{int(summary['n'].max())} seeds,\n{100 * confidence:.2f}% t-interval "
                                              f"(95% family-wise over {len(summary)} points)", title_fontsize=6)
        figure.suptitle("The simulator against queueing theory: one GPU, Poisson arrivals")
    return figure


def queueing_text(table: pd.DataFrame) -> str:
    """The check in one line: at how many points the closed form lies inside its family-wise interval, the
    range of measured / closed form, and the widest interval, per size variability."""
    summary = queueing_intervals(table)
    parts = []
    for scv, part in summary.groupby(SCV, sort=True):
        parts.append(f"C² {float(scv):g}: inside at {int(part['inside'].sum())} of {len(part)} points, measured / "
                     f"closed form {part['mean'].min():.3f}-{part['mean'].max():.3f}, widest interval "
                     f"[{part.loc[(part['high'] - part['low']).idxmax(), 'low']:.3f}, "
                     f"{part.loc[(part['high'] - part['low']).idxmax(), 'high']:.3f}]")
    loads = table[LOAD].astype(float)
    return (f"- The simulator against queueing theory (one GPU, Poisson arrivals, loads {loads.min():g}-{loads.max():g}, "
            f"{int(summary['n'].max())} seeds; fifo, spjf, psjf_oracle, srtf_oracle against the M/G/1 closed forms "
            f"of FCFS, SJF, PSJF, SRPT; {100 * summary.attrs['confidence']:.2f}% t-intervals, 95% family-wise over "
            f"{len(summary)} points): " + "; ".join(parts) + ".")
