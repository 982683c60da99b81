"""Conservative backfilling keeps its reservation profile for the whole run (schedulers/conservative.py):
made once from the running jobs, then only changed. Checked at every decision of real replays against what
the fold would hold if it were made again: whenever the fold holds no reservation, the kept profile is the
one rebuilt from the running jobs (the same free-GPU count at every time from now on), and every kept
reservation belongs to a job still queued. The heap of reservations that may come due holds few that left the
fold: it used to keep every reservation ever computed until its begin passed."""

from __future__ import annotations

import random

import pytest

from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.schedulers import conservative, make_scheduler
from asrpt_bench.schedulers.profile import Profile
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.jobs import jobs_from_table
from test_decision_instants import FIXED_TABLE


def free_from(profile: Profile, now: float) -> tuple[int, list[tuple[float, int]]]:
    """The profile as a step function from now on: the free GPUs at now, then (time, free) at each change."""
    at_now, changes = 0, []
    for times, free, offset in zip(profile.times, profile.free, profile.offset):
        for t, count in zip(times, free):
            if t <= now:
                at_now = count + offset
            elif count + offset != (changes[-1][1] if changes else at_now):
                changes.append((t, count + offset))
    return at_now, changes


class FoldWatch:
    """Wraps ConservativeFold.decide and _refresh to check the kept profile and the kept reservations."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.empty_checked = 0
        self.decisions = 0
        self.largest_due = 0
        decide, refresh = conservative.ConservativeFold.decide, conservative.ConservativeFold._refresh
        watch = self

        def checked_decide(fold, ctx, queue, job_of, try_start, hold_until):
            queued = {key for key, _ in queue.after(None)}
            assert set(fold.keys) <= queued, "a kept reservation belongs to a job no longer queued"
            watch.decisions += 1
            started = decide(fold, ctx, queue, job_of, try_start, hold_until)
            watch.largest_due = max(watch.largest_due, len(fold.due))
            assert len(fold.due) <= 2 * len(fold.entries) + conservative.COMPACT_SLACK + 2 * len(started)
            return started

        def checked_refresh(fold, ctx, head, hold_until):
            refresh(fold, ctx, head, hold_until)
            if not fold.entries:
                running = fold.backfill.running
                rebuilt = Profile(ctx.now, ctx.idle_gpus, list(running.ends(ctx.now)))
                assert free_from(fold.profile, ctx.now) == free_from(rebuilt, ctx.now), ctx.now
                assert set(fold.assumed) == {order for order, _ in running.jobs()}
                watch.empty_checked += 1

        monkeypatch.setattr(conservative.ConservativeFold, "decide", checked_decide)
        monkeypatch.setattr(conservative.ConservativeFold, "_refresh", checked_refresh)


@pytest.mark.filterwarnings("ignore:.*need all")
@pytest.mark.parametrize("name", ["spjf+conservative", "asrpt+conservative", "fifo+conservative"])
@pytest.mark.parametrize("overrun", ["none", "double"])
def test_the_kept_profile_is_the_one_rebuilt_from_the_running_jobs(monkeypatch, name, overrun):
    """400 Philly jobs on 4 x 8 GPUs with Heavy-Edge, predictions off by a log-normal factor (sigma 1), so
    jobs end before and after their estimates and the fold is cut often."""
    jobs = jobs_from_table(load_csv(FIXED_TABLE), str(FIXED_TABLE))
    rng = random.Random(7)
    predictions = {job.job_id: job.iterations * rng.lognormvariate(0.0, 1.0) for job in jobs}
    watch = FoldWatch(monkeypatch)
    simulate(jobs, Cluster(4, 8), make_scheduler(name, overrun=overrun), HeavyEdgePlacer(), predictions=predictions)
    assert watch.decisions > 300
    assert watch.empty_checked > 50
    assert watch.largest_due > conservative.COMPACT_SLACK  # the bound on the heap was put to the test
