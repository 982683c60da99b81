"""Job graph Omega: vertices per stage replica, edge weights in bytes per iteration (paper-notes 3.1)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from asrpt_bench.core import Stage, TrainingPlan
from asrpt_bench.graph import build_omega, cut_weight, omega_weights

ROOT = Path(__file__).resolve().parents[1]


def plan(m1: int, m2: int) -> TrainingPlan:
    return TrainingPlan("g", f"{m1}-{m2}", (Stage(0.2, 4e9, 0.1e9, m1), Stage(0.3, 0.2e9, 0.0, m2)))


def test_vertices_are_stage_major_with_attributes():
    omega = build_omega(plan(2, 3))
    assert [omega.nodes[v]["stage"] for v in sorted(omega)] == [0, 0, 1, 1, 1]
    assert [omega.nodes[v]["replica"] for v in sorted(omega)] == [0, 1, 0, 1, 2]


def test_boundary_edges_carry_twice_the_activation_in_total():
    omega = build_omega(plan(2, 3))
    p2p = [w for _, _, d in omega.edges(data=True) if d["kind"] == "p2p" for w in [d["weight"]]]
    assert len(p2p) == 6 and sum(p2p) == pytest.approx(2 * 0.1e9)


def test_ring_allreduce_edges():
    omega = build_omega(plan(2, 3))
    ring = {(u, v): d["weight"] for u, v, d in omega.edges(data=True) if d["kind"] == "allreduce"}
    assert ring[(0, 1)] == pytest.approx(2 * 0.5 * 4e9)  # m = 2: a single edge
    assert {(2, 3), (3, 4), (2, 4)} <= set(ring)
    assert ring[(2, 3)] == pytest.approx(2 * 2 / 3 * 0.2e9)


def test_clique_allreduce_total():
    omega = build_omega(plan(1, 4), allreduce_edges="clique")
    weights = [d["weight"] for _, _, d in omega.edges(data=True) if d["kind"] == "allreduce"]
    assert len(weights) == 6 and sum(weights) == pytest.approx(3 * 0.2e9)


def test_single_gpu_job_has_no_edges():
    omega = build_omega(TrainingPlan("one", "p1xd1", (Stage(0.1, 1e9, 0.0, 1),)))
    assert omega.number_of_nodes() == 1 and omega.number_of_edges() == 0


def test_cut_weight_counts_only_crossing_edges():
    omega = build_omega(plan(2, 2))
    assert cut_weight(omega, (0, 0, 0, 0)) == 0
    assert cut_weight(omega, (0, 0, 1, 1)) == pytest.approx(2 * 0.1e9)


def test_unknown_topology_rejected():
    with pytest.raises(ValueError, match="allreduce_edges"):
        build_omega(plan(2, 2), allreduce_edges="star")


def three_stages() -> TrainingPlan:
    return TrainingPlan("g3", "3-1-4", (Stage(0.2, 4e9, 0.1e9, 3), Stage(0.1, 0.0, 0.3e9, 1),
                                        Stage(0.3, 0.7e9, 0.0, 4)))


@pytest.mark.parametrize("topology", ["ring", "clique"])
@pytest.mark.parametrize("make", [lambda: plan(2, 3), lambda: plan(1, 4), lambda: plan(4, 4), three_stages])
def test_omega_weights_list_what_networkx_lists_in_its_order(make, topology) -> None:
    """The placers sum weights in adjacency and edge order, so the order is part of the result (float sums)."""
    built, light = build_omega(make(), topology), omega_weights(make(), topology)
    assert light.number_of_nodes() == built.number_of_nodes()
    for v in built:
        assert list(light.adj[v].items()) == [(u, d["weight"]) for u, d in built.adj[v].items()]
    assert list(light.weighted_edges()) == list(built.edges(data="weight"))
    for servers in [(0,) * built.number_of_nodes(), tuple(v % 3 for v in built), tuple(v // 2 for v in built)]:
        assert cut_weight(light, servers) == cut_weight(built, servers)  # exactly, not approximately


def test_placing_on_omega_imports_no_networkx() -> None:
    """Heavy-Edge's refined, greedy-edge and spread rules place on omega_weights; build_omega still imports it."""
    probe = (
        "import sys\n"
        "from asrpt_bench.core import Cluster, Stage, TrainingPlan\n"
        "from asrpt_bench.placement.heavy_edge import HeavyEdgePlacer\n"
        "plan = TrainingPlan('g', '4-4', (Stage(0.2, 4e9, 0.1e9, 4), Stage(0.3, 0.2e9, 0.0, 4)))\n"
        "clusters = (Cluster(servers=4, gpus_per_server=4), Cluster(servers=4, gpus_per_server=4, b_inter=400.0))\n"
        "for mode in ('refined', 'greedy_edge'):\n"
        "    for cluster in clusters:\n"
        "        assert HeavyEdgePlacer(mode=mode).place(plan, [3, 3, 2, 2], cluster) is not None\n"
        "from asrpt_bench.placement.links import job_graph\n"
        "assert job_graph.cache_info().currsize > 0  # the rules did read Omega\n"
        "print('networkx' in sys.modules)\n"
        "from asrpt_bench.graph import build_omega\n"
        "build_omega(plan)\n"
        "print('networkx' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True"]
