"""Per-iteration time model: the paper-notes 2.5 test vectors hold exactly, plus the model's options."""

import pytest

from asrpt_bench.core import Cluster, ConfigError, Placement, Stage, TrainingPlan
from asrpt_bench.timing import DEFAULT_TIMING, TimingModel

CLUSTER = Cluster(servers=4, gpus_per_server=4, b_intra=100.0, b_inter=10.0)


def two_stage(p1_gb: float) -> TrainingPlan:
    """paper-notes 2.5: m = (2, 2), c = (0.2, 0.3) s, a_1 = 0.1 GB, P = (p1, 0.2) GB."""
    return TrainingPlan("vector", "p2xd2", (Stage(0.2, p1_gb * 1e9, 0.1e9, 2), Stage(0.3, 0.2e9, 0.0, 2)))


LIGHT, HEAVY = two_stage(0.4), two_stage(4.0)


def test_light_vector_one_server_and_spread():
    assert DEFAULT_TIMING.alpha(LIGHT, Placement((0, 0, 0, 0)), CLUSTER) == pytest.approx(0.152, rel=1e-12)
    assert DEFAULT_TIMING.alpha(LIGHT, Placement((0, 1, 2, 3)), CLUSTER) == pytest.approx(0.17, rel=1e-12)
    assert DEFAULT_TIMING.alpha_max(LIGHT, CLUSTER) == pytest.approx(0.17, rel=1e-12)
    ratio = DEFAULT_TIMING.alpha_max(LIGHT, CLUSTER) / DEFAULT_TIMING.alpha_consolidated(LIGHT, CLUSTER)
    assert ratio == pytest.approx(1.118, abs=5e-4) and ratio < 1.5


def test_heavy_vector_placements():
    timing = DEFAULT_TIMING
    assert timing.alpha(HEAVY, Placement((0, 0, 0, 0)), CLUSTER) == pytest.approx(0.152, rel=1e-12)
    assert timing.alpha_max(HEAVY, CLUSTER) == pytest.approx(0.5, rel=1e-12)
    assert timing.alpha_max(HEAVY, CLUSTER) / timing.alpha_consolidated(HEAVY, CLUSTER) >= 1.5
    # stage 1 on server A, stage 2 on server B: the 0.02 s boundary is not the bottleneck
    assert timing.alpha(HEAVY, Placement((0, 0, 1, 1)), CLUSTER) == pytest.approx(0.152, rel=1e-12)
    # each stage split across two servers: stage 1 all-reduce over b_inter dominates
    assert timing.alpha(HEAVY, Placement((0, 1, 0, 1)), CLUSTER) == pytest.approx(0.5, rel=1e-12)


def test_fixed_plan_is_placement_independent():
    plan = TrainingPlan.fixed(gpus=3, alpha=2.5, alpha_max=4.0)
    assert DEFAULT_TIMING.alpha(plan, Placement((0, 1, 2)), CLUSTER) == pytest.approx(2.5)
    assert DEFAULT_TIMING.alpha(plan, Placement((0, 0, 0)), CLUSTER) == pytest.approx(2.5)
    assert DEFAULT_TIMING.alpha_max(plan, CLUSTER) == 4.0


@pytest.mark.parametrize("timing", [DEFAULT_TIMING, TimingModel(pipeline_mode="sync", microbatches=3),
                                    TimingModel(allreduce="tree", tree_latency_s=0.01)])
def test_fixed_plan_alpha_is_exactly_the_declared_value(timing):
    # 0.7 * 3 / 3 == 0.6999999999999998: the per-replica split alone would miss the declared alpha
    plan = TrainingPlan.fixed(gpus=3, alpha=0.7)
    assert plan.is_fixed
    assert timing.alpha(plan, Placement((0, 1, 2)), CLUSTER) == 0.7
    assert timing.alpha_consolidated(plan, CLUSTER) == timing.alpha_max(plan, CLUSTER) == 0.7
    assert not TrainingPlan("m", "p1xd3", plan.stages).is_fixed


def test_single_gpu_job_has_no_placement_sensitivity():
    plan = TrainingPlan("m", "p1xd1", (Stage(0.4, 1e9, 0.0, 1),))
    assert DEFAULT_TIMING.alpha_max(plan, CLUSTER) == DEFAULT_TIMING.alpha_consolidated(plan, CLUSTER) == 0.4


def test_fold_p2p_adds_the_boundary_to_the_sending_stage():
    folded = TimingModel(fold_p2p_into_stage=True)
    # one server: stage 1 = 0.104 + 0.002 boundary; stage 2 = 0.152 stays the maximum
    assert folded.alpha(LIGHT, Placement((0, 0, 0, 0)), CLUSTER) == pytest.approx(0.152)
    # spread: stage 1 = 0.14 + 0.02 = 0.16 < stage 2 = 0.17
    assert folded.alpha_max(LIGHT, CLUSTER) == pytest.approx(0.17)


def test_tree_allreduce_adds_latency_per_level():
    tree = TimingModel(allreduce="tree", tree_latency_s=0.001)
    # m = 2 -> one level: stage 2 = 0.15 + 0.002 + 0.001
    assert tree.alpha(LIGHT, Placement((0, 0, 0, 0)), CLUSTER) == pytest.approx(0.153)


def test_sync_pipeline_flush():
    sync = TimingModel(pipeline_mode="sync", microbatches=4)
    # per micro-batch: stage 1 = 0.1/4 + 0.002/4, stage 2 = 0.15/4 -> max 0.0375; (4+1) * 0.0375 + max AR 0.004
    assert sync.alpha(LIGHT, Placement((0, 0, 0, 0)), CLUSTER) == pytest.approx(5 * 0.0375 + 0.004)


@pytest.mark.parametrize("kwargs, key", [({"pipeline_mode": "x"}, "pipeline_mode"),
                                         ({"allreduce": "butterfly"}, "allreduce"),
                                         ({"microbatches": 0}, "microbatches")])
def test_bad_timing_options_name_the_key(kwargs, key):
    with pytest.raises(ConfigError, match=key):
        TimingModel(**kwargs)


@pytest.mark.parametrize("field", ["b_intra", "b_inter"])
@pytest.mark.parametrize("value", [0.0, -5.0])
def test_non_positive_bandwidth_is_rejected(field, value):
    kwargs = {"servers": 2, "gpus_per_server": 4, "b_intra": 100.0, "b_inter": 10.0, field: value}
    with pytest.raises(ConfigError, match=f"cluster.{field}"):
        Cluster(**kwargs)


def test_zero_servers_rejected():
    with pytest.raises(ConfigError, match="cluster.servers"):
        Cluster(servers=0, gpus_per_server=8)


def test_placement_vertex_count_must_match():
    with pytest.raises(ValueError, match="needs 4"):
        DEFAULT_TIMING.alpha(LIGHT, Placement((0, 0)), CLUSTER)


def test_alpha_memo_by_shape_equals_alpha_on_every_placement():
    """alpha depends only on which vertices share a server, so the memo keyed by shape is exact."""
    import itertools

    from asrpt_bench.timing import AlphaByShape, placement_shape

    cluster = Cluster(servers=3, gpus_per_server=4, b_intra=100.0, b_inter=10.0)
    plan = TrainingPlan("m", "p2xd2", (Stage(0.2, 4e9, 0.1e9, 2), Stage(0.3, 0.2e9, 0.0, 2)))
    memo = AlphaByShape(DEFAULT_TIMING, cluster)
    placements = [Placement(servers) for servers in itertools.product(range(3), repeat=4)]
    assert placement_shape((5, 5, 2, 5)) == (0, 0, 1, 0)
    assert all(memo.alpha(plan, p) == DEFAULT_TIMING.alpha(plan, p, cluster) for p in placements)
    assert len(memo._memo) == len({placement_shape(p.servers) for p in placements}) == 14  # Stirling S(4,1..3)


def one_stage(replicas: int, param_gb: float) -> TrainingPlan:
    """Data parallelism over `replicas` GPUs: 0.1 s of compute per replica, `param_gb` GB of parameters."""
    return TrainingPlan("m", f"p1xd{replicas}", (Stage(0.1 * replicas, param_gb * 1e9, 0.0, replicas),))


@pytest.mark.parametrize("replicas, levels", [(3, 2), (4, 2), (5, 3), (8, 3)])
def test_tree_allreduce_pays_its_latency_once_per_level_of_the_tree(replicas, levels):
    # one server (100 GB/s), 1 GB: 0.1 compute + ring 2(m-1)/m * 0.01 s + 0.001 s per level, ceil(log2 m) levels
    tree = TimingModel(allreduce="tree", tree_latency_s=0.001)
    expected = 0.1 + 2 * (replicas - 1) / replicas * 0.01 + 0.001 * levels
    alpha = tree.alpha(one_stage(replicas, 1.0), Placement((0,) * replicas), Cluster(4, 8, 100.0, 10.0))
    assert alpha == pytest.approx(expected, rel=1e-12)


def test_a_stage_without_parameters_or_with_one_replica_has_no_allreduce():
    tree = TimingModel(allreduce="tree", tree_latency_s=0.001)
    assert tree.alpha(one_stage(4, 0.0), Placement((0, 0, 0, 0)), CLUSTER) == pytest.approx(0.1, rel=1e-12)
    assert tree.alpha(one_stage(1, 1.0), Placement((2,)), CLUSTER) == pytest.approx(0.1, rel=1e-12)
    assert tree.allreduce_time(1e9, 1, 10.0) == tree.allreduce_time(0.0, 4, 10.0) == 0.0


def test_a_boundary_is_slow_only_when_its_stages_span_two_servers():
    # 1 GB of activations: 2 x 1/100 = 0.02 s on one server, 2 x 1/10 = 0.2 s across two, beside 0.1 s stages
    plan = TrainingPlan("m", "p2xd1", (Stage(0.1, 0.0, 1e9, 1), Stage(0.1, 0.0, 0.0, 1)))
    assert DEFAULT_TIMING.alpha(plan, Placement((1, 1)), CLUSTER) == pytest.approx(0.1, rel=1e-12)
    assert DEFAULT_TIMING.alpha(plan, Placement((1, 2)), CLUSTER) == pytest.approx(0.2, rel=1e-12)
    assert DEFAULT_TIMING.alpha_consolidated(plan, CLUSTER) == pytest.approx(0.1, rel=1e-12)
    assert DEFAULT_TIMING.alpha_max(plan, CLUSTER) == pytest.approx(0.2, rel=1e-12)
    folded = TimingModel(fold_p2p_into_stage=True)  # the sending stage pays its boundary: 0.1 + p2p
    assert folded.alpha(plan, Placement((1, 1)), CLUSTER) == pytest.approx(0.12, rel=1e-12)
    assert folded.alpha(plan, Placement((1, 2)), CLUSTER) == pytest.approx(0.3, rel=1e-12)
    sync = TimingModel(pipeline_mode="sync", microbatches=4)
    # per micro-batch: stage 1 = (0.1 + p2p) / 4; (4 + 1) micro-batch slots, no all-reduce
    assert sync.alpha(plan, Placement((1, 2)), CLUSTER) == pytest.approx(5 * 0.3 / 4, rel=1e-12)


def test_a_fixed_plan_with_a_spread_alpha_pays_it_only_across_servers():
    plan = TrainingPlan.fixed(gpus=2, alpha=1.0, alpha_spread=3.0)
    assert DEFAULT_TIMING.alpha(plan, Placement((3, 3)), CLUSTER) == 1.0
    assert DEFAULT_TIMING.alpha(plan, Placement((0, 3)), CLUSTER) == 3.0
    assert DEFAULT_TIMING.alpha_lower_bound(plan, CLUSTER) == DEFAULT_TIMING.alpha_consolidated(plan, CLUSTER) == 1.0


@pytest.mark.parametrize("args, message", [
    (("x", Placement((0, 0)), CLUSTER), "plan must be a TrainingPlan, got str 'x'"),
    ((LIGHT.stages, Placement((0, 0)), CLUSTER), "plan must be a TrainingPlan, got tuple"),
    ((LIGHT, (0, 0, 0, 0), CLUSTER), "placement must be a Placement, got tuple (0, 0, 0, 0)"),
    ((LIGHT, Placement((0, 0, 0, 0)), "x"), "cluster must be a Cluster, got str 'x'"),
    ((LIGHT, Placement("0000"), CLUSTER), "placement.servers must be a tuple of server indices, got str '0000'"),
    ((LIGHT, Placement((0, 4, 5, 0)), CLUSTER),
     "placement.servers: server index 4 is outside the cluster's 4 servers (0..3)"),
    ((LIGHT, Placement((0, True, 0, 0)), CLUSTER),
     "placement.servers: server index True is outside the cluster's 4 servers (0..3)"),
    ((LIGHT, Placement((0, 1.0, 0, 0)), CLUSTER),
     "placement.servers: server index 1.0 is outside the cluster's 4 servers (0..3)"),
    ((LIGHT, Placement((0, -1, 0, 0)), CLUSTER),
     "placement.servers: server index -1 is outside the cluster's 4 servers (0..3)"),
])
def test_a_bad_argument_is_refused_naming_it(args, message):
    with pytest.raises(ConfigError) as refused:
        DEFAULT_TIMING.alpha(*args)
    assert str(refused.value).startswith(message)


def test_bad_timing_options_name_the_config_key():
    with pytest.raises(ConfigError, match=r"^timing\.pipeline_mode must be one of \['async', 'sync'\], got 'x'$"):
        TimingModel(pipeline_mode="x")


def test_alpha_memo_computes_each_plan_and_shape_once():
    """The memo's contract (a simulation asks for alpha at every start): one evaluation per plan and shape,
    even when plans alternate, including one-GPU placements."""
    import itertools

    from asrpt_bench.timing import AlphaByShape

    calls = []

    class Counting(TimingModel):
        def alpha(self, plan, placement, cluster):
            calls.append(plan)
            return super().alpha(plan, placement, cluster)

    cluster = Cluster(servers=3, gpus_per_server=4, b_intra=100.0, b_inter=10.0)
    plans = [TrainingPlan("m", "p2xd2", (Stage(0.2, 4e9, 0.1e9, 2), Stage(0.3, 0.2e9, 0.0, 2))) for _ in range(2)]
    memo = AlphaByShape(Counting(), cluster)
    placements = [Placement(servers) for servers in itertools.product(range(3), repeat=4)]
    for plan in plans + plans:
        assert [memo.alpha(plan, p) for p in placements] == [DEFAULT_TIMING.alpha(plan, p, cluster)
                                                             for p in placements]
    assert len(calls) == 2 * 14 and [sum(c is plan for c in calls) for plan in plans] == [14, 14]
    single = one_stage(1, 1.0)
    assert memo.alpha(single, Placement((2,))) == memo.alpha(single, Placement((0,))) == pytest.approx(0.1)
    assert len(calls) == 2 * 14 + 1
