"""The heterogeneity study (experiment `heterogeneity`, pending): does A-SRPT's ranking against the best
work-conserving baseline change when GPUs differ? Gavel's trace on Gavel's cluster of V100, P100 and K80
pools, per pool choice (placement.pool) and A-SRPT's virtual machine (scheduler.virtual_gpus).

Ratios are those of the regime map (plots.best_wcs_ratios): per point (pool choice x virtual machine x
load) the best WCS is the WCS variant with the lowest mean total JCT over the point's seeds, and each
scheduler's total JCT / that variant is the geometric mean over seeds with a 95% Student-t interval on
the log. fifo_replan is the migrating FIFO and srtf the preemptive reference: their ratios beside FIFO's
measure the price of non-migration and of non-preemption on this cluster.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from .plots import SEED, best_wcs_ratios, complete_runs, plot_band, ratio_axis, require
from .regime_plots import LOAD
from .style import figure_style

POOL = "placement.pool"
VIRTUAL_GPUS = "scheduler.virtual_gpus"
POINT = [POOL, VIRTUAL_GPUS, LOAD]
SHOWN = ("asrpt", "asrpt+easy", "asrpt_oracle", "fifo", "fifo+easy", "fifo_replan", "spjf+easy", "srtf")
"""The schedulers drawn and counted against the best WCS (those of the table, in this order)."""


def heterogeneity_ratios(table: pd.DataFrame) -> pd.DataFrame:
    """Per pool choice, virtual machine, load and scheduler of SHOWN: total JCT / the best WCS (geometric
    mean, low, high, n over seeds; `best_wcs` names it)."""
    table = complete_runs(table)
    require(table, POINT + [SEED, "scheduler", "total_jct"], "heterogeneity")
    present = tuple(name for name in SHOWN if name in set(table["scheduler"]))
    return best_wcs_ratios(table, POINT, schedulers=present)


def intervals_beside_one(summary: pd.DataFrame) -> tuple[int, int]:
    """At how many rows of `summary` the interval (over at least two seeds) lies below 1, and above 1."""
    seeded = summary[summary["n"] >= 2]
    return int((seeded["high"] < 1).sum()), int((seeded["low"] > 1).sum())


def plot_heterogeneity(table: pd.DataFrame) -> Figure:
    """One panel per virtual machine (rows) and pool choice (columns): each scheduler of SHOWN as total JCT /
    best WCS over offered load."""
    summary = heterogeneity_ratios(table)
    pools = list(dict.fromkeys(summary[POOL]))
    machines = list(dict.fromkeys(summary[VIRTUAL_GPUS]))
    names = [name for name in SHOWN if name in set(summary["scheduler"])]
    colours = dict(zip(names, plt.get_cmap("tab10")(np.arange(len(names)))))
    with figure_style():
        figure, panels = plt.subplots(len(machines), len(pools), figsize=(4.6 * len(pools), 2.9 * len(machines)),
                                      squeeze=False, sharex=True, sharey=True)
        for r, machine in enumerate(machines):
            for c, pool in enumerate(pools):
                axes = panels[r][c]
                part = summary[(summary[POOL] == pool) & (summary[VIRTUAL_GPUS] == machine)]
                part = part.assign(**{LOAD: part[LOAD].astype(float)})
                for name in names:
                    line = part[part["scheduler"] == name]
                    if not line.empty:
                        plot_band(axes, line, LOAD, color=colours[name],
                                  linestyle="--" if name.startswith("asrpt") else "-", label=name)
                ratio_axis(axes)
                axes.set_title(f"placement.pool={pool}, virtual_gpus={machine}", fontsize=8)
            panels[r][0].set_ylabel("total JCT / best WCS")
        for axes in panels[-1]:
            axes.set_xlabel("offered load (workload.target_load)")
        panels[0][-1].legend(fontsize=5, title="geometric mean, 95% CI over seeds", title_fontsize=6)
        figure.suptitle("Heterogeneity: each scheduler / the best WCS on a cluster of V100, P100 and K80 pools")
    return figure


def heterogeneity_text(table: pd.DataFrame) -> str:
    """The findings line: per pool choice and virtual machine, the range over loads of A-SRPT's (forest,
    strict) geometric mean over the best WCS and at how many loads its interval lies below / above 1, with
    fifo_replan's and srtf's ranges beside it."""
    summary = heterogeneity_ratios(table)
    seeds = int(summary["n"].max())
    parts = []
    for (pool, machine), part in summary.groupby([POOL, VIRTUAL_GPUS], sort=True):
        ranges = []
        for name in ("asrpt", "fifo_replan", "srtf"):
            line = part[part["scheduler"] == name]
            if line.empty:
                continue
            text = f"{name} {line['mean'].min():.2g}-{line['mean'].max():.2g}"
            if name == "asrpt":
                below, above = intervals_beside_one(line)
                text += f" (below 1 at {below}, above at {above} of {len(line)} loads)"
            ranges.append(text)
        parts.append(f"{pool}/{machine}: " + ", ".join(ranges))
    loads = summary[LOAD].astype(float)
    return (f"- Heterogeneous GPUs (Gavel's trace on 36 V100 + 36 P100 + 36 K80; pool choice/virtual machine: range "
            f"over loads {loads.min():g}-{loads.max():g} of the geometric mean over {seeds} seeds of total JCT / "
            "the best WCS, and where the 95% interval lies below or above 1): " + "; ".join(parts) + ".")
