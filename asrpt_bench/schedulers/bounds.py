"""The running jobs of a preemptive scheduler that bounds its running jobs' priorities, kept for
AdmissionScheduler's bounded walk.

A priority computed at some instant bounds the job's later priorities from above until an instant the
scheduler names (`AdmissionScheduler.bound_until`): forever for srtf (remaining time only shrinks while a
job runs) and psjf (fixed at arrival); for las2d until its attained service nears the next queue's
threshold. The suspendable running jobs' bounds, ranks, GPUs and expiries sit in numpy arrays indexed by
input order, with a dense list of the members; a walk finds, in one compiled pass over the members
(bound_kernels.py), the jobs whose bound does not rank them before the best waiting job or has expired
(their exact priorities are recomputed) and then the jobs it walks, sorted by (bound, rank). The jobs whose
bound ranks them before the best waiting job are kept whatever happens and only their GPUs count. Where a
bound is the priority itself until it expires (psjf's fixed size, las2d's queue), only the expired ones are
recomputed.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Sequence

import numpy as np

from .views import JobView

BoundEntry = tuple[float, int, int, int]
"""(priority bound, rank, input order, GPUs): ranks are unique, so entries never tie (and (bound, rank)
compares below the entry it begins)."""


class RunningBounds:
    """Held running jobs (started or resumed, not yet seen past their protected window) and the suspendable
    ones with their priority bound, rank, GPUs and the instant the bound expires (inf: never), with the GPUs
    of each group. Held jobs wait in a heap by the end of their protected window, so a walk looks only at
    those whose window has ended, not at every held job. A suspendable job's numbers live in arrays indexed
    by its input order (grown as larger orders come), the members in a dense array (a job that stops is
    replaced by the last one), so a walk reads them in one compiled pass instead of keeping a sorted list."""

    def __init__(self) -> None:
        self.bound = np.zeros(0)
        self.until = np.zeros(0)
        self.rank = np.zeros(0, dtype=np.int64)
        self.gpus = np.zeros(0, dtype=np.int64)
        self.position = np.zeros(0, dtype=np.int64)  # a member's place in `members`; -1 for a non-member
        self.members = np.zeros(64, dtype=np.int64)
        self.count = 0
        self.suspendable_gpus = 0
        self.held: dict[int, tuple[JobView, float]] = {}  # input order -> (job, end of its protected window)
        self.held_gpus = 0
        self.protections: list[tuple[float, int]] = []  # (end of protected window, input order) of held jobs
        self._kernels: Any = None

    def kernels(self) -> Any:
        """bound_kernels, imported at the first walk (numba loads only for a preemptive run)."""
        if self._kernels is None:
            from . import bound_kernels
            self._kernels = bound_kernels
        return self._kernels

    def hold(self, job: JobView, protected_until: float) -> None:
        """A job starts or resumes; it cannot be suspended before `protected_until`."""
        self.held[job.order] = (job, protected_until)
        self.held_gpus += job.gpus
        heapq.heappush(self.protections, (protected_until, job.order))

    def unhold_due(self, now: float) -> list[JobView]:
        """Take out the held jobs whose protected window has ended by `now` (`now >= protected_until`, the
        simulator's test), counted as suspendable from now on (`put` enters them); in the order their
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
        position, members = self.position, self.members
        place = int(position[job.order])
        last = self.count - 1
        moved = int(members[last])
        members[place] = moved
        position[moved] = place
        position[job.order] = -1
        self.count = last
        self.suspendable_gpus -= job.gpus

    def _grow(self, order: int) -> None:
        """Room in the per-order arrays for input order `order`."""
        size = len(self.bound)
        grown = max(2 * size, order + 1, 64)
        self.bound = np.concatenate([self.bound, np.zeros(grown - size)])
        self.until = np.concatenate([self.until, np.full(grown - size, math.inf)])
        self.rank = np.concatenate([self.rank, np.zeros(grown - size, dtype=np.int64)])
        self.gpus = np.concatenate([self.gpus, np.zeros(grown - size, dtype=np.int64)])
        self.position = np.concatenate([self.position, np.full(grown - size, -1, dtype=np.int64)])

    def put(self, entry: BoundEntry, until: float) -> None:
        """Enter a suspendable job, or give a member a new bound: `entry` is (bound, rank, input order, GPUs),
        the bound valid until `until`."""
        bound, rank, order, gpus = entry
        if order >= len(self.bound):
            self._grow(order)
        if self.position[order] < 0:
            if self.count == len(self.members):
                self.members = np.concatenate([self.members, np.zeros(len(self.members), dtype=np.int64)])
            self.members[self.count] = order
            self.position[order] = self.count
            self.count += 1
        self.bound[order], self.until[order], self.rank[order], self.gpus[order] = bound, until, rank, gpus

    def refresh(self, orders: np.ndarray, bounds: np.ndarray, untils: np.ndarray | None) -> None:
        """New bounds of many members at once (None: every bound holds for as long as its job runs)."""
        self.bound[orders] = bounds
        self.until[orders] = math.inf if untils is None else untils

    def take(self, first: tuple[float, int], now: float, exact: bool = False) -> list[int]:
        """The input orders of the members whose bound does not rank them before `first` (priority, rank) or
        has expired by `now`: the walk recomputes them (`put` or `refresh`). With `exact` bounds (each is its
        job's priority until it expires), only the expired ones: the others are already what a recomputation
        would give."""
        if not self.count:
            return []
        return self.kernels().stale_orders(self.members, self.count, self.bound, self.until, self.rank, float(first[0]),
                                           int(first[1]), float(now), exact).tolist()

    def after(self, first: tuple[float, int]) -> tuple[Sequence[float], Sequence[int], Sequence[int], Sequence[int]]:
        """The members that do not rank before `first` (priority, rank), in (bound, rank) order, as four
        columns: their priority bounds, ranks, input orders and GPUs."""
        if not self.count:
            return (), (), (), ()
        columns = self.kernels().ranked_after(self.members, self.count, self.bound, self.rank, self.gpus,
                                              float(first[0]), int(first[1]))
        return tuple(column.tolist() for column in columns)  # type: ignore[return-value]

    def entries(self) -> list[BoundEntry]:
        """Every member as (bound, rank, input order, GPUs), sorted (for tests and inspection)."""
        orders = self.members[:self.count].tolist()
        return sorted((float(self.bound[o]), int(self.rank[o]), o, int(self.gpus[o])) for o in orders)
