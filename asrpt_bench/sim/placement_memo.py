"""The placements a run has already asked its placer for, by (plan, free GPUs per server).

A placer is a pure function of (plan, free GPUs per server, cluster) (placement.base), and a run puts the
cluster back into states it has seen: on full Philly with Heavy-Edge, about four proposals in five of strict
A-SRPT repeat one of the 16,384 before them (64,132 of 82,367), and three in five of srtf's (227,080 of
363,974: a job suspended for another and resumed when it ends). A repeated state then gets the placement and
alpha the placer gave (and the engine checked) the first time, without calling the placer or the timing model
again.
"""

from __future__ import annotations

from collections import deque
from typing import Hashable

from ..core import Placement

PLACEMENT_MEMO = 16_384
"""Placements remembered per run; the oldest is forgotten first (most repeats come within this many proposals
of the one before)."""

MISSING = object()
"""What `get` returns for a state the memo does not hold (None is a remembered "does not fit")."""


class PlacementMemo:
    """(id of the plan, free GPUs per server) -> (placement, alpha), or None where the job did not fit, for
    the last `size` states met. The plans live as long as the run, so their ids stay theirs."""

    def __init__(self, size: int | None = None) -> None:
        self.size = PLACEMENT_MEMO if size is None else size
        self.found: dict[tuple[int, Hashable], tuple[Placement, float] | None] = {}
        # the keys in the order met (a dict's first key is found by a scan over the holes its deletions left
        # at the front, which grow to thousands)
        self.keys: deque[tuple[int, Hashable]] = deque()

    def __len__(self) -> int:
        return len(self.found)

    def get(self, key: tuple[int, Hashable]) -> tuple[Placement, float] | None | object:
        """The remembered answer for this state, or MISSING."""
        return self.found.get(key, MISSING)

    def put(self, key: tuple[int, Hashable], answer: tuple[Placement, float] | None) -> None:
        """Remember an answer; past `size` states the oldest goes."""
        self.found[key] = answer
        self.keys.append(key)
        if len(self.found) > self.size:
            del self.found[self.keys.popleft()]
