"""Measured numbers in README.md and docs/*.md, generated from the committed results/ tables.

A document holds a generated block between two markers,

    <!-- generated:NAME -->
    ...text BLOCKS[NAME] computes from results/...
    <!-- /generated:NAME -->

and `update_docs` rewrites every block's content (asrpt-bench-report does it with REPRODUCTION.md;
`--check` fails when a block differs). No number inside a block is typed by hand: each comes from a
table through `published.load_result` (checked complete and fresh against its experiment) or, for the
placement studies that are not Hydra experiments, from their CSV; the one block that reads no table,
`open_choices`, lists the defaults of the composed configuration. Percentages are arithmetic means,
ratios geometric means with the interval taken on the log; each with its 95% Student-t interval over
seeds and the number of seeds n (`plots.mean_ci`, `plots.geometric_ci`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import pandas as pd

from ..core import ConfigError
from ..io import atomic_write_text
from .intervals import fmt_interval, interval, per_seed_ratio
from .open_choices import open_choices_block
from .progress import progress_bar
from .plots import SEED, geometric_ci, mean_ci
from .bands import definition
from .design_plots import design_text
from .heterogeneity_plots import STUDIES, heterogeneity_text
from .dispatch_plots import count_text, dispatch_ratios, near_best
from .preemption_plots import (PREEMPTIVE, RESTART, preemption_price, preemption_spread, price_of_nonpreemption,
                               variant_keys, variant_name)
from .queueing_plots import queueing_text
from .published import load_result
from .sensitivity_plots import relative_total_jct
from .plots import best_wcs_ratios, worst_gap
from .regime_plots import LOAD, SIGMA, TRACE
from .table_check import read_table, table_path

BEGIN = re.compile(r"<!-- generated:([A-Za-z0-9_]+) -->")
END = "<!-- /generated:{name} -->"
UNMARKED_MEASURED = re.compile(r"\bmeasured\b[:\s]*[-+~]?\d", re.IGNORECASE)


def ratio_text(summary: pd.Series) -> str:
    """'0.671 [0.589, 0.766], n=5' for a geometric_ci row."""
    return fmt_interval(summary, 1.0, "")


def ratio_of(table: pd.DataFrame, key: str, changed: object, paper: object) -> pd.Series:
    """Geometric mean over seeds of total JCT with `key` = `changed` / with `key` = `paper`."""
    pivot = table.pivot_table(index=SEED, columns=key, values="total_jct", aggfunc="first")
    ratio = (pivot[changed] / pivot[paper]).rename("ratio").reset_index().assign(all=0)
    return geometric_ci(ratio, ["all"], "ratio").iloc[0]


def reductions(results: Path) -> pd.DataFrame:
    """compare_default: A-SRPT's total JCT reduction over each scheduler (arithmetic mean over seeds)."""
    table = load_result(results, "compare_default")
    return mean_ci(table[table["scheduler"] != "asrpt"], ["scheduler"], "asrpt_reduction").set_index("scheduler")


def trace_ranges(summary: pd.DataFrame) -> str:
    """'1.1-7.3 on philly, 1.3-2.4 on gavel': range of geometric means per trace."""
    parts = [f"{part['mean'].min():.2g}-{part['mean'].max():.2g} on {trace}"
             for trace, part in summary.groupby(TRACE, sort=False)]
    return ", ".join(parts)


def findings(results: Path) -> str:
    """README's headline: the regime map, the backfill ablation, the default workload, Heavy-Edge, theory."""
    regime = load_result(results, "regime_map")
    point = [TRACE, SIGMA, LOAD]
    asrpt = best_wcs_ratios(regime, point)
    oracle = best_wcs_ratios(regime, point, schedulers=("asrpt_oracle",))
    seeds = int(asrpt["n"].max())
    wins, losses = int((asrpt["excludes_one"] & (asrpt["high"] < 1)).sum()), int((asrpt["low"] > 1).sum())
    oracle_wins = oracle[oracle["excludes_one"] & (oracle["high"] < 1)]
    backfill = ratio_of(load_result(results, "ablation_backfill"), "scheduler.backfill", True, False)
    reduction = reductions(results)
    gap = interval(per_seed_ratio(load_result(results, "compare_default"), "asrpt", "asrpt_oracle")["ratio"] - 1)
    placement = load_result(results, "placement_heavy_edge_vs_ilp")
    refined = placement[placement["placement.mode"] == "refined"]
    lemma = load_result(results, "adversarial_search")
    theory = load_result(results, "theory_ratio_vs_bound")
    trace = load_result(results, "theory_trace_ratio")
    trace_ok = int((trace["ratio_to_lower_bound"] <= trace["theorem1_bound"]).sum())
    lines = [
        f"- A-SRPT / best WCS baseline, total JCT (geometric mean over {seeds} seeds per point): 95% interval "
        f"below 1 at {wins} of {len(asrpt)} regime-map points, above 1 at {losses}; means {trace_ranges(asrpt)}.",
        f"- The perfect-prediction variant / best WCS: means {trace_ranges(oracle)}; interval below 1 at "
        f"{len(oracle_wins)} of {len(oracle)} points.",
        f"- Backfilling A-SRPT (not in the paper) / strict head-of-line, default workload: {ratio_text(backfill)}.",
        f"- Default workload, A-SRPT's total JCT below FIFO's by {fmt_interval(reduction.loc['fifo'])}, below "
        f"SPJF's by {fmt_interval(reduction.loc['spjf'])} (the paper: up to 92%); above its perfect-prediction "
        f"variant by {fmt_interval(gap)} (the paper: 14%).",
        f"- Heavy-Edge `refined` / exact ILP alpha, mean gap {fmt_interval(interval(refined['alpha_penalty_mean']))}"
        f" (worst {100 * worst_gap(refined):.3g}%) over {int(refined['placements'].iloc[0])} "
        f"placements per seed, median {1e3 * refined['heavy_edge_time_median_s'].median():.2g} ms each.",
        f"- Theorem 1 held on {trace_ok} of {len(trace)} Philly runs (against a lower bound on OPT) and on "
        f"{int(theory['instances'].sum()) - int(theory['bound_violations'].sum())} of "
        f"{int(theory['instances'].sum())} tiny instances (against the exact OPT); Lemma 2's Eq. 12 fails by up "
        f"to {lemma['eq12_violation_rel'].max():.3g}x its claimed bound (adversarial search).",
        dispatch_findings(results), preemption_findings(results), sensitivity_findings(results),
    ]
    return "\n".join(lines)


def dispatch_findings(results: Path) -> str:
    """The dispatch map per trace: per A-SRPT variant and trivial reference, the range of its geometric means
    over the best WCS and at how many points its interval lies within 5% of it (two-sided) or below it."""
    summary = dispatch_ratios(load_result(results, "dispatch_map"))
    counts, seeds = near_best(summary), int(summary["n"].max())
    parts = []
    for trace, part in counts.groupby(TRACE, sort=False):
        mine = part[part["scheduler"].str.startswith("asrpt") & ~part["scheduler"].str.startswith("asrpt_oracle")]
        oracle = part[part["scheduler"].str.startswith("asrpt_oracle")]
        references = part[~part["scheduler"].str.startswith("asrpt")]
        parts.append(f"{trace} ({int(part['points'].max())} points): " + "; ".join(map(count_text, (
            row for _, row in mine.iterrows()))) + "; " + "; ".join(
            count_text(row) for _, row in oracle.iterrows()) + "; references: " + "; ".join(
            count_text(row) for _, row in references.iterrows()))
    return (f"- Dispatch rules (not in the paper), total JCT / best WCS (rule/eligibility: range of geometric means "
            f"over {seeds} seeds, and the points where {definition()}): " + ". ".join(parts) + ".")


def preemption_findings(results: Path) -> str:
    """The price of non-preemption per restart price: range over loads of best non-preemptive / best preemptive."""
    table = load_result(results, "preemption_price")
    summary = preemption_price(table)
    parts = []
    for restart in sorted(summary[RESTART].astype(float).unique()):
        price = price_of_nonpreemption(summary, restart)
        parts.append(f"restart {restart:g} s: " + ", ".join(
            f"{part['mean'].min():.2g}-{part['mean'].max():.2g} on {trace} (interval above 1 at "
            f"{int((part['low'] > 1).sum())} of {len(part)} loads)" for trace, part in price.groupby(TRACE, sort=True)))
    loads = summary[LOAD].astype(float)
    keys = variant_keys(table)
    preemptive = ", ".join(name for name in PREEMPTIVE if name in set(summary["scheduler"]))
    best = (f"; the best of every {' x '.join(key.rpartition('.')[2] for key in keys)} variant per point" if keys
            else "")
    line = (f"- Price of non-preemption, best non-preemptive / best preemptive total JCT ({preemptive}{best}; "
            f"geometric means over loads {loads.min():g}-{loads.max():g}, {int(summary['n'].max())} seeds; above 1: "
            "preempting pays): " + "; ".join(parts) + ".")
    if "preempted_share" not in table.columns:
        return line
    spread = preemption_spread(table, 30.0)
    counts = "; ".join(dict.fromkeys(f"{variant_name(row, keys)}: {100 * row['lowest_share']:.0f}-"
                                     f"{100 * row['highest_share']:.0f}% of jobs, p99 {row['p99']:g}, most "
                                     f"{row['most']:g}" for _, row in spread.iterrows()))
    return (f"{line} Suspensions per job at restart 30 s (share of jobs suspended at least once, range over points; "
            f"largest 99th percentile and count per job): {counts}.")


def sensitivity_findings(results: Path) -> str:
    """COMM_HEAVY x tau: worst cell / best cell per load, and the measured ratio against the Theorem 1 bound."""
    table = load_result(results, "sensitivity")
    summary, seeds = relative_total_jct(table), int(table[SEED].nunique())
    spread = ", ".join(f"{part['relative'].max():.3g} at load {float(load):g}"
                       for load, part in summary.groupby(LOAD, sort=True))
    return (f"- COMM_HEAVY x tau x epsilon (A-SRPT, 1,000 mostly multi-GPU Philly jobs): the worst cell's total JCT "
            f"over the best cell's (geometric means over {seeds} seeds) {spread}; sum C / lower bound at most "
            f"{table['ratio_to_lower_bound'].max():.3g} while the Theorem 1 bound is at least "
            f"{table['theorem1_bound'].min():.3g}.")


def predictor_error_by_sigma(results: Path) -> str:
    """The forest's median relative error on the simulated jobs of seen groups, per trace and sigma."""
    table = load_result(results, "regime_map")
    runs = table[table["scheduler"] == "asrpt"].drop_duplicates([TRACE, SIGMA, SEED])
    runs = runs.assign(**{SIGMA: runs[SIGMA].astype(object).where(runs[SIGMA].notna(), "null")})
    summary = mean_ci(runs, [TRACE, SIGMA], "predictor_median_rel_error_seen")
    held_out = load_result(results, "fig4_prediction_error")
    rows = [f"Held-out last 20% of Philly (`experiment=fig4_prediction_error`, sigma 1): median relative error on "
            f"jobs of seen groups {fmt_interval(interval(held_out['median_relative_error_seen']), 1.0, '')}. On the "
            "jobs each regime-map run simulates, by sigma:", "",
            "| trace | sigma | median relative error, seen groups |", "|---|---|---|"]
    for _, row in summary.iterrows():
        rows.append(f"| {row[TRACE]} | {row[SIGMA]} | {fmt_interval(row, 1.0, '')} |")
    jobs = runs.groupby(TRACE)["num_jobs"].first()
    shares = sorted({f"{100 * float(share):g}%" for share in runs["workload.recurrence.new_group_share"]})
    rows += ["", "Simulated jobs of `experiment=regime_map` (" +
             ", ".join(f"{trace} {int(count):,}" for trace, count in jobs.items()) +
             f" per run, {' or '.join(shares)} of them in new groups); mean over seeds, 95% interval, n seeds."]
    return "\n".join(rows)


FIG4_BUCKETS = (("share_abs_0_10", "[0, 10)"), ("share_abs_10_100", "[10, 1e2)"), ("share_abs_100_1000", "[1e2, 1e3)"),
                ("share_abs_1000_10000", "[1e3, 1e4)"), ("share_abs_10000_inf", ">= 1e4"))


def forest_accuracy(results: Path) -> str:
    """The forest's error on the held-out last 20% of Philly (experiment fig4_prediction_error)."""
    table = load_result(results, "fig4_prediction_error")

    def value(column: str, scale: float = 1.0, unit: str = "") -> str:
        return fmt_interval(interval(table[column]), scale, unit)

    buckets = ", ".join(f"{text} {value(column, 100.0, '%')}" for column, text in FIG4_BUCKETS)
    return (f"Held-out jobs per run: {int(table['held_out_jobs'].iloc[0]):,} (history {int(table['history_jobs'].iloc[0]):,}"
            f"), seeds {table[SEED].nunique()}. MAE {value('mae')} iterations; median absolute error "
            f"{value('median_abs_error')}; median relative error {value('median_relative_error')} "
            f"({value('median_relative_error_seen')} on jobs of seen groups); unseen share "
            f"{value('unseen_share', 100.0, '%')}. Fig 4 buckets of absolute error (iterations): {buckets}.")


def theory_table(results: Path) -> str:
    """Theorem 1 and Lemma 2 on measured schedules (theory experiments)."""
    case = load_result(results, "lemma2_reviewer").iloc[0]
    search = load_result(results, "adversarial_search")
    eq12 = search[search["task.adversarial_objective"] == "eq12"]
    by_g = mean_ci(eq12, ["task.theory_gpus"], "eq12_violation_rel").set_index("task.theory_gpus")
    tiny = load_result(results, "theory_ratio_vs_bound")
    trace = load_result(results, "theory_trace_ratio")
    trace_ratio = trace["ratio_to_lower_bound"] / trace["theorem1_bound"]
    repaired = int((search["repaired_start_violation_rel"] > 0).sum())
    final = int((search["lemma2_final_violation_rel"] > 0).sum())
    job = case["eq12_worst_job"]
    eq12_text = "; ".join(f"G = {int(g)}: worst {eq12[eq12['task.theory_gpus'] == g]['eq12_violation_rel'].max():.3g}x,"
                          f" mean {fmt_interval(row, 1.0, 'x')}" for g, row in by_g.iterrows())
    rows = [
        "| what | result | command |",
        "|---|---|---|",
        f"| reviewer's instance | Eq. 12 claims the jobs before {job} end by {case['eq12_worst_claim']:,.0f}, they "
        f"end at {case['eq12_worst_predecessors_makespan']:,.0f}; sum C / lower bound "
        f"{case['ratio_to_lower_bound']:.3g} within the Theorem 1 bound {case['theorem1_bound']:.3g} | "
        "`asrpt-bench -m experiment=lemma2_reviewer` |",
        f"| Eq. 12 violation found by adversarial search (end of the jobs before i / claimed bound) | {eq12_text}; "
        f"repaired start-time and final Lemma 2 inequalities violated in {repaired} and {final} of {len(search)} runs"
        " | `asrpt-bench -m experiment=adversarial_search` |",
        f"| worst (sum C / OPT) / Theorem 1 bound, exact OPT | {search['ratio_over_bound'].max():.3g} by search; "
        f"{tiny['ratio_over_bound_max'].max():.3g} over {int(tiny['instances'].sum()):,} random tiny instances, "
        f"{int(tiny['bound_violations'].sum())} violations | same; `asrpt-bench -m experiment=theory_ratio_vs_bound` |",
        f"| Philly slices: (sum C / lower bound) / bound | at most {trace_ratio.max():.3g} over {len(trace)} runs | "
        "`asrpt-bench -m experiment=theory_trace_ratio` |",
    ]
    return "\n".join(rows)


ABLATION_ROWS = (("ablation_backfill", "scheduler.backfill", True, False, "backfill / strict head-of-line"),
                 ("ablation_novelty_bias", "predictor.unseen", "mean", "zero",
                  "unseen jobs predicted the forest's mean / predicted 0"),
                 ("ablation_placement", "placement.name", "first_fit", "heavy_edge", "first-fit / Heavy-Edge"))


def ablations(results: Path) -> str:
    """The three ablations of A-SRPT on the default workload, as ratios of total JCT."""
    rows = ["| A-SRPT on the default workload, total JCT | ratio (geometric mean, 95% interval, seeds) | command |",
            "|---|---|---|"]
    for name, key, changed, paper, text in ABLATION_ROWS:
        summary = ratio_of(load_result(results, name), key, changed, paper)
        rows.append(f"| {text} | {ratio_text(summary)} | `asrpt-bench -m experiment={name}` |")
    return "\n".join(rows)


PLACEMENT_STUDIES = (("placement_study", ""), ("placement_study_contract", " --heavy-edge-mode contract"))


def placement_study(results: Path, name: str) -> pd.DataFrame:
    """results/<name>.csv of asrpt-bench-placement-study (not a Hydra experiment: read as it is)."""
    table = read_table(table_path(results, f"{name}.csv"))
    missing = {"gap", "he_mode", "pattern", "b_inter", "b_intra", "ilp_status"} - set(table.columns)
    if table.empty or missing:
        raise ConfigError(f"{Path(results) / name}.csv: not a placement-study table (missing {sorted(missing)})")
    return table


def heavy_edge_study(results: Path) -> str:
    """Heavy-Edge against the exact ILP, from the placement-study CSVs (one seed, every zoo case)."""
    rows = ["| Heavy-Edge mode / exact ILP, alpha gap | cases | mean gap | max gap | command |", "|---|---|---|---|---|"]
    for name, flag in PLACEMENT_STUDIES:
        table = placement_study(results, name)
        mode = "/".join(sorted(table["he_mode"].astype(str).unique()))
        rows.append(f"| `{mode}`, b_inter {table['b_inter'].iloc[0]:g} <= b_intra {table['b_intra'].iloc[0]:g} GB/s "
                    f"| {len(table)} | {100 * table['gap'].mean():.2g}% | {100 * worst_gap(table):.3g}% | "
                    f"`asrpt-bench-placement-study{flag} --out results/{name}.csv` |")
    return "\n".join(rows)


def heavy_edge_patterns(results: Path) -> str:
    """The placement studies per Heavy-Edge mode and fragmentation pattern, with the ILP's status."""
    rows = ["| mode | pattern | cases | mean gap | max gap | cases with a gap | ILP proven optimal |", "|---|---|---|---|---|---|---|"]
    for name, _ in PLACEMENT_STUDIES:
        table = placement_study(results, name)
        for (mode, pattern), part in table.groupby(["he_mode", "pattern"], sort=True):
            rows.append(f"| `{mode}` | {pattern} | {len(part)} | {100 * part['gap'].mean():.2g}% | "
                        f"{100 * worst_gap(part):.3g}% | {int((part['gap'] > 1e-9).sum())} | "
                        f"{int((part['ilp_status'] == 'optimal').sum())} |")
    return "\n".join(rows)


SOLVERS = ("cpsat", "highs", "cbc")
"""The open solvers compared on one placement study, each in results/placement_solver_<name>.csv."""
SOLVER_STUDY = "--gpus 8,16,32 --heavy-edge-mode refined --time-limit 60"


def solver_comparison(results: Path) -> str:
    """The same placement study solved by each open solver: cases proven optimal, total / median / slowest
    solve, alpha disagreeing with CP-SAT's, and the machine's load while it ran."""
    tables = {name: placement_study(results, f"placement_solver_{name}") for name in SOLVERS}
    reference = tables["cpsat"]["ilp_alpha"].to_numpy(dtype=float)
    rows = ["| solver | cases | proven optimal | total solve (s) | median (ms) | slowest (s) | alpha differs from "
            "CP-SAT's | load average (1 min, start-end) | command |", "|---|---|---|---|---|---|---|---|---|"]
    for name, table in tables.items():
        wall = table["ilp_wall_s"].astype(float)
        differs = int((abs(table["ilp_alpha"].to_numpy(dtype=float) - reference) > 1e-9 * reference).sum())
        rows.append(f"| `{name}` | {len(table)} | {int((table['ilp_status'] == 'optimal').sum())} | "
                    f"{wall.sum():.3g} | {1e3 * wall.median():.3g} | {wall.max():.3g} | {differs} | "
                    f"{table['load_average'].iloc[0]} | `asrpt-bench-placement-study {SOLVER_STUDY} --solver {name} "
                    f"--out results/placement_solver_{name}.csv` |")
    return "\n".join(rows)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "findings": findings,
    "predictor_error_by_sigma": predictor_error_by_sigma,
    "forest_accuracy": forest_accuracy,
    "theory_table": theory_table,
    "ablations": ablations,
    "heavy_edge_study": heavy_edge_study,
    "heavy_edge_patterns": heavy_edge_patterns,
    "solver_comparison": solver_comparison,
    "open_choices": open_choices_block,
    "queueing_theory": lambda results: queueing_text(load_result(results, "queueing_theory")),
    "heterogeneity": lambda results: heterogeneity_text([load_result(results, name) for name in STUDIES]),
    "design_map": lambda results: design_text(load_result(results, "design_map")),
}


def doc_files(root: Path) -> list[Path]:
    """README.md and docs/*.md under the project root."""
    return [path for path in [Path(root) / "README.md", *sorted((Path(root) / "docs").glob("*.md"))] if path.exists()]


def block_names(text: str) -> list[str]:
    """Names of the generated blocks a document holds, in order."""
    return BEGIN.findall(text)


def rewrite(text: str, source: str, compute: Callable[[str], str]) -> str:
    """`text` with every generated block's content replaced by compute(name); errors name `source`."""
    out, position = [], 0
    for match in BEGIN.finditer(text):
        name = match.group(1)
        if name not in BLOCKS:
            raise ConfigError(f"{source}: unknown generated block {name!r}; known: {sorted(BLOCKS)}")
        end = text.find(END.format(name=name), match.end())
        if end < 0 or BEGIN.search(text, match.end(), end):
            raise ConfigError(f"{source}: generated block {name!r} has no closing {END.format(name=name)}")
        out += [text[position:match.end()], "\n", compute(name), "\n"]
        position = end
    return "".join(out) + text[position:]


def outside_blocks(text: str) -> str:
    """`text` without the content of its generated blocks."""
    return rewrite(text, "text", lambda name: "")


def unmarked_measured(text: str) -> list[str]:
    """Lines outside generated blocks that say 'measured' followed by a number."""
    return [line for line in outside_blocks(text).splitlines() if UNMARKED_MEASURED.search(line)]


def update_docs(root: Path, results: Path, check: bool = False, progress: bool | None = None) -> list[Path]:
    """Rewrite the generated blocks of README.md and docs/*.md from `results`; return the files that
    differed (with check=True, only compare). `progress`: a bar over the blocks (None: on a terminal)."""
    cache: dict[str, str] = {}
    texts = {path: path.read_text(encoding="utf-8") for path in doc_files(root)}
    used = {match[1] for text in texts.values() for match in BEGIN.finditer(text)}
    with progress_bar(len(used), "generated blocks", "block", progress) as bar:
        def compute(name: str) -> str:
            if name not in cache:
                bar.set_postfix_str(name)
                cache[name] = BLOCKS[name](Path(results))
                bar.update()
            return cache[name]

        changed = []
        for path, text in texts.items():
            new = rewrite(text, str(path), compute)
            if new != text:
                changed.append(path)
                if not check:
                    atomic_write_text(path, new)
    return changed
