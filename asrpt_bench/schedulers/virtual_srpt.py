"""Exact event-driven preemptive SRPT on one machine (paper-notes 5.4).

The released job with the least remaining work runs at unit speed; an arrival with less work
preempts it through the heap order. Ties break by a caller-given key (release, input order by
default), so the completion order is deterministic.
"""

from __future__ import annotations

import heapq
import math
from typing import Hashable


class VirtualSRPT:
    """Single-machine preemptive SRPT driven by `add` and `advance_to`; O(log I) per event."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, tuple, Hashable]] = []
        self._now = 0.0

    @property
    def now(self) -> float:
        return self._now

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, job_id: Hashable, size: float, tiebreak: tuple, now: float) -> list[tuple[Hashable, float]]:
        """Release a job of `size` work at `now`; returns the completions that happen before it."""
        if not (math.isfinite(size) and size >= 0):
            raise ValueError(f"virtual job {job_id!r}: size must be finite and >= 0, got {size}")
        completed = self.advance_to(now)
        heapq.heappush(self._heap, (size, tiebreak, job_id))
        return completed

    def next_completion(self) -> float | None:
        """When the running job completes if nothing else arrives."""
        return self._now + self._heap[0][0] if self._heap else None

    def advance_to(self, t: float) -> list[tuple[Hashable, float]]:
        """Run SRPT up to `t`; returns (job_id, completion time) in completion order."""
        if t < self._now:
            raise ValueError(f"virtual SRPT cannot go back in time from {self._now} to {t}")
        completed = []
        heap = self._heap
        while heap:
            remaining, tiebreak, job_id = heap[0]
            finish = self._now + remaining
            if finish <= t:
                heapq.heappop(heap)
                self._now = finish
                completed.append((job_id, finish))
            else:
                left = remaining - (t - self._now)
                if t + left <= t:
                    # Rounding left less work than one ulp of t: the job completes now, not in the past.
                    heapq.heappop(heap)
                    self._now = t
                    completed.append((job_id, t))
                    continue
                heapq.heapreplace(heap, (left, tiebreak, job_id))
                break
        self._now = t
        return completed
