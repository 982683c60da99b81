"""The heterogeneity study (experiments `heterogeneity`, Gavel's trace on Gavel's cluster of V100, P100 and
K80 pools, and `heterogeneity_philly`, Philly on the mixed preset): does A-SRPT's ranking against the best
work-conserving baseline change when GPUs differ? Per trace, pool choice (placement.pool), A-SRPT's
virtual machine (scheduler.virtual_gpus) and offered load.

Ratios are those of the regime map (plots.best_wcs_ratios): per point the best WCS is the WCS variant with
the lowest mean total JCT over the point's seeds, and each scheduler's total JCT / that variant is the
geometric mean over seeds with a 95% Student-t interval on the log; every run of a point simulates the same
jobs, so it is also the ratio of mean JCTs. fifo_replan is the migrating FIFO and srtf, srtf_oracle and
las2d the preemptive references: FIFO / fifo_replan is the price of non-migration, the best non-preemptive
scheduler / each preemptive reference the price of non-preemption (above 1: migrating / preempting pays).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from .bands import WITHIN, band_counts, definition
from .plots import SEED, WCS, best_wcs_ratios, complete_runs, plot_band, ratio_axis, require
from .preemption_plots import PREEMPTIVE
from .regime_plots import LOAD, TRACE
from .style import figure_style

POOL = "placement.pool"
VIRTUAL_GPUS = "scheduler.virtual_gpus"
POINT = [POOL, VIRTUAL_GPUS, LOAD]
STUDIES = ("heterogeneity", "heterogeneity_philly")
"""The committed experiments of the study, one per trace, that the findings line and the report row read."""
SHOWN = ("asrpt", "asrpt+easy", "asrpt_oracle", "fifo", "fifo+easy", "fifo_replan", "spjf+easy", "srtf",
         "srtf_oracle", "las2d")
"""The schedulers drawn against the best WCS (those of the table, in this order)."""
COUNTED = ("asrpt", "asrpt_oracle", "fifo", "fifo+easy", "wcs_subtime", "spjf+easy")
"""The schedulers the findings line counts against the best WCS: A-SRPT, its perfect-prediction variant and
the references that use no prediction (FIFO, FIFO+EASY, WCS-SubTime) or only SPJF's."""
MIGRATING = "fifo_replan"


def trace_label(table: pd.DataFrame) -> str:
    """'gavel, 460 jobs on 36 V100 + 36 P100 + 36 K80' from the table's workload, job count and pools."""
    require(table, [TRACE, "num_jobs", "cluster.pools"], "heterogeneity")
    counts: dict[str, int] = {}
    for pool in json.loads(str(table["cluster.pools"].iloc[0])):
        counts[pool["type"]] = counts.get(pool["type"], 0) + int(pool["servers"]) * int(pool["gpus_per_server"])
    gpus = " + ".join(f"{count} {name.upper()}" for name, count in counts.items())
    return f"{table[TRACE].iloc[0]}, {int(table['num_jobs'].max()):,} jobs on {gpus}"


def heterogeneity_ratios(table: pd.DataFrame, schedulers: tuple[str, ...] = SHOWN) -> pd.DataFrame:
    """Per pool choice, virtual machine, load and scheduler of `schedulers` present: total JCT / the best WCS
    (geometric mean, low, high, n over seeds; `best_wcs` names it)."""
    table = complete_runs(table)
    require(table, POINT + [SEED, "scheduler", "total_jct"], "heterogeneity")
    present = tuple(name for name in schedulers if name in set(table["scheduler"]))
    return best_wcs_ratios(table, POINT, schedulers=present)


def price_ratios(table: pd.DataFrame) -> pd.DataFrame:
    """Per point: the price of non-migration (scheduler `fifo_replan`: FIFO / fifo_replan) and of
    non-preemption (scheduler = each preemptive reference present: best non-preemptive / it), geometric mean,
    low, high, n over seeds. Above 1: migrating / preempting pays."""
    table = complete_runs(table)
    names = set(table["scheduler"])
    preemptive = tuple(name for name in PREEMPTIVE if name in names)
    others = tuple(sorted(names - set(PREEMPTIVE) - {MIGRATING}))
    parts = []
    if MIGRATING in names and "fifo" in names:
        parts.append(best_wcs_ratios(table, POINT, schedulers=(MIGRATING,), candidates=("fifo",)))
    if preemptive:
        parts.append(best_wcs_ratios(table, POINT, schedulers=preemptive, candidates=others))
    if not parts:
        return pd.DataFrame(columns=[*POINT, "scheduler", "best_wcs", "mean", "low", "high", "n"])
    ratios = pd.concat(parts, ignore_index=True)
    return ratios.assign(mean=1 / ratios["mean"], low=1 / ratios["high"], high=1 / ratios["low"])


def without_repeats(summary: pd.DataFrame) -> pd.DataFrame:
    """`summary` with the virtual machine blanked ('') for each scheduler whose every point is the same under
    every virtual machine (the key reaches A-SRPT only), those repeats dropped."""
    keyed = summary.assign(**{VIRTUAL_GPUS: summary[VIRTUAL_GPUS].astype(str)})
    values = ["mean", "low", "high", "n", "best_wcs"]
    alike = keyed.groupby(["scheduler", POOL, LOAD], sort=False)[values].nunique(dropna=False).le(1).all(axis=1)
    repeated = alike.groupby("scheduler").all()
    blank = keyed["scheduler"].map(repeated).fillna(False).astype(bool)
    first = keyed[VIRTUAL_GPUS] == keyed.groupby(["scheduler", POOL, LOAD])[VIRTUAL_GPUS].transform("first")
    return keyed[~blank | first].assign(**{VIRTUAL_GPUS: keyed[VIRTUAL_GPUS].where(~blank, "")})


def intervals_beside_one(summary: pd.DataFrame) -> tuple[int, int]:
    """At how many rows of `summary` the interval (over at least two seeds) lies below 1, and above 1."""
    seeded = summary[summary["n"] >= 2]
    return int((seeded["high"] < 1).sum()), int((seeded["low"] > 1).sum())


def interval_text(row: pd.Series) -> str:
    """'1.45 [1.40, 1.51]' for a geometric_ci row ('1.45 (n=1)' over one seed; the line states n once)."""
    if int(row["n"]) < 2:
        return f"{float(row['mean']):.3g} (n=1)"
    return f"{float(row['mean']):.3g} [{float(row['low']):.3g}, {float(row['high']):.3g}]"


def entry_text(name: str, rows: pd.DataFrame, counted: str) -> str:
    """'asrpt/count 1.45 [1.40, 1.51], 1.49 [1.41, 1.58] (within 5% at 0, below 1 at 0 of 2 loads)': the
    interval at each load in turn, then the counts (`counted`: 'band' for bands.definition's two counts,
    'above' for the loads where the interval lies above 1); intervals over one seed count nowhere."""
    rows = rows.assign(order=rows[LOAD].astype(float)).sort_values("order")
    intervals = ", ".join(interval_text(row) for _, row in rows.iterrows())
    if counted == "above":
        return f"{name} {intervals} (above 1 at {intervals_beside_one(rows)[1]} of {len(rows)} loads)"
    seeded = rows.assign(low=rows["low"].where(rows["n"] >= 2), high=rows["high"].where(rows["n"] >= 2), all=0)
    counts = band_counts(seeded, ["all"])
    return (f"{name} {intervals} (within {100 * WITHIN:g}% at {int(counts['within'].iloc[0])}, below 1 at "
            f"{int(counts['below'].iloc[0])} of {len(rows)} loads)")


def _named_entries(summary: pd.DataFrame, order: tuple[str, ...], counted: str) -> list[str]:
    """entry_text per scheduler of `order` (and per virtual machine where it changes the result)."""
    entries = []
    for name in order:
        part = summary[summary["scheduler"] == name]
        for machine, rows in part.groupby(VIRTUAL_GPUS, sort=True):
            entries.append(entry_text(f"{name}/{machine}" if machine else name, rows, counted))
    return entries


def trace_text(table: pd.DataFrame) -> str:
    """One trace's part of the findings: per pool choice, each scheduler of COUNTED over the best WCS, then the
    prices of non-migration and non-preemption."""
    ratios = without_repeats(heterogeneity_ratios(table, COUNTED))
    prices = without_repeats(price_ratios(table))
    preemptive = tuple(name for name in PREEMPTIVE if name in set(prices["scheduler"]))
    loads = ", ".join(f"{load:g}" for load in sorted(ratios[LOAD].astype(float).unique()))
    parts = []
    for pool in sorted(set(ratios[POOL])):
        mine, price = ratios[ratios[POOL] == pool], prices[prices[POOL] == pool]
        text = f"{pool}: " + "; ".join(_named_entries(mine, COUNTED, "band"))
        migration = _named_entries(price, (MIGRATING,), "above")
        if migration:
            text += "; price of non-migration, fifo / " + migration[0]
        if preemptive:
            text += "; price of non-preemption, best non-preemptive / " + "; / ".join(
                _named_entries(price, preemptive, "above"))
        parts.append(text)
    return (f"  - {trace_label(table)} (loads {loads}, {int(ratios['n'].max())} seeds): " + ". ".join(parts) + ".")


def heterogeneity_text(tables: list[pd.DataFrame]) -> str:
    """The findings lines: the definitions, then one line per trace (trace_text)."""
    return ("- Heterogeneous GPUs, each scheduler's total JCT / the best WCS per point (the same jobs in every run "
            "of a point, so the ratio of mean JCTs; geometric mean over seeds with its 95% interval at each offered "
            f"load in turn; counted over the loads, {definition()}), per pool choice, with A-SRPT's virtual "
            "machine named where it changes the result; then the price of non-migration (FIFO / fifo_replan, the "
            "migrating FIFO) and of non-preemption (the best non-preemptive scheduler / each preemptive reference), "
            "above 1 where migrating or preempting pays:\n" + "\n".join(trace_text(table) for table in tables))


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
        figure.suptitle(f"Heterogeneity: each scheduler / the best WCS ({trace_label(table)})")
    return figure
