"""Where a run of the Python preemptive loop spends its CPU, part by part, and which of its walks needed the exact
ranks (srtf, psjf and las2d runs take the compiled loop by default, sim/preemptive_compiled.py; here they do not).

Runs one preemptive scheduler on the first N Philly jobs (64 x 8 GPUs, Heavy-Edge, oracle predictions, audit
on) with a thread-CPU timer around each part of the loop (proposal, start, suspension, completion, the bounded
walk's recomputations, `admission_walk`, `RunningBounds.take` / `after`) and prints calls and microseconds per
call of each; the timer adds about half a microsecond per call, and parts nest (a suspension holds the
simulator's). With `--walks` it also sorts the bounded walks, before each runs, by what its bounds alone
decide: `no admission` (every waiting head that fits needs more GPUs than the idle ones plus those of the
running jobs whose bound does not rank them before it, so nothing changes), `idle only` (it admits only into
idle GPUs and the bounds show no other waiting job can be admitted) or `needs ranks`, and checks the first two
against the walk's own decision; it prints each kind's count and wall seconds.

    python benchmarks/bench_preemptive_parts.py --jobs 20000 --scheduler srtf
    python benchmarks/bench_preemptive_parts.py --jobs 30000 --scheduler srtf --walks
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import os
import time
from collections import Counter
from typing import Any, Callable

from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.prepare import load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers import bounds, preemptive
from asrpt_bench.sim import simulate
from asrpt_bench.sim import preemptive as sim_preemptive

PARTS = [("proposal", sim_preemptive._PreemptiveSimulation, "propose"),
         ("start (simulator)", sim_preemptive._PreemptiveSimulation, "resume"),
         ("suspension (scheduler and simulator)", preemptive.AdmissionScheduler, "_suspend"),
         ("suspension (simulator)", sim_preemptive._PreemptiveSimulation, "suspend"),
         ("completion", sim_preemptive._PreemptiveSimulation, "complete"),
         ("admitted jobs placed and started", preemptive.AdmissionScheduler, "_admit"),
         ("bulk recomputation (_bound_all)", preemptive.AdmissionScheduler, "_bound_all"),
         ("bounds recomputed one by one (_bound)", preemptive.AdmissionScheduler, "_bound"),
         ("admission_walk", preemptive, "admission_walk"),
         ("RunningBounds.take", bounds.RunningBounds, "take"),
         ("RunningBounds.after", bounds.RunningBounds, "after"),
         ("decision (scheduler)", preemptive.AdmissionScheduler, "decide")]


def timed(label: str, function: Callable, seconds: Counter, calls: Counter) -> Callable:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[label] += time.thread_time() - start
            calls[label] += 1
    return wrapper


def bound_decision(scheduler: Any, ctx: Any) -> str:
    """What the bounds alone decide of the walk about to run (see the module doc)."""
    held = scheduler.bounds_
    budget = ctx.total_gpus - held.held_gpus
    entries = held.entries
    idle = budget - held.suspendable_gpus
    after = [0] * (len(entries) + 1)  # after[p]: GPUs of entries[p:]
    for p in range(len(entries) - 1, -1, -1):
        after[p] = after[p + 1] + entries[p][3]
    rank_of = scheduler.columns_["rank"]
    heads = [(queue[0], size, 0) for size, queue in scheduler.waiting_.items() if queue and size <= budget]
    heapq.heapify(heads)
    admitted = 0
    while heads:
        entry, size, position = heapq.heappop(heads)
        most = idle + after[bisect.bisect_left(entries, (entry[0], int(rank_of[entry[2]])))] - admitted
        if size <= idle - admitted:
            admitted += size
            queue = scheduler.waiting_[size]
            if position + 1 < len(queue):
                heapq.heappush(heads, (queue[position + 1], size, position + 1))
        elif size <= most:
            return "needs ranks"
    return "idle only" if admitted else "no admission"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20000, help="first N jobs of the Philly trace")
    parser.add_argument("--scheduler", default="srtf", help="a preemptive scheduler that bounds (srtf, psjf, ...)")
    parser.add_argument("--walks", action="store_true", help="also sort the bounded walks by what bounds decide")
    args = parser.parse_args()
    config = RunConfig(workload=WorkloadConfig("philly", num_jobs=None, train_fraction=0.0), cluster=Cluster(servers=64))
    workload = load_workload(config.validate())
    jobs = workload.jobs[:args.jobs]
    seconds: Counter = Counter()
    calls: Counter = Counter()
    for label, owner, name in PARTS:
        setattr(owner, name, timed(label, getattr(owner, name), seconds, calls))
    kinds: Counter = Counter()
    if args.walks:
        walk = preemptive.AdmissionScheduler._bounded_walk
        started, suspended = preemptive.AdmissionScheduler._admit, preemptive.AdmissionScheduler._suspend

        def classified(scheduler: Any, ctx: Any) -> bool:
            due = scheduler.bounds_.unhold_due(ctx.now)  # as the walk does first (it then finds none due)
            if due:
                scheduler._bound(due, ctx)
            kind = bound_decision(scheduler, ctx)
            scheduler.seen_ = [0, 0]
            start = time.perf_counter()
            settled = walk(scheduler, ctx)
            kinds[kind] += 1
            kinds[kind + " s"] += time.perf_counter() - start
            if kind != "needs ranks" and (scheduler.seen_[1] or (kind == "no admission") != (scheduler.seen_[0] == 0)):
                raise AssertionError(f"the bounds said {kind!r}, the walk admitted {scheduler.seen_[0]} and "
                                     f"suspended {scheduler.seen_[1]} jobs")
            return settled

        def admit(scheduler: Any, admitted: list, ctx: Any) -> bool:
            scheduler.seen_[0] += len(admitted)
            return started(scheduler, admitted, ctx)

        def suspend(scheduler: Any, job: Any, ctx: Any) -> None:
            scheduler.seen_[1] += 1
            suspended(scheduler, job, ctx)

        preemptive.AdmissionScheduler._bounded_walk = classified
        preemptive.AdmissionScheduler._admit = admit
        preemptive.AdmissionScheduler._suspend = suspend
    sim_preemptive.compiled_rule = lambda *arguments: None  # these are the Python loop's parts
    load = os.getloadavg()[0]
    start = time.process_time()
    result = simulate(jobs, workload.cluster, make_scheduler(args.scheduler), HeavyEdgePlacer(),
                      predictions={job.job_id: float(job.iterations) for job in jobs})
    total = time.process_time() - start
    print(f"{args.scheduler} on {len(jobs):,} Philly jobs: {total:.2f} CPU-s, {len(result.segments):,} segments; "
          f"load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end ({os.cpu_count()} CPUs)")
    print(f"{'part':40s} {'calls':>9s} {'us per call':>12s} {'CPU-s':>8s}")
    for label, _, _ in PARTS:
        if calls[label]:
            print(f"{label:40s} {calls[label]:9,d} {seconds[label] / calls[label] * 1e6:12.1f} {seconds[label]:8.2f}")
    for kind in ("no admission", "idle only", "needs ranks"):
        if kinds[kind]:
            print(f"walks, {kind:14s} {kinds[kind]:9,d} {kinds[kind + ' s']:8.2f} s (wall)")


if __name__ == "__main__":
    main()
