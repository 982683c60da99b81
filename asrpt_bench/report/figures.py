"""`asrpt-bench-figures [--results DIR] [--out DIR] [--all] [--partial-sweep]`: every figure from collected tables.

Each registered figure names the results CSV it reads (written by `asrpt-bench-collect`), the named
experiment that table must come from, the columns it needs, and the plot function that draws it.
A table from another experiment (e.g. compare_default.csv saved as sensitivity.csv) or without the
columns, covering only part of its experiment's sweep or seeds, with a non-numeric cell where numbers
are read or with derived columns that do not follow from the raw ones (report/table_check.py) is
refused, naming the file; a missing table is skipped (an error with `--all`). Nothing is re-simulated.

Exit codes: 0 every present table drawn (with `--all`: every figure); 1 nothing drawn; 2 a table
was refused or, with `--all`, missing.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd
from matplotlib.figure import Figure

from ..core import ConfigError
from ..io import atomic_write_text
from . import (bands, design_plots, dispatch_plots, heterogeneity_plots, plots, preemption_plots, queueing_plots,
               regime_plots, sensitivity_plots, theory_plots)
from .progress import progress_bar
from .style import save_figure
from .published import check_sweep
from .table_check import read_table, recorded_experiments, table_path


@dataclass(frozen=True)
class FigureSpec:
    """Figure `name` drawn by `plot` from `table`, which must hold runs of experiment `name` with `columns`."""

    name: str
    table: str
    plot: Callable[[pd.DataFrame], Figure]
    caption: str
    columns: tuple[str, ...]

    def check(self, table: pd.DataFrame, path: Path) -> None:
        """Refuse a table from another experiment or without the columns this figure reads."""
        recorded = recorded_experiments(table)
        if recorded != {self.name}:
            found = sorted(recorded) if recorded else "no experiment recorded"
            raise ConfigError(f"{path}: expected runs of experiment {self.name!r}, found {found} "
                              f"(collect a sweep of experiment={self.name} into it)")
        missing = [column for column in self.columns if column not in table.columns]
        if missing:
            raise ConfigError(f"{path}: lacks column(s) {missing} that figure {self.name!r} reads")


HETEROGENEITY_COLUMNS = ("placement.pool", "scheduler.virtual_gpus", "workload.target_load", "seed", "scheduler",
                         "total_jct", "workload.name", "num_jobs", "cluster.pools")
"""What the heterogeneity figure of either trace reads (heterogeneity_plots)."""

FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec("fig4_prediction_error", "fig4_prediction_error.csv", plots.plot_prediction_error,
               "Fig 4: share of held-out jobs per prediction-error bucket",
               ("share_abs_0_10", "share_abs_10000_inf", "share_rel_0.1_0.25", "mae")),
    FigureSpec("fig6_num_jobs", "fig6_num_jobs.csv", plots.plot_total_jct_vs_num_jobs,
               "Fig 6: A-SRPT / best baseline (paired per seed) and total JCT vs number of jobs",
               ("workload.num_jobs", "scheduler", "total_jct", "seed")),
    FigureSpec("fig7_single_gpu_share", "fig7_single_gpu_share.csv", plots.plot_total_jct_vs_single_gpu_share,
               "Fig 7: A-SRPT / best baseline (paired per seed) and total JCT vs single-GPU job share",
               ("workload.single_gpu_share", "scheduler", "total_jct", "seed")),
    FigureSpec("placement_heavy_edge_vs_ilp", "placement_heavy_edge_vs_ilp.csv", plots.plot_placement_quality,
               "Heavy-Edge vs ILP: alpha penalty and placement time",
               ("placement.mode", "alpha_penalty_mean", "alpha_penalty_max", "heavy_edge_time_median_s",
                "ilp_time_median_s")),
    FigureSpec("sensitivity", "sensitivity.csv", sensitivity_plots.plot_sensitivity,
               "COMM_HEAVY x tau x epsilon x offered load: A-SRPT's total JCT, and sum C / lower bound vs the "
               "Theorem 1 bound",
               ("workload.target_load", "scheduler.comm_heavy", "scheduler.tau", "predictor.epsilon", "seed",
                "total_jct", "ratio_to_lower_bound", "theorem1_bound")),
    FigureSpec("compare_default", "compare_default.csv", plots.plot_scheduler_comparison,
               "Total JCT per scheduler on the default workload",
               ("scheduler", "total_jct")),
    FigureSpec("compare_baseline_first_fit", "compare_baseline_first_fit.csv", plots.plot_scheduler_comparison,
               "Total JCT per scheduler, baselines placed first-fit (A-SRPT on Heavy-Edge)",
               ("scheduler", "placer", "total_jct")),
    FigureSpec("theory_ratio_vs_bound", "theory_ratio_vs_bound.csv", theory_plots.plot_theory_ratio_vs_bound,
               "Tiny instances: A-SRPT's ratio to exact OPT vs the Theorem 1 bound over tau x COMM_HEAVY x epsilon",
               ("scheduler.tau", "scheduler.comm_heavy", "predictor.epsilon", "task.theory_alpha", "ratio_to_opt_max",
                "theorem1_bound_min")),
    FigureSpec("theory_trace_ratio", "theory_trace_ratio.csv", theory_plots.plot_trace_ratio_vs_bound,
               "Philly slice: A-SRPT's ratio to the lower bound vs the Theorem 1 bound",
               ("scheduler.tau", "scheduler.comm_heavy", "predictor.epsilon", "ratio_to_lower_bound", "theorem1_bound")),
    FigureSpec("adversarial_search", "adversarial_search.csv", theory_plots.plot_adversarial,
               "Adversarial search: Eq. 12 violation and ratio / bound of the best instances",
               ("task.adversarial_objective", "task.theory_gpus", "eq12_violation_rel", "ratio_over_bound")),
    FigureSpec("ablation_novelty_bias", "ablation_novelty_bias.csv", theory_plots.plot_ablation_novelty_bias,
               "Ablation: unseen jobs predicted as 0 vs as the forest's mean",
               ("predictor.unseen", "total_jct")),
    FigureSpec("ablation_placement", "ablation_placement.csv", theory_plots.plot_ablation_placement,
               "Ablation: Heavy-Edge vs first-fit placement under A-SRPT",
               ("placement.name", "total_jct")),
    FigureSpec("ablation_backfill", "ablation_backfill.csv", theory_plots.plot_ablation_backfill,
               "Ablation: strict head-of-line dispatch vs backfill",
               ("scheduler.backfill", "total_jct")),
    FigureSpec("regime_map", "regime_map.csv", regime_plots.plot_regime_map,
               "Regime map: A-SRPT / best WCS vs offered load per key informativeness sigma, Philly and Gavel",
               ("workload.name", "workload.target_load", "workload.recurrence.sigma", "seed", "scheduler",
                "total_jct")),
    FigureSpec("regime_map_novelty", "regime_map_novelty.csv", regime_plots.plot_regime_map_novelty,
               "Regime map: A-SRPT / best WCS vs offered load per new-group share, Philly and Gavel",
               ("workload.name", "workload.target_load", "workload.recurrence.new_group_share", "seed",
                "scheduler", "total_jct")),
    FigureSpec("injection_study", "injection_study.csv", regime_plots.plot_injection_study,
               "Injection study: A-SRPT / best WCS vs the number of injected unseen long gang jobs",
               ("workload.inject_jobs", "seed", "scheduler", "total_jct")),
    FigureSpec("dispatch_map", "dispatch_map.csv", dispatch_plots.plot_dispatch_map,
               "Dispatch map: A-SRPT under strict, EASY, conservative and greedy dispatch x eligibility, "
               f"over the best WCS (README counts, per trace: {bands.definition()})",
               ("workload.name", "workload.target_load", "workload.recurrence.sigma", "scheduler.eligibility",
                "seed", "scheduler", "total_jct")),
    FigureSpec("preemption_price", "preemption_price.csv", preemption_plots.plot_preemption_price,
               "The price of non-preemption: preemptive references over the best non-preemptive scheduler",
               ("workload.name", "workload.target_load", "preemption.restart_s", "seed", "scheduler", "total_jct")),
    FigureSpec("queueing_theory", "queueing_theory.csv", queueing_plots.plot_queueing_theory,
               "The simulator against queueing theory: mean response time of fifo, spjf, psjf_oracle and srtf_oracle "
               "on one GPU vs the M/G/1 closed forms of FCFS, SJF, PSJF and SRPT",
               ("workload.load", "workload.size_scv", "seed", "scheduler", "discipline", "mean_response_s",
                "formula_mean_response_s")),
    FigureSpec("heterogeneity", "heterogeneity.csv", heterogeneity_plots.plot_heterogeneity,
               "Heterogeneity, Gavel: A-SRPT, FIFO, SPJF+EASY, fifo_replan and the preemptive references over the best "
               "WCS on Gavel's cluster of V100, P100 and K80 pools, per pool choice and A-SRPT's virtual machine",
               HETEROGENEITY_COLUMNS),
    FigureSpec("heterogeneity_philly", "heterogeneity_philly.csv", heterogeneity_plots.plot_heterogeneity,
               "Heterogeneity, Philly: A-SRPT, FIFO, SPJF+EASY, fifo_replan and the preemptive references over the "
               "best WCS on the mixed cluster of V100, P100 and K80 pools, per pool choice and A-SRPT's virtual "
               "machine", HETEROGENEITY_COLUMNS),
    FigureSpec("design_map", "design_map.csv", design_plots.plot_design_map,
               "Design map: A-SRPT's eligibility (virtual, reservation, release) x virtual order (SRPT, PSJF) x "
               "dispatch over the best WCS, with WCS-SubTime, SPJF+EASY and a random-order EASY (README counts, "
               f"per trace: {bands.definition()})",
               ("workload.name", "workload.target_load", "workload.recurrence.sigma", "scheduler.eligibility",
                "scheduler.virtual", "seed", "scheduler", "total_jct")),
)


TABLE_ONLY = {"lemma2_reviewer": "two jobs: REPRODUCTION.md quotes its numbers, a figure would add nothing"}
"""Experiments drawn in no figure, and why; every other experiment has a FigureSpec."""

PAPER_FIGURES = {
    "fig4_prediction_error": "Fig 4",
    "fig6_num_jobs": "Fig 6",
    "fig7_single_gpu_share": "Fig 7",
    "compare_default": "Fig 5 (the paper's testbed comparison; here simulated)",
    "compare_baseline_first_fit": "Fig 5, baselines placed first-fit",
    "placement_heavy_edge_vs_ilp": "Heavy-Edge vs ILP (text)",
    "theory_ratio_vs_bound": "Theorem 1",
    "theory_trace_ratio": "Theorem 1",
    "adversarial_search": "Lemma 2 / Eq. 12",
}
"""Which figure or claim of the paper each of ours corresponds to; the rest go beyond the paper."""


def index_text(written: list[Path]) -> str:
    """paper_figures/README.md: every figure drawn, its paper counterpart, table and command."""
    drawn = {path.stem for path in written}
    lines = ["# Figures", "",
             "Drawn by `asrpt-bench-figures --results results --out paper_figures` from the committed tables "
             "(byte-stable: fixed fonts, no timestamps). Each table comes from `asrpt-bench -m experiment=NAME` "
             "then `asrpt-bench-collect multirun/NAME --out results/NAME.csv`; `experiments/run_all.sh --publish` "
             "does every one. REPRODUCTION.md sets the numbers beside the paper's.", "",
             "| figure | what it shows | paper | table | command |", "|---|---|---|---|---|"]
    for spec in FIGURES:
        if spec.name not in drawn:
            continue
        files = " ".join(f"[{path.suffix[1:].upper()}]({path.name})" for path in written if path.stem == spec.name)
        lines.append(f"| `{spec.name}` {files} | {spec.caption} | {PAPER_FIGURES.get(spec.name, 'beyond the paper')} "
                     f"| `results/{spec.table}` | `asrpt-bench -m experiment={spec.name}` |")
    return "\n".join(lines) + "\n"


def _draw(spec: FigureSpec, results: Path, out: Path, partial: bool) -> tuple[list[Path], str, str]:
    """One figure: the files written, why it was skipped (no table) and why its table was refused."""
    try:
        path = table_path(results, spec.table)
        if not path.exists():
            return [], f"{spec.name} (no {path})", ""
        table = read_table(path)
        spec.check(table, path)
        check_sweep(table, spec.name, path, spec.columns, partial)
        figure = spec.plot(table)
    except ConfigError as error:
        return [], "", str(error)
    return save_figure(figure, out, spec.name), "", ""


def make_figures(results: Path, out: Path, partial: bool = False,
                 progress: bool | None = None) -> tuple[list[Path], list[str], list[str]]:
    """Draw every figure whose table exists and is the right one (published.check_sweep: the whole
    sweep, every seed, consistent cells; `partial`: part of the sweep will do); return the files
    written, the figures skipped (no table) and the tables refused (one message each). `progress`: a
    bar over the figures naming the one being drawn (None: on a terminal)."""
    written, skipped, refused = [], [], []
    with progress_bar(len(FIGURES), "figures", "figure", progress) as bar:
        for spec in FIGURES:
            bar.set_postfix_str(spec.name)
            files, missing, refusal = _draw(spec, results, out, partial)
            written.extend(files)
            skipped.extend([missing] if missing else [])
            refused.extend([refusal] if refusal else [])
            bar.update()
    if written:
        atomic_write_text(Path(out) / "README.md", index_text(written))
    return written, skipped, refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="asrpt-bench-figures", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"), help="directory of collected CSVs")
    parser.add_argument("--out", type=Path, default=Path("paper_figures"), help="directory for PNG and PDF files")
    parser.add_argument("--all", action="store_true", help="every figure must be drawn (a missing table is an error)")
    parser.add_argument("--partial-sweep", action="store_true",
                        help="accept tables of part of their experiment's sweep (run_all.sh --quick); seeds and "
                             "cells are still checked")
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        print(f"asrpt-bench-figures: error: no results directory {args.results}", file=sys.stderr)
        return 2
    try:
        written, skipped, refused = make_figures(args.results, args.out, args.partial_sweep)
    except OSError as error:
        print(f"asrpt-bench-figures: error: cannot write to --out {args.out}: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    for reason in skipped:
        print(f"asrpt-bench-figures: {'error' if args.all else 'skipped'}: {reason}", file=sys.stderr)
    for reason in refused:
        print(f"asrpt-bench-figures: error: {reason}", file=sys.stderr)
    if refused or (args.all and skipped):
        return 2
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
