"""Simulated jobs per second: A-SRPT (or any scheduler) with Heavy-Edge on a synthetic workload.

Workload (seeded, made here): Poisson arrivals, GPU demand 1 (70%), 2, 4, 8 or 16 GPUs, plans from
the model zoo (random model, its first memory-feasible configuration for that GPU count),
iterations log-normal around 2,000; predictions = true iterations times a log-normal error.

    python benchmarks/bench_simulator.py                      # 10,000 jobs, 64 x 8 GPUs, asrpt
    python benchmarks/bench_simulator.py --scheduler wcs_duration --jobs 2000
    python benchmarks/bench_simulator.py --profile 25         # cProfile, top 25 by cumulative time
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from asrpt_bench.core import Cluster, Job, TrainingPlan
from asrpt_bench.placement import make_placer
from asrpt_bench.profiles import build_plan, configurations, model_names
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.timing import DEFAULT_TIMING

GPU_MIX = {1: 0.70, 2: 0.10, 4: 0.10, 8: 0.07, 16: 0.03}


def zoo_plans(gpu_counts: list[int]) -> dict[int, list[TrainingPlan]]:
    """Per GPU count, the first feasible configuration of every zoo model that has one."""
    plans: dict[int, list[TrainingPlan]] = {}
    for gpus in gpu_counts:
        plans[gpus] = []
        for model in model_names():
            try:
                config = configurations(model, gpus)[0]
            except Exception:  # the model has no memory-feasible configuration for this count
                continue
            plans[gpus].append(build_plan(model, config))
    return plans


def synthetic_jobs(num_jobs: int, cluster: Cluster, load: float, seed: int) -> tuple[list[Job], dict[str, float]]:
    rng = np.random.default_rng([seed, 1])
    gpu_counts = list(GPU_MIX)
    plans = zoo_plans(gpu_counts)
    gpus = rng.choice(gpu_counts, size=num_jobs, p=list(GPU_MIX.values()))
    iterations = np.maximum(1, rng.lognormal(np.log(2000), 1.0, size=num_jobs)).astype(int)
    chosen = [plans[int(g)][rng.integers(len(plans[int(g)]))] for g in gpus]
    alpha = np.array([DEFAULT_TIMING.alpha_consolidated(plan, cluster) for plan in chosen])
    mean_work = float(np.mean(gpus * iterations * alpha))
    rate = load * cluster.total_gpus / mean_work
    releases = np.cumsum(rng.exponential(1 / rate, size=num_jobs))
    releases -= releases[0]
    error = rng.lognormal(0.0, 0.5, size=num_jobs)
    jobs = [Job(f"j{k}", float(releases[k]), chosen[k], int(iterations[k])) for k in range(num_jobs)]
    predictions = {job.job_id: float(round(job.iterations * error[k])) for k, job in enumerate(jobs)}
    return jobs, predictions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--servers", type=int, default=64)
    parser.add_argument("--gpus-per-server", type=int, default=8)
    parser.add_argument("--load", type=float, default=1.0, help="offered GPU-time per second / G, with every job at its all-intra alpha")
    parser.add_argument("--scheduler", default="asrpt")
    parser.add_argument("--placer", default="heavy_edge")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", type=int, default=0, help="print the top N functions by cumulative time")
    args = parser.parse_args()

    cluster = Cluster(args.servers, args.gpus_per_server)
    t0 = time.perf_counter()
    jobs, predictions = synthetic_jobs(args.jobs, cluster, args.load, args.seed)
    t1 = time.perf_counter()
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    result = simulate(jobs, cluster, make_scheduler(args.scheduler), make_placer(args.placer),
                      predictions=predictions)
    t2 = time.perf_counter()
    if profiler:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
    metrics = result.metrics
    print(f"{args.jobs} jobs, {cluster.servers}x{cluster.gpus_per_server} GPUs, {args.scheduler} + {args.placer}: "
          f"workload {t1 - t0:.2f} s, simulate+audit {t2 - t1:.2f} s = {args.jobs / (t2 - t1):,.0f} jobs/s; "
          f"utilization {metrics['utilization']:.3f}, mean JCT {metrics['mean_jct']:.0f} s")


if __name__ == "__main__":
    main()
