"""Heavy-Edge when inter-server links are faster (b_inter > b_intra): spread first, never consolidate.

Every term of alpha is non-increasing in the bandwidth of its link, so with b_inter > b_intra a link (a
stage's all-reduce, a boundary's activations) is at least as fast when it spans servers, and the lower bound
`TimingModel.alpha_lower_bound` is reached as soon as every multi-replica stage and every stage boundary spans
more than one server. The paper's consolidation rules (single-server fast path, heavy-edge contraction) aim
the other way, so in this regime the modes are mirrored:

- "refined": when no server must take more than half of the job ("balanced"), the vertices alternate
  between servers, so no two consecutive vertices share one: every link spans servers and alpha equals the
  lower bound (proven, for every timing mode). Otherwise one "dominant" server A must hold most of the job.
  For a threshold T every link costing more than T when kept on one server must span servers; each such
  stage, and one of the two stages of each such boundary, needs a GPU outside A. The fewest such stages
  (a path vertex cover, found greedily) against the GPUs outside A decides feasibility; the smallest
  threshold that is built gives the placement. Under the async max-of-stations timing it is proven optimal
  when every lower threshold needed more GPUs outside A than there are; otherwise the contract rule's
  placement is computed too and the lower alpha wins.
- "greedy_edge": edges heaviest first; an endpoint goes to the server with most room other than its placed
  partner's (the mirror of joining the partner).
- "contract": vertices one by one, most edge weight to placed vertices first, each to the server with the
  least edge weight to it, then most room (the mirror of the listing's split step).
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..core import Cluster, Placement, TrainingPlan
from ..graph import AllReduceTopology
from ..timing import TimingModel
from .links import (JobGraph, LinkCosts, is_max_of_stations, job_graph, most_free_server, one_link_flipped,
                    server_affinity)

SpreadResult = tuple[tuple[int, ...], bool]
"""The vertex -> server map and whether its alpha is proven minimal within the free GPUs."""


def spread_link_costs(plan: TrainingPlan, cluster: Cluster, timing: TimingModel) -> LinkCosts:
    """alpha with every link spanning servers (`floor`) and with exactly one link kept on one server."""
    return one_link_flipped(plan, cluster, timing, spanning=True)


def alternating_servers(free: Sequence[int], gpus: int) -> tuple[int, ...] | None:
    """A vertex -> server map in which no two consecutive vertices share a server, or None when one server
    would have to hold more than ceil(g/2) of them. Servers with most room are used first (fewest servers);
    the most used one takes the even positions, then the others fill the remaining positions in order."""
    half = (gpus + 1) // 2
    counts: list[tuple[int, int]] = []
    left = gpus
    for h in sorted(range(len(free)), key=lambda k: (-free[k], k)):
        if left == 0:
            break
        take = min(free[h], half, left)
        if take > 0:
            counts.append((h, take))
            left -= take
    if left > 0:
        return None
    positions = list(range(0, gpus, 2)) + list(range(1, gpus, 2))
    servers = [-1] * gpus
    slot = 0
    for h, take in counts:
        for _ in range(take):
            servers[positions[slot]] = h
            slot += 1
    return tuple(servers)


def required_links(plan: TrainingPlan, costs: LinkCosts, threshold: float) -> tuple[set[int], set[int]]:
    """Multi-replica stages and boundaries whose alpha exceeds `threshold` unless they span servers."""
    stages = {s for s, stage in enumerate(plan.stages) if stage.replicas > 1 and costs.stage[s] > threshold}
    boundaries = {b for b, cost in enumerate(costs.boundary) if cost > threshold}
    return stages, boundaries


def touched_stages(stages: set[int], boundaries: set[int]) -> set[int]:
    """The fewest stages that need a GPU off the dominant server: every required stage, and for each
    required boundary not yet covered its right stage (greedy left to right, optimal on a path)."""
    touched = set(stages)
    for b in sorted(boundaries):
        if b not in touched and b + 1 not in touched:
            touched.add(b + 1)
    return touched


def dominant_placement(plan: TrainingPlan, free: Sequence[int], dominant: int, stages: set[int],
                       boundaries: set[int]) -> tuple[tuple[int, ...] | None, bool]:
    """A placement spreading the required stages and boundaries with most of the job on `dominant`, and
    whether a None answer is proven (more stages need a GPU off `dominant` than there are such GPUs).

    A touched stage puts one replica off the dominant server: a multi-replica stage then spans two servers,
    a single replica sits apart from its neighbours. When the dominant server cannot hold the rest, more
    replicas move off it where that breaks nothing (multi-replica stages keep one replica on it; a single
    replica never joins a required boundary whose other side is also off it); if that is not enough the
    answer is None, unproven.
    """
    others = sorted((h for h in range(len(free)) if h != dominant and free[h] > 0), key=lambda h: (-free[h], h))
    outside = sum(free[h] for h in others)
    touched = touched_stages(stages, boundaries)
    if len(touched) > outside:
        return None, True
    replicas = [stage.replicas for stage in plan.stages]
    off = [1 if s in touched else 0 for s in range(len(replicas))]
    extra = plan.gpus - free[dominant] - len(touched)
    for s, m in enumerate(replicas):
        if extra <= 0:
            break
        if m > 1:
            move = min(m - 1 - off[s], extra)
            off[s] += move
            extra -= move

    def single_off(s: int) -> bool:
        return 0 <= s < len(replicas) and replicas[s] == 1 and off[s] == 1

    for s, m in enumerate(replicas):
        if extra <= 0:
            break
        if m == 1 and not off[s] and not (s - 1 in boundaries and single_off(s - 1)) \
                and not (s in boundaries and single_off(s + 1)):
            off[s] = 1
            extra -= 1
    if extra > 0:
        return None, False
    room = {h: free[h] for h in others}
    servers: list[int] = []
    for s, m in enumerate(replicas):
        servers.extend([dominant] * (m - off[s]))
        for _ in range(off[s]):
            h = next(k for k in others if room[k] > 0)
            room[h] -= 1
            servers.append(h)
    return tuple(servers), False


def refined_spread(plan: TrainingPlan, free: Sequence[int], cluster: Cluster, timing: TimingModel,
                   allreduce_edges: AllReduceTopology = "ring") -> SpreadResult:
    """Alternate when balanced (proven optimal); else the smallest threshold built around the dominant
    server, proven under max-of-stations timing when every lower threshold is proven infeasible. Unproven
    answers (other timings, or an unproven lower threshold) are compared with the contract rule and the
    lower alpha wins, so refined is never worse than contract."""
    alternating = alternating_servers(free, plan.gpus)
    if alternating is not None:
        return alternating, True
    dominant = max(range(len(free)), key=lambda h: (free[h], -h))
    costs = spread_link_costs(plan, cluster, timing)
    exact_costs = is_max_of_stations(timing)
    proven = True
    candidates: list[tuple[int, ...]] = []
    for threshold in costs.thresholds():
        servers, infeasible = dominant_placement(plan, free, dominant, *required_links(plan, costs, threshold))
        if servers is None:
            proven = proven and infeasible
            continue
        if exact_costs and proven:
            return servers, True
        candidates.append(servers)
        if exact_costs:
            break
    candidates.append(contract_spread(job_graph(plan, allreduce_edges), free))
    return min(candidates, key=lambda xs: timing.alpha(plan, Placement(xs), cluster)), False


def greedy_edge_spread(jg: JobGraph, free: Sequence[int]) -> tuple[int, ...]:
    """Edges heaviest first: an unplaced endpoint goes to the server with most room other than its
    partner's (its partner's if no other has room); isolated vertices to the server with most room."""
    rem = list(free)
    servers = [-1] * jg.graph.number_of_nodes()

    def put(v: int, avoid: int | None) -> None:
        others = [h for h in range(len(rem)) if rem[h] > 0 and h != avoid]
        h = max(others, key=lambda k: (rem[k], -k)) if others else most_free_server(rem)
        servers[v] = h
        rem[h] -= 1

    for u, v, _ in jg.edges_heaviest_first:
        if servers[u] >= 0 and servers[v] >= 0:
            continue
        if servers[u] < 0 and servers[v] < 0:
            put(u, None)
        placed, other = (u, v) if servers[u] >= 0 else (v, u)
        put(other, servers[placed])
    for v in range(len(servers)):
        if servers[v] < 0:
            put(v, None)
    return tuple(servers)


def contract_spread(jg: JobGraph, free: Sequence[int]) -> tuple[int, ...]:
    """Vertex by vertex, most edge weight to placed vertices first (lowest id on ties), each to the server
    with the least edge weight to it, then most room, then lowest index."""
    graph = jg.graph
    rem = list(free)
    servers = [-1] * graph.number_of_nodes()
    to_placed = [0.0] * len(servers)
    pending = list(range(len(servers)))
    while pending:
        v = max(pending, key=lambda x: (to_placed[x], -x))
        pending.remove(v)
        affinity = server_affinity(graph, v, servers)
        h = min((k for k in range(len(rem)) if rem[k] > 0), key=lambda k: (affinity.get(k, 0.0), -rem[k], k))
        servers[v] = h
        rem[h] -= 1
        for u, weight in graph.adj[v].items():
            to_placed[u] += weight
    return tuple(servers)


def _greedy_edge_mode(plan: TrainingPlan, free: Sequence[int], cluster: Cluster, timing: TimingModel,
                      allreduce_edges: AllReduceTopology) -> SpreadResult:
    return greedy_edge_spread(job_graph(plan, allreduce_edges), free), False


def _contract_mode(plan: TrainingPlan, free: Sequence[int], cluster: Cluster, timing: TimingModel,
                   allreduce_edges: AllReduceTopology) -> SpreadResult:
    return contract_spread(job_graph(plan, allreduce_edges), free), False


SPREAD_MODES: dict[str, Callable[[TrainingPlan, Sequence[int], Cluster, TimingModel, AllReduceTopology],
                                 SpreadResult]] = {
    "contract": _contract_mode,
    "greedy_edge": _greedy_edge_mode,
    "refined": refined_spread,
}
"""Heavy-Edge mode -> its spread-regime runner, returning (servers, proven optimal)."""
