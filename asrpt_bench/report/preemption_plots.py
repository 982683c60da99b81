"""The price of non-preemption: each preemptive reference's total JCT over the best
non-preemptive scheduler, per trace, offered load and restart price (and, when the table sweeps them, per
preemption rule `scheduler.preempt_rule` and protection `preemption.min_run_s`: the figure and the price
then take each preemptive scheduler's best variant at each point).

The best non-preemptive scheduler at a point (trace x load x restart_s) is the one with the lowest
mean total JCT over the point's seeds; each preemptive scheduler's ratio to it is formed per seed and
shown as the geometric mean with a 95% Student-t CI on the log ratio (plots.best_wcs_ratios).
Below 1, preempting pays even at that restart price.
"""

from __future__ import annotations

import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .plots import SEED, best_wcs_ratios, coincident_labels, complete_runs, plot_band, ratio_axis, require
from .regime_plots import LOAD, TRACE
from .style import figure_style, label, series_style

RESTART = "preemption.restart_s"
RULE = "scheduler.preempt_rule"
MIN_RUN = "preemption.min_run_s"
PREEMPTIVE = ("srtf", "srtf_oracle", "psjf", "psjf_oracle", "las2d")
NON_PREEMPTIVE = ("asrpt", "asrpt_oracle", "spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime", "fifo")
LINESTYLES = ("-", "--", ":", "-.")


def preemption_price(table: pd.DataFrame) -> pd.DataFrame:
    """Per trace, load, restart price and preemptive scheduler: total JCT / best non-preemptive (column
    `best_wcs` names it), geometric mean, low, high, n and whether the CI excludes 1."""
    table = complete_runs(table)
    require(table, [TRACE, LOAD, RESTART, SEED, "scheduler", "total_jct"], "preemption price")
    present = tuple(name for name in PREEMPTIVE if name in set(table["scheduler"]))
    candidates = tuple(name for name in NON_PREEMPTIVE if name in set(table["scheduler"]))
    return best_wcs_ratios(table, [TRACE, RESTART, *variant_keys(table), LOAD], schedulers=present,
                           candidates=candidates)


def variant_keys(table: pd.DataFrame) -> list[str]:
    """The swept preemption variants a table holds (rule, protection), beside the restart price."""
    swept = [key for key in (RULE, MIN_RUN) if key in table.columns and table[key].nunique(dropna=False) > 1]
    return swept


def variant_name(row: pd.Series, keys: list[str]) -> str:
    """"srtf net_gain, min run 300 s": a preemptive scheduler and its swept variant. las2d has no preemption
    rule (its rows under each rule are the same runs), so its name leaves the rule out."""
    words = [row["scheduler"]]
    if RULE in keys and row["scheduler"] != "las2d":
        words.append(str(row[RULE]))
    name = " ".join(words)
    return f"{name}, min run {float(row[MIN_RUN]):g} s" if MIN_RUN in keys else name


def best_variants(summary: pd.DataFrame) -> pd.DataFrame:
    """Per trace, restart price, load and preemptive scheduler: the variant (rule x protection) with the
    lowest mean ratio, with `variant` naming it ('' when the table sweeps none)."""
    keys = variant_keys(summary)
    best = summary.loc[summary.groupby([TRACE, RESTART, LOAD, "scheduler"], sort=True)["mean"].idxmin()]
    names = [", ".join(f"{key.rpartition('.')[2]} {value}" for key, value in zip(keys, values))
             for values in best[keys].itertuples(index=False)] if keys else [""] * len(best)
    return best.assign(variant=names).reset_index(drop=True)


def price_of_nonpreemption(summary: pd.DataFrame, restart: float) -> pd.DataFrame:
    """Per trace and load at this restart price: best non-preemptive / best preemptive total JCT (the
    inverse of the best preemptive scheduler's `preemption_price` ratio, its interval inverted too), with
    that preemptive scheduler in `scheduler`. Above 1: preempting pays at this price."""
    part = summary[summary[RESTART].astype(float) == float(restart)]
    best = part.loc[part.groupby([TRACE, LOAD])["mean"].idxmin()]
    return best.assign(mean=1 / best["mean"], low=1 / best["high"], high=1 / best["low"]).reset_index(drop=True)


def preemption_spread(table: pd.DataFrame, restart: float) -> pd.DataFrame:
    """How suspensions spread over jobs at this restart price, per preemptive scheduler and variant: the range
    over points (trace x load) of the mean over seeds of the share of jobs suspended at least once, and the
    largest 99th percentile and largest count of suspensions of one job over every run."""
    table = complete_runs(table)
    require(table, [TRACE, RESTART, LOAD, SEED, "scheduler", "preempted_share", "p99_preemptions",
                    "max_preemptions"], "preemption spread")
    part = table[(table[RESTART].astype(float) == float(restart)) & table["scheduler"].isin(PREEMPTIVE)]
    keys = ["scheduler", *variant_keys(table)]
    shares = part.groupby([*keys, TRACE, LOAD], sort=True)["preempted_share"].mean().groupby(keys, sort=True)
    grouped = part.groupby(keys, sort=True)
    return pd.DataFrame({"lowest_share": shares.min(), "highest_share": shares.max(),
                         "p99": grouped["p99_preemptions"].max(), "most": grouped["max_preemptions"].max()}).reset_index()


def _line_name(scheduler: str, restart: object) -> str:
    return f"{label(scheduler)}, restart {float(restart):g} s"


def hidden_lines(summary: pd.DataFrame) -> list[str]:
    """"B (= A)" for every scheduler x restart line equal to another's at every trace and load
    (plots.coincident_labels): it hides under that one, which the legend says. Lines that meet at a few
    points (where no job is ever suspended, every preemptive scheduler runs the same schedule) are not
    hidden and not named."""
    keyed = summary.assign(line=[_line_name(s, r) for s, r in zip(summary["scheduler"], summary[RESTART])])
    labels = coincident_labels(keyed.sort_values(["scheduler", RESTART]), "line", [TRACE, LOAD], names=str)
    return [text for name, text in labels.items() if text != name and " at " not in text]


def _legend(figure: Figure, schedulers: list[str], restarts: list[float], hidden: list[str], seeds: int,
            note: str = "") -> None:
    """One legend below the panels: a colour per scheduler, a line style per restart price, the lines
    that hide under another, and what the band and the dots mean (`note` appended to its title)."""
    handles = [Line2D([], [], color=series_style(name)["color"], label=label(name)) for name in schedulers]
    handles += [Line2D([], [], color="grey", linestyle=LINESTYLES[k % len(LINESTYLES)], label=f"restart {r:g} s")
                for k, r in enumerate(restarts)]
    handles += [Line2D([], [], linestyle="none", label=text) for text in hidden]
    figure.legend(handles=handles, loc="outside lower center", ncol=len(schedulers) + len(restarts),
                  title=f"geometric mean and 95% CI over {seeds} seeds; dots: the CI excludes 1{note}")


def plot_preemption_price(table: pd.DataFrame) -> Figure:
    """One panel per trace: preemptive / best non-preemptive total JCT vs offered load, one colour per
    preemptive scheduler and one line style per restart price; filled markers where the CI excludes 1; a
    line that hides under another says so in the legend."""
    summary = best_variants(preemption_price(table))
    traces = sorted(summary[TRACE].unique())
    restarts = sorted(summary[RESTART].astype(float).unique())
    schedulers = [name for name in PREEMPTIVE if name in set(summary["scheduler"])]
    with figure_style():
        figure, panels = plt.subplots(1, len(traces), figsize=(5.0 * len(traces), 4.4), squeeze=False,
                                      layout="constrained")
        for axes, trace in zip(panels[0], traces):
            for (name, restart), part in summary[summary[TRACE] == trace].groupby(["scheduler", RESTART], sort=True):
                style = series_style(str(name))
                dash = LINESTYLES[restarts.index(float(restart)) % len(LINESTYLES)]
                part = part.assign(**{LOAD: part[LOAD].astype(float)})
                plot_band(axes, part, LOAD, color=style["color"], linestyle=dash)
                filled = part[part["excludes_one"]]
                axes.scatter(filled[LOAD], filled["mean"], s=24, color=style["color"], zorder=3)
            ratio_axis(axes)
            axes.set_title(str(trace))
            axes.set_xlabel("offered load")
            axes.set_ylabel("total JCT / best non-preemptive")
        best = "; each scheduler's best rule x min run per point" if summary["variant"].str.len().any() else ""
        _legend(figure, schedulers, restarts, hidden_lines(summary), int(summary["n"].max()), best)
        figure.suptitle("The price of non-preemption: preemptive references over the best non-preemptive scheduler")
    return figure
