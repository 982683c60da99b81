"""Compiled loops of RunningBounds (bounds.py) over the suspendable running jobs: which bounds a walk must
recompute, and the jobs a walk looks at in (bound, rank) order. Numba compiles them on first use and caches
the machine code on disk; bounds.py imports this module only when a preemptive run first needs it, so
nothing else pays numba's import. No fastmath: comparisons and sorts are those of the plain Python rule.

A job's key is (bound, rank); it ranks at or after `first` = (first_bound, first_rank) when bound >
first_bound, or bound == first_bound and rank >= first_rank (Python's tuple order, which the plain rule used)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def stale_orders(members: np.ndarray, count: int, bound: np.ndarray, until: np.ndarray, rank: np.ndarray,
                 first_bound: float, first_rank: int, now: float, exact: bool) -> np.ndarray:
    """The input orders among members[:count] whose bound expired by `now` (until <= now) or, unless the
    bounds are `exact`, whose key ranks at or after `first`; in member order."""
    out = np.empty(count, dtype=np.int64)
    found = 0
    for k in range(count):
        order = members[k]
        if until[order] <= now:
            out[found] = order
            found += 1
        elif not exact:
            value = bound[order]
            if value > first_bound or (value == first_bound and rank[order] >= first_rank):
                out[found] = order
                found += 1
    return out[:found]


@njit(cache=True)
def ranked_after(members: np.ndarray, count: int, bound: np.ndarray, rank: np.ndarray, gpus: np.ndarray,
                 first_bound: float, first_rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The members[:count] whose key ranks at or after `first`, sorted by (bound, rank): their bounds, ranks,
    input orders and GPUs (ranks are unique, so the order is total)."""
    picked = np.empty(count, dtype=np.int64)
    found = 0
    for k in range(count):
        order = members[k]
        value = bound[order]
        if value > first_bound or (value == first_bound and rank[order] >= first_rank):
            picked[found] = order
            found += 1
    picked = picked[:found]
    by_rank = picked[np.argsort(rank[picked])]
    ranked = by_rank[np.argsort(bound[by_rank], kind="mergesort")]  # stable: ties on bound keep rank order
    return bound[ranked], rank[ranked], ranked, gpus[ranked]
