"""Figures of the theory experiments and the review's ablations, from collected results tables.

- ratio vs bound (tiny instances or a trace slice): A-SRPT's measured ratio against the Theorem 1
  bound over epsilon, one line per tau, one panel per COMM_HEAVY (and per alpha model);
- the adversarial search: Eq. 12 violation and ratio / bound of the best instance found;
- ablations: total JCT per variant.
The ratio figures (log axes) show the geometric mean over seeds with a 95% Student-t interval on the
log (plots.geometric_ci), which stays positive; the bar figures (linear axes) the mean with a 95%
Student-t interval (plots.mean_ci).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import StrMethodFormatter

from .plots import SEED, coincident_labels, complete_runs, geometric_ci, mean_ci, plot_band, require
from .style import figure_style, label

TAU, COMM_HEAVY, EPSILON = "scheduler.tau", "scheduler.comm_heavy", "predictor.epsilon"
ALPHA_MODEL = "task.theory_alpha"
_TAB10 = plt.get_cmap("tab10")
_MARKERS = ("o", "s", "^", "v", "D")
ALPHA_MODEL_LABELS = {"fixed": "fixed alpha (OPT exact)", "placement": "placement alpha (OPT lower bound)"}


def _colour(k: int) -> tuple[float, ...]:
    """The k-th colour of the palette the shared style uses."""
    return _TAB10(k % _TAB10.N)


def _tau_labels(table: pd.DataFrame, value: str, keys: list[str], text: str) -> dict[str, str]:
    """Legend label per tau of `value`'s line, noting a tau whose line equals another's in every panel."""
    summary = geometric_ci(table, keys + [TAU], value)
    return coincident_labels(summary, TAU, keys, names=lambda tau: f"{text}, tau={float(tau):g}")


def _ratio_vs_bound(table: pd.DataFrame, ratio: str, bound: str, row_key: str | None, ratio_label: str,
                    bound_label: str, title: str, worst: float) -> Figure:
    """Grid: rows by `row_key` (None: one row), columns by COMM_HEAVY; x = epsilon; per tau a solid
    line (measured ratio) and a dashed line (bound) of the same colour, each the geometric mean and its
    95% CI over seeds; log y; `worst` ratio / bound in the title; coinciding taus say so in the legend."""
    rows = sorted(table[row_key].unique()) if row_key else [None]
    columns = sorted(table[COMM_HEAVY].unique())
    taus = sorted(table[TAU].unique())
    keys = ([row_key] if row_key else []) + [COMM_HEAVY, EPSILON]
    labels = {ratio: _tau_labels(table, ratio, keys, ratio_label), bound: _tau_labels(table, bound, keys, bound_label)}
    figure, panels = plt.subplots(len(rows), len(columns), figsize=(max(3.5 * len(columns), 6.5), 2.9 * len(rows)),
                                  squeeze=False, sharex=True, sharey=True)
    for r, row in enumerate(rows):
        for c, comm_heavy in enumerate(columns):
            axes = panels[r][c]
            part = table[table[COMM_HEAVY] == comm_heavy]
            if row_key:
                part = part[part[row_key] == row]
            for k, tau in enumerate(taus):
                at_tau = part[part[TAU] == tau]
                for value, style in ((ratio, {"marker": _MARKERS[k % len(_MARKERS)]}),
                                     (bound, {"linestyle": "--", "marker": ""})):
                    plot_band(axes, geometric_ci(at_tau, [EPSILON], value), EPSILON, color=_colour(k),
                              label=labels[value][str(tau)], **style)
            axes.set_yscale("log")
            heading = f"COMM_HEAVY = {comm_heavy:g}"
            axes.set_title(f"{ALPHA_MODEL_LABELS.get(row, row)}\n{heading}" if row_key else heading, fontsize=8)
            if r == len(rows) - 1:
                axes.set_xlabel("prediction error epsilon")
            if c == 0:
                axes.set_ylabel("sum C / OPT (log)")
    seeds = int(table[SEED].nunique()) if SEED in table.columns else 1
    panels[0][-1].legend(title=f"geometric mean, 95% CI over {seeds} seed(s)", title_fontsize=7, fontsize=6,
                         loc="upper left", bbox_to_anchor=(1.02, 1.0))
    figure.suptitle(f"{title} (worst ratio / bound in any run: {worst:.3g})")
    return figure


def _asrpt_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The runs' A-SRPT rows (collected theory tables carry one row per run, for A-SRPT)."""
    return table[table["scheduler"] == "asrpt"] if "scheduler" in table.columns else table


def plot_theory_ratio_vs_bound(table: pd.DataFrame) -> Figure:
    """Tiny instances: A-SRPT's worst ratio to OPT per run (solid) vs the smallest Theorem 1 bound of
    the run's instances (dashed), so a solid line below its dashed line means the bound held on every
    instance."""
    table = _asrpt_rows(complete_runs(table))
    require(table, [TAU, COMM_HEAVY, EPSILON, ALPHA_MODEL, "ratio_to_opt_max", "theorem1_bound_min",
                    "ratio_over_bound_max"],
            "theory ratio vs bound")
    with figure_style():
        return _ratio_vs_bound(table, "ratio_to_opt_max", "theorem1_bound_min", ALPHA_MODEL, "worst ratio",
                               "smallest bound", "Tiny instances: A-SRPT ratio to OPT vs Theorem 1",
                               float(table["ratio_over_bound_max"].max()))


def plot_trace_ratio_vs_bound(table: pd.DataFrame) -> Figure:
    """Philly slice: A-SRPT's sum C over the lower bound on OPT (solid; an upper bound on the true
    ratio) vs the run's Theorem 1 bound (dashed)."""
    table = _asrpt_rows(complete_runs(table))
    require(table, [TAU, COMM_HEAVY, EPSILON, "ratio_to_lower_bound", "theorem1_bound"], "trace ratio vs bound")
    with figure_style():
        figure = _ratio_vs_bound(table, "ratio_to_lower_bound", "theorem1_bound", None, "sum C / LB",
                                 "Theorem 1 bound", "Trace: A-SRPT ratio to lower bound vs Theorem 1",
                                 float(np.nanmax(table["ratio_to_lower_bound"] / table["theorem1_bound"])))
        for axes in figure.axes:
            if axes.get_ylabel():
                axes.set_ylabel("sum C / lower bound (log)")
    return figure


def _grouped_bars(axes: Axes, table: pd.DataFrame, group: str, hue: str, value: str) -> None:
    """Bars of mean `value` with 95% CI per (group, hue), and each seed's value as a dot."""
    groups = sorted(table[group].unique())
    hues = sorted(table[hue].unique())
    width = 0.8 / len(hues)
    summary = mean_ci(table, [group, hue], value).set_index([group, hue])
    for h, hue_value in enumerate(hues):
        colour = _colour(h)
        for g, group_value in enumerate(groups):
            if (group_value, hue_value) not in summary.index:
                continue
            cell = summary.loc[(group_value, hue_value)]
            x = g + (h - (len(hues) - 1) / 2) * width
            axes.bar(x, cell["mean"], width=width * 0.9, color=colour, alpha=0.75,
                     yerr=[[cell["mean"] - cell["low"]], [cell["high"] - cell["mean"]]], capsize=3,
                     label=f"{hue.split('.')[-1]} = {hue_value}" if g == 0 else None)
            points = table[(table[group] == group_value) & (table[hue] == hue_value)][value]
            axes.scatter(np.full(len(points), x), points, color="black", s=8, zorder=3)
    axes.set_xticks(range(len(groups)), [str(v) for v in groups])


def plot_adversarial(table: pd.DataFrame) -> Figure:
    """Best instance of each search run: its relative Eq. 12 violation (left) and A-SRPT's ratio to
    OPT over the Theorem 1 bound (right), per search objective and G."""
    table = complete_runs(table)
    objective, gpus = "task.adversarial_objective", "task.theory_gpus"
    require(table, [objective, gpus, "eq12_violation_rel", "ratio_over_bound"], "adversarial search")
    with figure_style():
        figure, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.6))
        _grouped_bars(left, table, objective, gpus, "eq12_violation_rel")
        left.set_ylabel("Eq. 12 violation (actual / claimed - 1)")
        left.set_xlabel("search objective")
        left.legend(title="cluster GPUs", title_fontsize=8)
        _grouped_bars(right, table, objective, gpus, "ratio_over_bound")
        right.axhline(1.0, color="red", linestyle="--", linewidth=1.0, label="Theorem 1 bound")
        right.set_ylabel("(sum C / OPT) / Theorem 1 bound")
        right.set_xlabel("search objective")
        right.set_ylim(0, 1.1)
        seeds = int(table[SEED].nunique()) if SEED in table.columns else 1
        figure.suptitle(f"Adversarial search: best instance per run (bars: mean, 95% CI over {seeds} seeds; "
                        f"dots: seeds)", fontsize=9)
    return figure


def _change_text(table: pd.DataFrame, key: str, reference: str, variant: str) -> str:
    """Change of the mean total JCT vs the reference variant and, seeds being paired (the same seed
    gives the same jobs), the mean per-seed change with its 95% CI."""
    means = table.groupby(key)["total_jct"].mean()
    text = f"{100 * (means[variant] / means[reference] - 1):+.1f}%"
    if SEED not in table.columns:
        return text
    paired = table.pivot_table(index=SEED, columns=key, values="total_jct").dropna(subset=[reference, variant])
    if len(paired) < 2:
        return text
    per_seed = pd.DataFrame({"change": paired[variant] / paired[reference] - 1, "all": 0})
    ci = mean_ci(per_seed, ["all"], "change").iloc[0]
    return f"{text}\nper seed {100 * ci['mean']:+.1f}% [{100 * ci['low']:+.1f}, {100 * ci['high']:+.1f}]"


def _ablation(table: pd.DataFrame, key: str, names: dict[str, str], title: str) -> Figure:
    """Total JCT per variant of `key` (bars, mean and 95% CI over seeds; dots: seeds), with each
    variant's change relative to the first."""
    table = complete_runs(table).copy()
    require(table, [key, "total_jct"], title)
    table[key] = table[key].astype(str).str.lower()
    order = [v for v in names if v in set(table[key])] + sorted(set(table[key]) - set(names))
    summary = mean_ci(table, [key], "total_jct").set_index(key).loc[order]
    summary[["mean", "low", "high"]] /= 3600  # drawn in hours
    hours = table["total_jct"] / 3600
    with figure_style():
        figure, axes = plt.subplots(figsize=(4.6, 3.6))
        positions = np.arange(len(order))
        axes.bar(positions, summary["mean"], color=[_colour(k) for k in range(len(order))],
                 alpha=0.8, yerr=[summary["mean"] - summary["low"], summary["high"] - summary["mean"]], capsize=4)
        for k, variant in enumerate(order):
            values = hours[table[key] == variant]
            axes.scatter(np.full(len(values), k), values, color="black", s=8, zorder=3)
            top = max(float(summary.loc[variant, "high"]), float(values.max()))
            axes.annotate(_change_text(table, key, order[0], variant) if k else "reference", (k, top),
                          textcoords="offset points", xytext=(0, 4), ha="center", fontsize=7)
        axes.set_ylim(0, 1.25 * max(float(summary["high"].max()), float(hours.max())))
        axes.set_xticks(positions, [names.get(v, v) for v in order])
        axes.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
        axes.set_ylabel("total JCT (h)")
        seeds = int(summary["n"].max())
        axes.set_title(f"{title}\n(A-SRPT; mean, 95% CI over {seeds} seeds)", fontsize=9)
    return figure


def plot_ablation_novelty_bias(table: pd.DataFrame) -> Figure:
    return _ablation(table, "predictor.unseen", {"zero": "unseen -> 0 (paper)", "mean": "unseen -> forest mean"},
                     "Novelty bias: prediction for unseen groups")


def plot_ablation_placement(table: pd.DataFrame) -> Figure:
    return _ablation(table, "placement.name", {"heavy_edge": label("heavy_edge"), "first_fit": label("first_fit")},
                     "Placement under A-SRPT")


def plot_ablation_backfill(table: pd.DataFrame) -> Figure:
    return _ablation(table, "scheduler.backfill", {"false": "strict head-of-line (paper)",
                                                    "true": "backfill (extension)"},
                     "Head-of-line blocking vs backfill")

