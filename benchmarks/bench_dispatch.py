"""CPU seconds of simulate() for every dispatch rule and preemptive reference beside strict A-SRPT, in one run.

Full Philly trace (82,247 jobs, 64 x 8 GPUs, Heavy-Edge, oracle predictions, audit on), all schedulers in
one process after a warm-up run on one job of every plan (so per-plan caches are filled once). Prints
CPU seconds (time.process_time, so other processes on a shared machine count less than in wall time),
jobs per CPU-second and the ratio to the first scheduler (strict A-SRPT), with the load average at the
start and the end. With `--repeat N` the whole list runs N times in rounds (each scheduler once per round, in
order) and the table gives each scheduler's median CPU time and the ratio of medians: one scheduler's time
spreads by tens of percent between runs on a shared machine, and strict's is every ratio's denominator. Each
round's line also gives every scheduler's ratio to the first's time in that round (paired: a machine that
slows for a while slows both), and the table's `paired` column is the median of those ratios.
The `us/segment` column is CPU microseconds per run segment (a job's start or a resumption: the jobs plus the
preemptions), and `/ first` beside it its ratio to the first scheduler's: a preemptive run replays several
segments per job (srtf about 4.4 on full Philly), each with its decision, placement, start and suspension, so
this is the per-unit cost to set beside a non-preemptive run's per-job cost.
Each timed run starts after a full garbage collection, so none pays for the garbage of the one before.

    python benchmarks/bench_dispatch.py                                   # the issue-25 set, full trace
    python benchmarks/bench_dispatch.py --repeat 3                        # the same, medians of 3 rounds
    python benchmarks/bench_dispatch.py --jobs 10000 --schedulers asrpt,asrpt+conservative
    python benchmarks/bench_dispatch.py --jobs 20000 --profile srtf       # cProfile of one scheduler
    python benchmarks/bench_dispatch.py --typed --schedulers asrpt,fifo,spjf+easy,fifo+easy

`--typed` also runs every scheduler on the same 512 GPUs as three pools of GPU types (V100, P100 and K80:
22, 21 and 21 servers of 8, as benchmarks/bench_speed.py's typed section) and prints its ratio to its own
one-pool time (issue 24's ceiling: 1.5); with `--profile` it profiles the typed run.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import statistics
import time

from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.prepare import load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate

SCHEDULERS = ("asrpt,asrpt+easy,asrpt+greedy,asrpt+conservative,spjf+easy,spjf+conservative,fifo+easy,"
              "srtf,srtf_oracle,las2d")
TARGETS = {"asrpt+easy": 2.5, "asrpt+greedy": 2.5, "asrpt+conservative": 8, "spjf+conservative": 8, "srtf": 5,
           "srtf_oracle": 5, "las2d": 5}
"""Issue 25's ceilings on the ratio to strict A-SRPT."""


TYPED_POOLS = [{"type": "v100", "servers": 22}, {"type": "p100", "servers": 21}, {"type": "k80", "servers": 21}]


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} CPUs)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs of the trace (default: all 82,247)")
    parser.add_argument("--schedulers", default=SCHEDULERS,
                        help="comma-separated scheduler names (name+rule for a dispatch rule); ratios are to the first")
    parser.add_argument("--profile", default=None, metavar="NAME", help="cProfile NAME alone and print the top functions")
    parser.add_argument("--top", type=int, default=25, help="functions printed with --profile")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds over the list; the table gives medians (the rounds' times are printed too)")
    parser.add_argument("--typed", action="store_true",
                        help="also run each scheduler on the 512 GPUs as three pools (V100, P100, K80)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")

    def replay(cluster: Cluster) -> tuple[list, Cluster, dict]:
        config = RunConfig(workload=WorkloadConfig("philly", num_jobs=None, train_fraction=0.0), cluster=cluster)
        workload = load_workload(config.validate())
        jobs = workload.jobs[:args.jobs] if args.jobs else workload.jobs
        return jobs, workload.cluster, {job.job_id: float(job.iterations) for job in jobs}

    jobs, cluster, predictions = replay(Cluster(servers=64))
    typed = replay(Cluster(pools=TYPED_POOLS)) if args.typed else None
    one_per_plan = list({job.plan: job for job in jobs}.values())
    simulate(one_per_plan, cluster, make_scheduler("asrpt"), HeavyEdgePlacer(),
             predictions={job.job_id: float(job.iterations) for job in one_per_plan})
    print(f"{len(jobs):,} Philly jobs, {cluster.servers}x{cluster.gpus_per_server} GPUs, Heavy-Edge, oracle predictions, "
          f"audit on; {load_average()} at the start", flush=True)
    if "conservative" in args.schedulers:
        started = time.process_time()
        from asrpt_bench.schedulers import profile_jit
        profile_jit.warm()
        print(f"numba and the compiled fold of conservative backfilling loaded in {time.process_time() - started:.2f} "
              "CPU-s (once per process, before the runs timed)", flush=True)
    if {"srtf", "srtf_oracle", "psjf", "psjf_oracle", "las2d"} & set(args.schedulers.split(",")):
        started = time.process_time()
        simulate(one_per_plan[:2], cluster, make_scheduler("srtf"), HeavyEdgePlacer())
        print(f"numba and the compiled preemptive loop loaded in {time.process_time() - started:.2f} CPU-s (once per "
              "process, before the runs timed)", flush=True)
    if args.profile:
        profiled = typed or (jobs, cluster, predictions)
        profiler = cProfile.Profile()
        profiler.enable()
        simulate(profiled[0], profiled[1], make_scheduler(args.profile), HeavyEdgePlacer(), predictions=profiled[2])
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.top)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)
        return
    names = args.schedulers.split(",")
    times: dict[str, list[float]] = {name: [] for name in names}
    rows: dict[str, str] = {}
    segments: dict[str, int] = {}
    for round_ in range(args.repeat):
        for name in names:
            seconds, rows[name], segments[name] = timed(name, jobs, cluster, predictions)
            times[name].append(seconds)
        if args.repeat > 1:
            base = times[names[0]][-1]
            print(f"round {round_ + 1}: " + ", ".join(f"{name} {times[name][-1]:.2f}" +
                                                     (f" ({times[name][-1] / base:.2f}x)" if name != names[0] else "")
                                                     for name in names), flush=True)
    print(f"{'scheduler':>20} {'CPU s':>9} {'jobs/CPU-s':>11} {'/ first':>8} {'paired':>7} {'target':>7} "
          f"{'us/segment':>10} {'/ first':>8} {'total JCT':>11} {'backfilled':>10} {'violations':>10} {'preemptions':>11}")
    first = statistics.median(times[names[0]])
    first_per_segment = first / segments[names[0]]
    for name in names:
        seconds = statistics.median(times[name])
        paired = statistics.median(taken / base for taken, base in zip(times[name], times[names[0]]))
        per_segment = seconds / segments[name]
        target = f"<= {TARGETS[name]}" if name in TARGETS else ""
        print(f"{name:>20} {seconds:9.2f} {len(jobs) / seconds:11,.0f} {seconds / first:8.2f} {paired:7.2f} "
              f"{target:>7} {1e6 * per_segment:10.1f} {per_segment / first_per_segment:8.2f} {rows[name]}", flush=True)
        if typed is not None:
            typed_seconds, row, _ = timed(name, *typed)
            label = f"{name} [3 pools]"
            print(f"{label:>20} {typed_seconds:9.2f} {len(typed[0]) / typed_seconds:11,.0f} {typed_seconds / first:8.2f} "
                  f"{'':>7} {row}   typed / one pool {typed_seconds / seconds:.2f}", flush=True)
    print(f"{load_average()} at the end")


def timed(name: str, jobs: list, cluster: Cluster, predictions: dict) -> tuple[float, str, int]:
    """CPU seconds of one simulate() (after a full garbage collection), the row of its metrics and its run
    segments (the jobs it ran plus their preemptions)."""
    gc.collect()
    started = time.process_time()
    result = simulate(jobs, cluster, make_scheduler(name), HeavyEdgePlacer(), predictions=predictions,
                      drop_oversize=cluster.pooled)
    seconds = time.process_time() - started
    metrics = result.metrics
    preemptions = int(metrics.get("preemptions", 0))
    row = (f"{metrics['total_jct']:11.4g} {metrics.get('backfilled_starts', float('nan')):10.0f} "
           f"{metrics.get('reservation_violations', float('nan')):10.0f} {preemptions:11d}")
    return seconds, row, len(result.records) + preemptions


if __name__ == "__main__":
    main()
