"""The reservation profile of conservative backfilling (schedulers/profile.py) against a plain step function:
random reservations and changes over profiles of hundreds of steps (many blocks, with offsets, merged runs
and remembered searches), each answer of earliest, room, fewest and shortages checked against a direct
evaluation of the free-GPU count."""

from __future__ import annotations

import math
import random

import pytest

from asrpt_bench.schedulers import profile as profile_module
from asrpt_bench.schedulers.profile import BLOCK, Profile


class PlainProfile:
    """Free GPUs at t = idle + GPUs of running jobs ended by t + every change covering t; answers by
    evaluating that count at every breakpoint."""

    def __init__(self, idle: int, ends: list[tuple[float, int]]) -> None:
        self.idle, self.ends, self.changes = idle, ends, []

    def free(self, t: float) -> int:
        return (self.idle + sum(g for end, g in self.ends if end <= t)
                + sum(change for begin, end, change in self.changes if begin <= t < end))

    def points(self) -> list[float]:
        return sorted({end for end, _ in self.ends} | {t for begin, end, _ in self.changes for t in (begin, end)})

    def fewest(self, begin: float, end: float) -> int:
        return min(self.free(t) for t in [begin] + [p for p in self.points() if begin < p < end])

    def earliest(self, gpus: int, duration: float, not_before: float) -> float:
        for start in [not_before] + [p for p in self.points() if p > not_before]:
            if duration == 0 and self.free(start) >= gpus or duration > 0 and \
                    self.fewest(start, start + duration) >= gpus:
                return start
        raise AssertionError("the last step holds every GPU")

    def first_shortage(self, begin: float, end: float) -> float | None:
        return next((t for t in [begin] + [p for p in self.points() if begin < p < end] if self.free(t) < 0), None)


@pytest.mark.parametrize("seed, block", [(seed, BLOCK) for seed in range(30)] + [(seed, 2) for seed in range(15)])
def test_the_profile_answers_as_the_plain_step_function(seed, block, monkeypatch):
    """Blocks of the default size and of 2 steps (every few steps a block's first step, where runs merge
    across blocks and a block may hold a single step)."""
    monkeypatch.setattr(profile_module, "BLOCK", block)
    rng = random.Random(seed)
    total = rng.choice([8, 16, 64])
    running = [(float(rng.randint(1, 400)), rng.randint(1, 4)) for _ in range(rng.randint(3 * BLOCK, 8 * BLOCK))]
    idle = total - sum(g for _, g in running) % total if rng.random() < 0.5 else rng.randint(0, total)
    profile, plain = Profile(0.0, idle, running), PlainProfile(idle, running)
    now = 0.0
    for _ in range(250):
        action = rng.random()
        if action < 0.45:  # a reservation where the job fits (conservative's own use)
            gpus, duration = rng.randint(1, total), float(rng.randint(0, 60))
            not_before = now + rng.randint(0, 50)
            begin = profile.earliest(gpus, duration, not_before)
            assert begin == plain.earliest(gpus, duration, not_before)
            room = profile.room(gpus, not_before)  # the lazy pass's test of whether a job may start now
            short = [t for t in [not_before] + [p for p in plain.points() if p > not_before] if plain.free(t) < gpus]
            assert room == (short[0] if short else math.inf)
            assert duration == 0 or (begin == not_before) == (not_before + duration <= room)
            profile.reserve(begin, duration, gpus)  # a zero-length reservation takes nothing
            plain.changes.append((begin, begin + duration, -gpus))
        elif action < 0.7:  # a running job's estimate changes: GPUs back or taken (shortages may appear)
            later = [p for p in plain.points() if p >= now]
            if rng.random() < 0.5 and len(later) > 1:  # at existing steps' starts, where runs merge
                begin, end = sorted(rng.sample(later, 2))
            else:
                begin = now + rng.randint(0, 300)
                end = begin + rng.choice([rng.randint(1, 120), rng.randint(100, 400)])  # some cover blocks whole
            if rng.random() < 0.1:  # an empty interval, or no change, changes nothing
                end, change = (begin, rng.choice([-1, 1])) if rng.random() < 0.5 else (end, 0)
            else:
                change = rng.choice([-total // 2, -3, -1, 1, 3, total // 2])
            profile.add(begin, end, change)
            plain.changes.append((begin, end, change))
        elif action < 0.8:  # time passes: searches start no earlier than now
            now += rng.randint(0, 20)
            profile.forget_before(now)
        else:
            begin = now + rng.randint(0, 200)
            end = begin + rng.randint(1, 200)
            assert profile.fewest(begin, end) == plain.fewest(begin, end)
            # from a breakpoint: a run of equal counts is one step, reported from its start (maybe before)
            step = max([now] + [p for p in plain.points() if p <= begin])
            found = [(max(t, step), short) for t, short in profile.shortages(step, end)]
            assert [t for t, _ in found[:1]] == [t for t in [plain.first_shortage(step, end)] if t is not None]
            assert all(-plain.free(t) == short > 0 and t < end for t, short in found)


@pytest.mark.parametrize("back", [1, 2])
def test_gpus_given_back_clear_the_floors_of_past_searches(back):
    """A search for 1 GPU over 5 s finds 10 (nothing is free before) and is kept as a floor; a running job
    then gives back `back` GPUs over [0, 10) (its estimate shortened), so the same search finds 0: a floor
    holds only while the profile loses GPUs, however few come back."""
    profile = Profile(0.0, 0, [(10.0, 2)])
    assert profile.earliest(1, 5.0, 0.0) == 10.0
    profile.add(0.0, 10.0, back)
    assert profile.earliest(1, 5.0, 0.0) == 0.0
