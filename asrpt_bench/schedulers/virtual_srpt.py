"""Exact event-driven preemptive SRPT on one machine (paper-notes 5.4).

The released job with the least remaining work runs at unit speed; an arrival with less work
preempts it through the heap order. Ties break by a caller-given key (release, input order by
default), so the completion order is deterministic.

Virtual time is kept exact between virtual events: the running job's remaining work is stored as
of its *anchor* (the last arrival or completion) and rewritten only when a job arrives, never when
the caller merely looks at a later instant. So `advance_to` calls at unrelated instants (the real
completions A-SRPT dispatches at) cannot change the virtual schedule, and integer instances stay
integral: an exact tie in remaining work is broken by the tiebreak key, not by rounding noise.
"""

from __future__ import annotations

import heapq
import math
from typing import Hashable


class VirtualMachine:
    """What every virtual single machine keeps: a heap of (rank, tiebreak, job id) whose top runs, the
    instant of the last virtual event (the anchor) and the instant the caller advanced it to."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, tuple, Hashable]] = []
        self._anchor = 0.0
        self._now = 0.0

    @property
    def now(self) -> float:
        return self._now

    def __len__(self) -> int:
        return len(self._heap)


class VirtualSRPT(VirtualMachine):
    """Single-machine preemptive SRPT driven by `add` and `advance_to`; O(log I) per event. The heap's rank
    is the remaining work: the top's as of the anchor, every other entry's current (jobs that are not
    running do not progress)."""

    def add(self, job_id: Hashable, size: float, tiebreak: tuple, now: float) -> list[tuple[Hashable, float]]:
        """Release a job of `size` work at `now`; returns the completions up to `now`, in order.

        An arrival is a virtual event: the running job's progress since its anchor is booked
        (once), so it and the new job compare by their remaining work at `now`.
        """
        if not (math.isfinite(size) and size >= 0):
            raise ValueError(f"virtual job {job_id!r}: size must be finite and >= 0, got {size}")
        completed = self.advance_to(now)
        heap = self._heap
        if heap and now > self._anchor:
            remaining, top_tiebreak, top_id = heap[0]
            left = remaining - (now - self._anchor)
            if now + left <= now:
                # Rounding left less work than one ulp of `now`: the job completes now, not later.
                heapq.heappop(heap)
                completed.append((top_id, now))
            else:
                heapq.heapreplace(heap, (left, top_tiebreak, top_id))
        self._anchor = now
        heapq.heappush(heap, (size, tiebreak, job_id))
        return completed

    def next_completion(self) -> float | None:
        """When the running job completes if nothing else arrives."""
        return self._anchor + self._heap[0][0] if self._heap else None

    def remaining(self, t: float) -> dict[Hashable, float]:
        """Remaining virtual work at `t` (no earlier than the last `advance_to`) of every unfinished job;
        read-only, so looking does not perturb the schedule."""
        heap = self._heap
        if not heap:
            return {}
        left = {job_id: work for work, _, job_id in heap}
        top = heap[0]
        left[top[2]] = max(top[0] - (t - self._anchor), 0.0)
        return left

    def ranks(self, t: float) -> dict[Hashable, float]:
        """The rank of every unfinished job at `t` (lower first): its remaining work."""
        return self.remaining(t)

    def advance_to(self, t: float) -> list[tuple[Hashable, float]]:
        """Run SRPT up to `t`; returns (job_id, completion time) in completion order.

        Only completions change the stored state; a call that completes nothing leaves the
        remaining work untouched, however often it is made.
        """
        if t < self._now:
            raise ValueError(f"virtual SRPT cannot go back in time from {self._now} to {t}")
        completed = []
        heap = self._heap
        while heap:
            finish = self._anchor + heap[0][0]
            if finish > t:
                break
            job_id = heapq.heappop(heap)[2]
            self._anchor = finish
            completed.append((job_id, finish))
        self._now = t
        return completed
