"""Named free-GPU patterns that stress placement: one reproducible vector per fragmentation style.

Shared by the Heavy-Edge benchmark and the ILP comparison so both measure the same situations.
"""

from __future__ import annotations

import numpy as np

from ..core import Cluster

PATTERN_COMPONENTS = {"half_full": 1, "scattered": 2, "hole_and_crumbs": 3}


def _rng(seed: int, pattern: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), PATTERN_COMPONENTS[pattern]])


def half_full(cluster: Cluster, seed: int) -> tuple[int, ...]:
    """Half of the GPUs busy, chosen uniformly at random over all GPUs of the cluster."""
    m = cluster.gpus_per_server
    busy = _rng(seed, "half_full").choice(cluster.total_gpus, size=cluster.total_gpus // 2, replace=False)
    taken = np.bincount(busy // m, minlength=cluster.servers)
    return tuple(int(m - t) for t in taken)


def scattered(cluster: Cluster, seed: int) -> tuple[int, ...]:
    """Every server has 1-3 free GPUs (capped at its size): the worst case for consolidation."""
    draws = _rng(seed, "scattered").integers(1, 4, size=cluster.servers)
    return tuple(int(min(d, cluster.gpus_per_server)) for d in draws)


def hole_and_crumbs(cluster: Cluster, seed: int) -> tuple[int, ...]:
    """One fully free server at a random position; every other server has 0-2 free GPUs."""
    rng = _rng(seed, "hole_and_crumbs")
    crumbs = np.minimum(rng.integers(0, 3, size=cluster.servers), cluster.gpus_per_server)
    crumbs[rng.integers(cluster.servers)] = cluster.gpus_per_server
    return tuple(int(c) for c in crumbs)


def fragmentation_patterns(cluster: Cluster, seed: int) -> dict[str, tuple[int, ...]]:
    """Free GPUs per server for each pattern: empty, half_full, scattered, hole_and_crumbs."""
    return {
        "empty": cluster.empty_free(),
        "half_full": half_full(cluster, seed),
        "scattered": scattered(cluster, seed),
        "hole_and_crumbs": hole_and_crumbs(cluster, seed),
    }
