"""What both Heavy-Edge regimes read of a job: its graph Omega with the edges heaviest first, the edge
weight from a vertex to each server, and alpha with one link flipped between intra- and inter-server.

heavy_edge.py (consolidate, b_inter <= b_intra) and spread.py (spread, b_inter > b_intra) both build on
these, so they live here rather than in either one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from ..core import Cluster, TrainingPlan
from ..graph import AllReduceTopology, WeightedGraph, omega_weights
from ..timing import TimingModel


@dataclass(frozen=True)
class JobGraph:
    """Omega of a plan plus its edges in the contraction order (-weight, u, v)."""

    graph: WeightedGraph
    edges_heaviest_first: tuple[tuple[int, int, float], ...]


@lru_cache(maxsize=4096)
def job_graph(plan: TrainingPlan, allreduce_edges: AllReduceTopology) -> JobGraph:
    """Omega of `plan`, built once per (plan, topology): plans are immutable, so is their graph."""
    graph = omega_weights(plan, allreduce_edges)
    edges = sorted(((min(u, v), max(u, v), w) for u, v, w in graph.weighted_edges()),
                   key=lambda e: (-e[2], e[0], e[1]))
    return JobGraph(graph, tuple(edges))


def most_free_server(rem: Sequence[int]) -> int:
    """argmax (rem[h], -h): the lowest-numbered server among those with the most free GPUs."""
    return rem.index(max(rem))


def server_affinity(graph: WeightedGraph, v: int, servers: Sequence[int]) -> dict[int, float]:
    """Edge weight between `v` and the already placed vertices, per server."""
    affinity: dict[int, float] = {}
    for u, weight in graph.adj[v].items():
        h = servers[u]
        if h >= 0:
            affinity[h] = affinity.get(h, 0.0) + weight
    return affinity


@dataclass(frozen=True)
class LinkCosts:
    """alpha with every link intra-server (`floor`) and with exactly one link inter-server."""

    floor: float
    stage: tuple[float, ...]
    boundary: tuple[float, ...]

    def thresholds(self) -> list[float]:
        return sorted({self.floor, *self.stage, *self.boundary})


def one_link_flipped(plan: TrainingPlan, cluster: Cluster, timing: TimingModel, spanning: bool) -> LinkCosts:
    """alpha with every link's spans-servers flag at `spanning` (`floor`), and with each single stage or
    boundary link flipped alone (a stage of one replica has no link: its cost is the floor)."""
    n = len(plan.stages)
    stages, bounds = [spanning] * n, [spanning] * (n - 1)
    floor = timing.alpha_from_links(plan, cluster, stages, bounds)

    def flipped(flags: list[bool], i: int) -> list[bool]:
        out = list(flags)
        out[i] = not spanning
        return out

    stage = tuple(timing.alpha_from_links(plan, cluster, flipped(stages, s), bounds)
                  if plan.stages[s].replicas > 1 else floor for s in range(n))
    boundary = tuple(timing.alpha_from_links(plan, cluster, stages, flipped(bounds, b)) for b in range(n - 1))
    return LinkCosts(floor, stage, boundary)


def is_max_of_stations(timing: TimingModel) -> bool:
    """True when alpha is a max over independent stations, so link costs combine by max exactly."""
    return timing.pipeline_mode == "async" and not timing.fold_p2p_into_stage
