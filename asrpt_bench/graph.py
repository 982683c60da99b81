"""The job graph Omega (paper-notes 3.1): one vertex per stage replica, edge weight = bytes per iteration."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Literal, Union

from .core import PLAN, SERVER_INDICES, ConfigError, TrainingPlan
from .rules import one_of

if TYPE_CHECKING:
    import networkx as nx

AllReduceTopology = Literal["ring", "clique"]
TOPOLOGY = one_of("ring", "clique")


def build_omega(plan: TrainingPlan, allreduce_edges: AllReduceTopology = "ring") -> nx.Graph:
    """Build Omega for `plan` as a NetworkX graph.

    Vertices are 0..g-1 in stage-major order with attributes `stage` and `replica`.
    Inter-stage edges join every replica of s with every replica of s+1, each carrying
    2*a_s / (m_s * m_{s+1}) bytes, so the boundary carries 2*a_s in total. All-reduce edges form a
    ring over the replicas of a stage with 2(m-1)/m * P_s bytes each (the bytes a ring neighbour
    sends), or, with `allreduce_edges="clique"`, every pair carries 2*P_s/m. Each edge's `kind` is
    "allreduce" or "p2p".
    """
    import networkx as nx  # here, not at the top: a run places on `omega_weights` and never needs NetworkX

    vertices, edges = _omega(plan, allreduce_edges)
    graph = nx.Graph(model=plan.model, config=plan.config)
    for v, s, k in vertices:
        graph.add_node(v, stage=s, replica=k)
    for u, v, weight, kind in edges:
        graph.add_edge(u, v, weight=weight, kind=kind)
    return graph


class WeightedGraph:
    """Omega's vertices and edge weights without NetworkX, for the placers: `adj[v]` maps each neighbour
    of v to the edge's weight in the order NetworkX's `Graph.adj` lists them, and `weighted_edges()`
    yields the edges in the order of NetworkX's `Graph.edges`, so sums over either come out the same."""

    __slots__ = ("adj",)

    def __init__(self, vertices: int, edges: list[tuple[int, int, float]]) -> None:
        self.adj: tuple[dict[int, float], ...] = tuple({} for _ in range(vertices))
        for u, v, weight in edges:
            self.adj[u][v] = weight
            self.adj[v][u] = weight

    def number_of_nodes(self) -> int:
        return len(self.adj)

    def weighted_edges(self) -> Iterator[tuple[int, int, float]]:
        """Each edge once as (u, v, weight), from its endpoint that comes first in vertex order."""
        for u, neighbours in enumerate(self.adj):
            for v, weight in neighbours.items():
                if v >= u:
                    yield u, v, weight


def omega_weights(plan: TrainingPlan, allreduce_edges: AllReduceTopology = "ring") -> WeightedGraph:
    """Omega of `plan` (as `build_omega` builds it) as vertices and edge weights only."""
    vertices, edges = _omega(plan, allreduce_edges)
    return WeightedGraph(len(vertices), [(u, v, weight) for u, v, weight, _ in edges])


def _omega(plan: TrainingPlan, allreduce_edges: AllReduceTopology) -> tuple[list[tuple[int, int, int]],
                                                                           list[tuple[int, int, float, str]]]:
    """Omega's vertices as (vertex, stage, replica) and its edges as (u, v, weight, kind), in the order
    `build_omega` adds them."""
    PLAN.require("plan", plan)
    TOPOLOGY.require("allreduce_edges", allreduce_edges)
    vertices = [(v, s, k) for s in range(len(plan.stages)) for k, v in enumerate(plan.stage_vertices(s))]
    edges: list[tuple[int, int, float, str]] = []
    for s, stage in enumerate(plan.stages):
        members = list(plan.stage_vertices(s))
        m = stage.replicas
        if m > 1 and stage.param_bytes > 0:
            if allreduce_edges == "ring":
                weight = 2.0 * (m - 1) / m * stage.param_bytes
                pairs = {tuple(sorted((members[k], members[(k + 1) % m]))) for k in range(m)}
            else:
                weight = 2.0 * stage.param_bytes / m
                pairs = {(u, v) for i, u in enumerate(members) for v in members[i + 1:]}
            for u, v in sorted(pairs):
                edges.append((u, v, weight, "allreduce"))
        if s + 1 < len(plan.stages) and stage.activation_bytes > 0:
            nxt = plan.stages[s + 1]
            weight = 2.0 * stage.activation_bytes / (m * nxt.replicas)
            for u in members:
                for v in plan.stage_vertices(s + 1):
                    edges.append((u, v, weight, "p2p"))
    return vertices, edges


def cut_weight(graph: Union[nx.Graph, WeightedGraph], servers: tuple[int, ...]) -> float:
    """Bytes per iteration crossing servers under a vertex -> server map (the min-cut objective), summed
    in the same order from either form of Omega."""
    SERVER_INDICES.require("servers", servers)
    if len(servers) != graph.number_of_nodes():
        raise ConfigError(f"servers must give a server for each of the graph's {graph.number_of_nodes()} vertices, "
                          f"got {len(servers)}")
    edges = graph.weighted_edges() if isinstance(graph, WeightedGraph) else graph.edges(data="weight")
    return sum(w for u, v, w in edges if servers[u] != servers[v])
