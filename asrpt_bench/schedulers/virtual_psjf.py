"""Exact event-driven preemptive shortest job first (PSJF) on one machine: A-SRPT's virtual single
machine with `virtual="psjf"`.

The released job with the least *original* size runs at unit speed; its rank is fixed at arrival, so
an arrival preempts it only if it is smaller than the running job's size, not than its remaining work.
Ties break by a caller-given key (release, input order by default). Time is kept exact as in
VirtualSRPT: the running job's remaining work is booked only at virtual events (arrivals and
completions), never when the caller looks at a later instant, so integer instances stay integral.
"""

from __future__ import annotations

import heapq
import math
from typing import Hashable

from .virtual_srpt import VirtualMachine


class VirtualPSJF(VirtualMachine):
    """Single-machine PSJF driven by `add` and `advance_to` (the interface of VirtualSRPT); O(log I) per event.
    The heap's rank is the size; the remaining work is kept apart."""

    def __init__(self) -> None:
        super().__init__()
        self._left: dict[Hashable, float] = {}  # remaining work; the top's as of the anchor

    def add(self, job_id: Hashable, size: float, tiebreak: tuple, now: float) -> list[tuple[Hashable, float]]:
        """Release a job of `size` work at `now`; returns the completions up to `now`, in order. The running
        job's progress since its anchor is booked (once), as it may now be preempted."""
        if not (math.isfinite(size) and size >= 0):
            raise ValueError(f"virtual job {job_id!r}: size must be finite and >= 0, got {size}")
        completed = self.advance_to(now)
        heap, left = self._heap, self._left
        if heap and now > self._anchor:
            top = heap[0][2]
            rest = left[top] - (now - self._anchor)
            if now + rest <= now:
                # Rounding left less work than one ulp of `now`: the job completes now, not later.
                heapq.heappop(heap)
                del left[top]
                completed.append((top, now))
            else:
                left[top] = rest
        self._anchor = now
        heapq.heappush(heap, (size, tiebreak, job_id))
        left[job_id] = size
        return completed

    def next_completion(self) -> float | None:
        """When the running job completes if nothing else arrives."""
        return self._anchor + self._left[self._heap[0][2]] if self._heap else None

    def ranks(self, t: float) -> dict[Hashable, float]:
        """The rank of every unfinished job (lower first): its size, fixed at arrival."""
        return {job_id: size for size, _, job_id in self._heap}

    def advance_to(self, t: float) -> list[tuple[Hashable, float]]:
        """Run PSJF up to `t`; returns (job_id, completion time) in completion order."""
        if t < self._now:
            raise ValueError(f"virtual PSJF cannot go back in time from {self._now} to {t}")
        completed = []
        heap, left = self._heap, self._left
        while heap:
            top = heap[0][2]
            finish = self._anchor + left[top]
            if finish > t:
                break
            heapq.heappop(heap)
            del left[top]
            self._anchor = finish
            completed.append((top, finish))
        self._now = t
        return completed
