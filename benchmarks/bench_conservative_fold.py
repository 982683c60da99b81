"""What the conservative fold computes on a replay: reservations, the cuts that drop them, and where the
recomputed ones land.

Runs one conservative scheduler on the first N Philly jobs (64 x 8 GPUs, Heavy-Edge, oracle predictions,
audit on) with counters around `ConservativeFold._cut` and `_reserve` (the fold's own code, unchanged) and
prints: the reservations computed and the compiled runs that computed them, the profile's steps and the
fold's length when a run starts (means), the cuts that drop more than 100 reservations (how many, what they
drop and keep, the share of all dropped reservations in cuts that keep fewer than they drop: those make the
profile again rather than return the dropped ones), the decisions that scanned the fold for a reservation
that began before now (only those where its lower bound on the reserved begins is below now) and how many
found one, and of the reservations computed again after a cut, how many land later, earlier or where they
were; what made the cuts (a decision's cut at the first reservation a change displaced, that is a change
took GPUs it held; another change of the profile or a new head; a job inserted or a head started off its
reservation); and what each compiled run was for (a job hoped to start now, whose reservation needs every one
before it, or a job no pass has reached, whose first reservation is its promise) with why it stopped, and the
GPU counts of the reservations computed.

    python benchmarks/bench_conservative_fold.py                          # full trace, asrpt+conservative
    python benchmarks/bench_conservative_fold.py --jobs 30000 --scheduler spjf+conservative
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections import Counter
from typing import Any

from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.prepare import load_workload
from asrpt_bench.schedulers import conservative, make_scheduler, profile_jit
from asrpt_bench.sim import simulate

LARGE = 100
"""A cut dropping more reservations than this is counted among the large ones."""
STOPPED = {profile_jit.TRY: "one that may start now", profile_jit.TARGET: "its target",
           profile_jit.LOST: "the hoped job's room lost", profile_jit.END: "the positions given"}
"""Why `profile_jit.reserve_run` stopped (GROW never reaches the caller: `_reserve` grows and goes on)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None, help="first N jobs of the trace (default: all 82,247)")
    parser.add_argument("--scheduler", default="asrpt+conservative", help="a scheduler with dispatch conservative")
    args = parser.parse_args()
    if not args.scheduler.endswith("+conservative"):
        parser.error(f"--scheduler must be a conservative one (NAME+conservative), got {args.scheduler!r}")

    config = RunConfig(workload=WorkloadConfig("philly", num_jobs=None, train_fraction=0.0), cluster=Cluster(servers=64))
    workload = load_workload(config.validate())
    jobs = workload.jobs[:args.jobs] if args.jobs else workload.jobs

    counts: Counter[str] = Counter()
    purposes: Counter[tuple[str, str]] = Counter()  # (what the run was for, why it stopped) -> reservations
    purpose_runs: Counter[tuple[str, str]] = Counter()
    gpu_counts: Counter[int] = Counter()  # GPU count -> reservations computed
    dropped_by: Counter[str] = Counter()  # what made a cut -> reservations it dropped
    cuts_by: Counter[str] = Counter()
    displaced: list[int] = []  # the first displaced positions found in the decision's refresh (empty outside one)
    refreshing = [False]
    starts: list[tuple[int, int]] = []  # (profile steps, fold length) when a compiled run starts
    large: list[tuple[int, int]] = []  # (kept, fold length) of the large cuts
    dropped_at: dict[Any, float] = {}  # queue key -> the begin of its dropped reservation
    fold_class = conservative.ConservativeFold
    cut, reserve = fold_class._cut, fold_class._reserve
    refresh, first_displaced = fold_class._refresh, fold_class._first_displaced
    first_begun_before = profile_jit.first_begun_before

    def counted_cut(fold: Any, k: int, ctx: Any = None) -> None:
        if k < fold.n:
            keys = fold.keys  # a copy: taken once
            for position in range(k, fold.n):
                dropped_at[keys[position]] = float(fold.positions[position, conservative.BEGIN])
            if fold.n - k > LARGE:
                large.append((k, fold.n))
            why = ("a reservation displaced by a change" if refreshing[0] and displaced and k == min(displaced)
                   else "a change that gives GPUs back, a reservation begun before now, a new head" if refreshing[0]
                   else "a job inserted into the queue, or the head started off its reservation")
            dropped_by[why] += fold.n - k
            cuts_by[why] += 1
        cut(fold, k, ctx)

    def counted_refresh(fold: Any, *args: Any) -> None:
        refreshing[0] = True
        displaced.clear()
        try:
            refresh(fold, *args)
        finally:
            refreshing[0] = False

    def counted_displaced(fold: Any, begin: float, end: float) -> int:
        found = first_displaced(fold, begin, end)
        displaced.append(found)
        return found

    def counted_reserve(fold: Any, stop: int, target: int, idle: int, hoped_gpus: int, *args: Any) -> Any:
        start = fold.n
        starts.append((fold.profile.size(), start))
        answer = reserve(fold, stop, target, idle, hoped_gpus, *args)
        counts["runs"] += 1
        counts["reservations"] += fold.n - start
        purpose = ("a job hoped to start" if hoped_gpus >= 0 else "a job not reached" if idle >= 0
                   else "the head")
        key = (purpose, STOPPED[answer[0]])
        purposes[key] += fold.n - start
        purpose_runs[key] += 1
        gpu_counts.update(fold.positions[start:fold.n, conservative.GPUS].astype(int).tolist())
        keys = fold.keys if dropped_at else []
        for position in range(start, fold.n if dropped_at else start):
            before = dropped_at.pop(keys[position], None)
            if before is not None:
                begin = float(fold.positions[position, conservative.BEGIN])
                counts["later" if begin > before else "earlier" if begin < before else "same"] += 1
        return answer

    def counted_scan(positions: Any, n: int, now: float) -> tuple[int, float]:
        counts["scans"] += 1
        found = first_begun_before(positions, n, now)
        counts["began"] += found[0] < n
        return found

    profile_jit.first_begun_before = counted_scan
    fold_class._cut = counted_cut  # type: ignore[method-assign]
    fold_class._reserve = counted_reserve  # type: ignore[method-assign]
    fold_class._refresh = counted_refresh  # type: ignore[method-assign]
    fold_class._first_displaced = counted_displaced  # type: ignore[method-assign]
    simulate(jobs, workload.cluster, make_scheduler(args.scheduler), HeavyEdgePlacer(),
             predictions={job.job_id: float(job.iterations) for job in jobs})

    one, five, fifteen = os.getloadavg()
    print(f"{args.scheduler} on {len(jobs):,} Philly jobs, 64x8 GPUs, oracle predictions "
          f"(load average {one:.2f} {five:.2f} {fifteen:.2f})")
    print(f"reservations computed: {counts['reservations']:,} in {counts['runs']:,} compiled runs")
    if starts:
        print(f"when a run starts, means: {statistics.fmean(s for s, _ in starts):,.0f} profile steps, "
              f"{statistics.fmean(n for _, n in starts):,.0f} reservations in the fold")
    if large:
        dropped = [n - k for k, n in large]
        fewer_kept = sum(n - k for k, n in large if k < n - k)
        print(f"cuts dropping more than {LARGE}: {len(large):,}, dropping {sum(dropped):,} in all "
              f"(mean {statistics.fmean(dropped):,.0f} of a fold of {statistics.fmean(n for _, n in large):,.0f}); "
              f"kept: median {statistics.median(k for k, _ in large):,.1f}, mean {statistics.fmean(k for k, _ in large):,.0f}; "
              f"{100 * fewer_kept / sum(dropped):.1f}% of what they drop is in cuts that keep fewer than they drop")
    print("cuts by what made them (reservations dropped, cuts):")
    for why, dropped in dropped_by.most_common():
        print(f"  {why}: {dropped:,} in {cuts_by[why]:,}")
    print(f"decisions that scanned the fold for a reservation that began before now: {counts['scans']:,}, "
          f"{counts['began']:,} of them finding one (a cut)")
    print("what the compiled runs were for, and why they stopped (reservations, runs):")
    for (purpose, stopped), reserved in purposes.most_common():
        print(f"  for {purpose}, stopped at {stopped}: {reserved:,} in {purpose_runs[purpose, stopped]:,}")
    total = sum(gpu_counts.values())
    if total:
        print("reservations by GPU count: " + ", ".join(f"{gpus}: {100 * count / total:.1f}%"
                                                        for gpus, count in sorted(gpu_counts.items())))
    again = counts["later"] + counts["earlier"] + counts["same"]
    if again:
        print(f"computed again after a cut: {again:,}; later {100 * counts['later'] / again:.0f}%, "
              f"earlier {100 * counts['earlier'] / again:.0f}%, same place {100 * counts['same'] / again:.0f}%")


if __name__ == "__main__":
    main()
