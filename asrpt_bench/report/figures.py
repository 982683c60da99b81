"""`asrpt-bench-figures [--results results] [--out paper_figures]`: every figure from collected tables.

Each registered figure names the results CSV it reads (written by `asrpt-bench-collect`) and the
plot function that draws it; figures whose table is missing are listed and skipped. Nothing is
re-simulated.
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
from . import plots, regime_plots, theory_plots
from .style import save_figure


@dataclass(frozen=True)
class FigureSpec:
    name: str
    table: str
    plot: Callable[[pd.DataFrame], Figure]
    caption: str


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec("fig4_prediction_error", "fig4_prediction_error.csv", plots.plot_prediction_error,
               "Fig 4: share of held-out jobs per prediction-error bucket"),
    FigureSpec("fig6_num_jobs", "fig6_num_jobs.csv", plots.plot_total_jct_vs_num_jobs,
               "Fig 6: total JCT vs number of jobs"),
    FigureSpec("fig7_single_gpu_share", "fig7_single_gpu_share.csv", plots.plot_total_jct_vs_single_gpu_share,
               "Fig 7: total JCT vs single-GPU job share"),
    FigureSpec("placement_heavy_edge_vs_ilp", "placement_heavy_edge_vs_ilp.csv", plots.plot_placement_quality,
               "Heavy-Edge vs ILP: alpha penalty and placement time"),
    FigureSpec("sensitivity", "sensitivity.csv", plots.plot_sensitivity,
               "COMM_HEAVY x tau x epsilon sensitivity of A-SRPT"),
    FigureSpec("compare_default", "compare_default.csv", plots.plot_scheduler_comparison,
               "Total JCT per scheduler on the default workload"),
    FigureSpec("theory_ratio_vs_bound", "theory_ratio_vs_bound.csv", theory_plots.plot_theory_ratio_vs_bound,
               "Tiny instances: A-SRPT's ratio to exact OPT vs the Theorem 1 bound over tau x COMM_HEAVY x epsilon"),
    FigureSpec("theory_trace_ratio", "theory_trace_ratio.csv", theory_plots.plot_trace_ratio_vs_bound,
               "Philly slice: A-SRPT's ratio to the lower bound vs the Theorem 1 bound"),
    FigureSpec("adversarial_search", "adversarial_search.csv", theory_plots.plot_adversarial,
               "Adversarial search: Eq. 12 violation and ratio / bound of the best instances"),
    FigureSpec("ablation_novelty_bias", "ablation_novelty_bias.csv", theory_plots.plot_ablation_novelty_bias,
               "Ablation: unseen jobs predicted as 0 vs as the forest's mean"),
    FigureSpec("ablation_placement", "ablation_placement.csv", theory_plots.plot_ablation_placement,
               "Ablation: Heavy-Edge vs first-fit placement under A-SRPT"),
    FigureSpec("ablation_backfill", "ablation_backfill.csv", theory_plots.plot_ablation_backfill,
               "Ablation: strict head-of-line dispatch vs backfill"),
    FigureSpec("regime_map", "regime_map.csv", regime_plots.plot_regime_map,
               "Regime map: A-SRPT / best WCS vs offered load per key informativeness sigma, Philly and Gavel"),
    FigureSpec("regime_map_novelty", "regime_map_novelty.csv", regime_plots.plot_regime_map_novelty,
               "Regime map: A-SRPT / best WCS vs offered load per new-group share, Philly and Gavel"),
    FigureSpec("injection_study", "injection_study.csv", regime_plots.plot_injection_study,
               "Injection study: A-SRPT / best WCS vs the number of injected unseen long gang jobs"),
)


def make_figures(results: Path, out: Path) -> tuple[list[Path], list[str]]:
    """Draw every figure whose table exists; return the files written and the figures skipped."""
    written, skipped = [], []
    for spec in FIGURES:
        path = Path(results) / spec.table
        if not path.exists():
            skipped.append(f"{spec.name} (no {path})")
            continue
        try:
            figure = spec.plot(pd.read_csv(path))
        except ConfigError as error:
            skipped.append(f"{spec.name} ({path}: {error})")
            continue
        written.extend(save_figure(figure, out, spec.name))
    return written, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="asrpt-bench-figures", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"), help="directory of collected CSVs")
    parser.add_argument("--out", type=Path, default=Path("paper_figures"), help="directory for PNG and PDF files")
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        print(f"asrpt-bench-figures: no results directory {args.results}", file=sys.stderr)
        return 2
    written, skipped = make_figures(args.results, args.out)
    for path in written:
        print(f"wrote {path}")
    for reason in skipped:
        print(f"skipped {reason}", file=sys.stderr)
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
