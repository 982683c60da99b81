"""The free-GPU profile of `profile.Profile`, compiled with numba, and the conservative fold's batch over
consecutive queue positions (`reserve_run`).

The fold of conservative backfilling computes millions of reservations on a long replay, each one search
and one change of the profile; in Python each cost about 16 us. Here the profile is a few numpy arrays and
the searches, changes and the loop that reserves a run of queue positions are compiled (numba, `cache=True`,
no fastmath: every float is the same IEEE operation, in the same order, as in `profile.Profile`, so the
reservations are bit-identical). Imported only when a conservative fold builds its profile, so nothing
else pays numba's import.

Layout (the block structure of `profile.Profile`): steps sit in rows of a 2-D array of at most 2 * BLOCK
steps (times `T`, free counts before the row's offset `V`); `M[row]` holds the row's step count, pending
offset, least and greatest count; `O[:H[0]]` lists the rows in time order; `S[:H[1]]` is a stack of unused
rows. A search skips every row that cannot hold the job or holds it throughout; a change that covers a row
whole changes its offset only.

Gap summaries (`_gaps`, M's last three columns and Q): for one count of GPUs, a row's first and last step
with too few and the longest run between two such steps. On a long queue the profile ahead is nearly full
and a search for one GPU (93% of the reservations on full Philly, `benchmarks/bench_conservative_fold.py`)
meets many gaps too short for its job, each walked step by step; with the summary it passes a row whose gaps
are all too short at once. The summary is made when a search enters a row for a count it does not hold, and
kept until the row's steps change (`_summarize` and a change inside one row mark it STALE); a change of the
row's offset changes the count a search asks of it, so it does not match and is made again.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from numba import njit

BLOCK = 32
CAP = 2 * BLOCK + 2
"""Steps a row holds: 2 * BLOCK after `_fix`, and the two a change inserts before it."""
SPARE = 4
"""Unused rows a change may need (two splits); `reserve_run` stops for more below it."""
SWEEP_FROM = 16
"""`add_all` sweeps the steps once when it has more than 1/SWEEP_FROM changes per step."""
FLOORS = 128
"""Past searches kept per GPU count (`earliest`); a longer search's floor makes room for a shorter one's."""
FLOOR_COUNTS = 1025
"""GPU counts with floors (0 to 1024); searches for more GPUs walk from not_before."""

COUNT, OFFSET, LEAST, MOST, KEY, FIRST_SHORT, LAST_SHORT = 0, 1, 2, 3, 4, 5, 6
"""Columns of M: a row's step count, pending offset, least and greatest count, and its gap summary (`_gaps`):
the count it was made for (STALE when the row's steps changed since), its first and last step with less."""
STALE = -(2 ** 62)
GPUS, LENGTH, HOLD, BEGIN = 0, 1, 2, 3
"""Columns of a fold's position array: GPUs, queued length, hold (the earliest start as last given by
hold_until: the start is max(hold, now)), reserved begin."""

TRY, TARGET, LOST, END, GROW = 0, 1, 2, 3, 4
"""Why `reserve_run` stopped: a reservation that begins by now and fits the idle GPUs (the caller tries to
start it), the target position reserved, the hoped-for job's room taken, the positions given all
reserved, rows to add."""


def _block_of(T, O, H, t):
    """The index in O of the row holding t (0 when t is before every step)."""
    lo, hi = 0, H[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if t < T[O[mid], 0]:
            hi = mid
        else:
            lo = mid + 1
    return lo - 1 if lo > 1 else 0


def _step_of(T, M, row, t):
    """The index in the row of the step holding t (0 when t is before its first step)."""
    lo, hi = 0, M[row, COUNT]
    while lo < hi:
        mid = (lo + hi) // 2
        if t < T[row, mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo - 1 if lo > 1 else 0


def _gaps(T, V, M, Q, row, need):
    """Row `row`'s summary for `need` (the free count before the row's offset a step must have): its first
    and last step with less, and in Q the longest span from a step after one with less to the next with less."""
    count = M[row, COUNT]
    first = count
    last = -1
    longest = -math.inf
    begin = 0  # the first step after the last one with less
    for j in range(count):
        if V[row, j] < need:
            if first == count:
                first = j
            elif begin < j:
                span = T[row, j] - T[row, begin]
                if span > longest:
                    longest = span
            begin = j + 1
            last = j
    M[row, KEY], M[row, FIRST_SHORT], M[row, LAST_SHORT] = need, first, last
    Q[row] = longest


def search(T, V, M, O, H, Q, gpus, duration, not_before):
    """The earliest t >= not_before with at least `gpus` free over [t, t + duration) (Profile._search).
    A row entered at its first step is read from its gap summary for the count searched (made first when it
    is stale or for another count): the run from its start is checked against its first step with too few,
    and the runs between its steps with too few are walked only when the longest of them could hold the job;
    otherwise the search goes on from the run at its end. Those runs are measured as differences, the search
    compares begin + duration with a step's start, and the two can differ in the last bit: a row is passed
    over only when its longest run falls short by more than 1e-12 of the times involved, and one within that
    is walked step by step."""
    b = _block_of(T, O, H, not_before)
    i = _step_of(T, M, O[b], not_before)
    have = False
    run = 0.0
    end = 0.0
    for bb in range(b, H[0]):
        row = O[bb]
        if have and T[row, i] >= end:
            return run
        offset = M[row, OFFSET]
        if i == 0 and M[row, LEAST] + offset >= gpus:
            if not have:
                run = T[row, 0] if T[row, 0] > not_before else not_before
                end = run + duration
                have = True
            continue
        if i == 0 and M[row, MOST] + offset < gpus:
            have = False
            continue
        need = gpus - offset
        count = M[row, COUNT]
        if i == 0:
            if M[row, KEY] != need:
                _gaps(T, V, M, Q, row, need)
            first = M[row, FIRST_SHORT]
            if not have and first > 0:
                run = T[row, 0] if T[row, 0] > not_before else not_before
                end = run + duration
                have = True
            if have and T[row, first] >= end:
                return run
            have = False
            margin = 1e-12 * (abs(T[row, 0]) + abs(T[row, count - 1]) + duration)
            if Q[row] + margin < duration:
                last = M[row, LAST_SHORT]
                if last < count - 1:
                    run = T[row, last + 1] if T[row, last + 1] > not_before else not_before
                    end = run + duration
                    have = True
                continue
            i = first + 1
        for j in range(i, count):
            if V[row, j] >= need:
                if not have:
                    run = T[row, j] if T[row, j] > not_before else not_before
                    end = run + duration
                    have = True
            elif have:
                if T[row, j] >= end:
                    return run
                have = False
        i = 0
    return run


def _floor(FD, FN, FF, FC, gpus, duration, not_before):
    """(position by duration, floor) among the past searches for `gpus` GPUs: the floor is the answer of the
    longest one no longer than `duration` from no later than not_before (not_before when none is later)."""
    lo, hi = 0, FC[gpus]
    while lo < hi:
        mid = (lo + hi) // 2
        if duration < FD[gpus, mid]:
            hi = mid
        else:
            lo = mid + 1
    for j in range(lo - 1, -1, -1):
        if FN[gpus, j] <= not_before:
            if FF[gpus, j] > not_before:
                return lo, FF[gpus, j]
            break
    return lo, not_before


def earliest(T, V, M, O, H, Q, FD, FN, FF, FC, FG, gpus, duration, not_before):
    """`search` from the floor of past searches (Profile.earliest): per GPU count (below FC's length), up
    to FLOORS (duration, not_before, earliest) of past searches by duration. While the profile only loses
    GPUs, a search for as many GPUs or more, as long or longer and from no earlier finds nothing earlier, so
    the search starts from the latest floor of its own count and every smaller one (FG[1:FG[0] + 1]: the
    counts with floors, in order). The caller clears FC whenever GPUs come back."""
    if gpus < 0 or gpus >= FC.shape[0]:
        return search(T, V, M, O, H, Q, gpus, duration, not_before)
    k, start = _floor(FD, FN, FF, FC, gpus, duration, not_before)
    for i in range(1, FG[0] + 1):
        smaller = FG[i]
        if smaller >= gpus:
            break
        if FC[smaller]:
            floor = _floor(FD, FN, FF, FC, smaller, duration, not_before)[1]
            if floor > start:
                start = floor
    found = search(T, V, M, O, H, Q, gpus, duration, start)
    count = FC[gpus]
    if k and FN[gpus, k - 1] <= not_before and FF[gpus, k - 1] >= found:
        return found
    if count == 0:
        _note_count(FG, gpus)
    while k < count and FN[gpus, k] >= not_before and FF[gpus, k] <= found:
        for j in range(k, count - 1):
            FD[gpus, j], FN[gpus, j], FF[gpus, j] = FD[gpus, j + 1], FN[gpus, j + 1], FF[gpus, j + 1]
        count -= 1
    if count == FD.shape[1]:
        if k == count:
            FC[gpus] = count
            return found
        count -= 1  # the longest floor makes room
    for j in range(count, k, -1):
        FD[gpus, j], FN[gpus, j], FF[gpus, j] = FD[gpus, j - 1], FN[gpus, j - 1], FF[gpus, j - 1]
    FD[gpus, k], FN[gpus, k], FF[gpus, k] = duration, not_before, found
    FC[gpus] = count + 1
    return found


def _note_count(FG, gpus):
    """Add `gpus` to the ordered GPU counts FG[1:FG[0] + 1] if it is not there."""
    size = FG[0]
    i = 1
    while i <= size and FG[i] < gpus:
        i += 1
    if i <= size and FG[i] == gpus:
        return
    for j in range(size + 1, i, -1):
        FG[j] = FG[j - 1]
    FG[i] = gpus
    FG[0] = size + 1


def room(T, V, M, O, H, gpus, t):
    """The first time from t at which fewer than `gpus` GPUs are free (Profile.room); inf when never."""
    b = _block_of(T, O, H, t)
    i = _step_of(T, M, O[b], t)
    for bb in range(b, H[0]):
        row = O[bb]
        offset = M[row, OFFSET]
        if i or M[row, LEAST] + offset < gpus:
            need = gpus - offset
            for j in range(i, M[row, COUNT]):
                if V[row, j] < need:
                    return T[row, j] if T[row, j] > t else t
        i = 0
    return math.inf


def fewest(T, V, M, O, H, begin, end):
    """The fewest GPUs free at any time in [begin, end) (Profile.fewest)."""
    b = _block_of(T, O, H, begin)
    i = _step_of(T, M, O[b], begin)
    low = np.iinfo(np.int64).max
    for bb in range(b, H[0]):
        row = O[bb]
        count, offset = M[row, COUNT], M[row, OFFSET]
        if i == 0 and T[row, count - 1] < end:
            if M[row, LEAST] + offset < low:
                low = M[row, LEAST] + offset
        else:
            for j in range(i, count):
                if T[row, j] >= end:
                    return low
                if V[row, j] + offset < low:
                    low = V[row, j] + offset
        i = 0
    return low


def shortages(T, V, M, O, H, begin, end, times, short):
    """Fill times/short with (start, GPUs short) of every step in [begin, end) with fewer than 0 GPUs free
    (Profile.shortages); how many. The arrays hold at least every step."""
    b = _block_of(T, O, H, begin)
    i = _step_of(T, M, O[b], begin)
    found = 0
    for bb in range(b, H[0]):
        row = O[bb]
        count, offset = M[row, COUNT], M[row, OFFSET]
        if M[row, LEAST] + offset < 0:
            for j in range(i, count):
                if T[row, j] >= end:
                    return found
                if V[row, j] + offset < 0:
                    times[found] = T[row, j]
                    short[found] = -(V[row, j] + offset)
                    found += 1
        elif T[row, count - 1] >= end:
            return found
        i = 0
    return found


def _split_at(T, V, M, O, H, t):
    """Make t the start of a step (Profile._split_at): (index in O, index in the row, whether cut)."""
    b = _block_of(T, O, H, t)
    row = O[b]
    i = _step_of(T, M, row, t)
    if T[row, i] == t:
        return b, i, False
    count = M[row, COUNT]
    for j in range(count, i + 1, -1):
        T[row, j] = T[row, j - 1]
        V[row, j] = V[row, j - 1]
    T[row, i + 1] = t
    V[row, i + 1] = V[row, i]
    M[row, COUNT] = count + 1
    return b, i + 1, True


def _delete(T, V, M, row, i):
    count = M[row, COUNT]
    for j in range(i, count - 1):
        T[row, j] = T[row, j + 1]
        V[row, j] = V[row, j + 1]
    M[row, COUNT] = count - 1


def _summarize(V, M, row):
    low = V[row, 0]
    high = V[row, 0]
    for j in range(1, M[row, COUNT]):
        value = V[row, j]
        if value < low:
            low = value
        if value > high:
            high = value
    M[row, LEAST] = low
    M[row, MOST] = high
    M[row, KEY] = STALE


def _fix(T, V, M, O, S, H, b):
    """Row O[b] after a change: dropped if empty, cut in two if longer than 2 * BLOCK; its summaries."""
    row = O[b]
    count = M[row, COUNT]
    if count == 0:
        for k in range(b, H[0] - 1):
            O[k] = O[k + 1]
        H[0] -= 1
        S[H[1]] = row
        H[1] += 1
        return
    if count > 2 * BLOCK:
        H[1] -= 1
        new = S[H[1]]
        for j in range(BLOCK, count):
            T[new, j - BLOCK] = T[row, j]
            V[new, j - BLOCK] = V[row, j]
        M[new, COUNT] = count - BLOCK
        M[new, OFFSET] = M[row, OFFSET]
        _summarize(V, M, new)
        for k in range(H[0], b + 1, -1):
            O[k] = O[k - 1]
        O[b + 1] = new
        H[0] += 1
        M[row, COUNT] = BLOCK
    _summarize(V, M, row)


def add(T, V, M, O, S, H, begin, end, change):
    """Add `change` GPUs over [begin, end) (Profile.add): cut the steps at both ends, shift the steps
    between (whole rows by their offset), join a step left with the count of the one before it."""
    if begin == end or change == 0:
        return
    b2 = _block_of(T, O, H, end)
    if T[O[b2], 0] <= begin:
        _add_in_row(T, V, M, O, S, H, b2, begin, end, change)
        return
    b2, i2, _ = _split_at(T, V, M, O, H, end)
    b1, i1, inserted = _split_at(T, V, M, O, H, begin)
    if inserted and b1 == b2:
        i2 += 1
    row1 = O[b1]
    if b1 == b2:
        for j in range(i1, i2):
            V[row1, j] += change
    else:
        for j in range(i1, M[row1, COUNT]):
            V[row1, j] += change
        for b in range(b1 + 1, b2):
            M[O[b], OFFSET] += change
        row2 = O[b2]
        for j in range(i2):
            V[row2, j] += change
    for k in range(2):
        b = b2 if k == 0 else b1
        i = i2 if k == 0 else i1
        row = O[b]
        if i > 0:
            if V[row, i] == V[row, i - 1]:
                _delete(T, V, M, row, i)
        elif b > 0:
            before = O[b - 1]
            if V[row, 0] + M[row, OFFSET] == V[before, M[before, COUNT] - 1] + M[before, OFFSET]:
                _delete(T, V, M, row, 0)
    _fix(T, V, M, O, S, H, b2)
    if b1 != b2:
        _fix(T, V, M, O, S, H, b1)


def _add_in_row(T, V, M, O, S, H, b, begin, end, change):
    """`add` where begin and end fall in the same row O[b] (most changes), in place: the steps from begin
    on move at most two places (a step cut at begin or end, one dropped where a join leaves two equal counts
    in a row), the counts between shift, and the row's least and greatest count follow from the shifted ones
    unless an old extreme was among them."""
    row = O[b]
    count = M[row, COUNT]
    a = _step_of(T, M, row, begin)
    e = _step_of(T, M, row, end)
    cut_begin = T[row, a] != begin
    cut_end = T[row, e] != end
    last = e if cut_end else e - 1  # the last step whose count shifts
    if cut_begin:
        drop_begin = False
    elif a > 0:
        drop_begin = V[row, a] + change == V[row, a - 1]
    elif b > 0:
        before = O[b - 1]
        drop_begin = V[row, 0] + change + M[row, OFFSET] == V[before, M[before, COUNT] - 1] + M[before, OFFSET]
    else:
        drop_begin = False
    drop_end = not cut_end and V[row, e - 1] + change == V[row, e]
    shift = 1 if cut_begin else (-1 if drop_begin else 0)  # where the shifted steps after a move
    tail = e + 1 if cut_end or drop_end else e  # the first step that keeps its count and moves
    moved = shift + (1 if cut_end else (-1 if drop_end else 0))
    end_count = V[row, e]
    least, most = M[row, LEAST], M[row, MOST]
    low, high = V[row, a], V[row, a]  # the old and new extremes of the shifted counts
    new_low, new_high = V[row, a] + change, V[row, a] + change
    if moved > 0:
        for j in range(count - 1, tail - 1, -1):
            T[row, j + moved] = T[row, j]
            V[row, j + moved] = V[row, j]
    if shift > 0:
        for j in range(last, a, -1):
            value = V[row, j]
            low, high = min(low, value), max(high, value)
            T[row, j + 1] = T[row, j]
            V[row, j + 1] = value + change
            new_low, new_high = min(new_low, value + change), max(new_high, value + change)
        T[row, a + 1] = begin
        V[row, a + 1] = V[row, a] + change
    elif shift == 0:
        for j in range(a, last + 1):
            value = V[row, j]
            low, high = min(low, value), max(high, value)
            V[row, j] = value + change
            new_low, new_high = min(new_low, value + change), max(new_high, value + change)
    else:
        for j in range(a + 1, last + 1):
            value = V[row, j]
            low, high = min(low, value), max(high, value)
            T[row, j - 1] = T[row, j]
            V[row, j - 1] = value + change
            new_low, new_high = min(new_low, value + change), max(new_high, value + change)
    if cut_end:
        T[row, last + shift + 1] = end
        V[row, last + shift + 1] = end_count
    if moved < 0:
        for j in range(tail, count):
            T[row, j + moved] = T[row, j]
            V[row, j + moved] = V[row, j]
    M[row, COUNT] = count + moved
    if count + moved > 2 * BLOCK or (drop_begin and a == 0):
        _fix(T, V, M, O, S, H, b)  # a split, or the row's first count dropped for the one before the row
    elif (change < 0 and high == most) or (change > 0 and low == least):
        _summarize(V, M, row)
    else:
        M[row, LEAST], M[row, MOST] = min(least, new_low), max(most, new_high)
        M[row, KEY] = STALE


def add_many(T, V, M, O, S, H, begins, ends, changes, count):
    """`add` each of the first `count` changes, as long as SPARE rows are left; how many were added."""
    for k in range(count):
        if H[1] < SPARE:
            return k
        add(T, V, M, O, S, H, begins[k], ends[k], changes[k])
    return count


def add_sweep(T, V, M, O, S, H, begins, ends, changes):
    """`add` every change at once (Profile.add_all's sweep): the steps and the changes' ends merged in one
    pass, one step per run of equal counts, laid out again in rows of BLOCK. The rows must hold the steps
    and two per change."""
    steps = 0
    for b in range(H[0]):
        steps += M[O[b], COUNT]
    times = np.empty(steps)
    levels = np.empty(steps, dtype=np.int64)
    k = 0
    for b in range(H[0]):
        row = O[b]
        for j in range(M[row, COUNT]):
            times[k] = T[row, j]
            levels[k] = V[row, j] + M[row, OFFSET]
            k += 1
    count = len(begins)
    points = np.empty(2 * count)
    deltas = np.empty(2 * count, dtype=np.int64)
    for i in range(count):
        points[2 * i], deltas[2 * i] = begins[i], changes[i]
        points[2 * i + 1], deltas[2 * i + 1] = ends[i], -changes[i]
    order = np.argsort(points, kind="mergesort")
    swept_times = np.empty(steps + 2 * count)
    swept = np.empty(steps + 2 * count, dtype=np.int64)
    size = 0
    k, shift, total = 0, 0, 2 * count
    for step in range(steps):
        start = times[step]
        while k < total and points[order[k]] <= start:
            shift += deltas[order[k]]
            k += 1
        level = levels[step]
        if size == 0 or swept[size - 1] != level + shift:
            swept_times[size], swept[size] = start, level + shift
            size += 1
        stop = times[step + 1] if step + 1 < steps else math.inf
        while k < total and points[order[k]] < stop:
            at = points[order[k]]
            while k < total and points[order[k]] == at:
                shift += deltas[order[k]]
                k += 1
            if swept[size - 1] != level + shift:
                swept_times[size], swept[size] = at, level + shift
                size += 1
    rows = len(O)
    blocks = (size + BLOCK - 1) // BLOCK
    for b in range(blocks):
        first = b * BLOCK
        last = min(size, first + BLOCK)
        for j in range(first, last):
            T[b, j - first] = swept_times[j]
            V[b, j - first] = swept[j]
        M[b, COUNT], M[b, OFFSET] = last - first, 0
        _summarize(V, M, b)
        O[b] = b
    for r in range(rows - blocks):
        S[r] = rows - 1 - r
    H[0], H[1] = blocks, rows - blocks


def first_displaced(P, n, begin, end, times, short, found):
    """The first of the n positions whose reservation no longer fits after GPUs were taken over [begin, end)
    (ConservativeFold._first_displaced), given the `found` steps short there (times, GPUs short)."""
    over = np.empty(n, dtype=np.int64)
    count = 0
    for p in range(n):
        first, length, gpus = P[p, BEGIN], P[p, LENGTH], P[p, GPUS]
        if length > 0 and gpus > 0 and first < end and first + length > begin:
            over[count] = p
            count += 1
    low = np.empty(count, dtype=np.int64)
    high = np.empty(count, dtype=np.int64)
    gpus = np.empty(count, dtype=np.int64)
    for i in range(count):
        p = over[i]
        low[i] = np.searchsorted(times[:found], P[p, BEGIN], side="left")
        high[i] = np.searchsorted(times[:found], P[p, BEGIN] + P[p, LENGTH], side="left")
        gpus[i] = np.int64(P[p, GPUS])
    needed = _covering(low, high, gpus, 0, found)
    for i in range(found):
        if short[i] < needed[i]:
            needed[i] = short[i]
    lo, hi = 0, count  # covering(lo) suffices; find the largest such j
    while lo < hi:
        j = (lo + hi + 1) // 2
        have = _covering(low, high, gpus, j, found)
        enough = True
        for i in range(found):
            if have[i] < needed[i]:
                enough = False
                break
        if enough:
            lo = j
        else:
            hi = j - 1
    return over[lo] if lo < count else n


def _covering(low, high, gpus, j, found):
    """GPUs of the overlapping reservations from the j-th on, at each step short."""
    diff = np.zeros(found + 1, dtype=np.int64)
    for i in range(j, len(low)):
        diff[low[i]] += gpus[i]
        diff[high[i]] -= gpus[i]
    covered = np.empty(found, dtype=np.int64)
    total = 0
    for i in range(found):
        total += diff[i]
        covered[i] = total
    return covered


def forget_before(T, O, S, H, t):
    """Drop whole rows that end before t (Profile.forget_before)."""
    lo, hi = 0, H[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if t < T[O[mid], 0]:
            hi = mid
        else:
            lo = mid + 1
    drop = lo - 1
    if drop <= 0:
        return
    for k in range(drop):
        S[H[1]] = O[k]
        H[1] += 1
    for k in range(drop, H[0]):
        O[k - drop] = O[k]
    H[0] -= drop


def reserve_run(T, V, M, O, S, H, Q, FD, FN, FF, FC, FG, P, start, stop, target, now, idle, hoped_gpus, hoped_length,
                hoped_room):
    """Reserve queue positions start, start + 1, ... in order, each at the earliest interval of the profile
    from max(its hold, now) (the fold's `_append`, its begin in P[:, BEGIN]), until one begins by now and
    fits `idle` GPUs (TRY), the position `target` is reserved (TARGET), the job hoped to start (hoped_gpus
    >= 0) has no room from now for its length (LOST; its room is kept up to date, as the walk's), position
    stop - 1 is reserved (END), or the rows run short (GROW, before reserving). Returns (why, the next
    position, the hoped job's room, the earliest begin of a reservation that took GPUs, the earliest begin of
    any reservation made)."""
    lowest = math.inf
    first = math.inf
    p = start
    while p < stop:
        if H[1] < SPARE:
            return GROW, p, hoped_room, lowest, first
        gpus = np.int64(P[p, GPUS])
        length = P[p, LENGTH]
        hold = P[p, HOLD]
        begin = earliest(T, V, M, O, H, Q, FD, FN, FF, FC, FG, gpus, length, hold if hold > now else now)
        P[p, BEGIN] = begin
        if begin < first:
            first = begin
        add(T, V, M, O, S, H, begin, begin + length, -gpus)
        holds = length > 0 and gpus > 0
        if holds and begin < lowest:
            lowest = begin
        if holds and hoped_gpus >= 0 and hoped_room > begin:
            hoped_room = room(T, V, M, O, H, hoped_gpus, now)
        p += 1
        if begin <= now and gpus <= idle:
            return TRY, p, hoped_room, lowest, first
        if p - 1 == target:
            return TARGET, p, hoped_room, lowest, first
        if hoped_gpus >= 0 and not now + hoped_length <= hoped_room:
            return LOST, p, hoped_room, lowest, first
    return END, p, hoped_room, lowest, first


def first_ending_after(P, n, t):
    """The first of the n positions whose reservation ends after t (n when none)."""
    for p in range(n):
        if P[p, BEGIN] + P[p, LENGTH] > t:
            return p
    return n


def first_begun_before(P, n, t):
    """(the first of the n positions whose reservation begins before t (n when none), the earliest begin of
    the positions before it (inf when none))."""
    low = math.inf
    for p in range(n):
        if P[p, BEGIN] < t:
            return p, low
        if P[p, BEGIN] < low:
            low = P[p, BEGIN]
    return n, low


def beginning_by(P, n, t, out):
    """Fill out with the positions from 1 to n - 1 whose reservation begins by t, in order; how many."""
    found = 0
    for p in range(1, n):
        if P[p, BEGIN] <= t:
            out[found] = p
            found += 1
    return found


KERNELS = ("_block_of", "_step_of", "_gaps", "search", "_floor", "earliest", "_note_count", "room", "fewest",
           "shortages", "_split_at", "_delete", "_summarize", "_fix", "add", "_add_in_row", "add_many", "add_sweep",
           "first_displaced", "_covering", "forget_before", "reserve_run", "first_ending_after",
           "first_begun_before", "beginning_by")
"""The functions above, in the order written: compiled together by `_compile_kernels`."""


def _compile_kernels() -> None:
    """Bind each kernel's name to its numba dispatcher (`cache=True`: compiled once per machine;
    `inline="always"`: each is compiled into the kernels that call it). The kernels are written undecorated
    and compiled here because mutmut skips decorated functions: so mutation testing mutates them too, and
    under NUMBA_DISABLE_JIT=1 (as tools/mutation.py runs its mutants) they run as Python."""
    module = globals()
    for name in KERNELS:
        module[name] = njit(cache=True, inline="always")(module[name])


_compile_kernels()

class CompiledProfile:
    """`profile.Profile` on numpy arrays with compiled searches and changes (module docstring): the same
    free-GPU step function, searched with the same answers (the floors memo of Profile.earliest is not
    kept: the compiled walk from not_before finds the same earliest time)."""

    def __init__(self, now: float, idle: int, ends: Sequence[tuple[float, int]]) -> None:
        self.T = np.zeros((0, CAP))
        self.FD = np.zeros((FLOOR_COUNTS, FLOORS))
        self.FN = np.zeros((FLOOR_COUNTS, FLOORS))
        self.FF = np.zeros((FLOOR_COUNTS, FLOORS))
        self.FC = np.zeros(FLOOR_COUNTS, dtype=np.int64)
        self.FG = np.zeros(FLOOR_COUNTS + 1, dtype=np.int64)
        self.reset(now, idle, ends)

    def reset(self, now: float, idle: int, ends: Sequence[tuple[float, int]]) -> None:
        """The profile of `idle` GPUs free at now and the (end, GPUs) of `ends` coming free, laid out again
        (in the rows it has when they are enough); the floors of past searches are forgotten."""
        times, free = [now], [idle]
        for end, gpus in sorted(ends):
            if end <= times[-1]:
                free[-1] += gpus
            else:
                times.append(end)
                free.append(free[-1] + gpus)
        blocks = (len(times) + BLOCK - 1) // BLOCK
        rows = max(2 * blocks, 16)
        if len(self.T) < rows:
            self.T = np.zeros((rows, CAP))
            self.V = np.zeros((rows, CAP), dtype=np.int64)
            self.M = np.zeros((rows, 7), dtype=np.int64)
            self.Q = np.zeros(rows)
            self.O = np.zeros(rows, dtype=np.int64)
            self.S = np.zeros(rows, dtype=np.int64)
            self.H = np.zeros(2, dtype=np.int64)
        rows = len(self.T)
        for b in range(blocks):
            chunk_t, chunk_f = times[b * BLOCK:(b + 1) * BLOCK], free[b * BLOCK:(b + 1) * BLOCK]
            self.T[b, :len(chunk_t)] = chunk_t
            self.V[b, :len(chunk_f)] = chunk_f
            self.M[b] = (len(chunk_t), 0, min(chunk_f), max(chunk_f), STALE, 0, 0)
            self.O[b] = b
        spare = list(range(rows - 1, blocks - 1, -1))
        self.S[:len(spare)] = spare
        self.H[:] = (blocks, len(spare))
        self.FC[:] = 0
        self.forget_from = -math.inf  # read at the next forget_before

    def grow(self) -> None:
        """Twice the rows (the new ones unused)."""
        rows = len(self.O)
        self.T = np.concatenate([self.T, np.zeros_like(self.T)])
        self.V = np.concatenate([self.V, np.zeros_like(self.V)])
        self.M = np.concatenate([self.M, np.zeros_like(self.M)])
        self.Q = np.concatenate([self.Q, np.zeros_like(self.Q)])
        self.O = np.concatenate([self.O, np.zeros_like(self.O)])
        spare = int(self.H[1])
        self.S = np.concatenate([self.S[:spare], np.arange(2 * rows - 1, rows - 1, -1, dtype=np.int64),
                                 np.zeros(rows - spare, dtype=np.int64)])
        self.H[1] = spare + rows

    def _room_for_changes(self) -> None:
        while self.H[1] < SPARE:
            self.grow()

    def earliest(self, gpus: int, duration: float, not_before: float) -> float:
        return float(earliest(self.T, self.V, self.M, self.O, self.H, self.Q, self.FD, self.FN, self.FF, self.FC,
                              self.FG, gpus, duration, not_before))

    def add(self, begin: float, end: float, change: int) -> None:
        if begin == end or not change:
            return
        if change > 0:
            self.FC[:] = 0
        self._room_for_changes()
        add(self.T, self.V, self.M, self.O, self.S, self.H, begin, end, change)

    def reserve(self, start: float, duration: float, gpus: int) -> None:
        self.add(start, start + duration, -gpus)

    def add_all(self, begins: np.ndarray, ends: np.ndarray, changes: np.ndarray) -> None:
        """`add` each (begins[k], ends[k], changes[k]): one by one, or in one sweep over the steps when there
        are more than 1/SWEEP_FROM changes per step (as Profile.add_all)."""
        done, count = 0, len(begins)
        if count and changes.max() > 0:
            self.FC[:] = 0
        steps = self.size()
        if count * SWEEP_FROM >= steps:
            while len(self.O) < (steps + 2 * count) // BLOCK + 1 + SPARE:
                self.grow()
            add_sweep(self.T, self.V, self.M, self.O, self.S, self.H, begins, ends, changes)
            return
        while done < count:
            self._room_for_changes()
            done += add_many(self.T, self.V, self.M, self.O, self.S, self.H, begins[done:], ends[done:],
                             changes[done:], count - done)

    def size(self) -> int:
        """The number of steps."""
        return int(self.M[self.O[:self.H[0]], COUNT].sum())

    def first_displaced(self, positions: np.ndarray, n: int, begin: float, end: float) -> int:
        """ConservativeFold._first_displaced over the first n positions, compiled."""
        steps = self.size()
        times, short = np.empty(steps), np.empty(steps, dtype=np.int64)
        found = shortages(self.T, self.V, self.M, self.O, self.H, begin, end, times, short)
        if not found:
            return n
        return int(first_displaced(positions, n, begin, end, times, short, found))

    def room(self, gpus: int, t: float) -> float:
        return float(room(self.T, self.V, self.M, self.O, self.H, gpus, t))

    def fewest(self, begin: float, end: float) -> int:
        return int(fewest(self.T, self.V, self.M, self.O, self.H, begin, end))

    def shortages(self, begin: float, end: float) -> list[tuple[float, int]]:
        steps = self.size()
        times, short = np.empty(steps), np.empty(steps, dtype=np.int64)
        found = shortages(self.T, self.V, self.M, self.O, self.H, begin, end, times, short)
        return list(zip(times[:found].tolist(), short[:found].tolist()))

    def forget_before(self, t: float) -> None:
        """Drop the whole rows that end before t. Nothing is dropped before the second row's first step, as
        last read (`forget_from`): a change that splits the first row only makes that a late bound, which
        delays dropping rows no search reads, so a decision skips the compiled call until then. A profile of one
        row has no such bound (its next row may begin anywhere), so the next call looks again."""
        if t < self.forget_from:
            return
        forget_before(self.T, self.O, self.S, self.H, t)
        self.forget_from = float(self.T[self.O[1], 0]) if self.H[0] > 1 else -math.inf

    def steps(self) -> list[tuple[float, int]]:
        """Every step (start, free GPUs) in time order."""
        found = []
        for row in self.O[:self.H[0]]:
            count, offset = self.M[row, COUNT], self.M[row, OFFSET]
            found.extend(zip(self.T[row, :count].tolist(), (self.V[row, :count] + offset).tolist()))
        return found


def warm() -> None:
    """Call every kernel once on a small profile with the argument types the fold passes, so numba loads
    (or, on a new machine, compiles and caches) them now rather than in the first fold's decisions."""
    profile = CompiledProfile(0.0, 4, [(2.0, 4)])
    profile.add(1.0, 3.0, -2)
    profile.add_all(np.array([1.0]), np.array([3.0]), np.array([2], dtype=np.int64))
    profile.room(2, 0.0)
    profile.fewest(0.0, 3.0)
    profile.shortages(0.0, 3.0)
    positions = np.array([[2.0, 1.0, 0.0, 0.0], [8.0, 1.0, 0.0, 0.0]])
    profile.earliest(2, 1.0, 0.0)
    reserve_run(profile.T, profile.V, profile.M, profile.O, profile.S, profile.H, profile.Q, profile.FD, profile.FN,
                profile.FF, profile.FC, profile.FG, positions, 0, 2, -1, 0.0, 1, 2, 1.0, profile.room(2, 0.0))
    profile.add_all(np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([-1, 1], dtype=np.int64))
    profile.first_displaced(positions, 2, 0.0, 5.0)
    first_displaced(positions, 2, 0.0, 5.0, np.array([1.0]), np.array([1], dtype=np.int64), 1)
    first_ending_after(positions, 2, 0.0)
    first_begun_before(positions, 2, 0.0)
    beginning_by(positions, 2, 0.0, np.zeros(2, dtype=np.int64))
    profile.forget_before(2.0)
    CompiledProfile(0.0, 4, [(float(t), 1) for t in range(1, 40)]).add_all(  # one by one (add_many)
        np.array([1.5]), np.array([2.5]), np.array([1], dtype=np.int64))
