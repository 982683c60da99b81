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

from .bands import WITHIN, band_counts
from .plots import SEED, best_wcs_ratios, coincident_labels, complete_runs, plot_band, ratio_axis, require
from .regime_plots import LOAD, SIGMA, TRACE, axis_label
from .style import figure_style

ELIGIBILITY = "scheduler.eligibility"
VIRTUAL = "scheduler.virtual"
PAPERS = {ELIGIBILITY: "virtual", VIRTUAL: "srpt"}
"""The paper's value of each variant key."""
RULES = ("strict", "easy", "conservative", "greedy")


def variant_name(order: str, rule: str) -> str:
    """The task.schedulers entry of `order` under `rule` (strict is the order's own name)."""
    return order if rule == "strict" else f"{order}+{rule}"


REFERENCES = ("wcs_subtime", "spjf+easy", "random_order+easy")
"""The trivial references counted beside A-SRPT: FIFO with backfilling (no duration information), SPJF with
EASY backfilling (predicted durations, no virtual schedule) and EASY over a random order (no information)."""


def dispatch_ratios(table: pd.DataFrame) -> pd.DataFrame:
    """best_wcs_ratios of every A-SRPT variant and each trivial reference present per (trace, sigma,
    eligibility, load), and per virtual order when the table sweeps it."""
    table = complete_runs(table)
    require(table, [TRACE, SIGMA, LOAD, ELIGIBILITY, SEED, "scheduler", "total_jct"], "dispatch map")
    names = tuple(variant_name(order, rule) for order in ("asrpt", "asrpt_oracle") for rule in RULES) + REFERENCES
    present = tuple(name for name in names if name in set(table["scheduler"]))
    return best_wcs_ratios(table, [TRACE, SIGMA, *variant_keys(table), LOAD], schedulers=present)


def variant_keys(table: pd.DataFrame) -> list[str]:
    """The swept keys of an A-SRPT variant besides its dispatch rule: eligibility, and the virtual order when
    the table has it."""
    return [ELIGIBILITY] + ([VIRTUAL] if VIRTUAL in table.columns else [])


def near_best(summary: pd.DataFrame) -> pd.DataFrame:
    """Per trace and variant (scheduler x eligibility [x virtual order]) of `dispatch_ratios`: points, at how
    many the interval lies within 5% of the best WCS on both sides (`within`) and below it (`below`), and the
    range of the geometric means (bands.band_counts); A-SRPT's variants first, then its oracle's, then the
    references, once (the keys of A-SRPT's variants do not reach them: their runs at the paper's values,
    else the first, stand for all)."""
    keys = variant_keys(summary)
    paper = {key: PAPERS[key] if PAPERS[key] in set(summary[key]) else sorted(summary[key])[0] for key in keys}
    same = summary[~summary["scheduler"].isin(REFERENCES) | (summary[keys] == pd.Series(paper)).all(axis=1)]
    counts = band_counts(same, [TRACE, "scheduler", *keys])
    rule = counts["scheduler"].str.partition("+")[2].replace("", "strict")
    order = [(trace, name in REFERENCES, REFERENCES.index(name) if name in REFERENCES else 0,
              name.startswith("asrpt_oracle"), eligibility != "virtual", RULES.index(r) if r in RULES else len(RULES))
             for trace, name, eligibility, r in zip(counts[TRACE], counts["scheduler"], counts[ELIGIBILITY], rule)]
    return counts.iloc[sorted(range(len(counts)), key=order.__getitem__)].reset_index(drop=True)


def variant_name_text(row: pd.Series) -> str:
    """'easy/release' for an A-SRPT variant (with '/psjf' when the virtual order is not SRPT, and ' (oracle)'
    for the perfect-prediction variant), the scheduler's own name for a reference."""
    name = str(row["scheduler"])
    if not name.startswith("asrpt"):
        return name
    text = f"{name.partition('+')[2] or 'strict'}/{row[ELIGIBILITY]}"
    virtual = row.get(VIRTUAL)
    if virtual is not None and not pd.isna(virtual) and virtual != "srpt":
        text = f"{text}/{virtual}"
    return f"{text} (oracle)" if name.startswith("asrpt_oracle") else text


def count_text(row: pd.Series) -> str:
    """'easy/release 0.99-1.50 (within 5% at 12, below 1 at 0)'."""
    return (f"{variant_name_text(row)} {row['lowest']:.2f}-{row['highest']:.2f} (within {100 * WITHIN:g}% at "
            f"{row['within']}, below 1 at {row['below']})")


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
