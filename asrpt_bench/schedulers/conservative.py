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

The result is the full pass's, decision by decision: the same starts, reservations and promises
(tests/test_dispatch.py, tests/test_decision_instants.py compare with independent implementations).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from .profile import Profile

if TYPE_CHECKING:
    from .dispatch import Backfill
    from .queues import CountQueue
    from .views import DispatchContext, JobView

T = TypeVar("T")
COMPACT_SLACK = 64
"""The due heap is compacted when it holds more than twice the fold's entries plus this."""


@dataclass(eq=False, slots=True)
class _Reserved(Generic[T]):
    key: Any
    item: T
    job: JobView
    begin: float
    length: float
    live: bool = field(default=True)
    """In the fold and not started (a job that starts, or a reservation cut, leaves it)."""

    @property
    def end(self) -> float:
        return self.begin + self.length

    @property
    def holds(self) -> bool:
        """Whether the reservation takes GPUs off the profile."""
        return self.length > 0 and self.job.gpus > 0


class ConservativeFold(Generic[T]):
    """The fold of conservative backfilling over a prefix of the queue, kept between decisions (module
    docstring). The scheduler calls `decide` at each decision, `completed` when a running job completes
    and `inserted` when a job joins the queue anywhere but at its end."""

    def __init__(self, backfill: Backfill) -> None:
        self.backfill = backfill
        self.entries: list[_Reserved[T]] = []
        self.keys: list[Any] = []
        self.profile: Profile | None = None
        self.changes: list[tuple[float, float, int]] = []
        self.assumed: dict[int, tuple[float, int]] = {}  # running job -> (end the profile assumes, GPUs)
        self.due: list[tuple[float, int, _Reserved[T]]] = []  # (begin, tiebreak, entry): who may start when
        self._tiebreak = itertools.count()
        self._started: list[_Reserved[T]] = []  # reservations that started in this pass
        self.frontier: Any = None  # the last key of the queue ever reached: every job after it is unreached
        self.fresh: list[Any] = []  # keys inserted into the queue and not reached yet, in order

    def completed(self, job: JobView, now: float) -> None:
        assumed = self.assumed.pop(job.order, None)
        if self.profile is not None and assumed is not None and now < assumed[0]:
            self.changes.append((now, assumed[0], job.gpus))

    def inserted(self, key: Any) -> None:
        bisect.insort(self.fresh, key)
        if self.profile is not None:
            self._cut(bisect.bisect_right(self.keys, key))

    def decide(self, ctx: DispatchContext, queue: CountQueue[T], job_of: Callable[[T], JobView],
               try_start: Callable[[T, bool], bool], hold_until: Callable[[T], float]) -> list[T]:
        """One decision: start the head while it may, then the jobs whose reservation starts now, in queue
        order, until no GPU is idle; returns the items started. `try_start(item, at_head)` starts an item if
        it may start now; `hold_until(item)` is the earliest time it would start with enough GPUs."""
        backfill, now = self.backfill, ctx.now
        started: list[T] = []
        head: tuple[Any, T] | None = None
        for key, item in queue.after(None):
            if not try_start(item, True):
                head = (key, item)
                break
            backfill.note_start(job_of(item), now)
            started.append(item)
            self._head_started(key, job_of(item), now)
        if head is None:
            return started
        self._refresh(ctx, head, hold_until)
        if not self.entries:
            self._append(head[0], head[1], job_of(head[1]), hold_until)
        if ctx.idle_gpus > 0 and self._start_due(ctx, job_of, try_start, started):
            self._walk(ctx, queue, job_of, try_start, hold_until, started)
        self._settle(now)
        return started

    def _walk(self, ctx: DispatchContext, queue: CountQueue[T], job_of: Callable[[T], JobView],
              try_start: Callable[[T, bool], bool], hold_until: Callable[[T], float], started: list[T]) -> None:
        """The pass over the positions after the kept reservations, in queue order, until no GPU is idle. A
        position's reservation is computed only when this instant needs it: a job never reached (its first
        reservation is a promise), or one that might start now, as it fits the idle GPUs and the profile
        ahead of it leaves it room from now for its length (`Profile.room`). The positions passed over
        before it are computed first, until they take the room it hoped for; those left over only take GPUs,
        so the profile without them has as much room as with them: a job without room cannot start now, and
        no later start or promise depends on a position after the last one computed."""
        now, profile = ctx.now, self.profile
        assert profile is not None
        rooms: dict[int, float] = {}

        def room_for(gpus: int) -> float:
            room = rooms.get(gpus)
            if room is None:
                room = rooms[gpus] = profile.room(gpus, now)
            return room

        def passes_for(gpus: int) -> Callable[[float], bool]:
            room = room_for(gpus)
            return lambda length: now + length <= room

        queued_duration = self.backfill.queued_duration

        def has_room(job: JobView) -> bool:
            return now + queued_duration(job) <= room_for(job.gpus)

        may_start = queue.fitting(self.keys[-1], lambda: ctx.idle_gpus, passes_for)
        candidate = next(may_start, None)
        while ctx.idle_gpus > 0:
            last = self.keys[-1]
            while candidate is not None and (candidate[0] <= last or not has_room(job_of(candidate[1]))):
                candidate = next(may_start, None)
            target, hoped = self._unreached(queue, last), None
            if candidate is not None and (target is None or candidate[0] < target):
                target, hoped = candidate[0], job_of(candidate[1])
            if target is None:
                return
            for key, item in queue.after(last):
                job = job_of(item)
                entry = self._append(key, item, job, hold_until)
                begin = entry.begin
                if rooms and entry.holds:  # a room that ends by its begin stays
                    for count in [count for count, room in rooms.items() if room > begin]:
                        del rooms[count]
                if begin <= now and job.gpus <= ctx.idle_gpus and try_start(item, False):
                    self._backfilled(entry, now, started)
                if ctx.idle_gpus == 0 or key == target:
                    break
                if hoped is not None and not has_room(hoped):
                    break  # the positions computed took the room the candidate needed: look for the next one

    def _unreached(self, queue: CountQueue[T], last: Any) -> Any:
        """The key of the first job after key `last` that no pass has reached, or None."""
        k = bisect.bisect_right(self.fresh, last)
        fresh = self.fresh[k] if k < len(self.fresh) else None
        after = last if self.frontier is None or self.frontier < last else self.frontier
        beyond = next(queue.after(after), None)
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

    def _append(self, key: Any, item: T, job: JobView, hold_until: Callable[[T], float]) -> _Reserved[T]:
        """The reservation of the next position of the fold; its first promise is recorded."""
        profile, backfill = self.profile, self.backfill
        assert profile is not None
        length, gpus = backfill.queued_duration(job), job.gpus
        begin = profile.earliest(gpus, length, hold_until(item))
        entry = _Reserved(key, item, job, begin, length)
        backfill.first_reservation.setdefault(job.job_id, begin)
        if self.frontier is None or self.frontier < key:
            self.frontier = key
        if self.fresh:
            self._reached(key)
        self.entries.append(entry)
        self.keys.append(key)
        heapq.heappush(self.due, (begin, next(self._tiebreak), entry))
        profile.add(begin, begin + length, -gpus)
        return entry

    def _start_due(self, ctx: DispatchContext, job_of: Callable[[T], JobView], try_start: Callable[[T, bool], bool],
                   started: list[T]) -> bool:
        """Start, in queue order, the kept reservations that begin now (the head's excepted) until no GPU is
        idle; whether GPUs are still idle after all of them."""
        now, due, head = ctx.now, self.due, self.entries[0]
        ready = []
        while due and due[0][0] <= now:
            ready.append(heapq.heappop(due))
        ready = sorted((pair for pair in ready if pair[2].live), key=lambda pair: bisect.bisect_left(self.keys, pair[2].key))
        idle = True
        for begin, tiebreak, entry in ready:
            if idle and entry is not head and entry.job.gpus <= ctx.idle_gpus and try_start(entry.item, False):
                self._backfilled(entry, now, started)
                idle = ctx.idle_gpus > 0
            else:
                heapq.heappush(due, (begin, tiebreak, entry))
        return idle

    def _backfilled(self, entry: _Reserved[T], now: float, started: list[T]) -> None:
        self.backfill.note_start(entry.job, now)
        self.backfill.backfilled += 1
        entry.live = False
        self._started.append(entry)
        started.append(entry.item)

    def _head_started(self, key: Any, job: JobView, now: float) -> None:
        """A head started before the pass: its kept reservation (if any) becomes a running job."""
        self._reached(key)
        if self.profile is None:
            return
        if self.entries and self.keys[0] == key and self.entries[0].begin == now:
            entry = self.entries.pop(0)
            del self.keys[0]
            entry.live = False
            self._run(entry, now)
        else:
            self._cut(0)  # a head started off its reservation (or before any): the fold is cut whole
            end = self.backfill.running.end_of(job.order, now)
            self.assumed[job.order] = (end, job.gpus)
            if end > now:
                self.changes.append((now, end, -job.gpus))

    def _run(self, entry: _Reserved[T], now: float) -> None:
        """The profile trades the reservation [now, now + length) of a job that started for its running
        estimate [now, end): a change where they differ."""
        job = entry.job
        end = self.backfill.running.end_of(job.order, now)
        self.assumed[job.order] = (end, job.gpus)
        reserved = entry.end if entry.holds else now
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
        profile, entries = self.profile, self.entries
        for begin, end, change in self.changes:
            profile.add(begin, end, change)
        cut = len(entries)
        for begin, end, change in self.changes:
            if change > 0:
                cut = min(cut, next((k for k, e in enumerate(entries) if e.end > begin), cut))
            elif profile.fewest(begin, end) < 0:
                cut = min(cut, self._first_displaced(begin, end))
        self.changes = []
        due = self.due
        while due and due[0][0] < now:  # a reservation that began before now: its job did not start then
            entry = heapq.heappop(due)[2]
            if entry.live:
                cut = min(cut, bisect.bisect_left(self.keys, entry.key))
        if entries and (self.keys[0] != head[0] or hold_until(head[1]) > entries[0].begin):
            cut = 0  # a new head, or the head's delay budget began (its reservation waits for the deadline)
        self._cut(cut)
        profile.forget_before(now)

    def _first_displaced(self, begin: float, end: float) -> int:
        """The first position whose reservation no longer fits after GPUs were taken over [begin, end): at a
        step where the profile is x GPUs short, the reservations over it keep their interval in queue order
        while the GPUs of those after them cover the shortage; the first one whose followers do not cover it
        must move (every earlier one keeps its interval, and it is still the earliest: GPUs only went). A step
        that all the reservations over it cannot cover moves the first of them.

        Cutting the reservations from the j-th overlapping one on covers every step (as far as they can) for
        every j up to the answer and for none after it, so a binary search finds it, each test one sweep."""
        assert self.profile is not None
        shortages = self.profile.shortages(begin, end)
        if not shortages:
            return len(self.entries)
        over = [(k, e.begin, e.begin + e.length, e.job.gpus) for k, e in enumerate(self.entries)
                if e.length > 0 and e.job.gpus > 0 and e.begin < end and e.begin + e.length > begin]
        times = [t for t, _ in shortages]
        spans = [(bisect.bisect_left(times, first), bisect.bisect_left(times, last), gpus)
                 for _, first, last, gpus in over]

        def covering(j: int) -> list[int]:
            """GPUs of the overlapping reservations from the j-th on, at each step short."""
            diff = [0] * (len(times) + 1)
            for low, high, gpus in spans[j:]:
                diff[low] += gpus
                diff[high] -= gpus
            return list(itertools.accumulate(diff[:-1]))

        everything = covering(0)
        needed = [min(short, most) for (_, short), most in zip(shortages, everything)]
        low, high = 0, len(over)  # covering(low) suffices; find the largest such j
        while low < high:
            j = (low + high + 1) // 2
            if all(have >= need for have, need in zip(covering(j), needed)):
                low = j
            else:
                high = j - 1
        return over[low][0] if low < len(over) else len(self.entries)

    def _cut(self, k: int) -> None:
        """Drop the reservations from position k on, returning their GPUs to the profile."""
        if k >= len(self.entries):
            return
        assert self.profile is not None
        returned = []
        for entry in self.entries[k:]:
            entry.live = False
            if entry.holds:
                returned.append((entry.begin, entry.end, entry.job.gpus))
        self.profile.add_all(returned)
        del self.entries[k:], self.keys[k:]
        self._compact_due()

    def _compact_due(self) -> None:
        """Drop the due heap's entries that left the fold (cut or started) once they outnumber the fold's
        entries, which bound the live ones: read only as they come due, a dead entry is skipped there, but
        after deep cuts the heap held every reservation ever computed until its begin passed. Each compaction
        at least halves the heap, so it costs O(1) per reservation; the live entries come due as before."""
        due = self.due
        if len(due) > 2 * len(self.entries) + COMPACT_SLACK:
            self.due = [pair for pair in due if pair[2].live]
            heapq.heapify(self.due)

    def _rebuild(self, ctx: DispatchContext) -> None:
        """The profile of the running jobs now, made by the first decision that needs one (the fold is empty
        until then); from then on it is kept for the whole run and only changed (module docstring)."""
        now, running = ctx.now, self.backfill.running
        self.profile = Profile(now, ctx.idle_gpus, list(running.ends(now)))
        self.assumed = {order: (running.end_of(order, now), gpus) for order, gpus in running.jobs()}

    def _settle(self, now: float) -> None:
        """Jobs started in the pass leave the fold and become running jobs of the profile."""
        for entry in self._started:
            k = bisect.bisect_left(self.keys, entry.key)
            del self.entries[k], self.keys[k]
            self._run(entry, now)
        self._started = []
