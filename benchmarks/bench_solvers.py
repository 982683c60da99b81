"""Solver benchmark for the min-alpha placement ILP (the measurements behind DEFAULT_SOLVER).

Checks two targets (1, 2) and prints a per-solver timing table (3):
1. the default solver proves the min-alpha placement optimal for every 64-GPU zoo configuration on an
   empty 64-server cluster within 2 s;
2. CBC does the same for every 16-GPU configuration within 10 s;
3. every available solver's wall time on g = 4..64 over zoo configurations and fragmentation patterns
   (each solve capped by --time-limit).

Run: python benchmarks/bench_solvers.py [--time-limit 20] [--solvers highs,cbc,cpsat] [--gpus 4,8,16,32,64]
Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import pandas as pd

from asrpt_bench import profiles
from asrpt_bench.core import Cluster
from asrpt_bench.placement.ilp import build_alpha_model, optimal_placement_ilp
from asrpt_bench.placement.patterns import fragmentation_patterns
from asrpt_bench.solvers import BACKENDS, DEFAULT_SOLVER, SolverSettings, backend_availability
from asrpt_bench.timing import DEFAULT_TIMING

CLUSTER = Cluster(servers=64, gpus_per_server=8)


def solve_case(model: str, config: str, pattern: str, free: tuple[int, ...], solver: str,
               time_limit_s: float) -> dict[str, object]:
    plan = profiles.build_plan(model, config)
    size = build_alpha_model(plan, free, CLUSTER).model
    placement, result = optimal_placement_ilp(plan, free, CLUSTER, SolverSettings(solver, time_limit_s))
    alpha = DEFAULT_TIMING.alpha(plan, placement, CLUSTER) if placement is not None else float("nan")
    return {"solver": result.solver, "model": model, "config": config, "gpus": plan.gpus, "pattern": pattern,
            "variables": size.num_vars, "rows": size.num_constraints, "status": result.status,
            "alpha": alpha, "gap": result.gap, "wall_s": result.wall_time_s}


def cases(models: list[str], gpus: int, patterns: dict[str, tuple[int, ...]]) -> list[tuple[str, str, str, tuple]]:
    out = []
    for model in models:
        if gpus not in profiles.available_gpu_counts(model, (gpus,)):
            continue
        for config in profiles.configurations(model, gpus):
            out.extend((model, config.name, name, free) for name, free in patterns.items() if sum(free) >= gpus)
    return out


def target(frame: pd.DataFrame, solver: str, limit_s: float, label: str) -> bool:
    worst = frame["wall_s"].max()
    ok = bool((frame["status"] == "optimal").all() and worst <= limit_s)
    print(f"[{'PASS' if ok else 'FAIL'}] {label}: {solver} proved {int((frame['status'] == 'optimal').sum())}/"
          f"{len(frame)} optimal, slowest {worst:.3f} s (target {limit_s} s)")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=20.0)
    parser.add_argument("--solvers", default=",".join(sorted(BACKENDS)))
    parser.add_argument("--gpus", default="4,8,16,32,64")
    parser.add_argument("--models", default="bert24,gnmt,resnet50")
    parser.add_argument("--patterns", default="empty,half_full,scattered")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", default=None, help="also write every solve to this CSV")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", DeprecationWarning)
    models = args.models.split(",")
    all_patterns = fragmentation_patterns(CLUSTER, args.seed)
    patterns = {name: all_patterns[name] for name in args.patterns.split(",")}
    empty = {"empty": CLUSTER.empty_free()}

    ok = target(pd.DataFrame([solve_case(*case, DEFAULT_SOLVER, 60.0) for case in cases(models, 64, empty)]),
                DEFAULT_SOLVER, 2.0, "64-GPU jobs on 64 empty servers")
    ok &= target(pd.DataFrame([solve_case(*case, "cbc", 60.0) for case in cases(models, 16, empty)]),
                 "cbc", 10.0, "16-GPU jobs on 64 empty servers")

    rows = []
    for solver in args.solvers.split(","):
        status = backend_availability(solver)
        if not (status.available and status.full):
            print(f"skipping {solver}: {status.reason}")
            continue
        for gpus in (int(g) for g in args.gpus.split(",")):
            rows.extend(solve_case(*case, solver, args.time_limit) for case in cases(models, gpus, patterns))
    frame = pd.DataFrame(rows)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    best = frame.groupby(["model", "config", "pattern"])["alpha"].transform("min")
    frame["worse_than_best"] = frame["alpha"] > best * (1 + 1e-9)
    table = frame.groupby(["solver", "gpus"]).agg(
        cases=("status", "size"),
        optimal=("status", lambda s: int((s == "optimal").sum())),
        not_best=("worse_than_best", "sum"),
        median_s=("wall_s", "median"),
        max_s=("wall_s", "max"),
        max_vars=("variables", "max"),
    )
    print(f"\nper-solver wall time, time limit {args.time_limit} s, models {models}, patterns {list(patterns)}")
    print(table.to_string(float_format=lambda x: f"{x:.3f}"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
