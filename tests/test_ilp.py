"""The exact ILP placer and alpha_min: optimal alphas equal brute force on every backend and timing mode."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asrpt_bench.core import GB, Cluster, ConfigError, Placement, Stage, TrainingPlan
from asrpt_bench.graph import build_omega, cut_weight
from asrpt_bench.placement import ilp as ilp_module
from asrpt_bench.placement.base import PLACERS, make_placer
from asrpt_bench.placement.bruteforce import optimal_placement
from asrpt_bench.placement.heavy_edge import HeavyEdgePlacer
from asrpt_bench.placement.ilp import (
    ILPPlacer,
    alpha_min_exact,
    candidate_servers,
    optimal_placement_ilp,
    useful_servers,
)
from asrpt_bench.solvers import BACKENDS, SolveResult, SolverError, SolverSettings, backend_availability
from asrpt_bench.timing import DEFAULT_TIMING, TimingModel


def backend_param(name: str) -> object:
    """One param per backend; Gurobi is skipped without a full licence (it would run the fallback)."""
    status = backend_availability(name)
    skip = not (status.available and status.full)
    return pytest.param(name, id=name, marks=pytest.mark.skipif(skip, reason=f"{name}: {status.reason}"))


ALL_BACKENDS = [backend_param(name) for name in sorted(BACKENDS)]

NOTES_CLUSTER = Cluster(servers=2, gpus_per_server=2, b_intra=100.0, b_inter=10.0)


def notes_plan(heavy: bool) -> TrainingPlan:
    """paper-notes 2.5: m = (2, 2), c = (0.2, 0.3) s, a1 = 0.1 GB, P = (4 or 0.4, 0.2) GB."""
    p1 = 4.0 if heavy else 0.4
    return TrainingPlan("heavy" if heavy else "light", "p2xd2",
                        (Stage(0.2, p1 * GB, 0.1 * GB, 2), Stage(0.3, 0.2 * GB, 0.0, 2)))


TIMINGS = [
    pytest.param(DEFAULT_TIMING, id="async"),
    pytest.param(TimingModel(fold_p2p_into_stage=True), id="fold"),
    pytest.param(TimingModel(pipeline_mode="sync", microbatches=4), id="sync"),
    pytest.param(TimingModel(allreduce="tree", tree_latency_s=0.01), id="tree"),
]


@pytest.mark.parametrize("solver", ALL_BACKENDS)
def test_heavy_job_on_two_by_two_pairs_each_stage(solver: str) -> None:
    plan = notes_plan(heavy=True)
    placement, result = optimal_placement_ilp(plan, (2, 2), NOTES_CLUSTER, SolverSettings(solver, 10))
    assert result.status == "optimal" and result.solver == solver
    assert DEFAULT_TIMING.alpha(plan, placement, NOTES_CLUSTER) == pytest.approx(0.152)
    assert result.objective == pytest.approx(0.152, abs=1e-6)
    assert placement.servers[0] == placement.servers[1] != placement.servers[2] == placement.servers[3]
    split = Placement((0, 1, 0, 1))
    assert DEFAULT_TIMING.alpha(plan, split, NOTES_CLUSTER) == pytest.approx(0.5)


@pytest.mark.parametrize("solver", ALL_BACKENDS)
@pytest.mark.parametrize("timing", TIMINGS)
@pytest.mark.parametrize("free", [(1, 1, 1, 1), (3, 1, 2, 2), (2, 1, 1, 3), (4, 0, 0, 0), (2, 2, 0, 1)])
def test_ilp_alpha_equals_brute_force(solver: str, timing: TimingModel, free: tuple[int, ...]) -> None:
    cluster = Cluster(4, 4, 100.0, 10.0)
    plan = notes_plan(heavy=True)
    placement, result = optimal_placement_ilp(plan, free, cluster, SolverSettings(solver, 10), timing=timing)
    _, best = optimal_placement(plan, free, cluster, timing)
    placement.validate(plan, free)
    assert result.status == "optimal"
    assert timing.alpha(plan, placement, cluster) == pytest.approx(best, rel=1e-9)


def test_hand_checked_alphas_on_fragmented_servers() -> None:
    """One GPU per server: everything spreads, alpha = tau_1 = 0.1 + 2*0.5*4/10 = 0.5 (paper-notes 2.5);
    with a 3-GPU server the heavy stage consolidates and the light stage's all-reduce dominates:
    tau_2 = 0.15 + 2*0.5*0.2/10 = 0.17."""
    cluster = Cluster(4, 4, 100.0, 10.0)
    plan = notes_plan(heavy=True)
    spread, _ = optimal_placement_ilp(plan, (1, 1, 1, 1), cluster, SolverSettings("cpsat", 10))
    assert DEFAULT_TIMING.alpha(plan, spread, cluster) == pytest.approx(0.5)
    crumbs, _ = optimal_placement_ilp(plan, (3, 1, 0, 0), cluster, SolverSettings("cpsat", 10))
    assert DEFAULT_TIMING.alpha(plan, crumbs, cluster) == pytest.approx(0.17)


def test_exact_when_inter_server_links_are_faster() -> None:
    """With b_inter > b_intra spreading pays; the exact indicators keep the model equal to brute force."""
    cluster = Cluster(3, 4, 10.0, 100.0)
    plan = notes_plan(heavy=True)
    free = (4, 2, 2)
    placement, _ = optimal_placement_ilp(plan, free, cluster, SolverSettings("cpsat", 10))
    _, best = optimal_placement(plan, free, cluster)
    assert DEFAULT_TIMING.alpha(plan, placement, cluster) == pytest.approx(best)
    assert placement.servers_used > 1


@pytest.mark.parametrize("solver", ALL_BACKENDS)
def test_min_cut_objective_matches_cut_weight(solver: str) -> None:
    """Pairing each stage cuts only the boundary: 2 * a_1 = 0.2 GB per iteration."""
    plan = notes_plan(heavy=True)
    placement, result = optimal_placement_ilp(plan, (2, 2), NOTES_CLUSTER, SolverSettings(solver, 10), "cut")
    assert result.status == "optimal"
    assert cut_weight(build_omega(plan), placement.servers) == pytest.approx(0.2 * GB)
    assert result.objective == pytest.approx(0.2 * GB, rel=1e-9)


def test_job_that_does_not_fit_returns_none_without_solving() -> None:
    plan = notes_plan(heavy=True)
    placement, result = optimal_placement_ilp(plan, (1, 2, 0, 0), Cluster(4, 4), SolverSettings("cbc", 10))
    assert placement is None and result.status == "infeasible"
    assert ILPPlacer().place(plan, (1, 2, 0, 0), Cluster(4, 4)) is None


def test_place_raises_when_the_solver_finds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    timed_out = SolveResult("time_limit_no_solution", None, 0.1, None, 1.0, "cpsat")
    monkeypatch.setattr(ilp_module, "solve", lambda model, settings: timed_out)
    placer = ILPPlacer(solver=SolverSettings(time_limit_s=1.0))
    placement, result = placer.place_with_result(notes_plan(True), (2, 2), NOTES_CLUSTER)
    assert placement is None and result is timed_out
    with pytest.raises(SolverError, match="no solution with cpsat in 1.0 s"):
        placer.place(notes_plan(True), (2, 2), NOTES_CLUSTER)


def test_placer_is_registered_and_validates_its_parameters() -> None:
    assert PLACERS.entry("ilp").factory is ILPPlacer
    placer = make_placer("ilp", solver=SolverSettings("highs", time_limit_s=5.0))
    placement = placer.place(notes_plan(True), (2, 2), NOTES_CLUSTER)
    assert DEFAULT_TIMING.alpha(notes_plan(True), placement, NOTES_CLUSTER) == pytest.approx(0.152)
    with pytest.raises(ConfigError, match="unknown solver 'scip'"):
        ILPPlacer(solver=SolverSettings("scip"))
    with pytest.raises(ConfigError, match="^solver must be a SolverSettings"):
        ILPPlacer(solver="cpsat")
    with pytest.raises(ConfigError, match="placement.objective must be one of"):
        ILPPlacer(objective="makespan")
    with pytest.raises(ConfigError, match="time_limit_s"):
        ILPPlacer(solver=SolverSettings(time_limit_s=-1))


def test_solve_record_reports_bound_gap_and_time() -> None:
    placer = ILPPlacer(solver=SolverSettings("cpsat", time_limit_s=5))
    _, result = placer.place_with_result(notes_plan(True), (2, 2), NOTES_CLUSTER)
    assert result.status == "optimal" and result.gap == 0.0
    assert result.bound == pytest.approx(result.objective, abs=1e-6)
    assert 0 < result.wall_time_s < 5


def test_alpha_min_fast_path_needs_no_solve() -> None:
    plan = notes_plan(heavy=True)
    alpha, result = alpha_min_exact(plan, Cluster(4, 4, 100.0, 10.0))
    assert result.solver == "closed_form" and result.status == "optimal"
    assert alpha == pytest.approx(0.152) == DEFAULT_TIMING.alpha_consolidated(plan, Cluster(4, 4, 100.0, 10.0))


def test_alpha_min_with_faster_inter_server_links_spreads_every_link() -> None:
    """With b_inter > b_intra one server is not optimal even when the job fits on one; on >= 2 empty servers
    every link can span servers, so the closed form (every link at b_inter) is the ILP's optimum."""
    cluster = Cluster(3, 4, 10.0, 100.0)
    plan = notes_plan(heavy=True)
    alpha, result = alpha_min_exact(plan, cluster, solver=SolverSettings("cpsat", time_limit_s=10))
    assert result.solver == "closed_form" and result.status == "optimal"
    solved = optimal_placement_ilp(plan, cluster.empty_free(), cluster, SolverSettings("cpsat", 10))
    assert solved[1].status == "optimal"
    assert alpha == pytest.approx(DEFAULT_TIMING.alpha(plan, solved[0], cluster))
    assert alpha == pytest.approx(optimal_placement(plan, cluster.empty_free(), cluster)[1])
    assert alpha < DEFAULT_TIMING.alpha_consolidated(plan, cluster)
    one_server = Cluster(1, 4, 10.0, 100.0)
    alpha, result = alpha_min_exact(plan, one_server, solver=SolverSettings("cpsat", time_limit_s=10))
    assert result.solver == "cpsat" and alpha == pytest.approx(DEFAULT_TIMING.alpha_consolidated(plan, one_server))


@pytest.mark.parametrize("solver", ["cbc", "highs", "cpsat"])
def test_alpha_min_on_small_servers_equals_brute_force(solver: str) -> None:
    """Two GPUs per server: the heavy stage pairs on one server, alpha_min = 0.152 (paper-notes 2.5)."""
    cluster = Cluster(3, 2, 100.0, 10.0)
    plan = notes_plan(heavy=True)
    alpha, result = alpha_min_exact(plan, cluster, solver=SolverSettings(solver, time_limit_s=10))
    assert result.status == "optimal" and result.solver == solver
    assert alpha == pytest.approx(optimal_placement(plan, cluster.empty_free(), cluster)[1]) == pytest.approx(0.152)


def test_alpha_min_rejects_a_job_larger_than_the_cluster() -> None:
    with pytest.raises(ConfigError, match="needs 4 GPUs; the cluster has 2"):
        alpha_min_exact(notes_plan(True), Cluster(1, 2))


def test_useful_servers_and_candidate_reduction() -> None:
    assert useful_servers(8, 64) == 13  # all used servers but one hold >= 5 of 8 GPUs
    assert useful_servers(1, 3) == 3
    servers = candidate_servers((8, 0, 3, 8, 3, 1, 8, 8), gpus=4, merging_helps=True)
    # capacities capped at g=4: class 4 = servers 0,3,6,7 (keep 1 + 3 // 3 = 2), class 3 = 2,4 (keep 2),
    # class 1 = server 5 (keep 4, has 1)
    assert servers.ids == (0, 3, 2, 4, 5)
    assert servers.capacity == (4, 4, 3, 3, 1)
    assert servers.symmetric_pairs() == [(0, 1), (2, 3)]
    assert candidate_servers((8, 0, 3, 8, 3, 1, 8, 8), gpus=4, merging_helps=False).ids == (0, 3, 6, 7, 2, 4, 5)


@st.composite
def small_instances(draw: st.DrawFn) -> tuple[TrainingPlan, tuple[int, ...]]:
    stages = tuple(
        Stage(compute_s=draw(st.sampled_from([0.05, 0.1, 0.3])),
              param_bytes=draw(st.sampled_from([0.0, 0.1, 1.0, 4.0])) * GB,
              activation_bytes=draw(st.sampled_from([0.0, 0.05, 0.5])) * GB,
              replicas=draw(st.integers(1, 3)))
        for _ in range(draw(st.integers(1, 3))))
    plan = TrainingPlan("h", "c", stages)
    free = tuple(draw(st.lists(st.integers(0, 4), min_size=4, max_size=4)))
    return plan, free


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances())
def test_ilp_is_optimal_and_never_worse_than_heavy_edge(instance: tuple[TrainingPlan, tuple[int, ...]]) -> None:
    plan, free = instance
    cluster = Cluster(4, 4, 100.0, 10.0)
    placement, result = optimal_placement_ilp(plan, free, cluster, SolverSettings("cpsat", 10))
    if sum(free) < plan.gpus:
        assert placement is None and result.status == "infeasible"
        return
    placement.validate(plan, free)
    alpha = DEFAULT_TIMING.alpha(plan, placement, cluster)
    heuristic = HeavyEdgePlacer().place(plan, free, cluster)
    assert alpha <= DEFAULT_TIMING.alpha(plan, heuristic, cluster) + 1e-12
    assert alpha == pytest.approx(optimal_placement(plan, free, cluster)[1], rel=1e-9)
