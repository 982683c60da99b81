"""The placement study (paper-notes 4, "evaluation to reproduce"): Heavy-Edge against the exact ILP.

For every zoo model x parallel configuration x fragmentation pattern of free GPUs it records Heavy-Edge's
alpha, wall time and own optimality certificate (per mode) next to the ILP's alpha, bound, status and wall
time, and the gap alpha_HE / alpha_ILP - 1 (the paper reports <= ~6%). Jobs that do not fit a pattern are
skipped. Both bandwidth regimes are covered: with b_inter > b_intra Heavy-Edge spreads instead of
consolidating (placement/spread.py), and `alpha_lower_bound` (every link at the faster bandwidth) replaces
`alpha_consolidated` as the lower bound. Console entry point: ``asrpt-bench-placement-study``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Sequence

import pandas as pd

from .. import profiles
from ..core import Cluster, ConfigError, TrainingPlan
from ..io import atomic_write_frame, output_file_problem
from ..solvers import DEFAULT_SOLVER, SolverSettings
from ..timing import DEFAULT_TIMING, TimingModel
from .heavy_edge import HEAVY_EDGE_MODES, HeavyEdgePlacer, consolidation_pays
from .ilp import optimal_placement_ilp
from .patterns import fragmentation_patterns

DEFAULT_GPU_COUNTS = (2, 4, 8, 16, 32, 64)
DEFAULT_STUDY_CLUSTER = Cluster(servers=64, gpus_per_server=8)

COLUMNS = (
    "model", "config", "gpus", "stages", "pattern", "free_gpus", "servers_with_free",
    "alpha_consolidated", "alpha_lower_bound", "he_mode", "he_alpha", "he_wall_s", "he_servers_used", "he_proven",
    "ilp_solver", "ilp_status", "ilp_alpha", "ilp_bound", "ilp_solver_gap", "ilp_wall_s", "ilp_servers_used",
    "gap", "time_limit_s", "seed", "cluster_servers", "gpus_per_server", "b_intra", "b_inter",
)


def select_patterns(cluster: Cluster, seed: int, names: Sequence[str] | None) -> dict[str, tuple[int, ...]]:
    """The named fragmentation patterns (all when `names` is None); unknown names raise ConfigError."""
    available = fragmentation_patterns(cluster, seed)
    if names is None:
        return available
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ConfigError(f"unknown fragmentation pattern(s) {unknown}; known: {sorted(available)}")
    return {n: available[n] for n in names}


def study_plans(models: Sequence[str] | None, gpu_counts: Sequence[int]) -> list[TrainingPlan]:
    """Every zoo plan of the given models (all when None) whose GPU count is in `gpu_counts`."""
    known = profiles.model_names()
    chosen = list(known) if models is None else list(models)
    unknown = [m for m in chosen if m not in known]
    if unknown:
        raise ConfigError(f"unknown model(s) {unknown}; known: {list(known)}")
    plans = []
    for model in chosen:
        for gpus in profiles.available_gpu_counts(model, tuple(gpu_counts)):
            plans.extend(profiles.build_plan(model, config) for config in profiles.configurations(model, gpus))
    return plans


def compare_on(plan: TrainingPlan, pattern: str, free: tuple[int, ...], cluster: Cluster,
               placers: Sequence[HeavyEdgePlacer], settings: SolverSettings,
               timing: TimingModel) -> list[dict[str, object]]:
    """Study rows, one per Heavy-Edge placer, against one ILP solve on `plan` and `free`."""
    ilp_placement, result = optimal_placement_ilp(plan, free, cluster, settings, "alpha", timing)
    ilp_alpha = timing.alpha(plan, ilp_placement, cluster) if ilp_placement is not None else float("nan")
    shared = {
        "model": plan.model, "config": plan.config, "gpus": plan.gpus, "stages": len(plan.stages),
        "pattern": pattern, "free_gpus": sum(free), "servers_with_free": sum(1 for f in free if f > 0),
        "alpha_consolidated": timing.alpha_consolidated(plan, cluster),
        "alpha_lower_bound": timing.alpha_lower_bound(plan, cluster),
        "ilp_solver": result.solver, "ilp_status": result.status, "ilp_alpha": ilp_alpha,
        "ilp_bound": result.bound, "ilp_solver_gap": result.gap, "ilp_wall_s": result.wall_time_s,
        "ilp_servers_used": ilp_placement.servers_used if ilp_placement is not None else None,
    }
    rows = []
    for heavy_edge in placers:
        start = time.perf_counter()
        he_placement = heavy_edge.place(plan, free, cluster)
        he_wall = time.perf_counter() - start
        assert he_placement is not None
        he_placement.validate(plan, free)
        proven = heavy_edge.place_with_certificate(plan, free, cluster)[1]
        he_alpha = timing.alpha(plan, he_placement, cluster)
        rows.append({**shared, "he_mode": heavy_edge.mode, "he_alpha": he_alpha, "he_wall_s": he_wall,
                     "he_servers_used": he_placement.servers_used, "he_proven": proven,
                     "gap": he_alpha / ilp_alpha - 1.0})
    return rows


def run_placement_study(models: Sequence[str] | None = None, gpu_counts: Sequence[int] = DEFAULT_GPU_COUNTS,
                        cluster: Cluster = DEFAULT_STUDY_CLUSTER, patterns: Sequence[str] | None = None,
                        solver: SolverSettings = SolverSettings(time_limit_s=60.0), seed: int = 0,
                        timing: TimingModel = DEFAULT_TIMING,
                        heavy_edge_mode: str | Sequence[str] = "refined") -> pd.DataFrame:
    """One row per (model, configuration, pattern, Heavy-Edge mode) with the columns in `COLUMNS`.

    `models` None means the whole zoo, `patterns` None every pattern of `fragmentation_patterns`
    (drawn with `seed`); `heavy_edge_mode` is one mode or several (one ILP solve serves them all).
    Apart from the wall-time columns the table is a function of the arguments.
    """
    too_big = [g for g in gpu_counts if g > cluster.total_gpus]
    if too_big:
        raise ConfigError(f"gpu counts {too_big} exceed the cluster's {cluster.total_gpus} GPUs")
    free_by_pattern = select_patterns(cluster, seed, patterns)
    modes = [heavy_edge_mode] if isinstance(heavy_edge_mode, str) else list(heavy_edge_mode)
    unknown_modes = [m for m in modes if m not in HEAVY_EDGE_MODES]
    if unknown_modes or not modes:
        raise ConfigError(f"unknown Heavy-Edge mode(s) {unknown_modes}; known: {list(HEAVY_EDGE_MODES)}")
    placers = [HeavyEdgePlacer(mode=mode, timing=timing) for mode in modes]
    rows = []
    for plan in study_plans(models, gpu_counts):
        for pattern, free in free_by_pattern.items():
            if sum(free) >= plan.gpus:
                rows.extend(compare_on(plan, pattern, free, cluster, placers, solver, timing))
    frame = pd.DataFrame(rows)
    constants = {"time_limit_s": solver.time_limit_s, "seed": seed, "cluster_servers": cluster.servers,
                 "gpus_per_server": cluster.gpus_per_server, "b_intra": cluster.b_intra, "b_inter": cluster.b_inter}
    for column, value in constants.items():
        frame[column] = value
    return frame.reindex(columns=list(COLUMNS))


def summarize_study(frame: pd.DataFrame) -> pd.DataFrame:
    """Per Heavy-Edge mode and pattern: rows, share the ILP proved optimal, share Heavy-Edge proved
    optimal itself, mean/max gap, median Heavy-Edge ms, median/max ILP s."""
    grouped = frame.groupby(["he_mode", "pattern"], sort=False)
    return pd.DataFrame({
        "rows": grouped.size(),
        "optimal_share": grouped["ilp_status"].apply(lambda s: (s == "optimal").mean()),
        "he_proven_share": grouped["he_proven"].mean(),
        "mean_gap": grouped["gap"].mean(),
        "max_gap": grouped["gap"].max(),
        "he_median_ms": grouped["he_wall_s"].median() * 1e3,
        "ilp_median_s": grouped["ilp_wall_s"].median(),
        "ilp_max_s": grouped["ilp_wall_s"].max(),
    })


def summarize_modes(frame: pd.DataFrame) -> pd.DataFrame:
    """Per Heavy-Edge mode over every pattern: rows, share proved optimal by Heavy-Edge, mean/max gap and
    the number of cases with a gap above 1e-9."""
    grouped = frame.groupby("he_mode", sort=False)
    return pd.DataFrame({
        "rows": grouped.size(),
        "he_proven_share": grouped["he_proven"].mean(),
        "mean_gap": grouped["gap"].mean(),
        "max_gap": grouped["gap"].max(),
        "cases_with_gap": grouped["gap"].apply(lambda g: int((g > 1e-9).sum())),
    })


def regime_line(cluster: Cluster) -> str:
    """Which Heavy-Edge rules the bandwidths select (see docs/placement.md)."""
    if consolidation_pays(cluster):
        return f"b_inter {cluster.b_inter:g} <= b_intra {cluster.b_intra:g} GB/s: Heavy-Edge consolidates"
    return (f"b_inter {cluster.b_inter:g} > b_intra {cluster.b_intra:g} GB/s: Heavy-Edge spreads "
            "(inter-server links are faster)")


def write_csv_atomic(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write `frame` to `path` through a temporary file in the same directory and os.replace, so a
    reader never sees a half-written table."""
    target = Path(path)
    atomic_write_frame(target, frame)
    return target


def _int_list(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from exc


def _name_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="asrpt-bench-placement-study",
                                     description="Heavy-Edge vs exact ILP placement on zoo models and "
                                                 "fragmented free-GPU patterns; writes one CSV row per case.")
    parser.add_argument("--out", default="results/placement_study.csv", help="output CSV (written atomically)")
    parser.add_argument("--models", type=_name_list, default=None, help="comma-separated zoo models (default: all)")
    parser.add_argument("--gpus", type=_int_list, default=list(DEFAULT_GPU_COUNTS), help="comma-separated GPU counts")
    parser.add_argument("--patterns", type=_name_list, default=None,
                        help="comma-separated fragmentation patterns (default: all)")
    parser.add_argument("--solver", default=DEFAULT_SOLVER, help="highs, cbc, cpsat or gurobi")
    parser.add_argument("--time-limit", type=float, default=60.0, help="ILP time limit per case (s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fragmentation patterns")
    parser.add_argument("--servers", type=int, default=DEFAULT_STUDY_CLUSTER.servers)
    parser.add_argument("--gpus-per-server", type=int, default=DEFAULT_STUDY_CLUSTER.gpus_per_server)
    parser.add_argument("--b-intra", type=float, default=DEFAULT_STUDY_CLUSTER.b_intra, help="GB/s")
    parser.add_argument("--b-inter", type=float, default=DEFAULT_STUDY_CLUSTER.b_inter, help="GB/s")
    parser.add_argument("--heavy-edge-mode", type=_name_list, default=["refined"],
                        help="comma-separated Heavy-Edge modes: refined, contract, greedy_edge")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Exit 0 written; 2 a bad argument or an unwritable --out, in one line 'PROG: error: ...'."""
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = output_file_problem(Path(args.out))
    if problem:
        print(f"{parser.prog}: error: --out {problem}", file=sys.stderr)
        return 2
    try:
        cluster = Cluster(args.servers, args.gpus_per_server, args.b_intra, args.b_inter)
        load_before = os.getloadavg()[0]
        solver = SolverSettings(args.solver, time_limit_s=args.time_limit)
        frame = run_placement_study(args.models, args.gpus, cluster, args.patterns, solver, args.seed,
                                    heavy_edge_mode=args.heavy_edge_mode)
        frame = frame.assign(load_average=f"{load_before:.2f}-{os.getloadavg()[0]:.2f}")
        path = write_csv_atomic(frame, args.out)
    except (ConfigError, OSError) as error:
        print(f"{parser.prog}: error: {str(error).strip().splitlines()[0]}", file=sys.stderr)
        return 2
    print(regime_line(cluster))
    print(summarize_study(frame).to_string(float_format=lambda x: f"{x:.4g}"))
    print(summarize_modes(frame).to_string(float_format=lambda x: f"{x:.4g}"))
    print(f"wrote {len(frame)} rows to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
