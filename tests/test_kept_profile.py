"""Conservative backfilling keeps its reservation profile for the whole run (schedulers/conservative.py):
made once from the running jobs, then only changed. Checked at every decision of real replays against what
the fold would hold if it were made again: the kept profile is the one rebuilt from the running jobs with
the kept reservations taken from it (the same free-GPU count at every time from now on), and every kept
reservation belongs to a job still queued. The positions kept after the fold (the tail, which a pass reserves
without asking the queue again) are exactly the queue's next jobs, in order, with their GPUs and lengths."""

from __future__ import annotations

import itertools
import random

import pytest

from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.schedulers import conservative, make_scheduler
from asrpt_bench.schedulers.profile import Profile
from asrpt_bench.schedulers.profile_jit import CompiledProfile
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.jobs import jobs_from_table
from test_decision_instants import FIXED_TABLE


def steps_of(profile: Profile) -> list[tuple[float, int]]:
    return [(t, count + offset) for times, free, offset in zip(profile.times, profile.free, profile.offset)
            for t, count in zip(times, free)]


def free_from(steps: list[tuple[float, int]], now: float) -> tuple[int, list[tuple[float, int]]]:
    """A profile's steps as a step function from now on: the free GPUs at now, then (time, free) at each
    change."""
    at_now, changes = 0, []
    for t, count in steps:
        if t <= now:
            at_now = count
        elif count != (changes[-1][1] if changes else at_now):
            changes.append((t, count))
    return at_now, changes


class FoldWatch:
    """Wraps ConservativeFold.decide and _refresh to check the kept profile and the kept reservations."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.empty_checked = 0
        self.decisions = 0
        self.largest_tail = 0
        self.kept_checked = 0
        self.resets = 0
        self.built = 0
        decide, refresh = conservative.ConservativeFold.decide, conservative.ConservativeFold._refresh
        reset, rebuild = CompiledProfile.reset, conservative.ConservativeFold._rebuild
        watch = self

        def checked_decide(fold, ctx, queue, job_of, try_start, hold_until):
            watch.check_positions(fold, queue, job_of)
            watch.decisions += 1
            started = decide(fold, ctx, queue, job_of, try_start, hold_until)
            watch.largest_tail = max(watch.largest_tail, len(fold.keys) - fold.n)
            return started

        def checked_refresh(fold, ctx, head, hold_until):
            refresh(fold, ctx, head, hold_until)
            if fold.profile is None:
                return
            running = fold.backfill.running
            rebuilt = Profile(ctx.now, ctx.idle_gpus, list(running.ends(ctx.now)))
            for gpus, length, _, begin in fold.positions[:fold.n].tolist():
                if gpus > 0 and length > 0:
                    rebuilt.reserve(begin, length, int(gpus))
            assert free_from(fold.profile.steps(), ctx.now) == free_from(steps_of(rebuilt), ctx.now), ctx.now
            assert set(fold.assumed) == {order for order, _ in running.jobs()}
            begins = fold.positions[:fold.n, 3]
            assert not fold.n or begins.min() >= max(fold.low, ctx.now), "kept: a reservation that began before now"
            if fold.n:
                watch.kept_checked += 1
            else:
                watch.empty_checked += 1

        def counted_reset(profile, now, idle, ends):
            watch.resets += 1  # a profile made new (each fold makes one) or made again by a cut
            reset(profile, now, idle, ends)

        def counted_rebuild(fold, ctx):
            watch.built += 1
            rebuild(fold, ctx)

        monkeypatch.setattr(conservative, "DROP_GONE", 4)  # the removed front entries are dropped often
        monkeypatch.setattr(conservative.ConservativeFold, "decide", checked_decide)
        monkeypatch.setattr(conservative.ConservativeFold, "_refresh", checked_refresh)
        monkeypatch.setattr(CompiledProfile, "reset", counted_reset)
        monkeypatch.setattr(conservative.ConservativeFold, "_rebuild", counted_rebuild)

    @staticmethod
    def check_positions(fold, queue, job_of) -> None:
        """The fold's and the tail's keys are the queue's first jobs' after the fold's first, in order; each
        position's GPUs and length are its job's."""
        keys = fold.keys
        if not keys:
            return
        queued = [key for key, _ in queue.after(None)]
        assert set(keys[:fold.n]) <= set(queued), "a kept reservation belongs to a job no longer queued"
        if len(keys) > fold.n:
            after = keys[fold.n - 1] if fold.n else None
            following = [key for key, _ in itertools.islice(queue.after(after), len(keys) - fold.n)]
            assert keys[fold.n:] == following, "the tail is the queue's jobs right after the fold"
        for position, (key, job) in enumerate(zip(keys, fold.jobs)):
            gpus, length = fold.positions[position, :2]
            assert (gpus, length) == (job.gpus, fold.backfill.queued_duration(job)), key


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
    assert watch.empty_checked > 50 and watch.kept_checked > 50
    assert watch.resets > watch.built  # a cut made the profile again from the running jobs
    assert watch.largest_tail > 20  # the tail was put to the test
