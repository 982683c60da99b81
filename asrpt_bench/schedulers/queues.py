"""A dispatch queue that backfilling scans fast: jobs in queue order, split by GPU count, each count in
blocks that know their shortest estimated job (in every pool of a typed cluster).

EASY and greedy visit the queue behind a blocked head in order, but only jobs that fit the idle GPUs and
(EASY) either need at most the head's extra GPUs or end by its shadow time. Split by GPU count, a scan
skips every count that does not fit (idle GPUs only decrease during a scan); within a count, a block whose
shortest job ends after the shadow time is skipped whole. The order is that of a sort key: the order of
insertion (a sequence number, A-SRPT's virtual completion order) unless the caller gives one (a
one-queue scheduler's (key, release, input order) entry: FIFO, SPJF, any order).

A queue made with `in_order=True` (conservative backfilling's, whose fold walks it) keeps every job once
more in one set of blocks in queue order (`CountQueue.order`), so iterating it in order reads blocks, not
a merge of the counts' generators, and finding the job after a key is a bisect; greedy and EASY read only
the counts and do not pay for it.

On a cluster of several pools a job's estimated length differs by pool, and EASY's shadow time is that of
the pool holding the head's reservation: each job carries one length per pool (a lane; inf where the
pool cannot run it), and a scan skips by the lengths in the reserved pool's lane, the ones its exact test
reads. On one pool there is one lane.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar

T = TypeVar("T")
BLOCK = 64
"""Jobs per block when appended at the end; a block that insertions grow beyond 2 x BLOCK splits in two."""


def nothing_outside() -> int:
    return 0


@dataclass
class Window:
    """EASY's window behind a blocked head: its shadow time and the GPUs to spare then (`extra`, used up by
    the jobs that pass on it); on a cluster of several pools, the pool the head's reservation is in
    (`pool`; shadow and extra are that pool's) and `outside()`, the most GPUs a job that does not pass may
    take now (the most idle in any other pool; 0 on one pool: such a job does not start)."""

    shadow: float
    extra: int
    pool: int | None = None
    outside: Callable[[], int] = nothing_outside


class _Blocks(Generic[T]):
    """One GPU count's jobs in queue order: blocks of (sort key, item, estimated length in every lane), with
    each block's first key and least length per lane."""

    __slots__ = ("keys", "items", "lengths", "firsts", "least")

    def __init__(self, lanes: int) -> None:
        self.keys: list[list[Any]] = []
        self.items: list[list[T]] = []
        self.lengths: list[list[list[float]]] = [[] for _ in range(lanes)]  # lane -> block -> job
        self.firsts: list[Any] = []
        self.least: list[list[float]] = [[] for _ in range(lanes)]  # lane -> block

    def insert(self, key: Any, item: T, lengths: Sequence[float]) -> None:
        """Add a job at its key's place: at the end in a new block once the last holds BLOCK jobs, else in
        the block whose keys span it (split in two once it holds more than 2 x BLOCK)."""
        keys = self.keys
        if not keys or (key > keys[-1][-1] and len(keys[-1]) >= BLOCK):
            keys.append([])
            self.items.append([])
            for column, least, length in zip(self.lengths, self.least, lengths):
                column.append([])
                least.append(length)
            self.firsts.append(key)
            b, i = len(keys) - 1, 0
        else:
            b = max(bisect.bisect_right(self.firsts, key) - 1, 0)
            i = bisect.bisect_right(keys[b], key)
            if i == 0:
                self.firsts[b] = key
        keys[b].insert(i, key)
        self.items[b].insert(i, item)
        for column, least, length in zip(self.lengths, self.least, lengths):
            column[b].insert(i, length)
            if length < least[b]:
                least[b] = length
        if len(keys[b]) > 2 * BLOCK:
            self._split(b)

    def _split(self, b: int) -> None:
        half = len(self.keys[b]) // 2
        for column in (self.keys, self.items, *self.lengths):
            column.insert(b + 1, column[b][half:])
            del column[b][half:]
        self.firsts.insert(b + 1, self.keys[b + 1][0])
        for column, least in zip(self.lengths, self.least):
            least[b] = min(column[b])
            least.insert(b + 1, min(column[b + 1]))

    def remove(self, key: Any) -> None:
        b = bisect.bisect_right(self.firsts, key) - 1
        block = self.keys[b]
        i = bisect.bisect_left(block, key)
        del block[i], self.items[b][i]
        if not block:
            del self.keys[b], self.items[b], self.firsts[b]
            for column, least in zip(self.lengths, self.least):
                del column[b], least[b]
            return
        if i == 0:
            self.firsts[b] = block[0]
        for column, least in zip(self.lengths, self.least):
            if column[b].pop(i) == least[b]:
                least[b] = min(column[b])

    def first(self) -> tuple[Any, T]:
        return self.keys[0][0], self.items[0][0]

    def __bool__(self) -> bool:
        return bool(self.keys)

    def position(self, b: int, i: int, now: float, bound: float | None, lane: int = 0) -> tuple[int, int] | None:
        """The first job at or after block b, index i whose length in `lane` passes: ends by `bound` from now
        (now + length <= bound; every job when bound is None)."""
        keys, lengths, least = self.keys, self.lengths[lane], self.least[lane]
        while b < len(keys):
            if i < len(keys[b]):
                if bound is None:
                    return b, i
                if now + least[b] <= bound:
                    block = lengths[b]
                    for j in range(i, len(block)):
                        if now + block[j] <= bound:
                            return b, j
            b, i = b + 1, 0
        return None

    def locate(self, after: Any) -> tuple[int, int]:
        """The block and index of the first job after key `after` (the first job when None)."""
        if after is None or not self.firsts:
            return 0, 0
        b = max(bisect.bisect_right(self.firsts, after) - 1, 0)
        return b, bisect.bisect_right(self.keys[b], after)

    def iterate(self, after: Any = None) -> Iterator[tuple[Any, T]]:
        """(key, item) in queue order, after key `after` when given (the blocks before are skipped, not copied)."""
        b, i = self.locate(after)
        for keys, items in islice(zip(self.keys, self.items), b, None):
            yield from zip(keys[i:], items[i:]) if i else zip(keys, items)
            i = 0

    def next_after(self, after: Any) -> tuple[Any, T] | None:
        """The first (key, item) after key `after` (from the first when None), or None: `iterate`'s first."""
        b, i = self.locate(after)
        if b < len(self.keys) and i == len(self.keys[b]):
            b, i = b + 1, 0
        return (self.keys[b][i], self.items[b][i]) if b < len(self.keys) else None


class CountQueue(Generic[T]):
    """Items in queue order (insertion order, or the order of the keys given to `insert`), split by GPU
    count (module docstring). `len`, iteration in queue order, `head`, `remove`, and `behind`: the items
    after the head, in queue order, that may pass. One queue holds sequence keys or given keys, not both."""

    def __init__(self, in_order: bool = False) -> None:
        self.counts: dict[int, _Blocks[T]] = {}
        self.order: _Blocks[T] | None = _Blocks(0) if in_order else None
        """With `in_order`, every item once more in queue order, whatever its count: iteration in order walks it,
        not a merge of the counts (conservative backfilling's fold walks the queue; the scans of greedy and EASY
        read only the counts, so they do not pay for keeping it)."""
        self.sequence = 0
        self.keys: dict[int, tuple[Any, int]] = {}  # id(item) -> (sort key, GPU count)
        self._head: tuple[Any, T] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def __bool__(self) -> bool:
        return bool(self.keys)

    def append(self, item: T, gpus: int, lengths: Sequence[float]) -> None:
        """Add `item` at the end of the queue (its key: the next sequence number)."""
        self.sequence += 1
        self.insert(item, gpus, lengths, self.sequence - 1)

    def insert(self, item: T, gpus: int, lengths: Sequence[float], key: Any) -> None:
        """Add `item` at the place of `key` (unique, comparable with every other key in the queue) with its
        GPU count and estimated length in every lane (one per pool; every item has the same lanes)."""
        self.keys[id(item)] = (key, gpus)
        blocks = self.counts.get(gpus)
        if blocks is None:
            blocks = self.counts[gpus] = _Blocks(len(lengths))
        blocks.insert(key, item, lengths)
        if self.order is not None:
            self.order.insert(key, item, ())
        if self._head is None or key < self._head[0]:
            self._head = (key, item)

    def remove(self, item: T) -> None:
        key, gpus = self.keys.pop(id(item))
        blocks = self.counts[gpus]
        blocks.remove(key)
        if self.order is not None:
            self.order.remove(key)
        if self._head is not None and self._head[0] == key:
            self._head = min((blocks.first() for blocks in self.counts.values() if blocks),
                             key=lambda first: first[0], default=None)

    def head(self) -> T:
        assert self._head is not None, "head of an empty queue"
        return self._head[1]

    def __iter__(self) -> Iterator[T]:
        for _, item in self.after(None):
            yield item

    def after(self, key: Any) -> Iterator[tuple[Any, T]]:
        """(key, item) in queue order after key `key` (from the head when None); the queue must not change
        while this runs."""
        if self.order is not None:
            return self.order.iterate(key)
        return heapq.merge(*(blocks.iterate(key) for blocks in self.counts.values()), key=lambda pair: pair[0])

    def next_after(self, key: Any) -> tuple[Any, T] | None:
        """The first (key, item) after key `key` in queue order (the head's when None), or None: `after`'s
        first, found by a bisect in a queue made `in_order`."""
        if self.order is not None:
            return self.order.next_after(key)
        return next(self.after(key), None)

    def behind(self, head: T, idle: Callable[[], int], window: Window | None, now: float) -> Iterator[tuple[T, T]]:
        """(item, item) for every item after `head` in queue order whose GPU count fits `idle()` (the most
        GPUs a job can take now) when it is reached and, with an EASY `window`, that needs at most
        `window.extra` or `window.outside()` GPUs or whose estimated length (in the window's pool) ends by
        `window.shadow` (block by block; the caller applies the exact test). `idle()` and the window only
        shrink while this runs, and the queue must not change."""
        lane = 0 if window is None or window.pool is None else window.pool

        def bound_for(gpus: int) -> float | None:
            if window is None or gpus <= window.extra or gpus <= window.outside():
                return None
            return window.shadow

        for _, item in self.fitting(self.keys[id(head)][0], idle, now, bound_for, lane):
            yield item, item

    def fitting(self, after: Any, idle: Callable[[], int], now: float, bound_for: Callable[[int], float | None],
                lane: int = 0) -> Iterator[tuple[Any, T]]:
        """(key, item) for every item after key `after` in queue order whose GPU count fits `idle()` and whose
        estimated length in `lane` ends by `bound_for(its GPU count)` from now (now + length <= bound; every
        length when None) when it is reached. `idle()` and the bounds may only shrink while this runs (an item
        is tested again when reached), and the queue must not change."""
        pending: list[tuple[Any, int, int, int]] = []
        for gpus, blocks in self.counts.items():
            if gpus <= idle() and blocks:
                found = blocks.position(*blocks.locate(after), now, bound_for(gpus), lane)
                if found is not None:
                    pending.append((blocks.keys[found[0]][found[1]], gpus, *found))
        heapq.heapify(pending)
        while pending:
            key, gpus, b, i = heapq.heappop(pending)
            if gpus > idle():
                continue
            blocks = self.counts[gpus]
            bound = bound_for(gpus)
            if bound is not None and not now + blocks.lengths[lane][b][i] <= bound:  # the bound shrank since found
                found = blocks.position(b, i + 1, now, bound, lane)
                if found is not None:
                    heapq.heappush(pending, (blocks.keys[found[0]][found[1]], gpus, *found))
                continue
            yield key, blocks.items[b][i]
            found = blocks.position(b, i + 1, now, bound_for(gpus), lane)
            if found is not None:
                heapq.heappush(pending, (blocks.keys[found[0]][found[1]], gpus, *found))
