"""The dispatch map: each A-SRPT dispatch rule x eligibility over the best WCS baseline.

Per point (trace x sigma x load x eligibility) the best WCS is the WCS variant with the lowest mean total
JCT over the point's seeds, and each variant's total JCT / that variant is shown as the geometric mean
over seeds with a 95% Student-t CI on the log ratio (regime_plots.best_wcs_ratios). One panel per trace
(columns) and sigma (rows), plus a last row for the oracle variants (perfect predictions: sigma does not
reach them, so the first sigma's runs are drawn). Colour = dispatch rule, solid = virtual eligibility
(the paper's), dashed = release; grey = SPJF with EASY.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from .plots import SEED, complete_runs, plot_band, require
from .regime_plots import LOAD, SIGMA, TRACE, best_wcs_ratios, ratio_axis
from .style import figure_style

ELIGIBILITY = "scheduler.eligibility"
RULES = ("strict", "easy", "conservative", "greedy")


def variant_name(order: str, rule: str) -> str:
    """The task.schedulers entry of `order` under `rule` (strict is the order's own name)."""
    return order if rule == "strict" else f"{order}+{rule}"


def dispatch_ratios(table: pd.DataFrame) -> pd.DataFrame:
    """best_wcs_ratios of every A-SRPT variant and SPJF-EASY per (trace, sigma, eligibility, load)."""
    table = complete_runs(table)
    require(table, [TRACE, SIGMA, LOAD, ELIGIBILITY, SEED, "scheduler", "total_jct"], "dispatch map")
    names = tuple(variant_name(order, rule) for order in ("asrpt", "asrpt_oracle") for rule in RULES) + ("spjf+easy",)
    present = tuple(name for name in names if name in set(table["scheduler"]))
    return best_wcs_ratios(table, [TRACE, SIGMA, ELIGIBILITY, LOAD], schedulers=present)


def plot_dispatch_map(table: pd.DataFrame) -> Figure:
    summary = dispatch_ratios(table)
    traces = list(dict.fromkeys(summary[TRACE]))
    sigmas = list(dict.fromkeys(summary[SIGMA]))
    colours = dict(zip(RULES, plt.get_cmap("viridis")(np.linspace(0, 0.9, len(RULES)))))
    rows = [(sigma, "asrpt") for sigma in sigmas] + [(sigmas[0], "asrpt_oracle")]
    with figure_style():
        figure, panels = plt.subplots(len(rows), len(traces), figsize=(4.6 * len(traces), 2.9 * len(rows)),
                                      squeeze=False, sharex=True, sharey=True)
        for r, (sigma, order) in enumerate(rows):
            for c, trace in enumerate(traces):
                axes = panels[r][c]
                part = summary[(summary[TRACE] == trace) & (summary[SIGMA] == sigma)]
                part = part.assign(**{LOAD: part[LOAD].astype(float)})
                for rule in RULES:
                    for eligibility, style in (("virtual", "-"), ("release", "--")):
                        line = part[(part["scheduler"] == variant_name(order, rule)) & (part[ELIGIBILITY] == eligibility)]
                        if not line.empty:
                            plot_band(axes, line, LOAD, color=colours[rule], linestyle=style,
                                      label=f"{rule}, {eligibility}")
                spjf = part[(part["scheduler"] == "spjf+easy") & (part[ELIGIBILITY] == "virtual")]
                if order == "asrpt" and not spjf.empty:
                    plot_band(axes, spjf, LOAD, color="grey", linewidth=0.9, label="SPJF, easy")
                ratio_axis(axes)
                which = "A-SRPT (oracle)" if order == "asrpt_oracle" else f"A-SRPT, sigma = {sigma}"
                axes.set_title(f"{trace}: {which}", fontsize=8)
            panels[r][0].set_ylabel("total JCT / best WCS")
        for axes in panels[-1]:
            axes.set_xlabel("offered load (workload.target_load)")
        panels[0][-1].legend(fontsize=6, title="dispatch, eligibility; 95% CI over seeds", title_fontsize=6)
        figure.suptitle("Dispatch map: A-SRPT variants vs the best WCS baseline")
    return figure
