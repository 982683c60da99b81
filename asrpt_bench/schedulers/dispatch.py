"""Dispatch rules over one ordered queue, orthogonal to the order.

A queue scheduler decides the *order* of its queue; the dispatch rule decides which queued jobs may
start at a decision instant:

- `strict`: only the head may start; a head that does not fit blocks the queue.
- `greedy`: scan the queue in order and start every job that fits (work-conserving backfilling).
- `easy`: start the head while it fits; a blocked head gets a shadow time S (the earliest estimated
  end of a running job at which the idle GPUs plus the GPUs of the running jobs estimated to end by
  then reach its GPU count) and `extra` = that total minus its count; a later job that fits now
  starts if it is estimated to end by S, or else if it needs no more than `extra` GPUs (which it
  then uses up). EASY backfilling as in Slurm and Maui (Lifka 1995; Mu'alem and Feitelson 2001).
- `conservative`: every queued job, in queue order, reserves the earliest interval of the
  cluster's GPU-count profile where it fits beside the running jobs and every earlier reservation;
  a job whose interval starts now starts now. So a job starts early only if it delays no earlier
  reservation.

Estimates are what the scheduler knows: a queued job runs for iterations x alpha~min, a running job
ends at start + iterations x alpha of its placement; `overrun` says what a running job past that
end is estimated at, and `min_estimate_s` floors every estimated duration (jobs predicted at 0
iterations). GPU counts are cluster-wide: the placer alone decides whether a job fits now, and
reservations are counts (docs/simulator.md, "Dispatch rules"). On a cluster of several pools they are per
pool: a queued job's duration in a pool is its iterations x its empty-pool estimate there, EASY reserves
the head's GPUs in the pool where its shadow time comes first, and conservative backfilling keeps one
profile per pool (docs/simulator.md, "Typed clusters").
"""

from __future__ import annotations

import bisect
import heapq
import math
from itertools import islice
from operator import itemgetter
from typing import TYPE_CHECKING, Callable, Hashable, Iterable, Iterator, Literal, Sequence, TypeVar

from .profile import Profile
from .queues import CountQueue, Window

if TYPE_CHECKING:
    from .views import DispatchContext, JobView

DispatchRule = Literal["strict", "easy", "conservative", "greedy"]
DISPATCH_RULES = ("strict", "easy", "conservative", "greedy")
Overrun = Literal["none", "double"]
OVERRUN_POLICIES = ("none", "double")
TIME_TOLERANCE = 1e-9
"""A head counts as started after its first shadow time only beyond this relative tolerance."""

T = TypeVar("T")
H = TypeVar("H")


class Estimates:
    """Duration estimates of queued and running jobs under an overrun policy and a floor.

    overrun "none": a running job past its estimated end is estimated to end now (EASY's usual
    reading: the estimate was the job's limit). "double": its estimated duration doubles until the
    end lies after now (as in SRPT-bounce and EASY++); a zero estimate with no floor cannot double
    and ends now.
    """

    def __init__(self, iterations: Callable[[JobView], float], overrun: Overrun, min_estimate_s: float) -> None:
        self.iterations = iterations
        self.overrun = overrun
        self.min_estimate_s = float(min_estimate_s)

    def duration(self, job: JobView) -> float:
        """Estimated duration of a queued job: iterations x alpha~min, at least min_estimate_s."""
        return max(self.iterations(job) * job.alpha_min, self.min_estimate_s)

    def overrun_end(self, start: float, duration: float, now: float) -> float:
        """start + duration, or, once that has passed, what the overrun policy estimates instead."""
        end = start + duration
        if end >= now:
            return end
        if self.overrun == "double" and duration > 0:
            while end < now:
                duration *= 2
                end = start + duration
            return end
        return now


_END_AND_GPUS = itemgetter(0, 2)


class RunningEnds:
    """The running jobs a scheduler started, sorted by estimated end (start + estimated duration, fixed at
    the start), so a shadow time is a short walk from the earliest end. A job past its estimated end is
    re-estimated by the overrun policy at each look. The scheduler adds each job it starts and removes it
    when it completes (`on_completion`)."""

    def __init__(self, estimates: Estimates) -> None:
        self.estimates = estimates
        # (end, input order, GPUs, start, duration, pool), all running jobs and those of each pool
        self.sorted: list[tuple[float, int, int, float, float, int]] = []
        self.by_pool: dict[int, list[tuple[float, int, int, float, float, int]]] = {}
        self._entries: dict[int, tuple[float, int, int, float, float, int]] = {}

    def add(self, job: JobView, start: float, alpha: float, pool: int = 0) -> None:
        estimates = self.estimates
        duration = max(estimates.iterations(job) * alpha, estimates.min_estimate_s)
        entry = (start + duration, job.order, job.gpus, start, duration, pool)
        self._entries[job.order] = entry
        bisect.insort(self.sorted, entry)
        bisect.insort(self.by_pool.setdefault(pool, []), entry)

    def remove(self, job: JobView) -> None:
        entry = self._entries.pop(job.order, None)
        if entry is not None:
            for entries in (self.sorted, self.by_pool[entry[5]]):
                del entries[bisect.bisect_left(entries, entry)]

    def ends(self, now: float, pool: int | None = None) -> Iterator[tuple[float, int]]:
        """(estimated end, GPUs) of every running job (in pool `pool`, if given) in increasing end; those
        already past their end are estimated by the overrun policy."""
        entries = self.sorted if pool is None else self.by_pool.get(pool, [])
        k = bisect.bisect_left(entries, (now,))
        rest = map(_END_AND_GPUS, islice(entries, k, None) if k else entries)
        if not k:
            return rest
        overrun = self.estimates.overrun_end
        late = sorted((overrun(start, duration, now), gpus) for _, _, gpus, start, duration, _ in entries[:k])
        return heapq.merge(late, rest)

    def end_of(self, order: int, now: float) -> float:
        """The estimated end now of the running job of this input order (the overrun policy's once past)."""
        _, _, _, start, duration, _ = self._entries[order]
        return self.estimates.overrun_end(start, duration, now)

    def jobs(self) -> Iterator[tuple[int, int]]:
        """(input order, GPUs) of every running job."""
        return ((order, entry[2]) for order, entry in self._entries.items())


class Candidates:
    """The estimated durations of the queued jobs per GPU count, so that EASY can tell in O(GPU counts) that
    no job behind a blocked head could pass (then it skips the scan: in an overloaded cluster the queue is
    long and the idle GPUs few). A false "maybe" only costs a scan.

    Only each count's shortest duration is ever read, so each count keeps a heap with lazy removal (a removed
    duration is counted and dropped once it reaches the top; the heap is rebuilt when removed ones are the
    majority): O(log n) per job where a sorted list paid a memmove of the whole list."""

    def __init__(self) -> None:
        self.by_gpus: dict[int, list[float]] = {}
        self._removed: dict[int, dict[float, int]] = {}  # per count: duration -> times removed, still in the heap
        self._stale: dict[int, int] = {}  # per count: removed durations still in the heap

    def add(self, gpus: int, length: float) -> None:
        heap = self.by_gpus.get(gpus)
        if heap is None:
            heap = self.by_gpus[gpus] = []
            self._removed[gpus], self._stale[gpus] = {}, 0
        heapq.heappush(heap, length)

    def remove(self, gpus: int, length: float) -> None:
        removed = self._removed[gpus]
        removed[length] = removed.get(length, 0) + 1
        self._stale[gpus] += 1
        heap = self.by_gpus[gpus]
        if 2 * self._stale[gpus] > len(heap):  # compact: keep each duration as often as it is still queued
            kept = []
            for value in heap:
                times = removed.get(value)
                if times:
                    removed[value] = times - 1
                else:
                    kept.append(value)
            heapq.heapify(kept)
            heap[:] = kept
            removed.clear()
            self._stale[gpus] = 0

    def shortest(self, gpus: int) -> float | None:
        """The shortest queued duration of `gpus`-GPU jobs, or None when there is none."""
        heap = self.by_gpus.get(gpus)
        if not heap:
            return None
        removed = self._removed[gpus]
        while heap and heap[0] in removed:
            top = heapq.heappop(heap)
            self._stale[gpus] -= 1
            if removed[top] == 1:
                del removed[top]
            else:
                removed[top] -= 1
        return heap[0] if heap else None

    def may_pass(self, idle: int, extra: int, now: float, shadow: float) -> bool:
        """Whether some queued job fits the idle GPUs and either needs at most `extra` of them or is
        estimated to end by `shadow` (the same test as the scan, on the shortest job of each count)."""
        for gpus in self.by_gpus:
            if gpus <= idle:
                length = self.shortest(gpus)
                if length is not None and (gpus <= extra or now + length <= shadow):
                    return True
        return False


def _most_idle_in_a_pool(ctx: DispatchContext) -> Callable[[], int]:
    """The most GPUs one job can take now: the idle GPUs, on a cluster of several pools the most idle in one
    pool (a job runs inside one pool)."""
    if len(ctx.pool_idle) == 1:
        return lambda: ctx.idle_gpus
    return lambda: max(ctx.pool_idle)


def _most_idle_outside(ctx: DispatchContext, reserved: int) -> Callable[[], int]:
    """The most idle GPUs now in one pool other than `reserved`."""
    return lambda: max(idle for pool, idle in enumerate(ctx.pool_idle) if pool != reserved)


class Backfill:
    """EASY and conservative passes over an ordered queue, and the counters every rule reports.

    `first_reservation` maps a job id to the first shadow time (EASY head) or reservation start
    (conservative) it was given; a job that starts later than that counts as a reservation violation.
    `backfilled` counts jobs started while a job ahead of them in the queue stayed queued.
    """

    def __init__(self, estimates: Estimates) -> None:
        self.estimates = estimates
        self.running = RunningEnds(estimates)
        self._queued: dict[Hashable, float] = {}  # a queued job's estimated duration, computed once
        self.candidates: Candidates | None = None  # set by a scheduler that keeps it up to date (EASY only)
        self.first_reservation: dict[Hashable, float] = {}
        self.backfilled = 0
        self.violations = 0

    def counts(self, rule: DispatchRule) -> dict[str, float]:
        """backfilled_starts and reservation_violations; violations are undefined (NaN) for the rules
        that make no reservations (strict, greedy)."""
        violations = float(self.violations) if rule in ("easy", "conservative") else float("nan")
        return {"backfilled_starts": float(self.backfilled), "reservation_violations": violations}

    def note_start(self, job: JobView, now: float) -> None:
        """Count a violation if `job` starts after the first shadow time or reservation it was given."""
        promised = self.first_reservation.pop(job.job_id, None)
        if promised is not None and now > promised + TIME_TOLERANCE * max(1.0, abs(promised)):
            self.violations += 1

    def profile(self, ctx: DispatchContext) -> Profile:
        """The free-GPU profile from now: the idle GPUs plus each running job's GPUs from its estimated end."""
        return Profile(ctx.now, ctx.idle_gpus, list(self.running.ends(ctx.now)))

    def shadow(self, gpus: int, ctx: DispatchContext, not_before: float) -> tuple[float, int]:
        """EASY's shadow time S of a head of `gpus` GPUs and the extra GPUs then: the earliest t >=
        not_before at which the idle GPUs plus those of running jobs estimated to end by t reach
        `gpus` (so t is not_before or an estimated end), and that total minus `gpus`."""
        available, shadow = ctx.idle_gpus, not_before
        for end, held in self.running.ends(ctx.now):
            if end > shadow and available >= gpus:
                break
            shadow = max(shadow, end)
            available += held
        return shadow, available - gpus

    def pool_shadow(self, job: JobView, ctx: DispatchContext, not_before: float) -> tuple[float, int, int]:
        """On a cluster of several pools: the shadow time and extra GPUs of `job` in each pool whose type
        runs it and that holds it, from that pool's idle GPUs and running jobs alone (as `shadow`), and the
        pool where it comes first (ties: the job's lower estimate there, then pool order). A pool's walk
        stops once its shadow time passes the earliest found: it cannot come first."""
        best: tuple[tuple[float, float, int], int] | None = None
        idle, gpus = ctx.pool_idle, job.gpus
        for pool, alpha in enumerate(job.pool_alpha_min):
            if not math.isfinite(alpha):
                continue
            bound = math.inf if best is None else best[0][0]
            available, shadow = idle[pool], not_before
            for end, held in self.running.ends(ctx.now, pool):
                if end > shadow and available >= gpus:
                    break
                shadow = max(shadow, end)
                available += held
                if shadow > bound:
                    break
            if shadow > bound:
                continue
            key = (shadow, alpha, pool)
            if best is None or key < best[0]:
                best = (key, available - gpus)
        assert best is not None, f"job {job.job_id!r} fits no pool"
        (shadow, _, pool), extra = best
        return shadow, extra, pool

    def pool_duration(self, job: JobView, pool: int) -> float:
        """A queued job's estimated duration in one pool: iterations x its empty-pool alpha~min there."""
        return max(self.estimates.iterations(job) * job.pool_alpha_min[pool], self.estimates.min_estimate_s)

    def queued_lengths(self, job: JobView) -> Sequence[float]:
        """A queued job's estimated duration in every pool (queues.CountQueue's lanes): on one pool its
        queued_duration; on several its pool_duration in each, inf where the pool cannot run it."""
        if len(job.pool_alpha_min) <= 1:
            return (self.queued_duration(job),)
        iterations, floor = self.estimates.iterations(job), self.estimates.min_estimate_s
        return [max(iterations * alpha, floor) if alpha < math.inf else math.inf for alpha in job.pool_alpha_min]

    def _start_heads(self, queue: Sequence[T], ctx: DispatchContext, job_of: Callable[[T], JobView],
                     try_start: Callable[[T], bool]) -> list[int]:
        """Start the head while it may; the positions started (a prefix of the queue)."""
        k = 0
        while k < len(queue) and try_start(queue[k]):
            self.note_start(job_of(queue[k]), ctx.now)
            k += 1
        return list(range(k))

    def strict(self, queue: Sequence[T], ctx: DispatchContext, job_of: Callable[[T], JobView],
               try_start: Callable[[T], bool], hold_until: Callable[[T], float]) -> list[int]:
        """Head-of-line: start the head while it may; the positions started."""
        return self._start_heads(queue, ctx, job_of, try_start)

    def greedy(self, queue: Sequence[T], ctx: DispatchContext, job_of: Callable[[T], JobView],
               try_start: Callable[[T], bool], hold_until: Callable[[T], float]) -> list[int]:
        """Work-conserving: try every job in order once; the positions started."""
        started = self._start_heads(queue, ctx, job_of, try_start)
        for position in range(len(started) + 1, len(queue)):
            if ctx.idle_gpus == 0:
                break
            if job_of(queue[position]).gpus <= ctx.idle_gpus and try_start(queue[position]):
                self.backfilled += 1
                started.append(position)
        return started

    def easy(self, queue: Sequence[T], ctx: DispatchContext, job_of: Callable[[T], JobView],
             try_start: Callable[[T], bool], hold_until: Callable[[T], float]) -> list[int]:
        """EASY over `queue` (in order); returns the positions started. `try_start` starts an item if it
        may start now (the placer places it, and any scheduler-side test passes); `hold_until` is the
        earliest time the blocked head would start even with enough GPUs (now, or a delay deadline)."""
        started = self._start_heads(queue, ctx, job_of, try_start)
        k = len(started)
        if k == len(queue):
            return started
        window = self.easy_window(queue[k], ctx, job_of, hold_until, more=k < len(queue) - 1)
        if window is not None:
            rest = ((position, queue[position]) for position in range(k + 1, len(queue)))
            started.extend(self.easy_scan(rest, ctx, job_of, try_start, window))
        return started

    def behind(self, rule: DispatchRule, queue: CountQueue[T], head: T, ctx: DispatchContext,
               job_of: Callable[[T], JobView], try_start: Callable[[T], bool],
               hold_until: Callable[[T], float]) -> list[T]:
        """Greedy or EASY behind the blocked `head` of a block queue (queues.CountQueue), which visits only
        the jobs that may start: the same starts, in the same order, as `greedy` or `easy` over the whole
        queue after its head; returns the items started (they are still in `queue`)."""
        more, now = len(queue) > 1, ctx.now
        fits = _most_idle_in_a_pool(ctx)
        if rule == "greedy":
            if not more or ctx.idle_gpus == 0:
                return []
            started = [item for item, _ in queue.behind(head, fits, None, now) if try_start(item)]
            self.backfilled += len(started)
            return started
        window = self.easy_window(head, ctx, job_of, hold_until, more)
        if window is None:
            return []
        return self.easy_scan(queue.behind(head, fits, window, now), ctx, job_of, try_start, window)

    def queued_duration(self, job: JobView) -> float:
        """A queued job's estimated duration (Estimates.duration), computed once per job."""
        length = self._queued.get(job.job_id)
        if length is None:
            length = self._queued[job.job_id] = self.estimates.duration(job)
        return length

    def easy_window(self, head: T, ctx: DispatchContext, job_of: Callable[[T], JobView],
                    hold_until: Callable[[T], float], more: bool) -> Window | None:
        """The blocked head's shadow time and extra GPUs, or None when no later job could use them
        (`more` False, no idle GPU, or `candidates` rules every job out); the head's first shadow
        time is recorded either way."""
        if more and ctx.idle_gpus > 0:
            shadow, extra, pool = self._promise_shadow(head, ctx=ctx, job_of=job_of, hold_until=hold_until)
            window = Window(shadow, extra) if pool is None else Window(shadow, extra, pool, _most_idle_outside(ctx, pool))
            # a queued job's estimate (its fastest pool's) is no longer than its estimate in the reserved pool
            if self.candidates is None or self.candidates.may_pass(_most_idle_in_a_pool(ctx)(),
                                                                   max(extra, window.outside()), ctx.now, shadow):
                return window
            return None
        if job_of(head).job_id not in self.first_reservation:
            self._promise_shadow(head, ctx=ctx, job_of=job_of, hold_until=hold_until)
        return None

    def easy_scan(self, rest: Iterable[tuple[H, T]], ctx: DispatchContext, job_of: Callable[[T], JobView],
                  try_start: Callable[[T], bool], window: Window) -> list[H]:
        """EASY's backfilling scan over the jobs behind the blocked head, in queue order, as (tag, item)
        pairs; returns the tags of the jobs started. A job that fits now starts if it is estimated to
        end by the window's shadow time, or else if it needs at most its extra GPUs (which it then uses
        up: `window.extra` shrinks, so `rest` may skip what can no longer pass). On a cluster of several
        pools the window is the reserved pool's: a job that passes neither test may still start outside it."""
        if window.pool is not None:
            return self._easy_scan_pools(rest, ctx, job_of, try_start, window)
        started: list[H] = []
        idle = ctx.idle_gpus
        now, queued, shadow = ctx.now, self._queued, window.shadow
        for tag, item in rest:
            job = job_of(item)
            gpus = job.gpus
            if gpus > idle:
                continue
            length = queued.get(job.job_id)
            if length is None:
                length = self.queued_duration(job)
            by_shadow = now + length <= shadow
            if not by_shadow and gpus > window.extra:
                continue
            if try_start(item):
                self.note_start(job, now)
                self.backfilled += 1
                started.append(tag)
                if not by_shadow:
                    window.extra -= gpus
                idle = ctx.idle_gpus
                if idle == 0:
                    break
        return started

    def _easy_scan_pools(self, rest: Iterable[tuple[H, T]], ctx: DispatchContext, job_of: Callable[[T], JobView],
                         try_start: Callable[[T], bool], window: Window) -> list[H]:
        """easy_scan on a cluster of several pools: a job that would end by the shadow time in the reserved
        pool (at its duration there), or needs at most the extra GPUs, starts wherever its pool choice puts
        it (the extra shrinks only if that is the reserved pool); any other starts only outside it."""
        started: list[H] = []
        now, reserved = ctx.now, window.pool
        assert reserved is not None
        for tag, item in rest:
            job = job_of(item)
            if job.gpus > ctx.idle_gpus:
                continue
            by_shadow = math.isfinite(job.pool_alpha_min[reserved]) and \
                now + self.pool_duration(job, reserved) <= window.shadow
            passes = by_shadow or job.gpus <= window.extra
            with ctx.restricted(exclude=None if passes else reserved):
                ran = try_start(item)
            if ran:
                self.note_start(job, now)
                self.backfilled += 1
                started.append(tag)
                if not by_shadow and ctx.last_pool == reserved:
                    window.extra -= job.gpus
                if ctx.idle_gpus == 0:
                    break
        return started

    def _promise_shadow(self, head: T, job_of: Callable[[T], JobView], ctx: DispatchContext,
                        hold_until: Callable[[T], float]) -> tuple[float, int, int | None]:
        """The head's shadow time, extra GPUs and (on a cluster of several pools) reserved pool; its first
        shadow time is recorded."""
        job = job_of(head)
        if len(job.pool_alpha_min) > 1:
            shadow, extra, pool = self.pool_shadow(job, ctx, hold_until(head))
        else:
            (shadow, extra), pool = self.shadow(job.gpus, ctx, hold_until(head)), None
        self.first_reservation.setdefault(job.job_id, shadow)
        return shadow, extra, pool

    def conservative(self, queue: Sequence[T], ctx: DispatchContext, job_of: Callable[[T], JobView],
                     try_start: Callable[[T], bool], hold_until: Callable[[T], float]) -> list[int]:
        """Conservative backfilling over `queue` (in order); returns the positions started.

        The head starts while it may. Then every job, in queue order, reserves the earliest interval
        of the GPU-count profile where it fits beside the running jobs and the earlier reservations
        (no earlier than `hold_until`); one whose interval starts now starts if `try_start` lets it,
        else it keeps its reservation (in counts). The pass stops once no GPU is idle: no later job
        could start now, and every reservation is recomputed at the next decision instant.
        """
        now, duration = ctx.now, self.estimates.duration
        started = self._start_heads(queue, ctx, job_of, try_start)
        k = len(started)
        if k == len(queue):
            return started
        if len(job_of(queue[k]).pool_alpha_min) > 1:
            return started + self._conservative_pools(queue, k, ctx, job_of, try_start, hold_until)
        profile = self.profile(ctx)
        for position in range(k, len(queue)):
            item = queue[position]
            job = job_of(item)
            length = duration(job)
            begin = profile.earliest(job.gpus, length, hold_until(item))
            if position > k and begin <= now and job.gpus <= ctx.idle_gpus and try_start(item):
                self.note_start(job, now)
                self.backfilled += 1
                started.append(position)
            else:
                self.first_reservation.setdefault(job.job_id, begin)
            if ctx.idle_gpus == 0:
                break
            profile.reserve(begin, length, job.gpus)
        return started

    def _conservative_pools(self, queue: Sequence[T], k: int, ctx: DispatchContext, job_of: Callable[[T], JobView],
                            try_start: Callable[[T], bool], hold_until: Callable[[T], float]) -> list[int]:
        """Conservative backfilling from position k on a cluster of several pools: one GPU-count profile per
        pool; every job reserves the earliest interval over the pools whose type runs it, at its duration
        there (ties: its lower estimate there, then pool order), and one whose interval starts now starts in
        that pool only."""
        now = ctx.now
        profiles = [Profile(now, idle, list(self.running.ends(now, pool))) for pool, idle in enumerate(ctx.pool_idle)]
        started = []
        for position in range(k, len(queue)):
            item = queue[position]
            job = job_of(item)
            not_before = hold_until(item)
            options = []
            for pool, alpha in enumerate(job.pool_alpha_min):
                if math.isfinite(alpha):
                    length = self.pool_duration(job, pool)
                    options.append((profiles[pool].earliest(job.gpus, length, not_before), alpha, pool, length))
            begin, _, pool, length = min(options)
            ran = False
            if position > k and begin <= now and job.gpus <= ctx.pool_idle[pool]:
                with ctx.restricted(only=pool):
                    ran = try_start(item)
            if ran:
                self.note_start(job, now)
                self.backfilled += 1
                started.append(position)
            else:
                self.first_reservation.setdefault(job.job_id, begin)
            if ctx.idle_gpus == 0:
                break
            profiles[pool].reserve(begin, length, job.gpus)
        return started
