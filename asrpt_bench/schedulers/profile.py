"""The free-GPU profile of conservative backfilling: a step function of time, searched for the earliest
interval with enough GPUs and lowered by each reservation.

Steps sit in blocks of at most 2 * BLOCK, each with its least and greatest free count and a pending
offset for reservations that cover it whole, so a search skips every block that cannot hold the job (or
that holds it throughout) and a long reservation touches only the blocks at its two ends.

The kept fold of conservative backfilling (conservative.py) uses the compiled copy in profile_jit.py; this
one serves the full pass (dispatch.py) and is the reference the compiled one is tested against.
"""

from __future__ import annotations

import bisect
import math
from typing import Sequence

BLOCK = 32
SWEEP_FROM = 16
"""`add_all` sweeps the steps once when it has more than 1/SWEEP_FROM changes per step."""


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
        self._blocks(times, free)
        self.floors: dict[int, list[tuple[float, float, float]]] = {}
        """Per GPU count, (duration, not_before, earliest) of past searches, by duration: while the profile
        only loses GPUs, a search for as many GPUs, as long and from no earlier finds nothing earlier."""

    def _blocks(self, times: list[float], free: list[int]) -> None:
        """The steps (start, free count) in blocks of BLOCK."""
        self.times = [times[k:k + BLOCK] for k in range(0, len(times), BLOCK)]
        self.free = [free[k:k + BLOCK] for k in range(0, len(free), BLOCK)]  # before each block's offset
        self.offset = [0] * len(self.times)
        self.least = [min(block) for block in self.free]
        self.most = [max(block) for block in self.free]
        self.starts = [block[0] for block in self.times]

    def earliest(self, gpus: int, duration: float, not_before: float) -> float:
        """The earliest t >= not_before with at least `gpus` free over [t, t + duration) (at t itself when
        the duration is 0): not_before or the start of a step."""
        floors = self.floors.get(gpus)
        if floors is None:
            floors = self.floors[gpus] = []
        k = bisect.bisect_right(floors, (duration, math.inf))
        start = not_before
        for j in range(k - 1, -1, -1):
            floor = floors[j]
            if floor[1] <= not_before:
                if floor[2] > not_before:
                    start = floor[2]
                break
        found = self._search(gpus, duration, start)
        self._floor(floors, k, duration, not_before, found)
        return found

    @staticmethod
    def _floor(floors: list[tuple[float, float, float]], k: int, duration: float, not_before: float,
               found: float) -> None:
        """Record a search (position k by duration), dropping the floors it makes useless."""
        if k and floors[k - 1][1] <= not_before and floors[k - 1][2] >= found:
            return
        while k < len(floors) and floors[k][1] >= not_before and floors[k][2] <= found:
            del floors[k]
        floors.insert(k, (duration, not_before, found))

    def _search(self, gpus: int, duration: float, not_before: float) -> float:
        """earliest, from not_before: one walk over the steps, keeping the start of the current run of steps
        with enough GPUs; a block with enough GPUs throughout (or too few throughout) is passed whole."""
        starts, blocks, levels, offsets, least, most = self.starts, self.times, self.free, self.offset, self.least, self.most
        b = bisect.bisect_right(starts, not_before) - 1
        if b < 0:
            b = 0
        i = bisect.bisect_right(blocks[b], not_before) - 1
        if i < 0:
            i = 0
        run = end = None  # the current run's start and the end a job starting there needs
        for b in range(b, len(blocks)):
            times = blocks[b]
            if end is not None and times[i] >= end:
                return run  # type: ignore[return-value]
            offset = offsets[b]
            if not i and least[b] + offset >= gpus:
                if run is None:
                    run = times[0] if times[0] > not_before else not_before
                    end = run + duration
                continue
            if not i and most[b] + offset < gpus:
                run = end = None
                continue
            need, free = gpus - offset, levels[b]
            for j in range(i, len(times)):
                if free[j] >= need:
                    if run is None:
                        run = times[j] if times[j] > not_before else not_before
                        end = run + duration
                elif run is not None:
                    if times[j] >= end:  # type: ignore[operator]
                        return run
                    run = end = None
            i = 0
        assert run is not None, "the last step holds every GPU"
        return run

    def reserve(self, start: float, duration: float, gpus: int) -> None:
        """Take `gpus` off the profile over [start, start + duration)."""
        self.add(start, start + duration, -gpus)

    def add(self, begin: float, end: float, change: int) -> None:
        """Add `change` GPUs over [begin, end) (begin <= end); an empty interval or a change of 0 changes
        nothing. Each end becomes the start of a step (the step holding it is cut in two), the steps between
        shift (whole blocks by their offset), and a step left with the count of the one before it joins it.
        The hot path of the conservative fold (one call per reservation): the shifts and joins are written
        out here rather than as one call each."""
        if begin == end or not change:
            return
        if change > 0:
            self.floors.clear()
        blocks, levels = self.times, self.free
        b2, i2, _ = self._split_at(end)
        b1, i1, inserted = self._split_at(begin)
        if inserted and b1 == b2:
            i2 += 1
        free = levels[b1]
        if b1 == b2:
            free[i1:i2] = [value + change for value in free[i1:i2]]
        else:
            free[i1:] = [value + change for value in free[i1:]]
            offset = self.offset
            for b in range(b1 + 1, b2):
                offset[b] += change
            if i2:
                free = levels[b2]
                free[:i2] = [value + change for value in free[:i2]]
        offset = self.offset
        for b, i in ((b2, i2), (b1, i1)):  # one step per run of equal counts: join a step equal to the one before
            free = levels[b]
            if i > 0:
                if free[i] == free[i - 1]:
                    del blocks[b][i], free[i]
            elif b and free[0] + offset[b] == levels[b - 1][-1] + offset[b - 1]:
                del blocks[b][0], free[0]
        self._fix(b2)
        if b1 != b2:
            self._fix(b1)

    def add_all(self, changes: Sequence[tuple[float, float, int]]) -> None:
        """`add` each (begin, end, change); many at once (a cut fold returning its reservations) in one
        sweep over the steps rather than one split and shift each."""
        if len(changes) * SWEEP_FROM < sum(map(len, self.times)):
            for begin, end, change in changes:
                self.add(begin, end, change)
            return
        deltas: dict[float, int] = {}
        for begin, end, change in changes:
            deltas[begin] = deltas.get(begin, 0) + change
            deltas[end] = deltas.get(end, 0) - change
            if change > 0:
                self.floors.clear()
        points = sorted(deltas)
        times = [t for block in self.times for t in block]
        levels = [value + offset for block, offset in zip(self.free, self.offset) for value in block]
        assert not points or points[0] >= times[0]
        swept_times: list[float] = []
        swept: list[int] = []
        k, shift, count = 0, 0, len(points)
        for step, start in enumerate(times):
            while k < count and points[k] <= start:
                shift += deltas[points[k]]
                k += 1
            level = levels[step]
            if not swept or swept[-1] != level + shift:
                swept_times.append(start)
                swept.append(level + shift)
            stop = times[step + 1] if step + 1 < len(times) else math.inf
            while k < count and points[k] < stop:
                shift += deltas[points[k]]
                if swept[-1] != level + shift:
                    swept_times.append(points[k])
                    swept.append(level + shift)
                k += 1
        self._blocks(swept_times, swept)

    def room(self, gpus: int, t: float) -> float:
        """The first time from t at which fewer than `gpus` GPUs are free (t when fewer are free at t, inf when
        never): a search from t for `gpus` over a duration d finds t itself only if t + d <= room(gpus, t)."""
        b, i = self._locate(t)
        while b < len(self.times):
            offset = self.offset[b]
            if i or self.least[b] + offset < gpus:
                times, free, need = self.times[b], self.free[b], gpus - offset
                for j in range(i, len(times)):
                    if free[j] < need:
                        return times[j] if times[j] > t else t
            b, i = b + 1, 0
        return math.inf

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

    def shortages(self, begin: float, end: float) -> list[tuple[float, int]]:
        """(start, GPUs short) of every step in [begin, end) with fewer than 0 GPUs free (begin a step start)."""
        b, i = self._locate(begin)
        found = []
        while b < len(self.times):
            times, free, offset = self.times[b], self.free[b], self.offset[b]
            if self.least[b] + offset < 0:
                for j in range(i, len(times)):
                    if times[j] >= end:
                        return found
                    if free[j] + offset < 0:
                        found.append((times[j], -(free[j] + offset)))
            elif times[-1] >= end:
                return found
            b, i = b + 1, 0
        return found

    def forget_before(self, t: float) -> None:
        """Drop whole blocks that end before t (searches start at t or later)."""
        drop = bisect.bisect_right(self.starts, t) - 1
        if drop > 0:
            for column in (self.times, self.free, self.offset, self.least, self.most, self.starts):
                del column[:drop]

    def _locate(self, t: float) -> tuple[int, int]:
        """The block and index of the step holding t."""
        b = max(bisect.bisect_right(self.starts, t) - 1, 0)
        return b, max(bisect.bisect_right(self.times[b], t) - 1, 0)

    def _split_at(self, t: float) -> tuple[int, int, bool]:
        """Make t the start of a step (the step holding t is cut in two with its free count); its block and
        index, and whether it was cut. The block may grow beyond 2 * BLOCK until `_fix`."""
        b = bisect.bisect_right(self.starts, t) - 1
        if b < 0:
            b = 0
        times = self.times[b]
        i = bisect.bisect_right(times, t) - 1
        if i < 0:
            i = 0
        if times[i] == t:
            return b, i, False
        times.insert(i + 1, t)
        free = self.free[b]
        free.insert(i + 1, free[i])
        return b, i + 1, True

    def _fix(self, b: int) -> None:
        """Block b after a change: dropped if empty, cut in two if longer than 2 * BLOCK; its summaries."""
        times, free = self.times[b], self.free[b]
        if not times:
            for column in (self.times, self.free, self.offset, self.least, self.most, self.starts):
                del column[b]
            return
        if len(times) > 2 * BLOCK:
            self.times.insert(b + 1, times[BLOCK:])
            self.free.insert(b + 1, free[BLOCK:])
            del times[BLOCK:], free[BLOCK:]
            self.offset.insert(b + 1, self.offset[b])
            self.starts.insert(b + 1, self.times[b + 1][0])
            self.least.insert(b + 1, min(self.free[b + 1]))
            self.most.insert(b + 1, max(self.free[b + 1]))
        self.starts[b] = times[0]
        self.least[b], self.most[b] = min(free), max(free)
