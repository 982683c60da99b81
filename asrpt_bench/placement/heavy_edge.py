"""Heavy-Edge placement (paper-notes 3.2) and our stage-aware refinement.

Modes:
- "contract": the paper-notes 3.2 listing: best-fit single-server fast path, capacity-aware
  heavy-edge contraction (union-find), groups assigned largest first, split groups placed vertex by
  vertex; every tie is broken by a fixed key.
- "greedy_edge": the simpler variant at the end of 3.2: walk edges heaviest first and put both
  endpoints with the server of an already placed endpoint, else on the server with most free GPUs.
- "refined" (default): alpha only depends on which stages and stage boundaries span more than one
  server, so we search at the stage level. Every "link" (a stage's all-reduce, a boundary's p2p) has
  the alpha it causes when it alone is inter-server; for a threshold T the links costing more than T
  must be intra-server, which turns into packing single-server blocks of whole stages into the free
  GPUs. The smallest T whose blocks pack gives the placement; remaining stages are kept whole where
  they fit and leftover replicas follow their heaviest edges. Under the async max-of-stations timing
  (the default) with an exhaustive packing search this alpha is the exact optimum; otherwise the
  contract result is computed too and the better (alpha, cut weight) wins.

Precondition: b_inter <= b_intra (`consolidation_pays`), so keeping a link on one server never slows it
and a single-server placement attains the all-intra lower bound. Every rule above relies on it. With
faster inter-server links the placer switches to the mirrored, spread-first rules of `spread.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Literal, Sequence

from ..core import Cluster, Placement, TrainingPlan
from ..graph import AllReduceTopology, WeightedGraph, cut_weight
from ..params import param
from ..rules import one_of
from ..timing import DEFAULT_TIMING, TimingModel
from .base import GraphParams, register_placer
from .links import (JobGraph, LinkCosts, is_max_of_stations, job_graph, most_free_server, one_link_flipped,
                    server_affinity)
from .spread import SPREAD_MODES

HeavyEdgeMode = Literal["contract", "greedy_edge", "refined"]
PACKING_NODE_BUDGET = 20_000


def consolidation_pays(cluster: Cluster) -> bool:
    """Heavy-Edge's precondition b_inter <= b_intra: no link gets faster by spanning servers, so
    co-locating heavy edges is right and one server holding the job attains the lower bound."""
    return cluster.b_inter <= cluster.b_intra


def bandwidth_regime(cluster: Cluster) -> Literal["consolidate", "spread"]:
    """Which Heavy-Edge rules the cluster selects: "consolidate" when `consolidation_pays`, else "spread"."""
    return "consolidate" if consolidation_pays(cluster) else "spread"


def best_fit_server(free: Sequence[int], size: int) -> int | None:
    """The server with the fewest free GPUs that still holds `size` (lowest index on ties).

    Found by room, not server by server: the least room >= size among the distinct rooms, then the
    first server with it (C-level scans; this runs at every start of a simulation).
    """
    best = None
    for room in set(free):
        if room >= size and (best is None or room < best):
            best = room
    return None if best is None else free.index(best)


def _place_vertex_by_affinity(graph: WeightedGraph, v: int, servers: list[int], rem: list[int]) -> None:
    """Put `v` on argmax over servers with room of (edge weight to placed vertices there, rem, -h)."""
    affinity = server_affinity(graph, v, servers)
    candidates = [h for h in affinity if rem[h] > 0]
    if candidates:
        h = max(candidates, key=lambda k: (affinity[k], rem[k], -k))
    else:
        h = most_free_server(rem)
    servers[v] = h
    rem[h] -= 1


def contract_placement(jg: JobGraph, free: Sequence[int]) -> tuple[int, ...]:
    """Lines 5-20 of the paper-notes 3.2 listing (the caller handles lines 1-4)."""
    from networkx.utils import UnionFind  # here: the default (refined) mode contracts only off its proven path

    graph = jg.graph
    g = graph.number_of_nodes()
    cap = max(free)
    groups = UnionFind(range(g))
    for u, v, _ in jg.edges_heaviest_first:
        ru, rv = groups[u], groups[v]
        if ru != rv and groups.weights[ru] + groups.weights[rv] <= cap:
            groups.union(ru, rv)
    members: dict[int, list[int]] = {}
    for v in range(g):
        members.setdefault(groups[v], []).append(v)
    internal = {root: 0.0 for root in members}
    for u, v, w in jg.edges_heaviest_first:
        if groups[u] == groups[v]:
            internal[groups[u]] += w
    order = sorted(members.values(), key=lambda vs: (-len(vs), -internal[groups[vs[0]]], vs[0]))
    rem = list(free)
    servers = [-1] * g
    for group in order:
        fitting = [h for h in range(len(rem)) if rem[h] >= len(group)]
        if fitting:
            h = max(fitting, key=lambda k: (rem[k], -k))
            for v in group:
                servers[v] = h
            rem[h] -= len(group)
            continue
        pending = list(group)
        while pending:
            v = max(pending, key=lambda x: (sum(server_affinity(graph, x, servers).values()), -x))
            pending.remove(v)
            _place_vertex_by_affinity(graph, v, servers, rem)
    return tuple(servers)


def greedy_edge_placement(jg: JobGraph, free: Sequence[int]) -> tuple[int, ...]:
    """The greedy_edge variant: heaviest edge first, join a placed endpoint's server, else most free."""
    g = jg.graph.number_of_nodes()
    rem = list(free)
    servers = [-1] * g

    def put(v: int, preferred: int | None) -> None:
        h = preferred if preferred is not None and rem[preferred] > 0 else most_free_server(rem)
        servers[v] = h
        rem[h] -= 1

    for u, v, _ in jg.edges_heaviest_first:
        if servers[u] >= 0 and servers[v] >= 0:
            continue
        if servers[u] >= 0 or servers[v] >= 0:
            placed, other = (u, v) if servers[u] >= 0 else (v, u)
            put(other, servers[placed])
        else:
            put(u, None)
            put(v, servers[u])
    for v in range(g):
        if servers[v] < 0:
            put(v, None)
    return tuple(servers)


@lru_cache(maxsize=4096)
def link_costs(plan: TrainingPlan, cluster: Cluster, timing: TimingModel) -> LinkCosts:
    """Evaluate the project's timing function once per link spread alone (once per plan, cluster, timing)."""
    return one_link_flipped(plan, cluster, timing, spanning=False)


def required_blocks(plan: TrainingPlan, costs: LinkCosts, threshold: float) -> list[list[int]]:
    """Runs of consecutive stages that must share one server for alpha <= threshold.

    A boundary costing more than the threshold ties its two stages together; a multi-replica stage
    costing more must sit on one server by itself.
    """
    blocks: list[list[int]] = []
    current = [0]
    for b in range(len(plan.stages) - 1):
        if costs.boundary[b] > threshold:
            current.append(b + 1)
        else:
            blocks.append(current)
            current = [b + 1]
    blocks.append(current)
    return [block for block in blocks
            if len(block) > 1 or (plan.stages[block[0]].replicas > 1 and costs.stage[block[0]] > threshold)]


@dataclass
class _Packer:
    """Depth-first packing of blocks into servers.

    Feasibility of the remaining blocks depends only on the multiset of free room, so bins with equal
    room are tried once each and room multisets that already failed at a depth are never revisited.
    """

    sizes: list[int]
    neighbours: list[list[int]]
    budget: int = PACKING_NODE_BUDGET
    nodes: int = 0
    exhausted: bool = False
    assignment: list[int] = field(default_factory=list)
    failed: set[tuple[int, tuple[int, ...]]] = field(default_factory=set)

    def pack(self, rem: list[int], order: list[int]) -> bool:
        self.assignment = [-1] * len(self.sizes)
        return self._search(rem, order, 0)

    def _candidates(self, rem: list[int], item: int) -> list[int]:
        """Servers holding a neighbouring block first, then one server per distinct room, best fit first."""
        size = self.sizes[item]
        out = sorted({h for h in (self.assignment[j] for j in self.neighbours[item]) if h >= 0 and rem[h] >= size})
        first_with_room: dict[int, int] = {}
        for h, room in enumerate(rem):
            if room >= size and room not in first_with_room:
                first_with_room[room] = h
        out.extend(first_with_room[room] for room in sorted(first_with_room) if first_with_room[room] not in out)
        return out

    def _search(self, rem: list[int], order: list[int], depth: int) -> bool:
        if depth == len(order):
            return True
        state = (depth, tuple(sorted(rem)))
        if state in self.failed:
            return False
        self.nodes += 1
        if self.nodes > self.budget:
            self.exhausted = True
            return False
        item = order[depth]
        for h in self._candidates(rem, item):
            rem[h] -= self.sizes[item]
            self.assignment[item] = h
            if self._search(rem, order, depth + 1):
                return True
            rem[h] += self.sizes[item]
            self.assignment[item] = -1
            if self.exhausted:
                return False
        self.failed.add(state)
        return False


def pack_blocks(plan: TrainingPlan, blocks: list[list[int]], free: Sequence[int]) -> tuple[list[int] | None, bool]:
    """Servers for whole blocks within `free`, or None; the flag says the search ran out of budget."""
    sizes = [sum(plan.stages[s].replicas for s in block) for block in blocks]
    if not blocks:
        return [], False
    if max(sizes) > max(free) or sum(sizes) > sum(free):
        return None, False
    first_stage = {block[0]: i for i, block in enumerate(blocks)}
    last_stage = {block[-1]: i for i, block in enumerate(blocks)}
    neighbours = [[j for j in (last_stage.get(block[0] - 1), first_stage.get(block[-1] + 1)) if j is not None]
                  for block in blocks]
    packer = _Packer(sizes, neighbours)
    order = sorted(range(len(blocks)), key=lambda i: (-sizes[i], blocks[i][0]))
    found = packer.pack(list(free), order)
    return (packer.assignment if found else None), packer.exhausted


def _complete_placement(plan: TrainingPlan, allreduce_edges: AllReduceTopology, free: Sequence[int],
                        blocks: list[list[int]], block_servers: list[int], costs: LinkCosts) -> tuple[int, ...]:
    """Place packed blocks, then other stages whole where they fit, then leftovers by affinity."""
    servers = [-1] * plan.gpus
    rem = list(free)
    in_block: set[int] = set()
    for block, h in zip(blocks, block_servers):
        for s in block:
            in_block.add(s)
            for v in plan.stage_vertices(s):
                servers[v] = h
            rem[h] -= plan.stages[s].replicas
    stage_host = {s: block_servers[i] for i, block in enumerate(blocks) for s in block}
    optional = sorted((s for s in range(len(plan.stages)) if s not in in_block),
                      key=lambda s: (-costs.stage[s], -plan.stages[s].param_bytes, s))
    for s in optional:
        m = plan.stages[s].replicas
        near = [stage_host[t] for t in (s - 1, s + 1) if t in stage_host and rem[stage_host[t]] >= m]
        h = near[0] if near else best_fit_server(rem, m)
        if h is None:
            continue
        stage_host[s] = h
        for v in plan.stage_vertices(s):
            servers[v] = h
        rem[h] -= m
    leftovers = [v for v in range(plan.gpus) if servers[v] < 0]
    if leftovers:
        graph = job_graph(plan, allreduce_edges).graph
        for v in leftovers:
            _place_vertex_by_affinity(graph, v, servers, rem)
    return tuple(servers)


def stage_packing_placement(plan: TrainingPlan, free: Sequence[int], cluster: Cluster, timing: TimingModel,
                            allreduce_edges: AllReduceTopology) -> tuple[tuple[int, ...], bool]:
    """The smallest-threshold stage packing and whether every lower threshold was proven infeasible."""
    costs = link_costs(plan, cluster, timing)
    thresholds = costs.thresholds()
    lo, hi = 0, len(thresholds) - 1
    proven = True
    best: tuple[list[list[int]], list[int]] | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        blocks = required_blocks(plan, costs, thresholds[mid])
        assignment, exhausted = pack_blocks(plan, blocks, free)
        if assignment is not None:
            best = (blocks, assignment)
            hi = mid - 1
        else:
            proven = proven and not exhausted
            lo = mid + 1
    assert best is not None, "the largest threshold asks for no block, which always packs"
    return _complete_placement(plan, allreduce_edges, free, best[0], best[1], costs), proven


HEAVY_EDGE_MODES: tuple[str, ...] = ("contract", "greedy_edge", "refined")


@dataclass(frozen=True)
class HeavyEdgeParams(GraphParams):
    """Heavy-Edge's variant (module doc) and the graph it cuts."""

    mode: str = param("refined", one_of(*HEAVY_EDGE_MODES),
                      "contract (the paper), greedy_edge, or refined (stage packing, certified when optimal)")


@register_placer("heavy_edge", HeavyEdgeParams, needs=("timing",))
@dataclass(frozen=True)
class HeavyEdgePlacer:
    """Heavy-Edge placement on the job graph Omega; see the module docstring for the modes."""

    mode: HeavyEdgeMode = "refined"
    timing: TimingModel = DEFAULT_TIMING
    allreduce_edges: AllReduceTopology = "ring"
    name: str = "heavy_edge"

    def __post_init__(self) -> None:
        HeavyEdgeParams(self.allreduce_edges, self.mode).check("placement")

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        found = self._place(plan, free, cluster)
        return None if found is None else Placement(found[0])

    def place_with_certificate(self, plan: TrainingPlan, free: Sequence[int],
                               cluster: Cluster) -> tuple[Placement | None, bool]:
        """The placement (None if the job does not fit) and whether its alpha is proven minimal within
        `free`: by the mode's own proof, or because it equals `TimingModel.alpha_lower_bound`."""
        found = self._place(plan, free, cluster)
        if found is None:
            return None, False
        placement = Placement(found[0])
        return placement, found[1] or (self.timing.alpha(plan, placement, cluster)
                                       <= self.timing.alpha_lower_bound(plan, cluster))

    def _place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> tuple[tuple[int, ...], bool] | None:
        """(servers, proven optimal) or None when the job does not fit; the regime picks the rules."""
        g = plan.gpus
        if sum(free) < g:
            return None
        if not consolidation_pays(cluster):
            return SPREAD_MODES[self.mode](plan, free, cluster, self.timing, self.allreduce_edges)
        single = best_fit_server(free, g)
        if single is not None:
            return (single,) * g, True
        return _MODE_RUNNERS[self.mode](self, plan, free, cluster)

    def _contract(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> tuple[tuple[int, ...], bool]:
        return contract_placement(job_graph(plan, self.allreduce_edges), free), False

    def _greedy_edge(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> tuple[tuple[int, ...], bool]:
        return greedy_edge_placement(job_graph(plan, self.allreduce_edges), free), False

    def _refined(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> tuple[tuple[int, ...], bool]:
        """Stage packing; certified optimal under max-of-stations timing, else the better of it and contract."""
        servers, proven = stage_packing_placement(plan, free, cluster, self.timing, self.allreduce_edges)
        if proven and is_max_of_stations(self.timing):
            return servers, True
        graph = job_graph(plan, self.allreduce_edges).graph
        candidates = (servers, self._contract(plan, free, cluster)[0])
        return min(candidates, key=lambda xs: (self.timing.alpha(plan, Placement(xs), cluster),
                                               cut_weight(graph, xs))), False


_MODE_RUNNERS: dict[str, Callable[[HeavyEdgePlacer, TrainingPlan, Sequence[int], Cluster],
                                  tuple[tuple[int, ...], bool]]] = {
    "contract": HeavyEdgePlacer._contract,
    "greedy_edge": HeavyEdgePlacer._greedy_edge,
    "refined": HeavyEdgePlacer._refined,
}
assert tuple(sorted(_MODE_RUNNERS)) == HEAVY_EDGE_MODES
