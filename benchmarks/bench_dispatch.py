"""Simulated jobs per second of each dispatch rule beside strict, on a prefix of the full Philly trace.

Same setting as `bench_speed.py --sections sim` (82,247 jobs, 64 x 8 GPUs, Heavy-Edge, oracle
predictions, audit on), in one process after a warm-up run on one job of every plan (so per-plan
caches are filled once). Prints seconds, jobs/s and the time ratio to the strict rule of the same order.

    python benchmarks/bench_dispatch.py                                  # asrpt, spjf, fifo x strict, easy, greedy
    python benchmarks/bench_dispatch.py --rules strict,conservative --jobs 10000
"""

from __future__ import annotations

import argparse
import os
import time

from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.prepare import load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs of the trace (default: all 82,247)")
    parser.add_argument("--orders", default="asrpt,spjf,fifo")
    parser.add_argument("--rules", default="strict,easy,greedy")
    args = parser.parse_args()

    config = RunConfig(workload=WorkloadConfig("philly", num_jobs=None, train_fraction=0.0),
                       cluster=Cluster(servers=64))
    workload = load_workload(config.validate())
    jobs = workload.jobs[:args.jobs] if args.jobs else workload.jobs
    cluster = workload.cluster
    predictions = {job.job_id: float(job.iterations) for job in jobs}
    one_per_plan = list({job.plan: job for job in jobs}.values())
    simulate(one_per_plan, cluster, make_scheduler("asrpt"), HeavyEdgePlacer(),
             predictions={job.job_id: float(job.iterations) for job in one_per_plan})
    print(f"{len(jobs):,} Philly jobs, {cluster.servers}x{cluster.gpus_per_server} GPUs, Heavy-Edge, oracle predictions; "
          f"load average {os.getloadavg()[0]:.2f} at the start ({os.cpu_count()} CPUs)")
    print(f"{'scheduler':>20} {'seconds':>9} {'jobs/s':>9} {'/ strict':>9} {'total JCT':>11} {'backfilled':>10} "
          f"{'violations':>10}")
    for order in args.orders.split(","):
        strict = None
        for rule in args.rules.split(","):
            started = time.perf_counter()
            result = simulate(jobs, cluster, make_scheduler(order, dispatch=rule), HeavyEdgePlacer(),
                              predictions=predictions)
            seconds = time.perf_counter() - started
            strict = seconds if rule == "strict" else strict
            ratio = f"{seconds / strict:.2f}" if strict else "-"
            metrics = result.metrics
            print(f"{order + '+' + rule:>20} {seconds:9.2f} {len(jobs) / seconds:9,.0f} {ratio:>9} "
                  f"{metrics['total_jct']:11.4g} {metrics['backfilled_starts']:10.0f} "
                  f"{metrics['reservation_violations']:10.0f}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
