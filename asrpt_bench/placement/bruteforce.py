"""Exact minimum-alpha placement by enumeration, for small jobs (tests and ILP cross-checks).

alpha depends only on how many replicas of each stage sit on each server, so we enumerate per-stage
count vectors over the servers with free GPUs instead of vertex maps. Servers with equal free
capacity are interchangeable: only assignments whose per-server count columns are lexicographically
non-increasing within each equal-capacity class are visited. Ties in alpha are broken by the cut
weight of Omega, then by the smallest vertex map among the visited representatives.
"""

from __future__ import annotations

import math
from typing import Iterator, Sequence

from ..core import Cluster, Placement, TrainingPlan
from ..graph import AllReduceTopology, cut_weight
from ..timing import DEFAULT_TIMING, TimingModel
from .links import job_graph

MAX_ENUMERATED_STATES = 2_000_000


def _compositions(total: int, caps: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every way to write `total` as a sum of len(caps) parts with part k <= caps[k]."""
    if not caps:
        if total == 0:
            yield ()
        return
    rest_cap = sum(caps[1:])
    for first in range(min(total, caps[0]), max(0, total - rest_cap) - 1, -1):
        for tail in _compositions(total - first, caps[1:]):
            yield (first, *tail)


def enumeration_size(plan: TrainingPlan, free: Sequence[int]) -> int:
    """An upper bound on the count vectors visited (before symmetry pruning)."""
    hosts = sum(1 for f in free if f > 0)
    return math.prod(math.comb(stage.replicas + hosts - 1, hosts - 1) for stage in plan.stages)


def _placement_from_counts(plan: TrainingPlan, hosts: Sequence[int], counts: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """Replicas of each stage fill their servers contiguously (a ring then crosses servers least)."""
    servers: list[int] = []
    for per_host in counts:
        for k, c in enumerate(per_host):
            servers.extend([hosts[k]] * c)
    return tuple(servers)


def optimal_placement(plan: TrainingPlan, free: Sequence[int], cluster: Cluster,
                      timing: TimingModel = DEFAULT_TIMING, allreduce_edges: AllReduceTopology = "ring",
                      max_states: int = MAX_ENUMERATED_STATES) -> tuple[Placement, float]:
    """The placement of minimum alpha within `free` (ties: least cut weight) and its alpha.

    Raises ValueError when the job does not fit or the enumeration would exceed `max_states`.
    """
    if sum(free) < plan.gpus:
        raise ValueError(f"{plan.model}/{plan.config} needs {plan.gpus} GPUs, only {sum(free)} free")
    size = enumeration_size(plan, free)
    if size > max_states:
        raise ValueError(f"brute force for {plan.model}/{plan.config} on {sum(1 for f in free if f)} servers "
                         f"would visit up to {size} states (limit {max_states}); use the ILP instead")
    hosts = [h for h, f in enumerate(free) if f > 0]
    caps = [free[h] for h in hosts]
    twin_of_previous = [k > 0 and caps[k] == caps[k - 1] for k in range(len(hosts))]
    graph = job_graph(plan, allreduce_edges).graph
    n = len(plan.stages)
    best: tuple[float, float, tuple[int, ...]] | None = None
    counts: list[tuple[int, ...]] = []

    def canonical_prefix() -> bool:
        columns = list(zip(*counts))
        return all(not twin_of_previous[k] or columns[k - 1] >= columns[k] for k in range(1, len(hosts)))

    def visit(s: int, room: list[int]) -> None:
        nonlocal best
        if s == n:
            used = [frozenset(k for k, c in enumerate(row) if c) for row in counts]
            stage_spread = [len(u) > 1 for u in used]
            boundary_spread = [len(used[b] | used[b + 1]) > 1 for b in range(n - 1)]
            alpha = timing.alpha_from_links(plan, cluster, stage_spread, boundary_spread)
            if best is not None and alpha > best[0]:
                return
            servers = _placement_from_counts(plan, hosts, counts)
            key = (alpha, cut_weight(graph, servers), servers)
            if best is None or key < best:
                best = key
            return
        for row in _compositions(plan.stages[s].replicas, room):
            counts.append(row)
            if canonical_prefix():
                visit(s + 1, [r - c for r, c in zip(room, row)])
            counts.pop()

    visit(0, caps)
    assert best is not None
    return Placement(best[2]), best[0]
