"""Conservative backfilling with its reservations kept between decision instants.

The rule (dispatch.py) recomputes, at every decision instant, each queued job's reservation in queue
order from the running jobs' estimated ends, until no GPU is idle. That pass is a fold over the queue: the
reservation of the job at position i depends only on the profile the running jobs and positions before i
leave. `ConservativeFold` keeps the fold of a prefix of the queue (each job's reservation and the profile
after all of them) and, at the next instant, redoes only what changed, so a decision costs the jobs that
start and the positions no earlier pass reached, not the whole queue.

What changes the fold, and how much of it is kept:

- A job that starts runs for its own estimate (iterations x the alpha of its placement), not the queued
  one (x alpha~min): the difference is a change of the profile. So is a job that ends before its
  estimated end, and a running job whose doubled estimate (overrun "double") has passed.
- A change that only takes GPUs away keeps every reservation that still fits beside the earlier ones, so
  it cuts the fold at the first reservation it displaces: at a step where the profile falls x GPUs short,
  the reservations over it keep their intervals in queue order as long as the GPUs of those after them
  cover the shortage (`_first_displaced`). A change that gives GPUs back cuts the fold at the first
  reservation ending after it begins (that job, or a later one, might start earlier). A job inserted into
  the queue cuts the fold at its position; a reservation that began before now (its job did not start) cuts
  it there.
- Cutting the fold returns the GPUs of the reservations cut; the next pass that reaches them computes
  them again. Reservations that start now are exactly the jobs the full pass would start, in queue order.
- The profile itself is made once, from the running jobs at the first decision that needs it, and kept
  for the whole run: a fold cut to nothing, or a queue that empties, leaves the profile of the running
  jobs, which the changes above keep equal to one rebuilt from them (tests/test_kept_profile.py
  checks it at every decision). A head that starts off its reservation (the fold held it for later, or it
  began before now) cuts the whole fold, so every kept reservation is a queued job's.
- A pass computes the positions after the fold only as far as this instant needs them (`_walk`): up to a
  job never reached (its first reservation is a promise, counted against its start) or a job that fits
  the idle GPUs and has room in the profile from now for its length. Positions left out only take GPUs,
  so a job without room in the profile without them has none with them either and cannot start now.

The fold is kept in arrays and its hot loop compiled (`profile_jit`, numba, imported when the first
profile is built): positions in queue order carry their GPUs, queued length, hold and reserved begin; the
fold is positions [0, n), and the positions after it that a pass or a cut has seen (the tail: the queue's
jobs right after the fold, in order, kept while the queue only loses its head or gains jobs after them)
are [n, m). A cut moves reservations back to the tail, and a pass reserves a run of positions in one
compiled call (`profile_jit.reserve_run`), back in Python only where Python decides: a reservation that
begins now and fits the idle GPUs (the placer may start it), the target position, the hoped job's room
lost. A job's hold (`hold_until`) is kept as last read: A-SRPT changes it only for the head (its delay
budget begins there), which is always reserved by `_append_head`, which reads it again.

The result is the full pass's, decision by decision: the same starts, reservations and promises
(tests/test_dispatch.py, tests/test_decision_instants.py compare with independent implementations).
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

import numpy as np

if TYPE_CHECKING:
    from .dispatch import Backfill
    from .profile_jit import CompiledProfile
    from .queues import CountQueue
    from .views import DispatchContext, JobView

T = TypeVar("T")
GPUS, LENGTH, HOLD, BEGIN = 0, 1, 2, 3
"""Columns of the position array (as profile_jit's)."""
DROP_GONE = 1024
"""Entries of positions removed from the front that the fold's lists keep before dropping them at once."""


class ConservativeFold(Generic[T]):
    """The fold of conservative backfilling over a prefix of the queue, kept between decisions (module
    docstring). The scheduler calls `decide` at each decision, `completed` when a running job completes
    and `inserted` when a job joins the queue anywhere but at its end."""

    def __init__(self, backfill: Backfill) -> None:
        self.backfill = backfill
        # queue keys, items and jobs of positions [0, m) (the fold [0, n), then the tail) from index `gone` on:
        # the entries before are of positions removed from the front, dropped once they are many (a removal
        # near the front moves the entries before it, not the thousands after it)
        self._keys: list[Any] = []
        self._items: list[T | None] = []
        self._jobs: list[JobView | None] = []
        self.gone = 0
        self.n = 0
        self._store = np.zeros((64, 4))
        self._base = 0
        self.positions = self._store[self._base:]  # per position: GPUS, LENGTH, HOLD, BEGIN (valid in the fold)
        self.profile: CompiledProfile | None = None
        self.changes: list[tuple[float, float, int]] = []
        self.assumed: dict[int, tuple[float, int]] = {}  # running job -> (end the profile assumes, GPUs)
        self._started: list[int] = []  # positions whose reservation started in this pass
        self._due = np.zeros(64, dtype=np.int64)
        self._now = 0.0  # the decision's time
        self.low = math.inf  # no reservation in the fold begins before this (a bound, exact when computed)
        self._jit: Any = None  # profile_jit, once a profile is built
        self.frontier: Any = None  # the last key of the queue ever reached: every job after it is unreached
        self.fresh: list[Any] = []  # keys inserted into the queue and not reached yet, in order

    def completed(self, job: JobView, now: float) -> None:
        assumed = self.assumed.pop(job.order, None)
        if self.profile is not None and assumed is not None and now < assumed[0]:
            self.changes.append((now, assumed[0], job.gpus))

    def inserted(self, key: Any) -> None:
        bisect.insort(self.fresh, key)
        if self.profile is not None:
            gone = self.gone
            self._cut(bisect.bisect_right(self._keys, key, gone, gone + self.n) - gone)
            self._truncate(bisect.bisect_left(self._keys, key, gone + self.n) - gone)  # the tail ends before the new job

    def decide(self, ctx: DispatchContext, queue: CountQueue[T], job_of: Callable[[T], JobView],
               try_start: Callable[[T, bool], bool], hold_until: Callable[[T], float]) -> list[T]:
        """One decision: start the head while it may, then the jobs whose reservation starts now, in queue
        order, until no GPU is idle; returns the items started. `try_start(item, at_head)` starts an item if
        it may start now; `hold_until(item)` is the earliest time it would start with enough GPUs."""
        backfill, now = self.backfill, ctx.now
        self._now = now
        started: list[T] = []
        if not queue:
            return started
        item = queue.head()
        key = queue.keys[id(item)][0]
        while try_start(item, True):  # the queue keeps the started items until the caller removes them
            backfill.note_start(job_of(item), now)
            started.append(item)
            self._head_started(key, job_of(item), now)
            following = queue.next_after(key)
            if following is None:
                return started
            key, item = following
        head = (key, item)
        self._refresh(ctx, head, hold_until)
        if not self.n:
            self._append_head(head, job_of, hold_until)
        if ctx.idle_gpus > 0 and self._start_due(ctx, try_start, started):
            self._walk(ctx, queue, job_of, try_start, hold_until, started)
        self._settle(now)
        return started

    def _walk(self, ctx: DispatchContext, queue: CountQueue[T], job_of: Callable[[T], JobView],
              try_start: Callable[[T, bool], bool], hold_until: Callable[[T], float], started: list[T]) -> None:
        """The pass over the positions after the kept reservations, in queue order, until no GPU is idle. A
        position's reservation is computed only when this instant needs it: a job never reached (its first
        reservation is a promise), or one that might start now, as it fits the idle GPUs and the profile
        ahead of it leaves it room from now for its length (`room`). The positions passed over before it
        are computed first (one compiled run, `_reserve`), until they take the room it hoped for; those left
        over only take GPUs, so the profile without them has as much room as with them: a job without room
        cannot start now, and no later start or promise depends on a position after the last one computed.
        A room is a function of the profile: `rooms` keeps one until a reservation begins before it."""
        now, profile = ctx.now, self.profile
        assert profile is not None
        rooms: dict[int, float] = {}

        def room_for(gpus: int) -> float:
            room = rooms.get(gpus)
            if room is None:
                room = rooms[gpus] = profile.room(gpus, now)
            return room

        queued_duration = self.backfill.queued_duration

        def has_room(job: JobView) -> bool:
            return now + queued_duration(job) <= room_for(job.gpus)

        may_start = queue.fitting(self._keys[self.gone + self.n - 1], lambda: ctx.idle_gpus, now, room_for)
        candidate = next(may_start, None)
        while ctx.idle_gpus > 0:
            last = self._keys[self.gone + self.n - 1]
            while candidate is not None and (candidate[0] <= last or not has_room(job_of(candidate[1]))):
                candidate = next(may_start, None)
            target, hoped = self._unreached(queue, last), None
            if candidate is not None and (target is None or candidate[0] < target):
                target, hoped = candidate[0], job_of(candidate[1])
            if target is None:
                return
            end = self._gather(queue, target, job_of, hold_until)
            hoped_gpus, hoped_length, hoped_room = -1, 0.0, 0.0
            if hoped is not None:
                hoped_gpus, hoped_length, hoped_room = hoped.gpus, queued_duration(hoped), room_for(hoped.gpus)
            while True:
                why, hoped_room, lowest = self._reserve(end + 1, end, ctx.idle_gpus, hoped_gpus, hoped_length,
                                                        hoped_room)
                if rooms and lowest < math.inf:
                    for count in [count for count, room in rooms.items() if room > lowest]:
                        del rooms[count]
                if hoped is not None:
                    rooms[hoped_gpus] = hoped_room
                if why != self._jit.TRY:
                    break  # the target reserved, or the hoped job's room lost: look for the next candidate
                position = self.n - 1
                if try_start(self._items[self.gone + position], False):
                    self._backfilled(position, now, started)
                if ctx.idle_gpus == 0 or position == end:
                    break
                if hoped is not None and not has_room(hoped):
                    break

    def _reserve(self, stop: int, target: int, idle: int, hoped_gpus: int, hoped_length: float,
                 hoped_room: float) -> tuple[int, float, float]:
        """Reserve positions n, n + 1, ... (profile_jit.reserve_run) and take them into the fold: why it
        stopped, the hoped job's room and the earliest begin of a reservation that took GPUs."""
        jit, profile, start = self._jit, self.profile, self.n
        assert profile is not None
        lowest = math.inf
        while True:
            why, self.n, hoped_room, low, first = jit.reserve_run(
                profile.T, profile.V, profile.M, profile.O, profile.S, profile.H, profile.Q, profile.FD, profile.FN,
                profile.FF, profile.FC, profile.FG, self.positions, self.n, stop, target, self._now, idle, hoped_gpus,
                hoped_length, hoped_room)
            lowest = min(lowest, low)
            self.low = min(self.low, first)
            if why != jit.GROW:
                break
            profile.grow()
        self._promised(start, self.n)
        return why, hoped_room, lowest

    def _promised(self, start: int, stop: int) -> None:
        """Positions start to stop - 1 joined the fold: the first reservation of each job never reached before
        is its promise."""
        if stop <= start:
            return
        keys, jobs, gone, first = self._keys, self._jobs, self.gone, self.backfill.first_reservation
        frontier = self.frontier
        beyond = start if frontier is None else bisect.bisect_right(keys, frontier, gone + start, gone + stop) - gone
        for p in range(beyond, stop):
            first.setdefault(jobs[gone + p].job_id, float(self.positions[p, BEGIN]))
        fresh = self.fresh
        if fresh:
            low = bisect.bisect_left(fresh, keys[gone + start])
            high = bisect.bisect_right(fresh, keys[gone + stop - 1])
            for key in fresh[low:high]:
                p = bisect.bisect_left(keys, key, gone + start, gone + stop) - gone
                first.setdefault(jobs[gone + p].job_id, float(self.positions[p, BEGIN]))
            del fresh[low:high]
        if frontier is None or frontier < keys[gone + stop - 1]:
            self.frontier = keys[gone + stop - 1]

    def _gather(self, queue: CountQueue[T], target: Any, job_of: Callable[[T], JobView],
                hold_until: Callable[[T], float]) -> int:
        """Extend the tail with the queue's jobs after it up to the one of key `target`; its position."""
        keys, gone = self._keys, self.gone
        if keys[-1] >= target:
            position = bisect.bisect_left(keys, target, gone + self.n)
            assert keys[position] == target, "the tail holds the queue's jobs after the fold"
            return position - gone
        queued_duration = self.backfill.queued_duration
        rows = []
        following = queue.next_after(keys[-1])  # the job after the tail: most often the target itself
        while following is not None:
            key, item = following
            job = job_of(item)
            keys.append(key)
            self._items.append(item)
            self._jobs.append(job)
            rows.append((job.gpus, queued_duration(job), hold_until(item), 0.0))
            if key == target:
                break
            following = queue.next_after(key)
        m = len(keys) - gone
        self._capacity(m, m - len(rows))
        if len(rows) == 1:
            self.positions[m - 1] = rows[0]
        else:
            self.positions[m - len(rows):m] = rows
        return m - 1

    def _capacity(self, m: int, kept: int) -> None:
        """Room for m positions, of which the first `kept` are in use."""
        if m > len(self.positions):
            store = np.zeros((max(m, 2 * len(self._store)), 4))
            store[:kept] = self.positions[:kept]
            self._store, self._base = store, 0
            self.positions = store

    def _unreached(self, queue: CountQueue[T], last: Any) -> Any:
        """The key of the first job after key `last` that no pass has reached, or None."""
        k = bisect.bisect_right(self.fresh, last)
        fresh = self.fresh[k] if k < len(self.fresh) else None
        after = last if self.frontier is None or self.frontier < last else self.frontier
        beyond = queue.next_after(after)
        if beyond is not None and (fresh is None or beyond[0] < fresh):
            return beyond[0]
        return fresh

    def _reached(self, key: Any) -> None:
        """A pass reached the job of `key` (or it started at the head): it is no longer unreached."""
        if self.frontier is None or self.frontier < key:
            self.frontier = key
        fresh = self.fresh
        if fresh:
            k = bisect.bisect_left(fresh, key)
            if k < len(fresh) and fresh[k] == key:
                del fresh[k]

    def _append_head(self, head: tuple[Any, T], job_of: Callable[[T], JobView],
                     hold_until: Callable[[T], float]) -> None:
        """The head's reservation, the fold's first: its hold is read again (A-SRPT's delay budget begins at
        the head)."""
        key, item = head
        if len(self._keys) > self.gone and self._keys[self.gone] != key:
            self._truncate(0)
        if len(self._keys) == self.gone:
            job = job_of(item)
            self._capacity(1, 0)
            self._keys.append(key)
            self._items.append(item)
            self._jobs.append(job)
            self.positions[0, GPUS], self.positions[0, LENGTH] = job.gpus, self.backfill.queued_duration(job)
        self.positions[0, HOLD] = hold_until(item)
        self._reserve(1, 0, -1, -1, 0.0, 0.0)

    def _start_due(self, ctx: DispatchContext, try_start: Callable[[T, bool], bool], started: list[T]) -> bool:
        """Start, in queue order, the kept reservations that begin now (the head's excepted) until no GPU is
        idle; whether GPUs are still idle after all of them."""
        if len(self._due) < self.n:
            self._due = np.zeros(2 * self.n, dtype=np.int64)
        count = self._jit.beginning_by(self.positions, self.n, ctx.now, self._due)
        idle = True
        for p in self._due[:count].tolist():
            if idle and self._jobs[self.gone + p].gpus <= ctx.idle_gpus and try_start(self._items[self.gone + p], False):
                self._backfilled(p, ctx.now, started)
                idle = ctx.idle_gpus > 0
        return idle

    def _backfilled(self, position: int, now: float, started: list[T]) -> None:
        self.backfill.note_start(self._jobs[self.gone + position], now)
        self.backfill.backfilled += 1
        self._started.append(position)
        started.append(self._items[self.gone + position])

    def _head_started(self, key: Any, job: JobView, now: float) -> None:
        """A head started before the pass: its kept reservation (if any) becomes a running job."""
        self._reached(key)
        if self.profile is None:
            return
        if self.n and self._keys[self.gone] == key and self.positions[0, BEGIN] == now:
            reserved = self._reserved_end(0, now)
            self._remove([0])
            self._run(job, reserved, now)
        else:
            self._cut(0)  # a head started off its reservation (or before any): the fold is cut whole
            if len(self._keys) > self.gone and self._keys[self.gone] == key:
                self._remove([0])
            else:
                self._truncate(0)
            end = self.backfill.running.end_of(job.order, now)
            self.assumed[job.order] = (end, job.gpus)
            if end > now:
                self.changes.append((now, end, -job.gpus))

    def _reserved_end(self, position: int, now: float) -> float:
        """The end of a position's reservation (now when it takes no GPUs)."""
        gpus, length, _, begin = self.positions[position].tolist()
        return begin + length if length > 0 and gpus > 0 else now

    def _run(self, job: JobView, reserved: float, now: float) -> None:
        """The profile trades the reservation [now, reserved) of a job that started for its running
        estimate [now, end): a change where they differ."""
        end = self.backfill.running.end_of(job.order, now)
        self.assumed[job.order] = (end, job.gpus)
        if end > reserved:
            self.changes.append((reserved, end, -job.gpus))
        elif end < reserved:
            self.changes.append((end, reserved, job.gpus))

    def _refresh(self, ctx: DispatchContext, head: tuple[Any, T], hold_until: Callable[[T], float]) -> None:
        """Apply the changes since the last decision and cut the fold where they may move a reservation."""
        now = ctx.now
        if self.profile is None:
            self._rebuild(ctx)
            return
        running = self.backfill.running
        if running.estimates.overrun == "double":
            for order, (assumed, gpus) in list(self.assumed.items()):
                if assumed < now:
                    end = running.end_of(order, now)
                    self.assumed[order] = (end, gpus)
                    if end > now:
                        self.changes.append((now, end, -gpus))
        profile, jit, positions = self.profile, self._jit, self.positions
        cut = self.n
        if self.changes:
            for begin, end, change in self.changes:
                profile.add(begin, end, change)
            for begin, end, change in self.changes:
                if change > 0:
                    cut = jit.first_ending_after(positions, cut, begin)
                elif profile.fewest(begin, end) < 0:
                    cut = min(cut, self._first_displaced(begin, end))
            self.changes = []
        if self.low < now:  # a reservation that began before now: its job did not start
            cut, self.low = jit.first_begun_before(positions, cut, now)
        if self.n and (self._keys[self.gone] != head[0] or hold_until(head[1]) > positions[0, BEGIN]):
            cut = 0  # a new head, or the head's delay budget began (its reservation waits for the deadline)
        self._cut(cut, ctx)
        profile.forget_before(now)

    def _first_displaced(self, begin: float, end: float) -> int:
        """The first position whose reservation no longer fits after GPUs were taken over [begin, end): at a
        step where the profile is x GPUs short, the reservations over it keep their interval in queue order
        while the GPUs of those after them cover the shortage; the first one whose followers do not cover it
        must move (every earlier one keeps its interval, and it is still the earliest: GPUs only went). A step
        that all the reservations over it cannot cover moves the first of them.

        Cutting the reservations from the j-th overlapping one on covers every step (as far as they can) for
        every j up to the answer and for none after it, so a binary search finds it, each test one sweep
        (compiled: profile_jit.first_displaced)."""
        assert self.profile is not None
        return self.profile.first_displaced(self.positions, self.n, begin, end)

    def _cut(self, k: int, ctx: DispatchContext | None = None) -> None:
        """Drop the reservations from position k on; their positions stay, first in the tail. The profile gets
        their GPUs back, or, given the decision's context and when fewer reservations are kept than cut, is
        made again from the running jobs with the kept reservations taken from it: the same profile from now
        on (the kept one is the running jobs' with every reservation taken, tests/test_kept_profile.py), for
        the few kept rather than the many cut (a displacement usually cuts a long fold near its start)."""
        if k >= self.n:
            return
        assert self.profile is not None
        rebuild = ctx is not None and k < self.n - k
        if rebuild:
            assert ctx is not None
            self.profile.reset(ctx.now, ctx.idle_gpus, list(self.backfill.running.ends(ctx.now)))
        chosen = self.positions[:k] if rebuild else self.positions[k:self.n]
        holds = (chosen[:, LENGTH] > 0) & (chosen[:, GPUS] > 0)
        begins = chosen[holds, BEGIN]
        gpus = chosen[holds, GPUS].astype(np.int64)
        self.profile.add_all(begins, begins + chosen[holds, LENGTH], -gpus if rebuild else gpus)
        self.n = k

    @property
    def keys(self) -> list[Any]:
        """The queue keys of positions [0, m): the fold's, then the tail's (a copy)."""
        return self._keys[self.gone:]

    @property
    def jobs(self) -> list[JobView]:
        """The jobs of positions [0, m) (a copy)."""
        return self._jobs[self.gone:]  # type: ignore[return-value]

    def _truncate(self, m: int) -> None:
        """Forget the tail from position m on (m >= n)."""
        m += self.gone
        del self._keys[m:], self._items[m:], self._jobs[m:]

    def _remove(self, positions: list[int]) -> None:
        """Remove positions (of jobs that left the queue, in increasing order) from the fold or the tail. The
        array's rows before each move one row on and the array starts a row later, so removing near the front
        (the head, a job started from the fold) costs the rows before it, not the tail after it. The lists
        drop a position inside them (a move of the pointers after it, no reference touched) but only step
        over the first one (the head, half of the removals), whose entries are dropped at once when as many
        as the live ones (and DROP_GONE)."""
        keys, items, jobs = self._keys, self._items, self._jobs
        for p in reversed(positions):
            gone = self.gone
            if p:
                del keys[gone + p], items[gone + p], jobs[gone + p]
                self.positions[1:p + 1] = self.positions[:p]
            else:
                items[gone] = jobs[gone] = None
                self.gone = gone + 1
            self._base += 1
            self.positions = self._store[self._base:]
            if p < self.n:
                self.n -= 1
        if self.gone >= max(DROP_GONE, len(keys) - self.gone):
            del keys[:self.gone], items[:self.gone], jobs[:self.gone]
            self.gone = 0

    def _rebuild(self, ctx: DispatchContext) -> None:
        """The profile of the running jobs now, made by the first decision that needs one (the fold is empty
        until then); from then on it is kept for the whole run and only changed (module docstring). numba is
        imported here, by the first fold that needs it."""
        from . import profile_jit

        self._jit = profile_jit
        now, running = ctx.now, self.backfill.running
        self.profile = profile_jit.CompiledProfile(now, ctx.idle_gpus, list(running.ends(now)))
        self.assumed = {order: (running.end_of(order, now), gpus) for order, gpus in running.jobs()}

    def _settle(self, now: float) -> None:
        """Jobs started in the pass leave the fold and become running jobs of the profile."""
        if not self._started:
            return
        ends = [(self._jobs[self.gone + p], self._reserved_end(p, now)) for p in self._started]
        self._remove(sorted(self._started))
        for job, reserved in ends:
            self._run(job, reserved, now)
        self._started = []
