"""The job graph Omega (paper-notes 3.1): one vertex per stage replica, edge weight = bytes per iteration."""

from __future__ import annotations

from typing import Literal

import networkx as nx

from .core import PLAN, SERVER_INDICES, ConfigError, TrainingPlan
from .rules import one_of

AllReduceTopology = Literal["ring", "clique"]
TOPOLOGY = one_of("ring", "clique")


def build_omega(plan: TrainingPlan, allreduce_edges: AllReduceTopology = "ring") -> nx.Graph:
    """Build Omega for `plan`.

    Vertices are 0..g-1 in stage-major order with attributes `stage` and `replica`.
    Inter-stage edges join every replica of s with every replica of s+1, each carrying
    2*a_s / (m_s * m_{s+1}) bytes, so the boundary carries 2*a_s in total. All-reduce edges form a
    ring over the replicas of a stage with 2(m-1)/m * P_s bytes each (the bytes a ring neighbour
    sends), or, with `allreduce_edges="clique"`, every pair carries 2*P_s/m.
    """
    PLAN.require("plan", plan)
    TOPOLOGY.require("allreduce_edges", allreduce_edges)
    graph = nx.Graph(model=plan.model, config=plan.config)
    for s, stage in enumerate(plan.stages):
        for k, v in enumerate(plan.stage_vertices(s)):
            graph.add_node(v, stage=s, replica=k)
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
                graph.add_edge(u, v, weight=weight, kind="allreduce")
        if s + 1 < len(plan.stages) and stage.activation_bytes > 0:
            nxt = plan.stages[s + 1]
            weight = 2.0 * stage.activation_bytes / (m * nxt.replicas)
            for u in members:
                for v in plan.stage_vertices(s + 1):
                    graph.add_edge(u, v, weight=weight, kind="p2p")
    return graph


def cut_weight(graph: nx.Graph, servers: tuple[int, ...]) -> float:
    """Bytes per iteration crossing servers under a vertex -> server map (the min-cut objective)."""
    SERVER_INDICES.require("servers", servers)
    if len(servers) != graph.number_of_nodes():
        raise ConfigError(f"servers must give a server for each of the graph's {graph.number_of_nodes()} vertices, "
                          f"got {len(servers)}")
    return sum(w for u, v, w in graph.edges(data="weight") if servers[u] != servers[v])
