"""Job graph Omega: vertices per stage replica, edge weights in bytes per iteration (paper-notes 3.1)."""

import pytest

from asrpt_bench.core import Stage, TrainingPlan
from asrpt_bench.graph import build_omega, cut_weight


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
