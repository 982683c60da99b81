"""Heavy-Edge speed and quality: time per placement per mode, and the alpha gap to the optimum.

Plans: the profiles zoo (`asrpt_bench.profiles`), or with --plans synthetic random plans with
realistic magnitudes (compute 0.05-0.5 s, parameters 0.01-4 GB, activations 0.01-0.5 GB).
Free GPUs: `fragmentation_patterns` on an 8x8 and a 64x8 cluster. The gap is measured against the
brute-force optimum wherever its enumeration is small enough. --b-intra/--b-inter set the bandwidths
(GB/s); with b_inter > b_intra Heavy-Edge uses its spread-first rules (placement/spread.py).

    python benchmarks/bench_heavy_edge.py [--seeds 3] [--repeats 5] [--gap-seeds 10] [--bf-limit 100000]
        [--b-intra 300 --b-inter 12.5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Iterator

import numpy as np

from asrpt_bench import profiles
from asrpt_bench.core import GB, Cluster, Stage, TrainingPlan
from asrpt_bench.placement.bruteforce import enumeration_size, optimal_placement
from asrpt_bench.placement.heavy_edge import HeavyEdgePlacer, consolidation_pays
from asrpt_bench.placement.links import job_graph
from asrpt_bench.placement.patterns import fragmentation_patterns
from asrpt_bench.timing import DEFAULT_TIMING

MODES = ("contract", "greedy_edge", "refined")
GPU_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)


def synthetic_plan(gpus: int, rng: np.random.Generator) -> TrainingPlan:
    """A pipeline of 1..min(g, 8) stages with random replica counts summing to `gpus`."""
    stages = int(rng.integers(1, min(gpus, 8) + 1))
    cuts = np.sort(rng.choice(np.arange(1, gpus), size=stages - 1, replace=False)) if stages > 1 else []
    replicas = np.diff(np.concatenate(([0], cuts, [gpus]))).astype(int)
    return TrainingPlan(
        model="synthetic", config=f"g{gpus}-s{stages}-{int(rng.integers(1 << 30))}",
        stages=tuple(Stage(compute_s=float(rng.uniform(0.05, 0.5)) * m,
                           param_bytes=float(rng.uniform(0.01, 4.0)) * GB,
                           activation_bytes=float(rng.uniform(0.01, 0.5)) * GB if s < stages - 1 else 0.0,
                           replicas=int(m))
                     for s, m in enumerate(replicas)))


def zoo_plans(max_gpus: int) -> list[TrainingPlan]:
    """Every (model, configuration) of the profiles zoo up to `max_gpus`."""
    sizes = tuple(g for g in GPU_COUNTS if g <= max_gpus)
    return [plan for model in profiles.model_names() for g in profiles.available_gpu_counts(model, sizes)
            for plan in profiles.plans_for(model, g)]


def instances(cluster: Cluster, seeds: int, source: str) -> Iterator[tuple[str, int, TrainingPlan, tuple[int, ...]]]:
    zoo = zoo_plans(min(64, cluster.total_gpus)) if source != "synthetic" else None
    for seed in range(seeds):
        rng = np.random.default_rng([seed, 7])
        plans = zoo if zoo is not None else [synthetic_plan(g, rng) for g in GPU_COUNTS]
        for pattern, free in fragmentation_patterns(cluster, seed).items():
            for plan in plans:
                if plan.gpus <= sum(free):
                    yield pattern, seed, plan, free


def time_placement(placer: HeavyEdgePlacer, plan: TrainingPlan, free: tuple[int, ...], cluster: Cluster,
                   repeats: int) -> float:
    """Median seconds per call, uncached: the job graph cache is cleared before every call."""
    samples = []
    for _ in range(repeats):
        job_graph.cache_clear()
        start = time.perf_counter()
        placer.place(plan, free, cluster)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def speed(cluster: Cluster, seeds: int, repeats: int, source: str) -> None:
    """Time per placement per mode over every (pattern, plan) pair that fits."""
    placers = {mode: HeavyEdgePlacer(mode=mode) for mode in MODES}
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    multi_server = 0
    for _, _, plan, free in instances(cluster, seeds, source):
        multi_server += plan.gpus > max(free)
        for mode, placer in placers.items():
            times[mode].append(time_placement(placer, plan, free, cluster, repeats))
    print(f"\nspeed on {cluster.servers}x{cluster.gpus_per_server}: {len(times['refined'])} placements per mode "
          f"({multi_server} need more than one server), g <= 64, graph cache cleared before each call")
    for mode in MODES:
        ms = np.array(times[mode]) * 1e3
        print(f"  {mode:12s} median {np.median(ms):.3f} ms  p95 {np.percentile(ms, 95):.3f} ms  max {ms.max():.3f} ms")


def gap_instances(cluster: Cluster, seeds: int, per_size: int, bf_limit: int, source: str
                  ) -> Iterator[tuple[str, TrainingPlan, tuple[int, ...]]]:
    """Plans too big for any single free hole (any plan of >= 2 GPUs when b_inter > b_intra, where one
    server is no longer optimal), small enough to enumerate: synthetic plans of each size from the biggest
    hole + 1 (or 2) to 5 more, or every zoo plan that qualifies."""
    zoo = zoo_plans(cluster.total_gpus) if source == "zoo" else None
    for seed in range(seeds):
        rng = np.random.default_rng([seed, 11])
        for pattern, free in fragmentation_patterns(cluster, seed).items():
            smallest = max(free) + 1 if consolidation_pays(cluster) else 2
            if zoo is not None:
                candidates = [plan for plan in zoo if smallest <= plan.gpus <= sum(free)]
            else:
                candidates = [synthetic_plan(g, rng) for g in range(smallest, min(sum(free), smallest + 5) + 1)
                              for _ in range(per_size)]
            for plan in candidates:
                if enumeration_size(plan, free) <= bf_limit:
                    yield pattern, plan, free


def gaps(cluster: Cluster, seeds: int, per_size: int, bf_limit: int, source: str) -> None:
    """alpha / alpha_opt - 1 per mode and pattern against brute force, on the `gap_instances`."""
    placers = {mode: HeavyEdgePlacer(mode=mode) for mode in MODES}
    found: dict[tuple[str, str], list[float]] = {}
    for pattern, plan, free in gap_instances(cluster, seeds, per_size, bf_limit, source):
        exact = optimal_placement(plan, free, cluster, max_states=bf_limit)[1]
        for mode, placer in placers.items():
            alpha = DEFAULT_TIMING.alpha(plan, placer.place(plan, free, cluster), cluster)
            found.setdefault((mode, pattern), []).append(alpha / exact - 1.0)
    print(f"\nalpha gap to the brute-force optimum on {cluster.servers}x{cluster.gpus_per_server} "
          f"(b_intra {cluster.b_intra:g}, b_inter {cluster.b_inter:g} GB/s), {source} plans:")
    if not found:
        print("  no instance small enough for brute force")
        return
    for mode in MODES:
        everything = np.concatenate([np.array(v) for (m, _), v in found.items() if m == mode]) * 100
        rows = [f"{pattern} n={len(v)} mean {np.mean(v) * 100:.2f}% max {np.max(v) * 100:.2f}%"
                for (m, pattern), v in sorted(found.items()) if m == mode]
        print(f"  {mode:12s} all n={len(everything)} mean {everything.mean():.2f}% max {everything.max():.2f}%"
              f" | " + " | ".join(rows))


def certificates(cluster: Cluster, seeds: int, source: str) -> None:
    """Share of instances larger than the biggest free hole where refined proves its alpha optimal."""
    placer = HeavyEdgePlacer()
    proven = total = 0
    for _, _, plan, free in instances(cluster, seeds, source):
        if plan.gpus > max(free):
            total += 1
            proven += placer.place_with_certificate(plan, free, cluster)[1]
    print(f"\nrefined optimality certificates on {cluster.servers}x{cluster.gpus_per_server}: {proven}/{total} "
          "placements larger than the biggest free hole proven optimal (async max-of-stations timing)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--gap-seeds", type=int, default=10)
    parser.add_argument("--per-size", type=int, default=2, help="random plans per job size in the gap study")
    parser.add_argument("--bf-limit", type=int, default=100_000, help="max brute-force states per instance")
    parser.add_argument("--plans", choices=("auto", "zoo", "synthetic"), default="auto",
                        help="plans for the speed study (auto = zoo)")
    parser.add_argument("--b-intra", type=float, default=Cluster(1, 1).b_intra, help="GB/s")
    parser.add_argument("--b-inter", type=float, default=Cluster(1, 1).b_inter, help="GB/s")
    args = parser.parse_args()
    bandwidths = (args.b_intra, args.b_inter)
    for cluster in (Cluster(8, 8, *bandwidths), Cluster(64, 8, *bandwidths)):
        speed(cluster, args.seeds, args.repeats, args.plans)
        certificates(cluster, args.seeds, args.plans)
    gaps(Cluster(8, 8, *bandwidths), args.gap_seeds, args.per_size, args.bf_limit, "synthetic")
    if args.plans != "synthetic":
        gaps(Cluster(8, 8, *bandwidths), args.gap_seeds, args.per_size, args.bf_limit, "zoo")


if __name__ == "__main__":
    main()
