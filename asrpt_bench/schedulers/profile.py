"""The free-GPU profile of conservative backfilling: a step function of time, searched for the earliest
interval with enough GPUs and lowered by each reservation.

Steps sit in blocks of at most 2 * BLOCK, each with its least and greatest free count and a pending
offset for reservations that cover it whole, so a search skips every block that cannot hold the job (or
that holds it throughout) and a long reservation touches only the blocks at its two ends.
"""

from __future__ import annotations

import bisect
from typing import Sequence

BLOCK = 32


class Profile:
    """Free GPU count over time from `now`: step k holds on [times[k], times[k+1]). It starts from the idle
    GPUs now plus the GPUs of running jobs at their estimated ends; reservations subtract their GPUs over
    their interval. The last step always holds every GPU (reservations end), so every search succeeds."""

    def __init__(self, now: float, idle: int, ends: Sequence[tuple[float, int]]) -> None:
        times, free = [now], [idle]
        for end, gpus in sorted(ends):
            if end <= times[-1]:
                free[-1] += gpus
            else:
                times.append(end)
                free.append(free[-1] + gpus)
        self.times = [times[k:k + BLOCK] for k in range(0, len(times), BLOCK)]
        self.free = [free[k:k + BLOCK] for k in range(0, len(free), BLOCK)]  # before each block's offset
        self.offset = [0] * len(self.times)
        self.least = [min(block) for block in self.free]
        self.most = [max(block) for block in self.free]
        self.starts = [block[0] for block in self.times]

    def earliest(self, gpus: int, duration: float, not_before: float) -> float:
        """The earliest t >= not_before with at least `gpus` free over [t, t + duration) (at t itself when
        the duration is 0): not_before or the start of a step."""
        b = max(bisect.bisect_right(self.starts, not_before) - 1, 0)
        i = max(bisect.bisect_right(self.times[b], not_before) - 1, 0)
        while True:
            b, i = self._first_with(gpus, b, i)
            step = self.times[b][i]
            start = step if step > not_before else not_before
            short = self._first_short(gpus, b, i + 1, start + duration)
            if short is None:
                return start
            b, i = short

    def _first_with(self, gpus: int, b: int, i: int) -> tuple[int, int]:
        """The first step at or after (b, i) with at least `gpus` free."""
        while True:
            if self.most[b] + self.offset[b] >= gpus:
                need, free = gpus - self.offset[b], self.free[b]
                for j in range(i, len(free)):
                    if free[j] >= need:
                        return b, j
            b, i = b + 1, 0

    def _first_short(self, gpus: int, b: int, i: int, end: float) -> tuple[int, int] | None:
        """The first step at or after (b, i) that starts before `end` with fewer than `gpus` free, if any."""
        while b < len(self.times):
            times = self.times[b]
            if i < len(times):
                if times[i] >= end:
                    return None
                if self.least[b] + self.offset[b] >= gpus:
                    if times[-1] >= end:
                        return None
                else:
                    need, free = gpus - self.offset[b], self.free[b]
                    for j in range(i, len(times)):
                        if times[j] >= end:
                            return None
                        if free[j] < need:
                            return b, j
            b, i = b + 1, 0
        return None

    def reserve(self, start: float, duration: float, gpus: int) -> None:
        """Take `gpus` off the profile over [start, start + duration)."""
        if duration > 0 and gpus:
            self.add(start, start + duration, -gpus)

    def add(self, begin: float, end: float, change: int) -> None:
        """Add `change` GPUs over [begin, end) (begin < end)."""
        self._split_at(begin)
        self._split_at(end)
        b1, i1 = self._locate(begin)
        b2, i2 = self._locate(end)
        if b1 == b2:
            self._shift(b1, i1, i2, change)
            return
        self._shift(b1, i1, len(self.times[b1]), change)
        for b in range(b1 + 1, b2):
            self.offset[b] += change
        self._shift(b2, 0, i2, change)

    def fewest(self, begin: float, end: float) -> int:
        """The fewest GPUs free at any time in [begin, end) (begin < end)."""
        b, i = self._locate(begin)
        fewest = None
        while b < len(self.times):
            times, free, offset = self.times[b], self.free[b], self.offset[b]
            if i == 0 and times[-1] < end:
                low = self.least[b] + offset
                fewest = low if fewest is None or low < fewest else fewest
            else:
                for j in range(i, len(times)):
                    if times[j] >= end:
                        return fewest  # type: ignore[return-value]
                    value = free[j] + offset
                    fewest = value if fewest is None or value < fewest else fewest
            b, i = b + 1, 0
        return fewest  # type: ignore[return-value]

    def forget_before(self, t: float) -> None:
        """Drop whole blocks that end before t (searches start at t or later)."""
        drop = bisect.bisect_right(self.starts, t) - 1
        if drop > 0:
            for column in (self.times, self.free, self.offset, self.least, self.most, self.starts):
                del column[:drop]

    def _shift(self, b: int, first: int, last: int, change: int) -> None:
        if first >= last:
            return
        free = self.free[b]
        for j in range(first, last):
            free[j] += change
        self.least[b], self.most[b] = min(free), max(free)

    def _locate(self, t: float) -> tuple[int, int]:
        """The block and index of the step holding t."""
        b = max(bisect.bisect_right(self.starts, t) - 1, 0)
        return b, max(bisect.bisect_right(self.times[b], t) - 1, 0)

    def _split_at(self, t: float) -> None:
        """Make t the start of a step (the step holding t is cut in two with its free count)."""
        b, i = self._locate(t)
        times, free = self.times[b], self.free[b]
        if times[i] == t:
            return
        times.insert(i + 1, t)
        free.insert(i + 1, free[i])
        if len(times) > 2 * BLOCK:
            self.times[b + 1:b + 1] = [times[BLOCK:]]
            self.free[b + 1:b + 1] = [free[BLOCK:]]
            del times[BLOCK:], free[BLOCK:]
            self.offset.insert(b + 1, self.offset[b])
            self.starts.insert(b + 1, self.times[b + 1][0])
            self.least[b], self.most[b] = min(free), max(free)
            self.least.insert(b + 1, min(self.free[b + 1]))
            self.most.insert(b + 1, max(self.free[b + 1]))
