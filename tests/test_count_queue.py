"""`CountQueue` against a plain sorted list: the blocks (split as insertions grow them, emptied by removals)
and their least lengths per lane must let a scan find exactly the jobs a full filter of the queue finds."""

from __future__ import annotations

import random

import pytest

from asrpt_bench.schedulers.queues import BLOCK, CountQueue, Window


class _Item:
    """A queued job: its key, GPU count and a length per lane (two pools)."""

    def __init__(self, key: float, gpus: int, lengths: tuple[float, float]) -> None:
        self.key, self.gpus, self.lengths = key, gpus, lengths


def _queue(seed: int, size: int = 12 * BLOCK) -> tuple[CountQueue[_Item], list[_Item]]:
    """Items of two GPU counts inserted first each before all others, then at random keys (so the first block
    and blocks in the middle grow past 2 x BLOCK and split), a third of them removed again; the queue and
    the plain list of what it holds, in key order. A job's lengths grow with its key in pool 0 and shrink in
    pool 1, so a block's least length tells blocks apart."""
    rng = random.Random(seed)
    queue: CountQueue[_Item] = CountQueue(in_order=True)
    items = []
    keys = [rng.random() for _ in range(size)]
    keys[:size // 2] = sorted(keys[:size // 2], reverse=True)  # each before all others: the first block splits
    for key in keys:  # lengths follow the key, so blocks differ in their least length
        item = _Item(key, rng.choice([1, 2]), (1 + 95 * key + rng.uniform(0, 4), 96 - 95 * key + rng.uniform(0, 4)))
        queue.insert(item, item.gpus, item.lengths, item.key)
        items.append(item)
    for item in rng.sample(items, size // 3):
        queue.remove(item)
        items.remove(item)
    return queue, sorted(items, key=lambda item: item.key)


@pytest.mark.parametrize("seed", range(6))
def test_a_scan_finds_exactly_the_jobs_a_full_filter_finds(seed: int) -> None:
    queue, items = _queue(seed)
    assert [item for _, item in queue.after(None)] == items
    rng = random.Random(100 + seed)
    for _ in range(20):
        after, lane, bound, idle = rng.choice(items).key, rng.randrange(2), rng.uniform(1, 100), rng.choice([1, 2])
        now = rng.choice([0.0, 25.0])
        found = [item for _, item in queue.fitting(after, lambda: idle, now, lambda gpus: bound, lane)]
        assert found == [item for item in items
                         if item.key > after and item.gpus <= idle and now + item.lengths[lane] <= bound]
        unbounded = [item for _, item in queue.fitting(after, lambda: idle, now, lambda gpus: None, lane)]
        assert unbounded == [item for item in items if item.key > after and item.gpus <= idle]


@pytest.mark.parametrize("in_order", [False, True])
def test_a_job_found_before_the_bound_shrank_is_tested_again_and_the_next_found_in_its_lane(in_order: bool) -> None:
    """The caller may shrink the bounds while it reads the scan (a start uses up GPUs or time). A job found
    under the earlier bound (key 2) fails when it is reached, and the next one of its count is looked for in
    the scan's lane: key 3 passes only in the other lane, key 4 in this one."""
    queue: CountQueue[_Item] = CountQueue(in_order=in_order)
    for item in (_Item(1.0, 2, (1.0, 1.0)), _Item(2.0, 1, (1.0, 50.0)), _Item(3.0, 1, (1.0, 50.0)),
                 _Item(4.0, 1, (100.0, 5.0))):
        queue.insert(item, item.gpus, item.lengths, item.key)
    bound = [60.0]
    found = []
    for key, _ in queue.fitting(None, lambda: 2, 0.0, lambda gpus: bound[0], lane=1):
        found.append(key)
        bound[0] = 10.0
    assert found == [1.0, 4.0]


@pytest.mark.parametrize("pool", [0, 1])
def test_an_easy_scan_reads_the_lengths_of_the_reserved_pool(pool: int) -> None:
    """Behind a blocked head, with the head's reservation in `pool`: the jobs that fit and either need at most
    the extra GPUs or end by the shadow time at their length in that pool."""
    queue, items = _queue(7)
    head, now, shadow = items[0], 10.0, 60.0
    window = Window(shadow, extra=1, pool=pool)
    def passing(lane: int) -> list[_Item]:
        return [item for item in items[1:] if item.gpus <= 1 or now + item.lengths[lane] <= shadow]

    assert passing(0) != passing(1)  # the lanes disagree on some job, so reading the wrong one shows
    assert [item for item, _ in queue.behind(head, lambda: 2, window, now)] == passing(pool)


@pytest.mark.parametrize("seed", range(3))
def test_the_job_after_a_key_and_the_jobs_after_it_are_the_plain_lists(seed: int) -> None:
    """`next_after` and `after` from every queued key, from keys between and beyond them and from None (the
    head), in a queue made `in_order` (a bisect in its blocks) and in one that merges its counts."""
    queue, items = _queue(seed)
    merged: CountQueue[_Item] = CountQueue()
    for item in items:
        merged.insert(item, item.gpus, item.lengths, item.key)
    keys = [item.key for item in items]
    probes = [None, -1.0, 2.0, *keys, *((a + b) / 2 for a, b in zip(keys, keys[1:]))]
    for either in (queue, merged):
        for after in probes:
            following = [item for item in items if after is None or item.key > after]
            assert [item for _, item in either.after(after)] == following, after
            assert either.next_after(after) == ((following[0].key, following[0]) if following else None), after
    assert CountQueue(in_order=True).next_after(None) is None
