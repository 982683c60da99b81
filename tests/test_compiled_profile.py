"""The compiled reservation profile (schedulers/profile_jit.py) against the Python one (schedulers/profile.py)
and a plain step function: the same random reservations, changes and searches on both, every answer equal
(floats compared exactly), the step functions equal after every operation; and the compiled run of
reservations (`reserve_run`) against a loop of `earliest` and `add`, with each of its reasons to stop."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from asrpt_bench.schedulers import profile_jit
from asrpt_bench.schedulers.profile import Profile
from asrpt_bench.schedulers.profile_jit import BEGIN, GPUS, HOLD, LENGTH, CompiledProfile
from test_reservation_profile import PlainProfile


def python_steps(profile: Profile) -> list[tuple[float, int]]:
    return [(t, count + offset) for times, free, offset in zip(profile.times, profile.free, profile.offset)
            for t, count in zip(times, free)]


def function(steps: list[tuple[float, int]], now: float) -> list[tuple[float, int]]:
    """A step function from now on: (now, free at now), then (t, free) where the count changes."""
    found: list[tuple[float, int]] = []
    for t, count in steps:
        if t <= now:
            found = [(now, count)]
        elif count != found[-1][1]:
            found.append((t, count))
    return found


def make(seed: int) -> tuple[random.Random, int, list[tuple[float, int]], int]:
    rng = random.Random(seed)
    total = rng.choice([8, 16, 64])
    running = [(float(rng.randint(1, 400)), rng.randint(1, 4)) for _ in range(rng.randint(40, 300))]
    return rng, total, running, rng.randint(0, total)


def gaps_plainly(times: np.ndarray, counts: np.ndarray, need: int) -> tuple[int, int, float]:
    """A row's gap summary for `need` written plainly: its first and last step with fewer, and the longest span
    from a step right after one with fewer to the next step with fewer (-inf when there is none)."""
    short = [j for j, count in enumerate(counts) if count < need]
    if not short:
        return len(counts), -1, -math.inf
    spans = [times[b] - times[a + 1] for a, b in zip(short, short[1:]) if b > a + 1]
    return short[0], short[-1], max(spans, default=-math.inf)


def assert_rows(compiled: CompiledProfile) -> None:
    """Each row's least and greatest count are those of its steps (a change in one row keeps them without a
    scan where it can; `fewest` reads the least as exact), a gap summary not marked stale is that of its
    steps now (every change of a row's steps marks it), and no step has the count of the one before it (one
    step per run of equal counts, across rows too)."""
    for row in compiled.O[:compiled.H[0]]:
        counts = compiled.V[row, :compiled.M[row, 0]]
        assert (compiled.M[row, 2], compiled.M[row, 3]) == (counts.min(), counts.max()), row
        need = compiled.M[row, profile_jit.KEY]
        if need != profile_jit.STALE:
            kept = (compiled.M[row, profile_jit.FIRST_SHORT], compiled.M[row, profile_jit.LAST_SHORT], compiled.Q[row])
            assert kept == gaps_plainly(compiled.T[row], counts, need), row
    counts = [count for _, count in compiled.steps()]
    assert all(a != b for a, b in zip(counts, counts[1:]))
    used, unused = compiled.O[:compiled.H[0]].tolist(), compiled.S[:compiled.H[1]].tolist()
    assert sorted(used + unused) == list(range(len(compiled.O)))  # every row in use or unused, none lost


@pytest.mark.parametrize("seed", range(20))
def test_the_compiled_profile_answers_as_the_python_one(seed):
    """The plain step function (slow) checks the first seeds' answers too; every row's summaries are checked
    after each operation."""
    rng, total, running, idle = make(seed)
    python, compiled = Profile(0.0, idle, running), CompiledProfile(0.0, idle, running)
    plain = PlainProfile(idle, running) if seed < 3 else None
    now = 0.0
    for _ in range(300):
        action, changes = rng.random(), []
        if action < 0.5:
            gpus, duration, not_before = rng.randint(1, total), float(rng.randint(0, 60)), now + rng.randint(0, 50)
            found = compiled.earliest(gpus, duration, not_before)
            assert found == python.earliest(gpus, duration, not_before)
            assert plain is None or found == plain.earliest(gpus, duration, not_before)
            python.reserve(found, duration, gpus)
            compiled.reserve(found, duration, gpus)
            changes = [(found, found + duration, -gpus)]
        elif action < 0.6:
            begin = now + rng.randint(0, 300) + rng.random()
            end, change = begin + rng.randint(0, 100), rng.randint(-4, 4)
            python.add(begin, end, change)
            compiled.add(begin, end, change)
            changes = [(begin, end, change)]
        elif action < 0.7:
            gpus, t = rng.randint(1, total), now + rng.randint(0, 200)
            assert compiled.room(gpus, t) == python.room(gpus, t)
        elif action < 0.8:
            begin = now + rng.randint(0, 300)
            end = begin + rng.randint(1, 100)
            assert compiled.fewest(begin, end) == python.fewest(begin, end)
            assert plain is None or compiled.fewest(begin, end) == plain.fewest(begin, end)
            assert compiled.shortages(begin, end) == python.shortages(begin, end)
        elif action < 0.85:
            now += rng.randint(0, 30)
            python.forget_before(now)
            compiled.forget_before(now)
        else:  # the GPUs of a cut fold come back
            changes = []
            for _ in range(rng.randint(1, 60)):
                begin = now + rng.randint(0, 300)
                changes.append((float(begin), float(begin + rng.randint(1, 80)), rng.randint(1, 3)))
            python.add_all(changes)
            begins, ends, counts = zip(*changes)
            compiled.add_all(np.array(begins), np.array(ends), np.array(counts, dtype=np.int64))
        if plain is not None:
            plain.changes.extend(changes)
        assert function(compiled.steps(), now) == function(python_steps(python), now)
        assert_rows(compiled)


def test_rows_are_added_as_the_profile_grows():
    """A profile made with few rows takes thousands of reservations (its rows split and grow)."""
    rng = random.Random(3)
    python, compiled = Profile(0.0, 64, []), CompiledProfile(0.0, 64, [])
    rows = len(compiled.O)
    for _ in range(3000):
        gpus, duration, not_before = rng.randint(1, 64), float(rng.randint(1, 500)), float(rng.randint(0, 5000))
        found = compiled.earliest(gpus, duration, not_before)
        assert found == python.earliest(gpus, duration, not_before)
        python.reserve(found, duration, gpus)
        compiled.reserve(found, duration, gpus)
    assert len(compiled.O) > rows and compiled.H[0] > 40
    assert function(compiled.steps(), 0.0) == function(python_steps(python), 0.0)


def reserve_loop(profile: Profile, positions: np.ndarray, start: int, stop: int, target: int, now: float, idle: int,
                 hoped_gpus: int, hoped_length: float) -> tuple[int, int, float]:
    """reserve_run written plainly: (why, next position, the hoped job's room)."""
    for p in range(start, stop):
        gpus, length, hold = int(positions[p, GPUS]), positions[p, LENGTH], positions[p, HOLD]
        begin = profile.earliest(gpus, length, max(hold, now))
        positions[p, BEGIN] = begin
        profile.reserve(begin, length, gpus)
        room = profile.room(hoped_gpus, now) if hoped_gpus >= 0 else math.inf
        if begin <= now and gpus <= idle:
            return profile_jit.TRY, p + 1, room
        if p == target:
            return profile_jit.TARGET, p + 1, room
        if hoped_gpus >= 0 and now + hoped_length > room:
            return profile_jit.LOST, p + 1, room
    return profile_jit.END, stop, profile.room(hoped_gpus, now) if hoped_gpus >= 0 else math.inf


@pytest.mark.parametrize("seed", range(20))
def test_a_compiled_run_of_reservations_is_the_loop_of_earliest_and_add(seed):
    rng, total, running, idle = make(seed)
    python, compiled = Profile(0.0, idle, running), CompiledProfile(0.0, idle, running)
    count = 400
    positions = np.zeros((count, 4))
    for p in range(count):
        positions[p, :3] = (rng.randint(0, total), float(rng.randint(0, 80)), rng.choice([0.0, float(rng.randint(0, 300))]))
    expected = positions.copy()
    start, now = 0, 0.0
    while start < count:
        stop = min(count, start + rng.randint(1, 80))
        target = rng.choice([-1, rng.randrange(start, stop)])
        hoped_gpus = rng.choice([-1, rng.randint(1, total)])
        hoped_length = float(rng.randint(0, 100))
        idle_now = rng.randint(0, total)
        room = compiled.room(hoped_gpus, now) if hoped_gpus >= 0 else 0.0
        while compiled.H[1] < 2 * (stop - start) + profile_jit.SPARE:
            compiled.grow()
        why, after, room, lowest, first = profile_jit.reserve_run(
            compiled.T, compiled.V, compiled.M, compiled.O, compiled.S, compiled.H, compiled.Q, compiled.FD,
            compiled.FN, compiled.FF, compiled.FC, compiled.FG, positions, start, stop, target,
            now, idle_now, hoped_gpus, hoped_length, room)
        expected_why, expected_after, expected_room = reserve_loop(python, expected, start, stop, target, now, idle_now,
                                                                   hoped_gpus, hoped_length)
        assert (why, after) == (expected_why, expected_after)
        if hoped_gpus >= 0:
            assert room == expected_room
        taken = [positions[p, BEGIN] for p in range(start, after) if positions[p, GPUS] > 0 and positions[p, LENGTH] > 0]
        assert lowest == min(taken, default=math.inf)
        assert first == min(positions[start:after, BEGIN], default=math.inf)
        start = after
        now += rng.randint(0, 3)
        python.forget_before(now)
        compiled.forget_before(now)
    assert np.array_equal(positions, expected)
    assert function(compiled.steps(), now) == function(python_steps(python), now)


def test_a_search_skips_the_rows_whose_gaps_are_all_too_short_and_not_one_that_fits_by_rounding():
    """One GPU, taken 1 s of every 2 (gaps of 1 s), then a gap from 76.38 to 78.92999999999999: measured as a
    difference it is 2.549999999999997, under 2.55, but 76.38 + 2.55 rounds to its end, so a job of 2.55 fits
    there (the search's own comparison). The rows of short gaps are skipped by their summaries and that one is
    not: the answer is the Python profile's and the plain step function's. A change in a row marks its summary
    stale; the next search makes it again."""
    python, compiled = Profile(0.0, 1, []), CompiledProfile(0.0, 1, [])
    plain = PlainProfile(1, [])
    changes = [(2.0 * k + 1.0, 2.0 * k + 2.0, -1) for k in range(35)]
    changes += [(70.0, 76.38, -1), (78.92999999999999, 80.0, -1)]
    changes += [(80.5 + k, 81.0 + k, -1) for k in range(10)]
    for begin, end, change in changes:
        python.add(begin, end, change)
        compiled.add(begin, end, change)
    plain.changes.extend(changes)
    for duration in (2.55, 0.5, 1.0, 2.0, 2.6, 9.0):  # 2.55 first: no floor of a shorter search starts it in its row
        found = compiled.earliest(1, duration, 0.0)
        assert found == python.earliest(1, duration, 0.0) == plain.earliest(1, duration, 0.0), duration
    assert compiled.earliest(1, 2.55, 0.0) == 76.38
    assert 76.38 + 2.55 == 78.92999999999999 and 78.92999999999999 - 76.38 < 2.55
    rows = [int(row) for row in compiled.O[:compiled.H[0]]]
    made = [row for row in rows if compiled.M[row, profile_jit.KEY] != profile_jit.STALE]
    assert len(rows) >= 2 and made == rows  # every row was entered at its first step and summarized
    assert_rows(compiled)
    last = rows[-1]
    compiled.add(85.2, 85.3, -1)
    python.add(85.2, 85.3, -1)
    assert compiled.M[last, profile_jit.KEY] == profile_jit.STALE
    compiled.add(200.0, 201.0, 1)  # GPUs come back: the floors are cleared, the next search walks from 0 again
    python.add(200.0, 201.0, 1)
    assert compiled.earliest(1, 2.55, 0.0) == python.earliest(1, 2.55, 0.0) == 76.38
    assert_rows(compiled)


def test_every_reason_to_stop_shows_up():
    """The seeds above stop a run for each reason."""
    seen = set()
    for seed in range(20):
        rng, total, running, idle = make(seed)
        compiled = CompiledProfile(0.0, idle, running)
        positions = np.zeros((100, 4))
        for p in range(100):
            positions[p, :3] = (rng.randint(1, total), float(rng.randint(1, 80)), 0.0)
        for target, idle_now, hoped in ((-1, total, -1), (5, -1, -1), (-1, -1, total), (-1, -1, -1)):
            room = compiled.room(hoped, 0.0) if hoped >= 0 else 0.0
            seen.add(profile_jit.reserve_run(compiled.T, compiled.V, compiled.M, compiled.O, compiled.S, compiled.H,
                                             compiled.Q, compiled.FD, compiled.FN, compiled.FF, compiled.FC, compiled.FG,
                                             positions.copy(), 0, 10, target, 0.0, idle_now, hoped, 1e9, room)[0])
    assert seen >= {profile_jit.TRY, profile_jit.TARGET, profile_jit.LOST, profile_jit.END}


@pytest.mark.parametrize("returned", ["add", "add_all"])
def test_gpus_that_come_back_clear_the_floors_of_past_searches(returned):
    """A search remembers its answer as the floor of later ones only while the profile loses GPUs."""
    profile = CompiledProfile(0.0, 0, [(10.0, 4)])
    assert profile.earliest(4, 1.0, 0.0) == 10.0
    profile.reserve(10.0, 1.0, 4)
    assert profile.earliest(4, 2.0, 0.0) == 11.0  # from the floor of the first search
    if returned == "add":
        profile.add(0.0, 10.0, 4)
    else:
        profile.add_all(np.array([0.0]), np.array([10.0]), np.array([4], dtype=np.int64))
    assert profile.earliest(4, 2.0, 0.0) == 0.0
    assert profile.earliest(4, 1.0, 0.0) == 0.0


@pytest.mark.parametrize("seed", range(4))
def test_a_profile_made_again_in_its_rows_is_a_new_one(seed):
    """`reset` lays out the profile of new running jobs in the rows a profile already has (grown or not) and
    forgets its floors: the same steps and answers as a profile made new, after as many changes again."""
    rng, total, running, idle = make(seed)
    kept = CompiledProfile(0.0, idle, running)
    for _ in range(200):  # grow the rows and fill the floors
        gpus, duration = rng.randint(1, total), float(rng.randint(1, 60))
        kept.reserve(kept.earliest(gpus, duration, 0.0), duration, gpus)
    rows = len(kept.T)
    later = [(end + 100.0, gpus) for end, gpus in running[: len(running) // 2]]
    kept.reset(50.0, idle // 2, later)
    new = CompiledProfile(50.0, idle // 2, later)
    assert len(kept.T) == rows and not kept.FC.any()
    assert kept.steps() == new.steps()
    assert_rows(kept)
    for _ in range(100):
        gpus, duration, not_before = rng.randint(1, total), float(rng.randint(0, 60)), 50.0 + rng.randint(0, 50)
        found = kept.earliest(gpus, duration, not_before)
        assert found == new.earliest(gpus, duration, not_before)
        kept.reserve(found, duration, gpus)
        new.reserve(found, duration, gpus)
        assert function(kept.steps(), 50.0) == function(new.steps(), 50.0)


def displaced_plainly(positions: np.ndarray, n: int, begin: float, end: float, times: list[float],
                      short: list[int]) -> int:
    """The first displaced position by its definition: of the reservations overlapping [begin, end), drop
    the j-th and all after it for the largest j at which the dropped ones still give every short step as
    many GPUs as all of them could; that j-th one's position (n when none need move)."""
    over = [p for p in range(n) if positions[p, LENGTH] > 0 and positions[p, GPUS] > 0
            and positions[p, BEGIN] < end and positions[p, BEGIN] + positions[p, LENGTH] > begin]

    def covered(j: int, t: float) -> int:
        return sum(int(positions[p, GPUS]) for p in over[j:]
                   if positions[p, BEGIN] <= t < positions[p, BEGIN] + positions[p, LENGTH])

    needed = [min(s, covered(0, t)) for t, s in zip(times, short)]
    for j in range(len(over), -1, -1):
        if all(covered(j, t) >= need for t, need in zip(times, needed)):
            return over[j] if j < len(over) else n
    raise AssertionError("dropping every overlapping reservation covers every step")


@pytest.mark.parametrize("seed", range(30))
def test_the_first_displaced_reservation_is_the_one_its_definition_gives(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 25)
    positions = np.array([[float(rng.randint(0, 4)), float(rng.randint(0, 30)), 0.0, float(rng.randint(0, 60))]
                          for _ in range(n)])
    begin = float(rng.randint(0, 40))
    end = begin + rng.randint(1, 40)
    times = sorted(rng.sample(range(int(begin), int(end) + 1), rng.randint(1, int(end - begin) + 1)))
    short = [rng.randint(1, 6) for _ in times]
    found = profile_jit.first_displaced(positions, n, begin, end, np.array(times, dtype=float),
                                        np.array(short, dtype=np.int64), len(times))
    assert found == displaced_plainly(positions, n, begin, end, [float(t) for t in times], short)


def test_warm_compiles_the_kernels_the_fold_calls():
    """bench_dispatch.py and a run's first fold rely on warm() to compile (or load) the kernels up front."""
    profile_jit.warm()
    for name in ("reserve_run", "first_displaced", "first_ending_after", "first_begun_before", "beginning_by",
                 "add_sweep", "add_many", "room", "fewest", "shortages", "forget_before", "earliest"):
        kernel = getattr(profile_jit, name)
        assert getattr(kernel, "signatures", True), name  # a numba dispatcher has compiled (Python when disabled)


def test_changes_added_one_by_one_go_on_after_the_rows_grow():
    """add_all adds few changes one by one and stops for more rows when the spare ones run low: the changes
    after the stop are added once each, as the Python profile adds them."""
    python, compiled = Profile(0.0, 64, []), CompiledProfile(0.0, 64, [])
    t = 0.0
    while not (compiled.H[1] == profile_jit.SPARE + 1 and compiled.size() > 16 * 70):
        python.reserve(t, 0.5, 1)
        compiled.reserve(t, 0.5, 1)
        t += 1.0
    rows = len(compiled.O)
    first = [int(compiled.O[b]) for b in (1, 2)]  # two changes in each reservation of two rows split both
    starts = [compiled.T[row, k] + offset for row in first for k in range(compiled.M[row, 0])
              if compiled.V[row, k] + compiled.M[row, 1] == 63 for offset in (0.1, 0.3)]
    begins, ends = np.array(starts), np.array(starts) + 0.1
    changes = np.ones(len(starts), dtype=np.int64)
    compiled.add_all(begins, ends, changes)
    python.add_all(list(zip(begins.tolist(), ends.tolist(), changes.tolist())))
    assert len(compiled.O) > rows  # it stopped for rows in the middle
    assert function(compiled.steps(), 0.0) == function(python_steps(python), 0.0)


def test_forgetting_drops_every_row_that_ends_before_now_and_keeps_the_rest():
    """After forget_before(t) the second row starts after t (no whole row before t is left) and the steps from
    t on are those before. A change that splits the first row leaves the bound it skips calls by late: rows
    are dropped again once t passes it (here at 180.2), and after a profile is made again."""

    def forgets(t: float, whole: bool = True) -> None:
        before = function(profile.steps(), t)
        profile.forget_before(t)
        assert function(profile.steps(), t) == before
        assert not whole or (profile.T[profile.O[0], 0] <= t and (profile.H[0] == 1 or profile.T[profile.O[1], 0] > t)), t

    profile = CompiledProfile(0.0, 0, [(float(t), 1) for t in range(1, 400)])
    forgets(100.5)
    for k in range(70):  # splits the first row: its second half becomes the second row
        profile.add(100.5 + 0.001 * (k + 1), 100.5 + 0.001 * (k + 1) + 0.0005, 1)
    forgets(100.7, whole=False)
    forgets(180.2)
    forgets(399.5)
    profile.reset(0.0, 0, [(float(t), 1) for t in range(1, 400)])
    forgets(250.5)
    profile = CompiledProfile(0.0, 0, [(float(t), 1) for t in range(1, 10)])  # one row
    forgets(5.5)
    for k in range(200):  # the profile grows past one row after a forget_before that found one
        profile.add(10.0 + k, 10.5 + k, 1)
    assert profile.H[0] > 1
    forgets(150.2)


def test_a_run_short_of_rows_stops_before_a_reservation_and_goes_on_once_they_grow():
    """reserve_run stops for rows (GROW) before it reserves the position it is at, without touching it; the
    fold grows the rows and calls it again from there (ConservativeFold._reserve), and the reservations come
    out as the plain loop of earliest and add makes them."""
    rng = random.Random(5)
    python, compiled = Profile(0.0, 64, []), CompiledProfile(0.0, 64, [])
    count = 1500
    positions = np.full((count, 4), -1.0)
    for p in range(count):
        positions[p, :3] = (rng.randint(1, 64), float(rng.randint(1, 500)), float(rng.randint(0, 5000)))
    expected = positions.copy()
    start, stops = 0, []
    while True:
        why, after, *_ = profile_jit.reserve_run(
            compiled.T, compiled.V, compiled.M, compiled.O, compiled.S, compiled.H, compiled.Q, compiled.FD,
            compiled.FN, compiled.FF, compiled.FC, compiled.FG, positions, start, count, -1, 0.0, -1, -1, 0.0, math.inf)
        stops.append(why)
        assert (positions[after:, BEGIN] == -1.0).all()  # nothing reserved past where it stopped
        if why != profile_jit.GROW:
            break
        assert compiled.H[1] < profile_jit.SPARE and after >= start
        compiled.grow()
        start = after
    assert stops.count(profile_jit.GROW) >= 2 and stops[-1] == profile_jit.END and after == count
    assert reserve_loop(python, expected, 0, count, -1, 0.0, -1, -1, 0.0)[:2] == (profile_jit.END, count)
    assert np.array_equal(positions, expected)
    assert function(compiled.steps(), 0.0) == function(python_steps(python), 0.0)


def test_searches_for_more_gpus_than_the_floors_cover_walk_the_profile():
    """GPU counts from FLOOR_COUNTS on keep no floors (a cluster of thousands of GPUs): their searches walk the
    steps from not_before, with the Python profile's answers."""
    rng = random.Random(7)
    running = [(float(rng.randint(1, 400)), rng.randint(1, 64)) for _ in range(200)]
    python, compiled = Profile(0.0, 1500, running), CompiledProfile(0.0, 1500, running)
    for _ in range(200):
        gpus = rng.randint(profile_jit.FLOOR_COUNTS, 3000)
        duration, not_before = float(rng.randint(0, 60)), float(rng.randint(0, 300))
        found = compiled.earliest(gpus, duration, not_before)
        assert found == python.earliest(gpus, duration, not_before)
        python.reserve(found, duration, gpus // 8)
        compiled.reserve(found, duration, gpus // 8)
    assert not compiled.FC.any()  # no floor was kept
    assert function(compiled.steps(), 0.0) == function(python_steps(python), 0.0)


@pytest.mark.parametrize("seed", range(3))
def test_a_gpu_count_searched_more_often_than_it_keeps_floors(seed):
    """A GPU count keeps at most FLOORS past searches, in order of duration, and goes on searching once they
    are full (a longer search than all of them is not kept, a shorter one drops the longest): every answer
    stays the Python profile's, which keeps every floor."""
    rng = random.Random(seed)
    running = [(float(rng.randint(1, 2000)), rng.randint(1, 4)) for _ in range(300)]
    python, compiled = Profile(0.0, 0, running), CompiledProfile(0.0, 0, running)
    full = 0
    for k in range(600):
        duration = float(k) + rng.random() if k < 400 else float(rng.randint(0, 400)) + rng.random()
        not_before = float(rng.randint(0, 50))
        found = compiled.earliest(4, duration, not_before)
        assert found == python.earliest(4, duration, not_before)
        assert compiled.FC[4] <= profile_jit.FLOORS
        full += compiled.FC[4] == profile_jit.FLOORS
        if rng.random() < 0.3:
            gpus = rng.randint(1, 2)
            python.reserve(found, 1.0, gpus)
            compiled.reserve(found, 1.0, gpus)
    assert full > 100
    floors = compiled.FD[4, :compiled.FC[4]]
    assert (np.diff(floors) >= 0).all()  # kept by duration


def test_a_row_whose_last_step_joins_the_row_before_is_dropped():
    """A change that makes a row's only step count as the last step of the row before deletes the step and
    the emptied row (its row goes back to the unused ones); searches and changes go on over the rows left."""
    ends = [(float(t), 1) for t in range(1, 33)]  # 33 steps: a full row and a row of one step
    python, compiled = Profile(0.0, 0, ends), CompiledProfile(0.0, 0, ends)
    rows, spare = int(compiled.H[0]), int(compiled.H[1])
    assert rows == 2 and compiled.M[compiled.O[1], 0] == 1
    python.add(31.0, 32.0, 1)
    compiled.add(31.0, 32.0, 1)
    assert (compiled.H[0], compiled.H[1]) == (1, spare + 1)
    assert function(compiled.steps(), 0.0) == function(python_steps(python), 0.0)
    assert_rows(compiled)
    for gpus, duration in ((32, 5.0), (20, 3.0), (30, 1.0)):
        found = compiled.earliest(gpus, duration, 0.0)
        assert found == python.earliest(gpus, duration, 0.0)
        python.reserve(found, duration, gpus)
        compiled.reserve(found, duration, gpus)
        assert function(compiled.steps(), 0.0) == function(python_steps(python), 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_the_positions_that_begin_by_a_time_are_those_a_plain_scan_finds(seed):
    """beginning_by: the positions from 1 to n - 1 whose reservation begins by t, in order (position 0, the
    head, is the fold's own)."""
    rng = np.random.default_rng(seed)
    positions = np.zeros((200, 4))
    positions[:, BEGIN] = rng.integers(0, 50, 200).astype(float)
    out = np.zeros(200, dtype=np.int64)
    for n, t in ((0, 10.0), (1, 10.0), (200, 10.0), (150, 0.0), (200, 49.0), (200, -1.0)):
        found = profile_jit.beginning_by(positions, n, t, out)
        assert out[:found].tolist() == [p for p in range(1, n) if positions[p, BEGIN] <= t], (n, t)


def test_a_shortage_at_the_first_step_of_a_later_row_is_found():
    """shortages reads every step of a row that has one, the first step of each row after the first too (the
    steps a cut of the fold must cover: first_displaced)."""
    ends = [(float(t), 1) for t in range(1, 41)]  # 41 steps: a full row, then a row from 32.0 on
    python, compiled = Profile(0.0, 0, ends), CompiledProfile(0.0, 0, ends)
    second = compiled.O[1]
    assert compiled.T[second, 0] == 32.0
    for profile in (python, compiled):
        profile.add(32.0, 33.0, -40)
        profile.add(35.0, 36.5, -40)
    assert compiled.T[second, 0] == 32.0  # the shortage is the row's first step
    assert compiled.shortages(0.0, 50.0) == python.shortages(0.0, 50.0) == [(32.0, 8), (35.0, 5), (36.0, 4)]
    assert compiled.fewest(30.0, 40.0) == python.fewest(30.0, 40.0) == -8


def test_a_middle_row_emptied_step_by_step_is_dropped_between_its_neighbours():
    """Changes that each make a row's first step count as the last step before it delete the steps of the
    second of three rows one by one; the row emptied last goes, the rows after it move up in time order."""
    ends = [(float(t), 1) for t in range(1, 96)]  # 96 steps: rows from 0.0, 32.0 and 64.0
    python, compiled = Profile(0.0, 0, ends), CompiledProfile(0.0, 0, ends)
    assert compiled.H[0] == 3 and [compiled.T[row, 0] for row in compiled.O[:3]] == [0.0, 32.0, 64.0]
    for t in range(32, 64):  # free is t on [t, t + 1): 31 there joins it to the step at 31.0
        python.add(float(t), float(t + 1), 31 - t)
        compiled.add(float(t), float(t + 1), 31 - t)
        assert function(compiled.steps(), 0.0) == function(python_steps(python), 0.0)
        assert_rows(compiled)
    assert compiled.H[0] == 2 and [compiled.T[row, 0] for row in compiled.O[:2]] == [0.0, 64.0]
    assert compiled.earliest(40, 2.0, 0.0) == python.earliest(40, 2.0, 0.0) == 64.0


def test_shortages_in_a_row_a_change_covered_whole_are_read_with_its_offset():
    """A change that covers a row whole moves its offset, not its counts: the row's shortages are read as its
    counts plus that offset (a row is skipped only when its least count plus the offset is not short)."""
    ends = [(float(t), 1) for t in range(1, 96)]  # rows from 0.0, 32.0 and 64.0
    python, compiled = Profile(0.0, 0, ends), CompiledProfile(0.0, 0, ends)
    for profile in (python, compiled):
        profile.add(20.0, 70.0, -40)
    middle = compiled.O[1]
    assert compiled.T[middle, 0] == 32.0 and compiled.M[middle, profile_jit.OFFSET] == -40
    found = compiled.shortages(0.0, 80.0)
    assert found == python.shortages(0.0, 80.0)
    assert [t for t, _ in found] == [float(t) for t in range(20, 40)] and found[0] == (20.0, 20)
    assert compiled.fewest(30.0, 60.0) == python.fewest(30.0, 60.0) == -10
