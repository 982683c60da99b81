"""The event loop of sim/preemptive.py with the admission walk of schedulers/preemptive.py, compiled (numba)
for srtf, srtf_oracle, psjf, psjf_oracle and las2d, so a decision costs microseconds instead of tens.

Everything the Python loop does per decision is here on arrays: the event heap (completions, ends of restarts
and min-run windows, the scheduler's timer), arrivals in (release, input order), the walk over running and
waiting jobs in (priority, rank), suspensions, starts with the lowest free GPU id per vertex, the run segments
and las2d's threshold crossings. The one thing it cannot do is call the placer: placements are remembered by
(plan, free GPUs per server) as the engine's memo does (a Zobrist hash of the free counts, kept up to date as GPUs
come and go, in an open-addressing table; a hit is checked against the stored counts). On a state it has not met
the kernel returns MISS with the job waiting; its caller (preemptive_compiled.py) asks the placer, puts the answer
in `answer` and calls the kernel again, which goes on where it stopped. It also returns GROW when its output may
not fit and REPORT for the progress bar. Every float is the same IEEE operation, in the same order, as in the
Python loop (no fastmath), so schedules are byte-identical (tests/test_preemptive_compiled.py runs both).

Layout: per job, `jobf` columns (release, iterations, known iterations, alpha~min) and `jobi` columns (GPUs, plan,
size class, first slot in `job_gpu`) are read only; `jf` and `ji` columns (below) are its state. Waiting jobs sit in
one binary heap by (priority, rank) per GPU count (size class c holds `wbase[c]`..`wbase[c] + wcnt[c]` of
`wprio` and of `wx`'s rank and job columns): a walk takes the jobs it admits off the tops and puts back those that
cannot be placed, so a queue of thousands costs a few steps per change. Running jobs are the first `NRUN` entries
of `running` (`row_of` their places, `rows` their numbers). `S` and `T` hold the integer and float scalars (slots
below), so a call resumes from them alone.
"""

from __future__ import annotations

import numpy as np
from numba import njit

DONE, MISS, GROW, REPORT = 0, 1, 2, 3
"""Why the kernel returned: the run is over, a placement is needed, the output arrays are short, a progress step."""
REMAINING, FIXED, LAS = 0, 1, 2
"""Priority rules: remaining known iterations x alpha~min (srtf), total known iterations x alpha~min (psjf), the
las2d queue of attained GPU-seconds."""
COMPLETION, RESTART_END, MIN_RUN_END, TIMER = 0, 2, 3, 4
"""Event kinds, as sim/preemptive.Event numbers them (arrivals, 1, are read beside the heap)."""

F_DONE, F_RAN, F_SEGMENT_START, F_RUN_START, F_PROTECTED, F_ALPHA, F_FIRST_START, F_RESTARTED, F_PRIORITY, F_END = \
    range(10)
JOB_FLOATS = 10
I_RUNNING, I_EPOCH, I_PREEMPTIONS, I_ENTRY, I_RANK, I_SEGMENTS, I_LAST_SEGMENT = range(7)
JOB_INTS = 7
"""`ji` columns; I_SEGMENTS counts a job's starts and suspensions (las2d's crossing tokens), 0 once it ends."""

PHASE, NEXT_ARRIVAL, SEQUENCE, NRUN, HASH, NENTRY, NSEG, SEG_GPUS, COMPLETED, REPORTED, PENDING, ADMIT_AT, \
    ADMIT_LEN, ARRIVED, HEAP_LEN, CROSS_LEN, ENTRY_SERVERS, SETTLED, PLACED = range(19)
INT_SLOTS = 19
NOW, TIMER_AT, LAS_TIMER = 0, 1, 2
FLOAT_SLOTS = 3
INSTANT, ADMIT = 0, 1
"""PHASE: at the start of an instant, or placing the walk's admitted jobs from `S[ADMIT_AT]` on."""

R_DONE, R_RAN, R_RUN_START, R_ALPHA, R_ITERATIONS, R_PROTECTED, R_KNOWN, R_ALPHA_MIN, R_GPUS, R_RANK, R_BOUND, \
    R_VALID = range(12)
ROW_FIELDS = 12
"""`rows` rows, one column per running job: its numbers, written when it starts (none changes while it runs), and
its priority bound: R_BOUND is at least its priority at every instant before R_VALID (srtf's remaining time only
shrinks while it runs, psjf's priority is fixed, las2d's queue holds until the job nears its next threshold). A
walk keeps a job whose bound ranks it before the best waiting job without computing its priority; each field's
values lie side by side, so that test reads a few cache lines."""

EVENTS_PER_RUNNING, COMPACT_SLACK = 3, 64
"""As in sim/preemptive.py: the event heap is compacted past twice the live events plus the slack (so it never
holds more than 9 events per GPU plus the slack; las2d's crossings, compacted alike, at most 4 per GPU)."""
INSERTION_SORT = 48
"""A walk sorts at most this many running jobs by insertion, more by numpy's merge sort."""


def _heap_less(t, x, a, b):
    """Whether entry a sorts before entry b in a heap keyed by (t, x[:, 0], x[:, 1]): the event heap's (time, kind,
    sequence), the crossings' (time, job, segment)."""
    if t[a] != t[b]:
        return t[a] < t[b]
    if x[a, 0] != x[b, 0]:
        return x[a, 0] < x[b, 0]
    return x[a, 1] < x[b, 1]


def _heap_swap(t, x, a, b):
    t[a], t[b] = t[b], t[a]
    for c in range(x.shape[1]):
        x[a, c], x[b, c] = x[b, c], x[a, c]


def _heap_down(t, x, size, k):
    while True:
        child = 2 * k + 1
        if child >= size:
            return
        if child + 1 < size and _heap_less(t, x, child + 1, child):
            child += 1
        if not _heap_less(t, x, child, k):
            return
        _heap_swap(t, x, k, child)
        k = child


def _heap_slot(t, S, length):
    """The place of a new entry, at the end of the heap whose size is S[length] (now one more)."""
    k = S[length]
    if k == len(t):
        raise RuntimeError("compiled preemptive loop: a heap is full")
    S[length] = k + 1
    return k


def _heap_up(t, x, k):
    """Sift the entry at k up to its place."""
    while k > 0:
        parent = (k - 1) // 2
        if not _heap_less(t, x, k, parent):
            return
        _heap_swap(t, x, k, parent)
        k = parent


def _heap_pop(t, x, S, length):
    """Drop the heap's first entry (read it from slot 0 before)."""
    last = S[length] - 1
    S[length] = last
    if last > 0:
        _heap_swap(t, x, 0, last)
        _heap_down(t, x, last, 0)


def _heapify(t, x, size):
    for k in range(size // 2 - 1, -1, -1):
        _heap_down(t, x, size, k)


def _push_event(ht, hx, S, time, kind, i, epoch):
    """Push (time, kind, sequence, job, epoch); the sequence breaks ties in push order, as heapq's tuples do."""
    k = _heap_slot(ht, S, HEAP_LEN)
    ht[k] = time
    hx[k, 0], hx[k, 1], hx[k, 2], hx[k, 3] = kind, S[SEQUENCE], i, epoch
    S[SEQUENCE] += 1
    _heap_up(ht, hx, k)


def _compact_events(ht, hx, S, ji, T):
    """Keep the live events only (a running job's current epoch, the current timer) and heapify: the order
    events come due in is their keys', unchanged."""
    kept = 0
    for k in range(S[HEAP_LEN]):
        i = hx[k, 2]
        if (hx[k, 3] == ji[i, I_EPOCH]) if i >= 0 else (ht[k] == T[TIMER_AT]):
            ht[kept] = ht[k]
            hx[kept, :] = hx[k, :]
            kept += 1
    S[HEAP_LEN] = kept
    _heapify(ht, hx, kept)


def _push_crossing_entry(ct, cx, S, time, order, segment):
    k = _heap_slot(ct, S, CROSS_LEN)
    ct[k] = time
    cx[k, 0], cx[k, 1] = order, segment
    _heap_up(ct, cx, k)


def _crossing_live(cx, k, ji):
    order = cx[k, 0]
    return ji[order, I_SEGMENTS] == cx[k, 1] and ji[order, I_RUNNING] == 1


def _compact_crossings(ct, cx, S, ji):
    """Keep the crossings of running jobs' current segments (the others are skipped when they come due)."""
    kept = 0
    for k in range(S[CROSS_LEN]):
        if _crossing_live(cx, k, ji):
            ct[kept] = ct[k]
            cx[kept, :] = cx[k, :]
            kept += 1
    S[CROSS_LEN] = kept
    _heapify(ct, cx, kept)


def _queue(thresholds, attained, tolerance):
    """las2d's queue: bisect_right(thresholds, attained + tolerance)."""
    value = attained + tolerance
    lo, hi = 0, len(thresholds)
    while lo < hi:
        mid = (lo + hi) // 2
        if value < thresholds[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _priority_of(kind, known, alpha_min, gpus, progress, run_seconds, thresholds, tolerance):
    """The scheduler's `priority(job, progress, run_seconds)` of a job with these known iterations, alpha~min and
    GPUs: the same floats."""
    if kind == REMAINING:
        remaining = known - progress
        return remaining * alpha_min if remaining > 0 else 0.0
    if kind == FIXED:
        return known * alpha_min
    return float(_queue(thresholds, gpus * (run_seconds - 0.0), tolerance))


def _priority(kind, jobf, jobi, i, progress, run_seconds, thresholds, tolerance):
    return _priority_of(kind, jobf[i, 2], jobf[i, 3], jobi[i, 0], progress, run_seconds, thresholds, tolerance)


def _row_priority(kind, rows, row, now, thresholds, tolerance):
    """The priority now of the running job in row `row` (_progress and _run_seconds from its row)."""
    run_start = rows[R_RUN_START, row]
    progress = rows[R_DONE, row]
    if now > run_start:
        progress = min(rows[R_ITERATIONS, row], progress + (now - run_start) / rows[R_ALPHA, row])
    return _priority_of(kind, rows[R_KNOWN, row], rows[R_ALPHA_MIN, row], int(rows[R_GPUS, row]), progress,
                        rows[R_RAN, row] + max(0.0, now - run_start), thresholds, tolerance)


def _progress(jf, ji, jobf, i, now):
    """Iterations done by now (the simulator's `progress`)."""
    done = jf[i, F_DONE]
    if ji[i, I_RUNNING] == 1 and now > jf[i, F_RUN_START]:
        done = min(jobf[i, 1], done + (now - jf[i, F_RUN_START]) / jf[i, F_ALPHA])
    return done


def _run_seconds(jf, ji, i, now):
    current = now - jf[i, F_RUN_START] if ji[i, I_RUNNING] == 1 else 0.0
    return jf[i, F_RAN] + max(0.0, current)


def _bound(kind, rows, row, now, thresholds, tolerance, margin):
    """The running job's priority now, kept as its bound: until las2d's job comes within `margin` seconds of
    the instant its attained service (with the tolerance) reaches its next threshold; for good otherwise."""
    p = _row_priority(kind, rows, row, now, thresholds, tolerance)
    rows[R_BOUND, row] = p
    valid = np.inf
    queue = int(p)
    if kind == LAS and queue < len(thresholds):
        gpus = rows[R_GPUS, row]
        valid = rows[R_RUN_START, row] + (thresholds[queue] - tolerance) / gpus - rows[R_RAN, row] - margin
    rows[R_VALID, row] = valid
    return p


def _before(p, r, q, s):
    """(p, r) < (q, s)."""
    return p < q or (p == q and r < s)


def _enqueue(jf, ji, jobi, wprio, wx, wbase, wcnt, i, priority):
    """Queue waiting job i with this priority: into its size class's heap, keyed by (priority, rank, job) as the
    event heap is (ranks are unique, so by (priority, rank))."""
    c = jobi[i, 2]
    base = wbase[c]
    k = _heap_slot(wprio[base:], wcnt, c)
    wprio[base + k], wx[base + k, 0], wx[base + k, 1] = priority, ji[i, I_RANK], i
    jf[i, F_PRIORITY] = priority
    _heap_up(wprio[base:], wx[base:], k)


def _free_gpu(S, free, mask, zob, gpu, gps):
    h = gpu // gps
    S[HASH] ^= zob[h, free[h]]
    free[h] += 1
    S[HASH] ^= zob[h, free[h]]
    mask[h] |= np.uint64(1) << np.uint64(gpu - h * gps)


def _take_gpu(S, free, mask, zob, h, gps):
    """The lowest free GPU id on server h, taken."""
    bits = mask[h]
    b = 0
    while (bits >> np.uint64(b)) & np.uint64(1) == 0:
        b += 1
    mask[h] = bits & ~(np.uint64(1) << np.uint64(b))
    S[HASH] ^= zob[h, free[h]]
    free[h] -= 1
    S[HASH] ^= zob[h, free[h]]
    return h * gps + b


def _end_segment(i, now, jf, ji, jobi, job_gpu, S, free, mask, zob, gps, running, rows, row_of, seg_job, seg_num,
                 seg_entry, seg_goff, seg_gpus):
    """Record the job's segment up to now, bank its progress seconds and give its GPUs back."""
    start, run_start = jf[i, F_SEGMENT_START], jf[i, F_RUN_START]
    restarted = min(run_start, now) - start
    s = S[NSEG]
    seg_job[s] = i
    seg_num[s, 0], seg_num[s, 1], seg_num[s, 2], seg_num[s, 3] = start, now, restarted, jf[i, F_ALPHA]
    seg_entry[s] = ji[i, I_ENTRY]
    g, first = jobi[i, 0], jobi[i, 3]
    at = S[SEG_GPUS]
    seg_goff[s] = at
    for v in range(g):
        seg_gpus[at + v] = job_gpu[first + v]
    S[SEG_GPUS] = at + g
    S[NSEG] = s + 1
    ji[i, I_LAST_SEGMENT] = s
    jf[i, F_RESTARTED] += restarted
    jf[i, F_RAN] += max(0.0, now - run_start)
    ji[i, I_RUNNING] = 0
    row, last = row_of[i], S[NRUN] - 1
    moved = running[last]
    running[row] = moved
    rows[:, row] = rows[:, last]
    row_of[moved] = row
    S[NRUN] = last
    ji[i, I_EPOCH] += 1
    for v in range(g):
        _free_gpu(S, free, mask, zob, job_gpu[first + v], gps)


def _push_crossing(ct, cx, S, jobi, i, runs_from, attained, segment, thresholds, tolerance):
    queue = _queue(thresholds, attained, tolerance)
    if queue < len(thresholds):
        _push_crossing_entry(ct, cx, S, runs_from + (thresholds[queue] - attained) / jobi[i, 0], i, segment)


def _slot(mkeys, mvals, key):
    """The slot of `key` in the memo's open-addressing table (linear probing), or of the empty slot it would take."""
    mask = len(mkeys) - 1
    at = key & mask
    while mvals[at] >= 0 and mkeys[at] != key:
        at = (at + 1) & mask
    return at


def rehash(mkeys, mvals, e_key, count):
    """Fill an empty table (mvals all -1) with the first `count` entries' keys, in entry order (a key met twice
    keeps its later entry, as `_remember` does)."""
    for entry in range(count):
        at = _slot(mkeys, mvals, e_key[entry])
        mkeys[at], mvals[at] = e_key[entry], entry


def _lookup(mkeys, mvals, S, plan, pz, free, e_plan, e_free):
    """The memo's entry for (plan, free GPUs per server), or -1 (a hash met before for another state too)."""
    entry = mvals[_slot(mkeys, mvals, S[HASH] ^ pz[plan])]
    if entry < 0 or e_plan[entry] != plan:
        return -1
    for h in range(len(free)):
        if e_free[entry, h] != free[h]:
            return -1
    return entry


def _remember(mkeys, mvals, S, plan, pz, free, e_key, e_plan, e_free, e_fits, e_alpha, e_off, e_servers, answer,
              answer_servers, g):
    """Store the placer's answer for (plan, free) as a new entry (its caller keeps the table at most half full)."""
    entry = S[NENTRY]
    key = S[HASH] ^ pz[plan]
    e_key[entry] = key
    e_plan[entry] = plan
    e_free[entry, :] = free
    e_fits[entry] = 1 if answer[0] > 0 else 0
    e_alpha[entry] = answer[1]
    at = S[ENTRY_SERVERS]
    e_off[entry] = at
    if e_fits[entry] == 1:
        e_servers[at:at + g] = answer_servers[:g]
        S[ENTRY_SERVERS] = at + g
    slot = _slot(mkeys, mvals, key)
    mkeys[slot], mvals[slot] = key, entry
    S[NENTRY] = entry + 1
    return entry


def run(jobf, jobi, arrival, thresholds, pf, pi, jf, ji, job_gpu, free, mask, zob, pz, running, rows, row_of,
        wprio, wx, wbase, wcnt, cgpus, ht, hx, ct, cx, mkeys, mvals, e_key, e_plan, e_free, e_fits, e_alpha,
        e_off, e_servers, answer, answer_servers, seg_job, seg_num, seg_entry, seg_goff, seg_gpus, admitted, scratch_f,
        scratch_i, S, T):
    """Run (or go on with) the simulation until it is over (DONE) or needs its caller (MISS, GROW, REPORT)."""
    restart_s, min_run_s, tolerance, margin = pf[0], pf[1], pf[2], pf[3]
    kind, total, gps, report_every = pi[0], pi[1], pi[2], pi[3]
    n = jobf.shape[0]
    classes = len(cgpus)
    while True:
        if S[PHASE] == INSTANT:
            if S[HEAP_LEN] == 0 and S[NEXT_ARRIVAL] >= n:
                return DONE
            if S[NSEG] + S[NRUN] + 1 > len(seg_job) or S[SEG_GPUS] + total > len(seg_gpus):
                return GROW
            if report_every > 0 and S[COMPLETED] - S[REPORTED] >= report_every:
                return REPORT
            now = jobf[arrival[S[NEXT_ARRIVAL]], 0] if S[NEXT_ARRIVAL] < n else np.inf
            if S[HEAP_LEN] > 0 and ht[0] <= now:
                now = ht[0]
            T[NOW] = now
            decide = False
            while S[HEAP_LEN] > 0 and ht[0] == now and hx[0, 0] == COMPLETION:
                i, stamp = hx[0, 2], hx[0, 3]
                _heap_pop(ht, hx, S, HEAP_LEN)
                if stamp != ji[i, I_EPOCH]:
                    continue
                _end_segment(i, now, jf, ji, jobi, job_gpu, S, free, mask, zob, gps, running, rows, row_of, seg_job,
                             seg_num, seg_entry, seg_goff, seg_gpus)
                jf[i, F_DONE] = jobf[i, 1]
                jf[i, F_END] = now
                ji[i, I_SEGMENTS] = 0
                S[COMPLETED] += 1
                S[SETTLED] = 0
                decide = True
            while S[NEXT_ARRIVAL] < n and jobf[arrival[S[NEXT_ARRIVAL]], 0] == now:
                i = arrival[S[NEXT_ARRIVAL]]
                S[NEXT_ARRIVAL] += 1
                S[ARRIVED] += 1
                ji[i, I_RANK] = S[ARRIVED]
                _enqueue(jf, ji, jobi, wprio, wx, wbase, wcnt, i,
                         _priority(kind, jobf, jobi, i, 0.0, 0.0, thresholds, tolerance))
                S[SETTLED] = 0
                decide = True
            ended = 0
            while S[HEAP_LEN] > 0 and ht[0] == now:
                event_kind, i, stamp = hx[0, 0], hx[0, 2], hx[0, 3]
                _heap_pop(ht, hx, S, HEAP_LEN)
                if event_kind == TIMER:
                    if now != T[TIMER_AT]:
                        continue
                    T[TIMER_AT] = np.nan
                elif stamp != ji[i, I_EPOCH]:
                    continue
                elif now >= jf[i, F_PROTECTED]:  # a restart or min-run window that ends protection
                    scratch_i[4, ended] = i
                    ended += 1
                decide = True
            if not decide:
                continue
            if kind == LAS and T[LAS_TIMER] <= now:
                S[SETTLED] = 0  # a demotion is due: priorities changed
            S[PHASE], S[ADMIT_AT], S[ADMIT_LEN], S[PLACED] = ADMIT, 0, 0, 1
            if S[SETTLED] == 0 or _may_gain(kind, now, ended, rows, row_of, thresholds, tolerance, wprio, wx, wbase,
                                            wcnt, classes, scratch_i):
                _walk(kind, now, total, jobf, jobi, thresholds, tolerance, margin, jf, ji, job_gpu, free, mask, zob,
                      gps, running, rows, row_of, wprio, wx, wbase, wcnt, cgpus, classes, seg_job, seg_num,
                      seg_entry, seg_goff, seg_gpus, admitted, scratch_f, scratch_i, S)
        now = T[NOW]
        while S[ADMIT_AT] < S[ADMIT_LEN]:
            i = admitted[S[ADMIT_AT]]
            plan = jobi[i, 1]
            if S[PENDING] == i:
                entry = _remember(mkeys, mvals, S, plan, pz, free, e_key, e_plan, e_free, e_fits, e_alpha, e_off,
                                  e_servers, answer, answer_servers, jobi[i, 0])
                S[PENDING] = -1
            else:
                entry = _lookup(mkeys, mvals, S, plan, pz, free, e_plan, e_free)
                if entry < 0:
                    S[PENDING] = i
                    return MISS
            S[ADMIT_AT] += 1
            if e_fits[entry] == 0:
                S[PLACED] = 0
                _enqueue(jf, ji, jobi, wprio, wx, wbase, wcnt, i, jf[i, F_PRIORITY])
                continue
            _start(i, entry, now, restart_s, min_run_s, jobf, jobi, thresholds, tolerance, margin, kind, jf, ji,
                   job_gpu, free, mask, zob, gps, running, rows, row_of, ht, hx, ct, cx, e_alpha, e_off, e_servers, S)
        S[PHASE] = INSTANT
        S[SETTLED] = S[PLACED]
        if kind == LAS:
            _book_crossings(now, jobi, thresholds, tolerance, jf, ji, ct, cx, S, T, ht, hx, scratch_f, scratch_i)
        if S[HEAP_LEN] > 2 * EVENTS_PER_RUNNING * S[NRUN] + COMPACT_SLACK:
            _compact_events(ht, hx, S, ji, T)


def _start(i, entry, now, restart_s, min_run_s, jobf, jobi, thresholds, tolerance, margin, kind, jf, ji, job_gpu, free,
           mask, zob, gps, running, rows, row_of, ht, hx, ct, cx, e_alpha, e_off, e_servers, S):
    """Start or resume waiting job i on the memo entry's placement now (the simulator's `resume` and the
    scheduler's bookkeeping of a start)."""
    g, first, at = jobi[i, 0], jobi[i, 3], e_off[entry]
    for v in range(g):
        job_gpu[first + v] = _take_gpu(S, free, mask, zob, e_servers[at + v], gps)
    alpha = e_alpha[entry]
    ji[i, I_ENTRY] = entry
    jf[i, F_ALPHA] = alpha
    fresh = np.isnan(jf[i, F_FIRST_START])
    if fresh:
        jf[i, F_FIRST_START] = now
    restart = 0.0 if fresh else restart_s
    ji[i, I_RUNNING] = 1
    jf[i, F_SEGMENT_START] = now
    run_start = now + restart
    jf[i, F_RUN_START] = run_start
    jf[i, F_PROTECTED] = run_start + min_run_s
    row = S[NRUN]
    running[row] = i
    row_of[i] = row
    rows[R_DONE, row], rows[R_RAN, row], rows[R_RUN_START, row] = jf[i, F_DONE], jf[i, F_RAN], run_start
    rows[R_ALPHA, row], rows[R_ITERATIONS, row], rows[R_PROTECTED, row] = alpha, jobf[i, 1], jf[i, F_PROTECTED]
    rows[R_KNOWN, row], rows[R_ALPHA_MIN, row], rows[R_GPUS, row] = jobf[i, 2], jobf[i, 3], jobi[i, 0]
    rows[R_RANK, row] = ji[i, I_RANK]
    _bound(kind, rows, row, now, thresholds, tolerance, margin)
    S[NRUN] = row + 1
    epoch = ji[i, I_EPOCH]
    _push_event(ht, hx, S, run_start + (jobf[i, 1] - jf[i, F_DONE]) * alpha, COMPLETION, i, epoch)
    if restart > 0:
        _push_event(ht, hx, S, run_start, RESTART_END, i, epoch)
    if min_run_s > 0:
        _push_event(ht, hx, S, run_start + min_run_s, MIN_RUN_END, i, epoch)
    if kind == LAS:
        resumed = ji[i, I_SEGMENTS] > 0
        ji[i, I_SEGMENTS] += 1
        runs_from = now + (restart_s if resumed else 0.0)
        _push_crossing(ct, cx, S, jobi, i, runs_from, jobi[i, 0] * (_run_seconds(jf, ji, i, now) - 0.0),
                       ji[i, I_SEGMENTS], thresholds, tolerance)


def _may_gain(kind, now, ended, rows, row_of, thresholds, tolerance, wprio, wx, wbase, wcnt, classes, scratch_i):
    """After a settled walk (AdmissionScheduler._may_gain): whether one of the `ended` jobs whose protected window
    ended now (`scratch_i[4]`) ranks after the best waiting job; only then can the walk change anything."""
    best = -1
    for c in range(classes):
        if wcnt[c] > 0 and (best < 0 or _before(wprio[wbase[c]], wx[wbase[c], 0], wprio[best], wx[best, 0])):
            best = wbase[c]
    if ended == 0 or best < 0:
        return False
    worst_p, worst_r = 0.0, -1
    for k in range(ended):
        row = row_of[scratch_i[4, k]]
        p, r = _row_priority(kind, rows, row, now, thresholds, tolerance), int(rows[R_RANK, row])
        if worst_r < 0 or _before(worst_p, worst_r, p, r):
            worst_p, worst_r = p, r
    return _before(wprio[best], wx[best, 0], worst_p, worst_r)


def _ranked(priority, scratch_i, m):
    """The places 0..m-1 sorted by (priority[k], scratch_i[0, k]), as np.lexsort((rank, priority)) sorts them: by
    insertion (a walk sorts a few dozen jobs), or by two stable sorts when there are many."""
    if m > INSERTION_SORT:
        by_rank = np.argsort(scratch_i[0, :m], kind="mergesort")
        return by_rank[np.argsort(priority[:m][by_rank], kind="mergesort")]
    ranked = np.empty(m, dtype=np.int64)
    for k in range(m):
        p, r = priority[k], scratch_i[0, k]
        at = k
        while at > 0 and _before(p, r, priority[ranked[at - 1]], scratch_i[0, ranked[at - 1]]):
            ranked[at] = ranked[at - 1]
            at -= 1
        ranked[at] = k
    return ranked


def _walk(kind, now, total, jobf, jobi, thresholds, tolerance, margin, jf, ji, job_gpu, free, mask, zob, gps, running,
          rows, row_of, wprio, wx, wbase, wcnt, cgpus, classes, seg_job, seg_num, seg_entry, seg_goff,
          seg_gpus, admitted, scratch_f, scratch_i, S):
    """The admission walk (AdmissionScheduler._walk, preempt_rule "always"): suspend the running jobs it drops, in
    walk order, and list the waiting jobs it admits in `admitted[:S[ADMIT_LEN]]`."""
    S[ADMIT_LEN] = 0
    nrun = S[NRUN]
    budget = total
    for row in range(nrun):
        if rows[R_PROTECTED, row] > now:
            budget -= int(rows[R_GPUS, row])
    best_c = -1
    for c in range(classes):
        if wcnt[c] > 0 and cgpus[c] <= budget:
            at = wbase[c]
            if best_c < 0 or _before(wprio[at], wx[at, 0], wprio[wbase[best_c]], wx[wbase[best_c], 0]):
                best_c = c
    if best_c < 0:
        return
    first_p, first_r = wprio[wbase[best_c]], wx[wbase[best_c], 0]
    # running jobs that rank before the best waiting job are kept (all running jobs fit together); the others
    # are walked in (priority, rank) with the waiting jobs
    m = 0
    for row in range(nrun):
        if rows[R_PROTECTED, row] > now:
            continue
        r = int(rows[R_RANK, row])
        if now < rows[R_VALID, row] and _before(rows[R_BOUND, row], r, first_p, first_r):
            budget -= int(rows[R_GPUS, row])
            continue
        p = _bound(kind, rows, row, now, thresholds, tolerance, margin)
        if _before(p, r, first_p, first_r):
            budget -= int(rows[R_GPUS, row])
        else:
            scratch_f[m] = p
            scratch_i[0, m] = r
            scratch_i[1, m] = running[row]
            m += 1
    ranked = _ranked(scratch_f, scratch_i, m)
    dropped = scratch_i[3]
    nd = 0
    r = 0
    best_at = 0
    while budget > 0:
        best_c = -1
        for c in range(classes):
            if wcnt[c] > 0 and cgpus[c] <= budget:
                at = wbase[c]
                if best_c < 0 or _before(wprio[at], wx[at, 0], wprio[best_at], wx[best_at, 0]):
                    best_c, best_at = c, at
        if r < m:
            k = ranked[r]
            if best_c < 0 or _before(scratch_f[k], scratch_i[0, k], wprio[best_at], wx[best_at, 0]):
                i = scratch_i[1, k]
                if jobi[i, 0] <= budget:
                    budget -= jobi[i, 0]
                else:
                    dropped[nd] = i
                    nd += 1
                r += 1
                continue
        if best_c < 0:
            break
        admitted[S[ADMIT_LEN]] = wx[best_at, 1]  # out of its heap; one that cannot be placed goes back
        S[ADMIT_LEN] += 1
        budget -= cgpus[best_c]
        _heap_pop(wprio[wbase[best_c]:], wx[wbase[best_c]:], wcnt, best_c)
    while r < m:
        dropped[nd] = scratch_i[1, ranked[r]]
        nd += 1
        r += 1
    for k in range(nd):
        i = dropped[k]
        jf[i, F_DONE] = _progress(jf, ji, jobf, i, now)
        ji[i, I_PREEMPTIONS] += 1
        _end_segment(i, now, jf, ji, jobi, job_gpu, S, free, mask, zob, gps, running, rows, row_of, seg_job, seg_num,
                     seg_entry, seg_goff, seg_gpus)
        _enqueue(jf, ji, jobi, wprio, wx, wbase, wcnt, i,
                 _priority(kind, jobf, jobi, i, jf[i, F_DONE], jf[i, F_RAN], thresholds, tolerance))
        if kind == LAS:
            ji[i, I_SEGMENTS] += 1


def _book_crossings(now, jobi, thresholds, tolerance, jf, ji, ct, cx, S, T, ht, hx, scratch_f, scratch_i):
    """las2d after its walk: book the next crossing of each running job that crossed a threshold by now, then ask
    for a timer at the earliest booked crossing (LAS2D._book_crossings and _next_instant)."""
    due = 0
    while S[CROSS_LEN] > 0 and ct[0] <= now:
        order, segment = cx[0, 0], cx[0, 1]
        _heap_pop(ct, cx, S, CROSS_LEN)
        if ji[order, I_SEGMENTS] == segment and ji[order, I_RUNNING] == 1:
            scratch_i[0, due] = order  # booked after the loop: one booked at now would come due again in it
            scratch_f[due] = _run_seconds(jf, ji, order, now)
            due += 1
    for k in range(due):
        order = scratch_i[0, k]
        _push_crossing(ct, cx, S, jobi, order, now, jobi[order, 0] * (scratch_f[k] - 0.0), ji[order, I_SEGMENTS],
                       thresholds, tolerance)
    while S[CROSS_LEN] > 0 and not _crossing_live(cx, 0, ji):
        _heap_pop(ct, cx, S, CROSS_LEN)
    if S[CROSS_LEN] > 2 * S[NRUN] + COMPACT_SLACK:
        _compact_crossings(ct, cx, S, ji)
    T[LAS_TIMER] = ct[0] if S[CROSS_LEN] > 0 else np.nan
    if S[CROSS_LEN] > 0:
        timer = ct[0]
        if timer != T[TIMER_AT]:
            T[TIMER_AT] = timer
            _push_event(ht, hx, S, timer, TIMER, -1, 0)


KERNELS = ("_heap_less", "_heap_swap", "_heap_down", "_heap_slot", "_heap_up", "_heap_pop", "_heapify",
           "_push_event", "_compact_events", "_push_crossing_entry", "_crossing_live", "_compact_crossings",
           "_queue", "_priority_of", "_priority", "_row_priority", "_progress", "_run_seconds", "_bound", "_before",
           "_enqueue", "_free_gpu", "_take_gpu", "_end_segment", "_push_crossing", "_slot", "rehash", "_lookup",
           "_remember", "run", "_start", "_may_gain", "_ranked", "_walk", "_book_crossings")
"""The functions above: compiled together by `_compile_kernels`."""


def _compile_kernels() -> None:
    """Bind each kernel's name to its numba dispatcher (`cache=True`: compiled once per machine). The kernels are
    written undecorated and compiled here because mutmut skips decorated functions (as in
    schedulers/profile_jit.py): mutation testing mutates them too, and under NUMBA_DISABLE_JIT=1 (as
    tools/mutation.py runs its mutants) they run as Python."""
    module = globals()
    for name in KERNELS:
        module[name] = njit(cache=True)(module[name])


_compile_kernels()
