"""Heavy-Edge in both bandwidth regimes: its precondition b_inter <= b_intra, the spread-first rules used
when inter-server links are faster, the equal-bandwidth case, and the certificates it reports, checked
against brute force; plus alpha~min, alpha_max and the consolidated lower bound in both regimes."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench import profiles
from asrpt_bench.core import GB, Cluster, Job, Placement, Stage, TrainingPlan
from asrpt_bench.placement.bruteforce import _compositions, optimal_placement
from asrpt_bench.placement.estimates import alpha_min_estimate
from asrpt_bench.placement.heavy_edge import HEAVY_EDGE_MODES, HeavyEdgePlacer, bandwidth_regime, consolidation_pays
from asrpt_bench.placement.spread import SPREAD_MODES, alternating_servers, dominant_placement, touched_stages
from asrpt_bench.theory.lower_bounds import alpha_min_for_jobs
from asrpt_bench.timing import DEFAULT_TIMING, TimingModel

from plan_strategies import small_plans as plans_of_up_to

MODES = ("contract", "greedy_edge", "refined")
OTHER_TIMINGS = (TimingModel(pipeline_mode="sync", microbatches=4), TimingModel(fold_p2p_into_stage=True))
ISSUE_CLUSTER = Cluster(servers=2, gpus_per_server=5, b_intra=3.3, b_inter=66.0)
ISSUE_PLAN = TrainingPlan("issue", "ring5", (Stage(1.7175, 12.6 * GB, 0.0, 5),))
"""One 5-replica data-parallel stage, chosen to give the issue's figures: 6.45 s on one server, 0.649 s spread."""


def spans(plan: TrainingPlan, servers: tuple[int, ...]) -> tuple[list[bool], list[bool]]:
    """Per stage and per boundary: does it span more than one server?"""
    sets, start = [], 0
    for stage in plan.stages:
        sets.append(set(servers[start:start + stage.replicas]))
        start += stage.replicas
    return [len(s) > 1 for s in sets], [len(sets[b] | sets[b + 1]) > 1 for b in range(len(sets) - 1)]


def test_precondition_is_stated_and_names_the_regime():
    for b_intra, b_inter, pays in [(300.0, 12.5, True), (10.0, 10.0, True), (3.3, 66.0, False), (300.0, 600.0, False)]:
        cluster = Cluster(2, 4, b_intra, b_inter)
        assert consolidation_pays(cluster) is pays
        assert bandwidth_regime(cluster) == ("consolidate" if pays else "spread")


def test_every_mode_has_a_spread_rule():
    assert set(SPREAD_MODES) == set(HEAVY_EDGE_MODES) == set(MODES)


@pytest.mark.parametrize("mode", MODES)
def test_issue_case_spreads_instead_of_taking_the_single_server_fast_path(mode):
    """Free GPUs (5, 5), b_intra 3.3, b_inter 66: one server gave 6.45 s against an optimum of 0.649 s."""
    assert DEFAULT_TIMING.alpha_consolidated(ISSUE_PLAN, ISSUE_CLUSTER) == pytest.approx(6.4526, abs=1e-4)
    placement, proven = HeavyEdgePlacer(mode=mode).place_with_certificate(ISSUE_PLAN, (5, 5), ISSUE_CLUSTER)
    alpha = DEFAULT_TIMING.alpha(ISSUE_PLAN, placement, ISSUE_CLUSTER)
    assert alpha == pytest.approx(0.64895, abs=1e-5)
    assert alpha == optimal_placement(ISSUE_PLAN, (5, 5), ISSUE_CLUSTER)[1]
    assert placement.servers_used == 2 and proven


@pytest.mark.parametrize("mode", MODES)
def test_zoo_job_that_fits_one_server_is_spread_when_inter_server_links_are_faster(mode):
    plan = profiles.build_plan("vgg19", "p1xd5")
    placement = HeavyEdgePlacer(mode=mode).place(plan, (5, 5), ISSUE_CLUSTER)
    alpha = DEFAULT_TIMING.alpha(plan, placement, ISSUE_CLUSTER)
    assert alpha == optimal_placement(plan, (5, 5), ISSUE_CLUSTER)[1]
    assert alpha == DEFAULT_TIMING.alpha_lower_bound(plan, ISSUE_CLUSTER)
    assert alpha < DEFAULT_TIMING.alpha_consolidated(plan, ISSUE_CLUSTER) / 6


def test_alternating_servers_puts_no_two_consecutive_vertices_together():
    assert alternating_servers((5, 5), 5) == (0, 1, 0, 1, 0)
    # most room first, at most ceil(6/2) = 3 per server: counts 3, 2, 1; the largest takes even positions
    assert alternating_servers((3, 2, 2), 6) == (0, 1, 0, 1, 0, 2)
    assert alternating_servers((0, 4, 1), 1) == (1,)
    assert alternating_servers((5, 1), 4) is None  # server 0 would need 3 > ceil(4/2) vertices
    assert alternating_servers((4,), 2) is None


def test_touched_stages_is_the_greedy_path_cover():
    assert touched_stages(set(), {0, 1, 2}) == {1, 3}
    assert touched_stages({2}, {0, 1, 2, 3}) == {1, 2, 4}
    assert touched_stages({0}, {0}) == {0}


def test_dominant_server_case_spreads_the_stage_that_costs_most():
    """Stages of 3 and 3 replicas on free (5, 1): only one GPU off server 0, so only one stage can span
    servers; the heavier all-reduce (stage 1) must be the one, and the lower threshold (both) is proven
    infeasible."""
    plan = TrainingPlan("t", "3+3", (Stage(0.3, 0.5 * GB, 0.01 * GB, 3), Stage(0.3, 4 * GB, 0.0, 3)))
    cluster = Cluster(2, 6, 10.0, 100.0)
    placement, proven = HeavyEdgePlacer().place_with_certificate(plan, (5, 1), cluster)
    assert placement == Placement((0, 0, 0, 0, 0, 1))
    assert proven
    assert DEFAULT_TIMING.alpha(plan, placement, cluster) == optimal_placement(plan, (5, 1), cluster)[1]
    assert dominant_placement(plan, (5, 1), 0, {0, 1}, set()) == (None, True)


def _spread_feasible(replicas: tuple[int, ...], free: tuple[int, ...], stages: set[int], bounds: set[int]) -> bool:
    """Brute force: is there a placement in which every listed stage and boundary spans servers?"""
    def visit(s: int, room: list[int], previous: frozenset[int]) -> bool:
        if s == len(replicas):
            return True
        for row in _compositions(replicas[s], room):
            used = frozenset(k for k, c in enumerate(row) if c)
            if (s in stages and len(used) < 2) or (s - 1 in bounds and len(used | previous) < 2):
                continue
            if visit(s + 1, [r - c for r, c in zip(room, row)], used):
                return True
        return False
    return visit(0, list(free), frozenset())


def _subsets(items: list[int]) -> list[tuple[int, ...]]:
    return [c for k in range(len(items) + 1) for c in itertools.combinations(items, k)]


def test_dominant_placement_proofs_and_constructions_on_every_small_structure():
    """Every replica vector of <= 3 stages (1-3 replicas), free vector on 3 servers (0-5 GPUs) that cannot
    alternate, and every set of required stages and boundaries: a built placement spreads what is required
    within free capacity; an infeasibility proof agrees with brute force; no case is left unproven."""
    checked = 0
    for n in (1, 2, 3):
        for replicas in itertools.product((1, 2, 3), repeat=n):
            plan = TrainingPlan("s", "x", tuple(Stage(0.1, GB, GB, m) for m in replicas))
            multi = [s for s in range(n) if replicas[s] > 1]
            for free in itertools.product(range(6), repeat=3):
                if sum(free) < plan.gpus or alternating_servers(free, plan.gpus) is not None:
                    continue
                dominant = max(range(3), key=lambda h: (free[h], -h))
                for stages in _subsets(multi):
                    for bounds in _subsets(list(range(n - 1))):
                        servers, proven_infeasible = dominant_placement(plan, free, dominant, set(stages), set(bounds))
                        checked += 1
                        if servers is None:
                            assert proven_infeasible
                            assert not _spread_feasible(replicas, free, set(stages), set(bounds))
                            continue
                        Placement(servers).validate(plan, free)
                        stage_spread, bound_spread = spans(plan, servers)
                        assert all(stage_spread[s] for s in stages) and all(bound_spread[b] for b in bounds)
    assert checked > 5000


small_plans = plans_of_up_to(4)
small_free = st.lists(st.integers(0, 5), min_size=1, max_size=4).map(tuple)
faster_inter = st.tuples(st.sampled_from([3.0, 12.5, 100.0]), st.sampled_from([1.5, 4.0, 24.0]))


def _spread_cluster(free: tuple[int, ...], bandwidths: tuple[float, float]) -> Cluster:
    b_intra, factor = bandwidths
    return Cluster(len(free), 5, b_intra, b_intra * factor)


@settings(max_examples=150, deadline=None)
@given(plan=small_plans, free=small_free, bandwidths=faster_inter)
def test_refined_is_proven_optimal_when_inter_server_links_are_faster(plan, free, bandwidths):
    cluster = _spread_cluster(free, bandwidths)
    if sum(free) < plan.gpus:
        assert HeavyEdgePlacer().place(plan, free, cluster) is None
        return
    placement, proven = HeavyEdgePlacer().place_with_certificate(plan, free, cluster)
    placement.validate(plan, free)
    assert proven
    assert DEFAULT_TIMING.alpha(plan, placement, cluster) == pytest.approx(
        optimal_placement(plan, free, cluster)[1], rel=1e-12)


@settings(max_examples=120, deadline=None)
@given(plan=small_plans, free=small_free, bandwidths=faster_inter,
       timing=st.sampled_from((DEFAULT_TIMING,) + OTHER_TIMINGS), mode=st.sampled_from(MODES))
def test_every_mode_and_timing_with_faster_inter_server_links_against_brute_force(plan, free, bandwidths, timing, mode):
    """Never below the optimum nor above the all-intra worst case; a certificate is never wrong; when no
    server must hold more than half of the job, refined reaches the lower bound in every timing mode."""
    cluster = _spread_cluster(free, bandwidths)
    if sum(free) < plan.gpus:
        return
    placement, proven = HeavyEdgePlacer(mode=mode, timing=timing).place_with_certificate(plan, free, cluster)
    placement.validate(plan, free)
    alpha = timing.alpha(plan, placement, cluster)
    optimum = optimal_placement(plan, free, cluster, timing)[1]
    assert optimum * (1 - 1e-12) <= alpha <= timing.alpha_max(plan, cluster) * (1 + 1e-12)
    assert timing.alpha_max(plan, cluster) == timing.alpha_consolidated(plan, cluster)
    if proven:
        assert alpha == pytest.approx(optimum, rel=1e-12)
    if mode == "refined" and alternating_servers(free, plan.gpus) is not None:
        assert proven and alpha == timing.alpha_lower_bound(plan, cluster)


@settings(max_examples=60, deadline=None)
@given(plan=small_plans, free=small_free, bandwidths=faster_inter, timing=st.sampled_from(OTHER_TIMINGS))
def test_refined_never_worse_than_contract_when_inter_server_links_are_faster(plan, free, bandwidths, timing):
    cluster = _spread_cluster(free, bandwidths)
    if sum(free) < plan.gpus:
        return
    refined = timing.alpha(plan, HeavyEdgePlacer(timing=timing).place(plan, free, cluster), cluster)
    contract = timing.alpha(plan, HeavyEdgePlacer(mode="contract", timing=timing).place(plan, free, cluster), cluster)
    assert refined <= contract


@settings(max_examples=80, deadline=None)
@given(plan=small_plans, free=small_free, mode=st.sampled_from(MODES),
       timing=st.sampled_from((DEFAULT_TIMING,) + OTHER_TIMINGS))
def test_certificates_are_never_wrong_when_intra_server_links_are_faster(plan, free, mode, timing):
    cluster = Cluster(len(free), 5, 100.0, 10.0)
    if sum(free) < plan.gpus:
        return
    placement, proven = HeavyEdgePlacer(mode=mode, timing=timing).place_with_certificate(plan, free, cluster)
    optimum = optimal_placement(plan, free, cluster, timing)[1]
    if proven:
        assert timing.alpha(plan, placement, cluster) == pytest.approx(optimum, rel=1e-12)
    if max(free) >= plan.gpus:
        assert proven and placement.servers_used == 1


@pytest.mark.parametrize("mode", MODES)
def test_equal_bandwidths_keep_consolidating_and_every_placement_is_optimal(mode):
    """b_inter == b_intra: alpha is the same on every placement, so every answer is optimal and proven;
    the consolidation rules still apply (one server when it holds the job: best fit)."""
    cluster = Cluster(3, 5, 50.0, 50.0)
    plan = TrainingPlan("t", "2+3", (Stage(0.3, 2 * GB, 0.2 * GB, 2), Stage(0.2, 4 * GB, 0.0, 3)))
    (alpha,) = {DEFAULT_TIMING.alpha(plan, Placement(xs), cluster) for xs in itertools.product(range(3), repeat=5)}
    placer = HeavyEdgePlacer(mode=mode)
    assert placer.place_with_certificate(plan, (1, 5, 4), cluster) == (Placement((1,) * 5), True)
    placement, proven = placer.place_with_certificate(plan, (2, 2, 2), cluster)
    assert proven and DEFAULT_TIMING.alpha(plan, placement, cluster) == alpha


@pytest.mark.parametrize("b_intra, b_inter", [(3.3, 66.0), (300.0, 600.0), (100.0, 10.0), (50.0, 50.0)])
def test_alpha_min_estimate_alpha_max_and_lower_bound_in_both_regimes(b_intra, b_inter):
    """On an empty 3 x 2 cluster: Heavy-Edge's alpha~min is the true alpha_min, the consolidated lower bound
    never exceeds it, and alpha_max is the worst alpha over every vertex map."""
    cluster = Cluster(3, 2, b_intra, b_inter)
    for plan in (ISSUE_PLAN, TrainingPlan("t", "1+2+1", (Stage(0.1, 0.0, 0.3 * GB, 1), Stage(0.2, 2 * GB, 0.1 * GB, 2),
                                                                Stage(0.1, 0.0, 0.0, 1)))):
        exact = optimal_placement(plan, cluster.empty_free(), cluster)[1]
        assert alpha_min_estimate(plan, cluster) == exact
        (bound,) = alpha_min_for_jobs([Job("j", 0.0, plan, 1)], cluster, DEFAULT_TIMING, "consolidated")
        assert bound <= exact * (1 + 1e-12)
        if not consolidation_pays(cluster):
            assert exact == bound == DEFAULT_TIMING.alpha_lower_bound(plan, cluster)
        worst = max(DEFAULT_TIMING.alpha(plan, Placement(xs), cluster)
                    for xs in itertools.product(range(3), repeat=plan.gpus)
                    if all(xs.count(h) <= 2 for h in range(3)))
        assert worst <= DEFAULT_TIMING.alpha_max(plan, cluster) * (1 + 1e-12)
        if consolidation_pays(cluster):
            assert worst == DEFAULT_TIMING.alpha_max(plan, cluster)


@pytest.mark.parametrize("b_inter, regime", [(300.0, "consolidate"), (600.0, "spread")])
def test_a_run_records_the_bandwidth_regime_and_warns_when_heavy_edge_spreads(b_inter, regime, recwarn):
    from asrpt_bench.config import RunConfig, TaskConfig
    from asrpt_bench.core import Cluster
    from asrpt_bench.experiment import run_experiment

    config = RunConfig(cluster=Cluster(servers=2, gpus_per_server=4, b_intra=300.0, b_inter=b_inter),
                       task=TaskConfig(name="placement", study_models=["vgg19"], study_gpu_counts=[2],
                                       study_patterns=["empty"]))
    summary = run_experiment(config).summary
    assert summary["bandwidth_regime"] == regime and summary["heavy_edge_proven_share"] == 1.0
    spread_warnings = [str(w.message) for w in recwarn if "Heavy-Edge spreads" in str(w.message)]
    if regime == "spread":
        assert spread_warnings == ["cluster.b_inter (600 GB/s) > cluster.b_intra (300 GB/s): Heavy-Edge spreads "
                                   "jobs across servers instead of consolidating them"]
    else:
        assert spread_warnings == []


@settings(max_examples=60, deadline=None)
@given(plan=small_plans.filter(lambda p: p.gpus <= 6), servers=st.integers(1, 3),
       bandwidths=st.tuples(st.sampled_from([3.0, 12.5, 100.0]), st.sampled_from([3.0, 12.5, 100.0, 600.0])),
       timing=st.sampled_from((DEFAULT_TIMING,) + OTHER_TIMINGS))
def test_lower_bound_and_alpha_max_bracket_every_placement_in_both_regimes(plan, servers, bandwidths, timing):
    """alpha_lower_bound (the 'consolidated' alpha_min source) <= alpha of every vertex map <= alpha_max,
    whichever bandwidth is larger and for every timing mode."""
    cluster = Cluster(servers, 6, *bandwidths)
    alphas = [timing.alpha(plan, Placement(xs), cluster) for xs in itertools.product(range(servers), repeat=plan.gpus)]
    lower, upper = timing.alpha_lower_bound(plan, cluster), timing.alpha_max(plan, cluster)
    assert lower * (1 - 1e-12) <= min(alphas) and max(alphas) <= upper * (1 + 1e-12)
    (bound,) = alpha_min_for_jobs([Job("j", 0.0, plan, 1)], cluster, timing, "consolidated")
    assert bound == lower
