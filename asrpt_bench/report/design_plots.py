"""The design map: which of A-SRPT's choices costs what. Eligibility (the paper's virtual completion,
release, or the relaxed reservation rule) x the virtual machine's order (the paper's SRPT, or PSJF) x
dispatch rule, against the best WCS baseline, with the trivial references beside them (experiment
`design_map`, loads 0.8-1.5).

Ratios and counts are those of the dispatch map (dispatch_plots.dispatch_ratios, near_best): per point
the geometric mean over seeds of total JCT / the best WCS with a 95% interval on the log, and the points
where that interval lies within 5% of 1 (two-sided) or below 1 (bands.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from .bands import definition
from .dispatch_plots import (ELIGIBILITY, REFERENCES, RULES, VIRTUAL, count_text, dispatch_ratios, near_best,
                             variant_name)
from .plots import SEED, complete_runs, plot_band, ratio_axis, require
from .regime_plots import LOAD, SIGMA, TRACE
from .style import figure_style

ORDER_STYLES = {"srpt": "-", "psjf": "--"}
REFERENCE_STYLES = {"wcs_subtime": ("saddlebrown", ":"), "spjf+easy": ("grey", "-"), "random_order+easy": ("black", ":")}


def shown_sigma(summary: pd.DataFrame) -> object:
    """The key informativeness the figure draws: 1 when swept, else the first value."""
    values = list(dict.fromkeys(summary[SIGMA]))
    return next((value for value in values if str(value) in ("1", "1.0")), values[0])


def plot_design_map(table: pd.DataFrame) -> Figure:
    """One panel per eligibility (rows) and trace (columns) at sigma 1: A-SRPT with the forest under each
    dispatch rule (colour) and virtual order (solid SRPT, dashed PSJF), and the trivial references, each as
    total JCT / best WCS over offered load."""
    summary = dispatch_ratios(table)
    require(summary, [VIRTUAL], "design map")
    sigma = shown_sigma(summary)
    summary = summary[summary[SIGMA] == sigma]
    traces = list(dict.fromkeys(summary[TRACE]))
    eligibilities = [value for value in ("virtual", "reservation", "release") if value in set(summary[ELIGIBILITY])]
    colours = dict(zip(RULES, plt.get_cmap("viridis")(np.linspace(0, 0.9, len(RULES)))))
    with figure_style():
        figure, panels = plt.subplots(len(eligibilities), len(traces), figsize=(4.6 * len(traces),
                                                                              2.9 * len(eligibilities)),
                                      squeeze=False, sharex=True, sharey=True)
        for r, eligibility in enumerate(eligibilities):
            for c, trace in enumerate(traces):
                axes = panels[r][c]
                part = summary[(summary[TRACE] == trace) & (summary[ELIGIBILITY] == eligibility)]
                part = part.assign(**{LOAD: part[LOAD].astype(float)})
                for rule in RULES:
                    for order, style in ORDER_STYLES.items():
                        line = part[(part["scheduler"] == variant_name("asrpt", rule)) & (part[VIRTUAL] == order)]
                        if not line.empty:
                            plot_band(axes, line, LOAD, color=colours[rule], linestyle=style,
                                      label=f"{rule}, virtual {order.upper()}")
                first = part[VIRTUAL].iloc[0] if len(part) else None
                for name, (colour, style) in REFERENCE_STYLES.items():
                    line = part[(part["scheduler"] == name) & (part[VIRTUAL] == first)]
                    if not line.empty:
                        plot_band(axes, line, LOAD, color=colour, linestyle=style, linewidth=0.9, label=name)
                ratio_axis(axes)
                axes.set_title(f"{trace}: eligibility {eligibility}, sigma = {sigma}", fontsize=8)
            panels[r][0].set_ylabel("total JCT / best WCS")
        for axes in panels[-1]:
            axes.set_xlabel("offered load (workload.target_load)")
        panels[0][-1].legend(fontsize=5, title="dispatch, virtual order; geometric mean, 95% CI over seeds",
                             title_fontsize=6)
        figure.suptitle("Design map: A-SRPT's eligibility x virtual order x dispatch vs the best WCS baseline")
    return figure


def virtual_order_effect(table: pd.DataFrame) -> pd.DataFrame:
    """Per trace, sigma and A-SRPT scheduler (forest or oracle, each dispatch rule) and eligibility: the range
    over loads of the geometric mean over seeds of total JCT with virtual PSJF / with virtual SRPT."""
    table = complete_runs(table)
    require(table, [TRACE, SIGMA, LOAD, ELIGIBILITY, VIRTUAL, SEED, "scheduler", "total_jct"], "design map")
    mine = table[table["scheduler"].str.startswith("asrpt")]
    mine = mine.assign(**{SIGMA: mine[SIGMA].astype(object).where(mine[SIGMA].notna(), "null")})
    pivot = mine.pivot_table(index=[TRACE, SIGMA, ELIGIBILITY, "scheduler", LOAD, SEED], columns=VIRTUAL,
                             values="total_jct", aggfunc="first")
    logs = np.log(pivot["psjf"] / pivot["srpt"]).rename("log").reset_index()
    per_load = logs.groupby([TRACE, SIGMA, ELIGIBILITY, "scheduler", LOAD], sort=True)["log"].mean().apply(np.exp)
    grouped = per_load.groupby([TRACE, SIGMA, ELIGIBILITY, "scheduler"], sort=True)
    return pd.DataFrame({"lowest": grouped.min(), "highest": grouped.max()}).reset_index()


def prediction_gap(table: pd.DataFrame) -> pd.DataFrame:
    """Per trace, sigma and virtual order (A-SRPT strict, virtual eligibility): the range over loads of the
    geometric mean over seeds of total JCT with the forest / with perfect predictions."""
    table = complete_runs(table)
    strict = table[(table[ELIGIBILITY] == "virtual") & table["scheduler"].isin(["asrpt", "asrpt_oracle"])]
    strict = strict.assign(**{SIGMA: strict[SIGMA].astype(object).where(strict[SIGMA].notna(), "null")})
    pivot = strict.pivot_table(index=[TRACE, SIGMA, VIRTUAL, LOAD, SEED], columns="scheduler", values="total_jct",
                               aggfunc="first")
    logs = np.log(pivot["asrpt"] / pivot["asrpt_oracle"]).rename("log").reset_index()
    per_load = logs.groupby([TRACE, SIGMA, VIRTUAL, LOAD], sort=True)["log"].mean().apply(np.exp)
    grouped = per_load.groupby([TRACE, SIGMA, VIRTUAL], sort=True)
    return pd.DataFrame({"lowest": grouped.min(), "highest": grouped.max()}).reset_index()


def design_text(table: pd.DataFrame) -> str:
    """The design map in the findings: per trace, the counts of every A-SRPT variant and reference (within 5%
    of the best WCS, below it), then what the virtual order changes and the gap to perfect prediction by
    sigma."""
    summary = dispatch_ratios(table)
    counts = near_best(summary)
    loads = summary[LOAD].astype(float)
    parts = [f"{trace} ({int(part['points'].max())} points): " + "; ".join(count_text(row) for _, row in part.iterrows())
             for trace, part in counts.groupby(TRACE, sort=False)]
    effect = virtual_order_effect(table)
    strict = effect[(effect["scheduler"] == "asrpt") & (effect[ELIGIBILITY] == "virtual")]
    orders = "; ".join(f"{row[TRACE]} sigma {row[SIGMA]}: {row['lowest']:.2f}-{row['highest']:.2f}"
                       for _, row in strict.iterrows())
    gap = prediction_gap(table)
    gaps = "; ".join(f"{row[TRACE]} sigma {row[SIGMA]} virtual {row[VIRTUAL]}: {row['lowest']:.2f}-{row['highest']:.2f}"
                     for _, row in gap.iterrows())
    return (f"- Eligibility x virtual order x dispatch (design map, loads {loads.min():g}-{loads.max():g}, "
            f"{int(summary['n'].max())} seeds; variant rule/eligibility[/psjf], range of geometric means of total JCT "
            f"/ best WCS, and the points where {definition()}; references {', '.join(REFERENCES)}): "
            + ". ".join(parts) + f". Virtual PSJF / virtual SRPT, A-SRPT strict with virtual eligibility (range over "
            f"loads of geometric means): {orders}. A-SRPT / its perfect-prediction variant, strict, virtual "
            f"eligibility: {gaps}.")
