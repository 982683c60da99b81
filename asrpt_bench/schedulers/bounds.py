"""The running jobs of a preemptive scheduler that bounds its running jobs' priorities, kept for
AdmissionScheduler's bounded walk.

A priority computed at some instant bounds the job's later priorities from above until an instant the
scheduler names (`AdmissionScheduler.bound_until`): forever for srtf (remaining time only shrinks while a
job runs) and psjf (fixed at arrival); for las2d until its attained service nears the next queue's
threshold. Suspendable running jobs sit in one list sorted by (bound, rank), so a walk finds in one
bisection the jobs that certainly rank before the best waiting job (they are kept whatever happens and
only their GPUs count) and recomputes exact priorities only for the rest and for expired bounds: usually a
few, not every running job. Where a bound is the priority itself until it expires (psjf's fixed size,
las2d's queue), only the expired ones are recomputed.
"""

from __future__ import annotations

import bisect
import heapq
import math
from operator import itemgetter

import numpy as np

from .views import JobView

BoundEntry = tuple[float, int, int, int]
"""(priority bound, rank, input order, GPUs): ranks are unique, so entries never tie (and (bound, rank)
compares below the entry it begins)."""


MERGE_BY_INSERTION = 8
"""`put_all` bisects up to this many entries into the kept ones; more are merged by sorting the whole list."""


class RunningBounds:
    """Held running jobs (started or resumed, not yet seen past their protected window) and the suspendable
    ones as entries sorted by (priority bound, rank), with the GPUs of each group and the instants at which
    bounds expire. Held jobs wait in a heap by the end of their protected window, so a walk looks only at
    those whose window has ended, not at every held job."""

    def __init__(self) -> None:
        self.entries: list[BoundEntry] = []
        self.entry_of: dict[int, BoundEntry] = {}
        self.suspendable_gpus = 0
        self.held: dict[int, tuple[JobView, float]] = {}  # input order -> (job, end of its protected window)
        self.held_gpus = 0
        self.protections: list[tuple[float, int]] = []  # (end of protected window, input order) of held jobs
        self.expiries: list[tuple[float, int, BoundEntry]] = []  # (instant, input order, entry it bounds)

    def hold(self, job: JobView, protected_until: float) -> None:
        """A job starts or resumes; it cannot be suspended before `protected_until`."""
        self.held[job.order] = (job, protected_until)
        self.held_gpus += job.gpus
        heapq.heappush(self.protections, (protected_until, job.order))

    def unhold_due(self, now: float) -> list[JobView]:
        """Take out the held jobs whose protected window has ended by `now` (`now >= protected_until`, the
        simulator's test), counted as suspendable from now on (`put` sorts them in); in the order their
        windows end, ties by input order. Entries of jobs that finished while held are dropped on the way."""
        protections, held, due = self.protections, self.held, []
        while protections and protections[0][0] <= now:
            until, order = heapq.heappop(protections)
            found = held.get(order)
            if found is None or found[1] != until:
                continue  # the job finished while held
            del held[order]
            job = found[0]
            self.held_gpus -= job.gpus
            self.suspendable_gpus += job.gpus
            due.append(job)
        return due

    def remove(self, job: JobView) -> None:
        """A running job stops (suspended or finished)."""
        if self.held.pop(job.order, None) is not None:
            self.held_gpus -= job.gpus  # its entry in `protections` is dropped when it comes due
            return
        entry = self.entry_of.pop(job.order)
        del self.entries[bisect.bisect_left(self.entries, entry)]
        self.suspendable_gpus -= job.gpus

    def take(self, first: tuple[float, int], now: float, exact: bool = False) -> list[int]:
        """Take out the entries whose bound does not rank them before `first` (priority, rank) or has expired
        by `now`; their input orders. With `exact` bounds (each is its job's priority until it expires), only
        the expired ones: the others are already what a recomputation would give."""
        expiries, entry_of, entries = self.expiries, self.entry_of, self.entries
        orders = []
        while expiries and expiries[0][0] <= now:
            _, order, entry = heapq.heappop(expiries)
            if entry_of.get(order) is entry and (exact or entry < first):
                del entries[bisect.bisect_left(entries, entry)]
                orders.append(order)
        if exact:
            return orders
        start = bisect.bisect_left(entries, first)
        orders += map(itemgetter(2), entries[start:])
        del entries[start:]
        return orders

    def put(self, entry: BoundEntry, until: float) -> None:
        """Sort in a suspendable job's entry, its bound valid until `until`."""
        bisect.insort(self.entries, entry)
        self.entry_of[entry[2]] = entry
        if until != math.inf:
            heapq.heappush(self.expiries, (until, entry[2], entry))

    def put_all(self, entries: list[BoundEntry], untils: np.ndarray | None) -> None:
        """`put` for many entries at once, `entries` sorted: those after the last kept entry are appended in
        one step and the few before it are bisected in (a walk takes out the entries that do not rank before
        its best waiting job, and most come back there, since their priority moved little); more than
        MERGE_BY_INSERTION before it are merged by one C sort. Only the finite `untils` are booked (None: every
        bound holds for as long as its job runs)."""
        kept = self.entries
        inside = bisect.bisect_right(entries, kept[-1]) if kept else 0
        if inside > MERGE_BY_INSERTION:
            kept += entries
            kept.sort()
        else:
            for entry in entries[:inside]:
                bisect.insort(kept, entry)
            kept += entries[inside:]
        self.entry_of.update(zip(map(itemgetter(2), entries), entries))
        if untils is None:
            return
        expiries = self.expiries
        for k in np.flatnonzero(untils != math.inf).tolist():
            entry = entries[k]
            heapq.heappush(expiries, (float(untils[k]), entry[2], entry))

    def after(self, first: tuple[float, int]) -> list[BoundEntry]:
        """The entries that do not rank before `first` (priority, rank), in order."""
        return self.entries[bisect.bisect_left(self.entries, first):]
