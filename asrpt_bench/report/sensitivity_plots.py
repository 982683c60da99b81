"""The COMM_HEAVY x tau x epsilon x offered-load study of A-SRPT (experiment `sensitivity`).

One row per offered load. The first panels, one per prediction error epsilon, are COMM_HEAVY x tau
heatmaps of A-SRPT's total JCT (geometric mean over seeds) relative to the best cell of that load, so
both the knobs' effect and the error's show; a cell's number is that ratio. The last panel puts the
run's sum C / lower bound on OPT (solid, an upper bound on the true ratio) beside its Theorem 1 bound
(dashed) against epsilon, per tau at the paper's COMM_HEAVY (1.5): geometric mean and 95% CI on the log
over seeds (plots.geometric_ci), on a log axis.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .plots import SEED, coincident_labels, complete_runs, geometric_ci, plot_band, require
from .style import figure_style

TAU, COMM_HEAVY, EPSILON, LOAD = "scheduler.tau", "scheduler.comm_heavy", "predictor.epsilon", "workload.target_load"
BOUND_COMM_HEAVY = 1.5
"""The COMM_HEAVY of the bound panel: the paper's value (schedulers/asrpt.py DEFAULT_COMM_HEAVY), or the
swept value nearest to it when the table lacks it (a partial sweep)."""
_TAB10 = plt.get_cmap("tab10")


def relative_total_jct(table: pd.DataFrame) -> pd.DataFrame:
    """Per (load, epsilon, COMM_HEAVY, tau): the geometric mean of total JCT over seeds, and `relative`, that
    mean over the smallest one at the same load."""
    summary = geometric_ci(table, [LOAD, EPSILON, COMM_HEAVY, TAU], "total_jct")
    best = summary.groupby(LOAD)["mean"].transform("min")
    return summary.assign(relative=summary["mean"] / best)


def _heatmap(axes: Axes, part: pd.DataFrame, low: float, high: float) -> plt.cm.ScalarMappable:
    grid = part.pivot(index=COMM_HEAVY, columns=TAU, values="relative")
    image = axes.imshow(grid.to_numpy(), origin="lower", cmap="viridis_r", aspect="auto", vmin=low,
                        vmax=max(high, low * (1 + 1e-6)))
    axes.set_xticks(range(len(grid.columns)), [f"{v:g}" for v in grid.columns])
    axes.set_yticks(range(len(grid.index)), [f"{v:g}" for v in grid.index])
    middle = (low + high) / 2
    for (i, j), value in np.ndenumerate(grid.to_numpy()):
        axes.text(j, i, f"{value:.3f}", ha="center", va="center", fontsize=6,
                  color="white" if value > middle else "black")
    axes.grid(False)
    return image


def _bound_panel(axes: Axes, part: pd.DataFrame, load: float) -> None:
    """sum C / lower bound (solid) and the Theorem 1 bound (dashed) vs epsilon, per tau, at offered load
    `load`; a tau whose line equals another's says so in the legend."""
    values = part[COMM_HEAVY].astype(float)
    chosen = min(values.unique(), key=lambda value: abs(value - BOUND_COMM_HEAVY))
    part = part[np.isclose(values, chosen)]
    for value, text, style in (("ratio_to_lower_bound", "sum C / LB", {"marker": "o"}),
                               ("theorem1_bound", "Theorem 1 bound", {"linestyle": "--"})):
        summary = geometric_ci(part, [TAU, EPSILON], value)
        labels = coincident_labels(summary, TAU, EPSILON, names=lambda tau, text=text: f"{text}, tau={float(tau):g}")
        for k, (tau, at_tau) in enumerate(summary.groupby(TAU, sort=True)):
            plot_band(axes, at_tau, EPSILON, color=_TAB10(k % 10), label=labels[str(tau)], **style)
    axes.set_yscale("log")
    axes.set_xlabel("prediction error epsilon")
    axes.set_ylabel("sum C / lower bound, bound (log)")
    axes.set_title(f"load {load:g}, COMM_HEAVY = {chosen:g}:\nsum C / LB vs Theorem 1 bound", fontsize=8)


def plot_sensitivity(table: pd.DataFrame) -> Figure:
    """Rows: offered load; per epsilon a COMM_HEAVY x tau heatmap of total JCT / the load's best cell; last,
    sum C / lower bound against the Theorem 1 bound."""
    table = complete_runs(table)
    require(table, [LOAD, EPSILON, COMM_HEAVY, TAU, SEED, "total_jct", "ratio_to_lower_bound", "theorem1_bound"],
            "sensitivity")
    summary = relative_total_jct(table)
    loads, epsilons = sorted(summary[LOAD].unique()), sorted(summary[EPSILON].unique())
    low, high = summary["relative"].min(), summary["relative"].max()
    seeds = int(table[SEED].nunique())
    with figure_style():
        figure, panels = plt.subplots(len(loads), len(epsilons) + 1, figsize=(3.0 * (len(epsilons) + 1) + 2.2,
                                                                              2.8 * len(loads)), squeeze=False)
        for r, load in enumerate(loads):
            for c, epsilon in enumerate(epsilons):
                axes = panels[r][c]
                image = _heatmap(axes, summary[(summary[LOAD] == load) & (summary[EPSILON] == epsilon)], low, high)
                axes.set_title(f"load {float(load):g}, epsilon = {float(epsilon):g}", fontsize=8)
                axes.set_xlabel("tau")
                axes.set_ylabel("COMM_HEAVY")
            _bound_panel(panels[r][-1], table[table[LOAD] == load], float(load))
        panels[0][-1].legend(title=f"geometric mean, 95% CI\nover {seeds} seed(s)", title_fontsize=7, fontsize=7,
                             loc="upper left", bbox_to_anchor=(1.02, 1.0))
        figure.colorbar(image, ax=panels[:, :-1].ravel().tolist(), label="total JCT / best cell of the load")
        figure.suptitle(f"A-SRPT: COMM_HEAVY x tau x epsilon x offered load (geometric mean over {seeds} seeds)")
    return figure
