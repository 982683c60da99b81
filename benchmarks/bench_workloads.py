"""Benchmark: load the full packaged Philly trace, assign models, and measure forest accuracy.

Run:  python benchmarks/bench_workloads.py [--seed 0] [--servers 8] [--gpus-per-server 8]
                                          [--n-estimators 100] [--train-fraction 0.8] [--figure PATH]
                                          [--sigma 1.0|null] [--new-group-share 0.1]

Prints wall times of each step and the forest's accuracy on the held-out (chronologically last)
part of the trace. Philly has no user or job group: the recurrence keys the forest learns from are
SYNTHETIC (workloads/recurrence.py), so the accuracy figures rest on those keys, not on real ones:
`--sigma` sets how much a key says about duration (null: nothing), `--new-group-share` the share of
held-out jobs in never-seen groups.
"""

from __future__ import annotations

import argparse
import json
import time

from asrpt_bench.core import Cluster
from asrpt_bench.prediction import (
    RELATIVE_BUCKETS,
    accuracy_summary,
    accuracy_table,
    evaluate_predictor,
    make_predictor,
)
from asrpt_bench.report.plots import plot_accuracy
from asrpt_bench.workloads.assign import assign_models
from asrpt_bench.workloads.philly import load_philly
from asrpt_bench.workloads.recurrence import RecurrenceSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--servers", type=int, default=8)
    parser.add_argument("--gpus-per-server", type=int, default=8)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--train-fraction", type=float, default=0.8)
    parser.add_argument("--figure", default=None, help="write the Fig 4 histogram here (PNG/PDF)")
    parser.add_argument("--sigma", default="1.0", help="workload.recurrence.sigma (null: keys carry no duration)")
    parser.add_argument("--new-group-share", type=float, default=0.1, help="workload.recurrence.new_group_share")
    args = parser.parse_args()
    cluster = Cluster(args.servers, args.gpus_per_server)
    spec = RecurrenceSpec(sigma=None if args.sigma == "null" else float(args.sigma),
                          new_group_share=args.new_group_share)

    start = time.perf_counter()
    table = load_philly(seed=args.seed, recurrence=spec, train_fraction=args.train_fraction)
    loaded = time.perf_counter()
    assigned = assign_models(table, cluster, seed=args.seed)
    done = time.perf_counter()
    forest = make_predictor("forest", n_estimators=args.n_estimators, random_state=args.seed)
    errors = evaluate_predictor(forest, assigned, args.train_fraction)
    evaluated = time.perf_counter()

    print(f"jobs: {len(table)}  groups: {table['group'].nunique()}  users: {table['user'].nunique()}  "
          f"recurrence_keys: {table.attrs['recurrence_keys']}  {table.attrs['recurrence']}")
    print(f"load_philly (full trace + synthetic keys): {loaded - start:.2f} s")
    print(f"assign_models ({cluster.servers}x{cluster.gpus_per_server} GPUs): {done - loaded:.2f} s")
    print(f"forest fit + predict ({args.n_estimators} trees): {evaluated - done:.2f} s")
    print("models:", assigned["model"].value_counts().to_dict())
    print("\nFig 4 (absolute error, iterations) - SYNTHETIC recurrence keys:")
    print(accuracy_table(errors).to_string(index=False))
    print("\nrelative error |pred - n| / n:")
    print(accuracy_table(errors, RELATIVE_BUCKETS, column="rel_error").to_string(index=False))
    summary = accuracy_summary(errors)
    print("\nsummary (recurrence_keys=synthetic):", json.dumps({k: round(v, 4) for k, v in summary.items()}))
    if args.figure:
        plot_accuracy(accuracy_table(errors), title="Philly, synthetic recurrence keys").savefig(args.figure)
        print(f"figure written to {args.figure}")


if __name__ == "__main__":
    main()
