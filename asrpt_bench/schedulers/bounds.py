"""The running jobs of a preemptive scheduler whose running priorities never grow (srtf: remaining time only
shrinks while a job runs; psjf: fixed at arrival), kept for AdmissionScheduler's bounded walk.

A priority computed at some instant bounds the job's priority at every later instant of the same run from
above. Suspendable running jobs sit in one list sorted by (bound, rank), so a walk finds in one bisection
the jobs that certainly rank before the best waiting job (they are kept whatever happens and only their
GPUs count) and recomputes exact priorities only for the rest: usually a few, not every running job.
"""

from __future__ import annotations

import bisect

from .views import JobView

BoundEntry = tuple[float, int, int]
"""(priority bound, rank, input order): ranks are unique, so entries never tie."""


class RunningBounds:
    """Held running jobs (started or resumed, not yet seen past their protected window) and the suspendable
    ones as entries sorted by (priority bound, rank), with the GPUs of each group."""

    def __init__(self) -> None:
        self.entries: list[BoundEntry] = []
        self.entry_of: dict[int, BoundEntry] = {}
        self.suspendable_gpus = 0
        self.held: dict[int, JobView] = {}
        self.held_gpus = 0

    def hold(self, job: JobView) -> None:
        self.held[job.order] = job
        self.held_gpus += job.gpus

    def unhold(self, job: JobView, priority: float, rank: int) -> None:
        """A held job is past its protected window: sorted in with its priority now."""
        del self.held[job.order]
        self.held_gpus -= job.gpus
        self.suspendable_gpus += job.gpus
        self._insert((priority, rank, job.order))

    def remove(self, job: JobView) -> None:
        """A running job stops (suspended or finished)."""
        if self.held.pop(job.order, None) is not None:
            self.held_gpus -= job.gpus
            return
        entry = self.entry_of.pop(job.order)
        del self.entries[bisect.bisect_left(self.entries, entry)]
        self.suspendable_gpus -= job.gpus

    def from_entry(self, first: tuple[float, int]) -> list[BoundEntry]:
        """Take out the entries whose bound does not rank them before `first` (priority, rank), in order."""
        start = bisect.bisect_left(self.entries, first)
        taken = self.entries[start:]
        del self.entries[start:]
        return taken

    def after(self, first: tuple[float, int]) -> list[BoundEntry]:
        """The entries that do not rank before `first` (priority, rank), in order (a copy)."""
        return self.entries[bisect.bisect_left(self.entries, first):]

    def put(self, entries: list[BoundEntry]) -> None:
        """Sort these entries (of jobs already counted as suspendable) back in with their new bounds."""
        for entry in entries:
            self._insert(entry)

    def _insert(self, entry: BoundEntry) -> None:
        bisect.insort(self.entries, entry)
        self.entry_of[entry[2]] = entry
