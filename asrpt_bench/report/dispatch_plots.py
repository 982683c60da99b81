"""The dispatch map: each A-SRPT dispatch rule x eligibility over the best WCS baseline.

Per point (trace x sigma x load x eligibility) the best WCS is the WCS variant with the lowest mean total
JCT over the point's seeds, and each variant's total JCT / that variant is shown as the geometric mean
over seeds with a 95% Student-t CI on the log ratio (plots.best_wcs_ratios). One panel per trace
(columns) and sigma (rows), plus a last row for the oracle variants (perfect predictions: sigma does not
reach them, so the first sigma's runs are drawn). Colour = dispatch rule, solid = virtual eligibility
(the paper's), dashed = release; grey = SPJF with EASY. A line that hides under another says so in the
legend.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from .plots import SEED, best_wcs_ratios, coincident_labels, complete_runs, plot_band, ratio_axis, require
from .regime_plots import LOAD, SIGMA, TRACE, axis_label
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


WITHIN = 1.05
"""A variant is "within 5% of the best WCS" at a point when its interval's upper end is at most this."""


def near_best(summary: pd.DataFrame) -> pd.DataFrame:
    """Per variant (scheduler x eligibility) of `dispatch_ratios`: points, points whose interval lies within
    5% of the best WCS (`within`), points whose interval lies below it (`below`), and the range of the
    geometric means (`lowest`, `highest`)."""
    grouped = summary.groupby(["scheduler", ELIGIBILITY], sort=False)
    counts = pd.DataFrame({"points": grouped.size(), "within": grouped["high"].apply(lambda h: int((h <= WITHIN).sum())),
                           "below": grouped["high"].apply(lambda h: int((h < 1).sum())),
                           "lowest": grouped["mean"].min(), "highest": grouped["mean"].max()}).reset_index()
    rule = counts["scheduler"].str.partition("+")[2].replace("", "strict")
    order = [(name.startswith("spjf"), name.startswith("asrpt_oracle"), eligibility != "virtual",
              RULES.index(r) if r in RULES else len(RULES))
             for name, eligibility, r in zip(counts["scheduler"], counts[ELIGIBILITY], rule)]
    return counts.iloc[sorted(range(len(counts)), key=order.__getitem__)].reset_index(drop=True)


def legend_labels(summary: pd.DataFrame) -> dict[str, str]:
    """Label "rule, eligibility" per A-SRPT line of the legend; a line equal to another's in every panel
    it is drawn in says so (plots.coincident_labels), as it hides under that one."""
    rules = {variant_name("asrpt", rule): rule for rule in RULES}
    mine = summary[summary["scheduler"].isin(list(rules))]
    keyed = mine.assign(line=[f"{rules[s]}, {e}" for s, e in zip(mine["scheduler"], mine[ELIGIBILITY])])
    keyed = keyed.assign(order=keyed["line"].map(_line_order)).sort_values("order", kind="stable")
    return coincident_labels(keyed, "line", [TRACE, SIGMA, LOAD], names=str)


def _line_order(line: str) -> int:
    rule, eligibility = line.split(", ")
    return 2 * RULES.index(rule) + (eligibility != "virtual")


def plot_dispatch_map(table: pd.DataFrame) -> Figure:
    """Every A-SRPT dispatch rule x eligibility (and SPJF-EASY) over the best WCS, panels as above."""
    summary = dispatch_ratios(table)
    labels = legend_labels(summary)
    traces = list(dict.fromkeys(summary[TRACE]))
    sigmas = list(dict.fromkeys(summary[SIGMA]))
    colours = dict(zip(RULES, plt.get_cmap("viridis")(np.linspace(0, 0.9, len(RULES)))))
    rows = [(sigma, "asrpt") for sigma in sigmas] + [(sigmas[0], "asrpt_oracle")]
    with figure_style():
        figure, panels = plt.subplots(len(rows), len(traces), figsize=(4.6 * len(traces), 2.9 * len(rows) + 1.2),
                                      squeeze=False, sharex=True, sharey=True, layout="constrained")
        for r, (sigma, order) in enumerate(rows):
            for c, trace in enumerate(traces):
                axes = panels[r][c]
                part = summary[(summary[TRACE] == trace) & (summary[SIGMA] == sigma)]
                part = part.assign(**{LOAD: part[LOAD].astype(float)})
                for rule in RULES:
                    for eligibility, style in (("virtual", "-"), ("release", "--")):
                        line = part[(part["scheduler"] == variant_name(order, rule)) & (part[ELIGIBILITY] == eligibility)]
                        if not line.empty:
                            name = f"{rule}, {eligibility}"
                            plot_band(axes, line, LOAD, color=colours[rule], linestyle=style,
                                      label=labels.get(name, name))
                spjf = part[(part["scheduler"] == "spjf+easy") & (part[ELIGIBILITY] == "virtual")]
                if order == "asrpt" and not spjf.empty:
                    plot_band(axes, spjf, LOAD, color="grey", linewidth=0.9, label="SPJF, easy")
                ratio_axis(axes)
                which = "A-SRPT (oracle)" if order == "asrpt_oracle" else f"A-SRPT, {axis_label(sigma, SIGMA)}"
                axes.set_title(f"{trace}: {which}", fontsize=9)
            panels[r][0].set_ylabel("total JCT / best WCS")
        for axes in panels[-1]:
            axes.set_xlabel("offered load (workload.target_load)")
        seeds = int(summary["n"].max())
        figure.legend(*_every_line(figure), loc="outside lower center", ncol=3,
                      title=f"dispatch rule, eligibility; geometric mean and 95% CI over {seeds} seeds")
        figure.suptitle("Dispatch map: A-SRPT variants vs the best WCS baseline")
    return figure


def _every_line(figure: Figure) -> tuple[list, list[str]]:
    """The handles and labels of every panel's lines, each label once, in the order first drawn."""
    seen: dict[str, object] = {}
    for axes in figure.axes:
        for handle, text in zip(*axes.get_legend_handles_labels()):
            seen.setdefault(text, handle)
    return list(seen.values()), list(seen)
