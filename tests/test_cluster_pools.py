"""Typed clusters, below the simulator: pools and their numbering, the presets, per-type speeds (zoo compute
speeds recomputed from Gavel's measurements, Gavel's per-type throughputs, a CSV table's alpha_<type>
columns), model assignment and offered load on several pools, and the pool choices behind a placer."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.cluster import GPU_TYPES, ZOO_SPEED_FAMILIES, Cluster, Pool
from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import ConfigError, Job, Placement, TrainingPlan, plan_on_type, pool_plans
from asrpt_bench.placement import make_placer
from asrpt_bench.placement.estimates import empty_cluster_placement
from asrpt_bench.placement.pools import PooledPlacer, PoolOption, PoolQuery, make_pool_choice
from asrpt_bench.profiles import build_plan
from asrpt_bench.sim.pooled import empty_cluster_estimate, pooled_estimate
from asrpt_bench.timing import DEFAULT_TIMING, AlphaByShape
from asrpt_bench.workloads.assign import assign_models
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.gavel import load_gavel
from asrpt_bench.workloads.gavel_throughputs import packaged_throughputs, throughput
from asrpt_bench.workloads.jobs import jobs_from_table
from asrpt_bench.workloads.load import best_durations, offered_load
from asrpt_bench.workloads.typed_columns import for_cluster

GAVEL = Cluster(pools=[Pool("v100", 9, 4), Pool("p100", 9, 4), Pool("k80", 9, 4)])


def test_pools_number_servers_and_gpus_pool_after_pool():
    cluster = Cluster(pools=[{"type": "v100", "servers": 2, "gpus_per_server": 4},
                             {"type": "k80", "servers": 3, "gpus_per_server": 2, "name": "old"}])
    assert cluster.total_gpus == 14 and cluster.server_count == 5 and cluster.types == ("v100", "k80")
    assert cluster.empty_free() == (4, 4, 2, 2, 2)
    assert [p.name for p in cluster.pool_list] == ["v100", "old"]
    old = cluster.pool_list[1]
    assert (old.first_server, old.first_gpu, old.cluster.servers, old.cluster.type) == (2, 8, 3, "k80")
    assert list(cluster.gpu_ids(3)) == [10, 11] and cluster.server_of_gpu(11) == 3
    assert cluster.server_of_gpus(np.arange(14)).tolist() == [0] * 4 + [1] * 4 + [2, 2, 3, 3, 4, 4]
    assert cluster.pool_of(4) is old and old.free_slice((1, 2, 3, 4, 5)) == (3, 4, 5)
    assert old.to_global((0, 2)) == (2, 4) and old.to_local((2, 4)) == (0, 2)
    assert cluster.describe() == "2 x 4 v100 + 3 x 2 k80 (old)"


def test_the_one_pool_shorthand_keeps_the_historical_numbering():
    cluster = Cluster(servers=3, gpus_per_server=4)
    assert not cluster.pooled and cluster.pool_list[0].cluster is cluster
    assert list(cluster.gpu_ids(2)) == [8, 9, 10, 11] and cluster.server_of_gpu(9) == 2
    assert cluster.speed_weighted_gpus == cluster.total_gpus == 12


def test_the_presets_compose():
    gavel = compose_run_config(["cluster=gavel_36_36_36"]).cluster
    assert gavel == GAVEL and gavel.describe() == "9 x 4 v100 + 9 x 4 p100 + 9 x 4 k80"
    mixed = compose_run_config(["cluster=philly_mixed"]).cluster
    assert [(p.type, p.servers, p.gpus_per_server) for p in mixed.pool_list] == [
        ("v100", 4, 8), ("p100", 4, 8), ("k80", 4, 8)]
    # the speed-weighted capacity counts each pool at its type's compute speed relative to the fastest
    assert mixed.speed_weighted_gpus == pytest.approx(32 * (1 + 0.7869 + 0.2064))


@pytest.mark.parametrize("overrides, message", [
    (["cluster.pools=[{type: a100}]"], "cluster.pools[0].type must be one of ['k80', 'p100', 'v100'], got 'a100'"),
    (["cluster.pools=[{type: v100, servers: 0}]"], "cluster.pools[0].servers must be an integer in [1, 100000], got 0"),
    (["cluster.pools=[{type: v100},{type: v100}]"], "cluster.pools[1]: pool name 'v100' is taken by cluster.pools[0]"),
    (["cluster=gavel_36_36_36", "cluster.b_inter=25"], "cluster.b_inter is the one-pool shorthand"),
    (["placement.pool=type_agnostic"], "placement.pool=type_agnostic chooses among a cluster's pools; this cluster "
                                       "has one (8 x 8 v100)"),
])
def test_bad_clusters_are_refused_in_one_line(overrides, message):
    with pytest.raises(ConfigError) as error:
        compose_run_config(overrides)
    assert str(error.value).startswith(message)


def test_zoo_compute_speeds_are_gavels_measured_geometric_means():
    """GPU_TYPES' factors: over Gavel's single-GPU job types of the zoo's families, the geometric mean of the
    type's measured throughput over V100's."""
    table = packaged_throughputs()
    single = table[(table["scale_factor"] == 1) & table["job_type"].str.startswith(ZOO_SPEED_FAMILIES)]
    for gpu in ("k80", "p100"):
        ratio = single[gpu] / single["v100"]
        assert GPU_TYPES[gpu].compute_speed == pytest.approx(math.exp(np.log(ratio[ratio > 0]).mean()), abs=5e-5)
    assert GPU_TYPES["v100"].compute_speed == 1.0


def test_a_zoo_plan_on_a_slower_type_computes_slower_and_communicates_alike():
    plan = build_plan("vgg19", "p2xd2")
    slow = plan_on_type(plan, "k80")
    assert plan_on_type(plan, "v100") is plan and plan_on_type(plan, "k80") is slow
    assert [s.compute_s for s in slow.stages] == pytest.approx([s.compute_s / 0.2064 for s in plan.stages])
    assert [s.param_bytes for s in slow.stages] == [s.param_bytes for s in plan.stages]
    fixed = TrainingPlan.fixed(2, 1.5)
    assert plan_on_type(fixed, "k80") is fixed


def test_gavel_jobs_carry_gavels_measured_alpha_per_type_and_none_where_it_measured_0():
    table = load_gavel()
    row = table[(table["group"] == "ResNet-50 (batch size 128)") & (table["gpus"] == 4)].iloc[0]
    assert math.isnan(row["alpha_k80"])  # Gavel measured 0 iterations/s: cannot run on K80
    assert row["alpha_p100"] == 1 / throughput("ResNet-50 (batch size 128)", 4, "p100").consolidated
    assert row["alpha_v100"] == row["alpha"]
    jobs = jobs_from_table(for_cluster(table.head(50), GAVEL, "t"), "t")
    job = next(j for j in jobs if j.group == "ResNet-50 (batch size 128)" and j.gpus >= 2)
    assert job.plan_on("k80") is None and job.plan_on("v100") is job.plan
    # on a V100 cluster the other types' measurements are left out: Gavel measured them all
    assert "alpha_k80" not in for_cluster(table, Cluster(), "t").columns


def test_csv_typed_columns(tmp_path: Path):
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,release,gpus,iterations,alpha,alpha_k80,alpha_p100\n"
                    "a,0,1,10,1.0,4.0,\n"
                    "b,0,2,10,2.0,,1.0\n")
    table = load_csv(path)
    jobs = jobs_from_table(for_cluster(table, Cluster(pools=[Pool("k80"), Pool("p100"), Pool("v100")]), "t"), "t")
    a, b = jobs
    assert a.plan_on("k80").declared_alpha == 4.0 and a.plan_on("p100") is None and a.plan_on("v100") is a.plan
    assert b.plan_on("k80") is None and b.plan_on("p100").declared_alpha == 1.0
    with pytest.raises(ConfigError, match=r"column 'alpha_k80' is for GPU type 'k80', which the cluster lacks "
                                          r"\(8 x 8 v100\)"):
        for_cluster(table, Cluster(), str(path))


@pytest.mark.parametrize("header, row, message", [
    ("alpha,alpha_a100", "1.0,2.0", "column 'alpha_a100': unknown GPU type 'a100'"),
    ("alpha,alpha_k80", "1.0,0", "row 1 (line 2), column 'alpha_k80': must be > 0, got 0.0"),
    ("alpha,alpha_k80,alpha_max_k80", "1.0,2.0,1.0", "column 'alpha_max_k80': must be >= alpha_k80, got 1.0"),
    ("alpha,alpha_max_k80", "1.0,2.0", "column 'alpha_max_k80' needs column 'alpha_k80'"),
])
def test_bad_typed_columns_are_refused_naming_the_column(tmp_path: Path, header, row, message):
    path = tmp_path / "jobs.csv"
    path.write_text(f"job_id,release,gpus,iterations,{header}\na,0,1,10,{row}\n")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_csv(path)


def test_iterations_and_offered_load_on_a_typed_cluster_use_each_jobs_fastest_pool():
    table = pd.DataFrame({"job_id": ["a", "b"], "release": [0.0, 100.0], "gpus": [1, 8], "duration": [1000.0, 500.0],
                          "group": ["g", "h"]})
    from asrpt_bench.workloads.schema import validate_job_table
    slow_first = Cluster(pools=[Pool("k80", 2, 4), Pool("v100", 2, 4)])
    typed = assign_models(validate_job_table(table, "t"), slow_first, seed=0)
    plain = assign_models(validate_job_table(table, "t"), Cluster(servers=2, gpus_per_server=4), seed=0)
    # the V100 pool is every zoo job's fastest, with the same links: the same iterations as on V100 alone
    assert typed["iterations"].tolist() == plain["iterations"].tolist()
    jobs = jobs_from_table(typed, "t")
    durations = best_durations(jobs, slow_first, DEFAULT_TIMING)
    assert durations.tolist() == best_durations(jobs, Cluster(servers=2, gpus_per_server=4), DEFAULT_TIMING).tolist()
    capacity = slow_first.speed_weighted_gpus
    assert capacity == pytest.approx(8 + 8 * 0.2064)
    assert offered_load(jobs, durations, capacity) == pytest.approx(
        sum(j.gpus * d for j, d in zip(jobs, durations)) / (capacity * 100.0))


def query_result(choice: str, plans, lower, free, cluster, seed: int = 0):
    placer = PooledPlacer(make_placer("first_fit").placer, make_pool_choice(choice, seed))
    alphas = [AlphaByShape(DEFAULT_TIMING, pool.cluster) for pool in cluster.pool_list]
    return placer.propose("job", plans, lower, free, cluster, lambda p, plan, placement: alphas[p].alpha(plan, placement))


def test_fastest_fit_takes_the_lowest_alpha_among_pools_with_room_ties_by_pool_order():
    cluster = Cluster(pools=[Pool("k80", 1, 2), Pool("p100", 1, 2), Pool("v100", 1, 2)])
    plans = [TrainingPlan.fixed(2, 4.0), TrainingPlan.fixed(2, 2.0), TrainingPlan.fixed(2, 1.0)]
    assert query_result("fastest_fit", plans, [4.0, 2.0, 1.0], (2, 2, 2), cluster)[:2] == (2, Placement((2, 2)))
    assert query_result("fastest_fit", plans, [4.0, 2.0, 1.0], (2, 2, 1), cluster)[0] == 1  # v100 full
    assert query_result("first_fit", plans, [4.0, 2.0, 1.0], (2, 2, 2), cluster)[0] == 0
    tied = [TrainingPlan.fixed(2, 1.0)] * 3
    assert query_result("fastest_fit", tied, [1.0] * 3, (2, 2, 2), cluster)[0] == 0
    assert query_result("fastest_fit", [None, None, plans[2]], [math.inf, math.inf, 1.0], (2, 2, 1), cluster) is None


def test_fastest_fit_weighs_the_placement_it_would_get_not_only_the_type():
    # a 2-GPU job with a spread penalty: pool 0 is faster on one server but has 1 GPU free per server
    cluster = Cluster(pools=[Pool("v100", 2, 2), Pool("p100", 1, 2)])
    plans = [TrainingPlan.fixed(2, 1.0, alpha_spread=3.0), TrainingPlan.fixed(2, 2.0)]
    assert query_result("fastest_fit", plans, [1.0, 2.0], (1, 1, 2), cluster)[0] == 1
    assert query_result("fastest_fit", plans, [1.0, 2.0], (2, 1, 2), cluster)[0] == 0


def test_type_agnostic_draws_a_pool_with_room_reproducibly_and_uniformly():
    cluster = Cluster(pools=[Pool("k80", 1, 2), Pool("p100", 1, 2), Pool("v100", 1, 2)])
    plans = [TrainingPlan.fixed(1, 4.0), TrainingPlan.fixed(1, 2.0), TrainingPlan.fixed(1, 1.0)]
    choice = make_pool_choice("type_agnostic", seed=5)
    counts = np.zeros(3)
    for k in range(600):
        options = tuple(PoolOption(p, name, name, 2, 1.0) for p, name in enumerate(("k80", "p100", "v100")))
        query = PoolQuery(f"job{k}", options, lambda p: (Placement((p,)), 1.0))
        first = choice.choose(query)
        assert first == choice.choose(query)
        counts[first] += 1
    assert counts.min() > 150  # about 200 each
    assert query_result("type_agnostic", plans, [4.0, 2.0, 1.0], (0, 2, 0), cluster)[0] == 1


def test_pool_plans_give_each_pool_its_types_plan():
    plan = build_plan("vgg19", "p1xd1")
    job = Job("j", 0.0, plan, 10, type_plans=(("k80", None),))
    assert pool_plans(job, GAVEL) == (plan, plan_on_type(plan, "p100"), None)
    with pytest.raises(ConfigError, match="type_plans names GPU type 'a100'"):
        Job("j", 0.0, plan, 10, type_plans=(("a100", None),))


def test_an_empty_cluster_estimate_holds_the_estimate_placers_servers_and_each_pools_estimate():
    """min_servers is the estimate placer's own placement's (a random one spreads a 4-GPU job over two servers
    where Heavy-Edge takes one); on one pool the per-pool estimates are that pool's alone; on several, min_servers
    is the fastest pool's (one V100 server of 4 GPUs, or two K80 servers of 2)."""
    plan, one_pool = TrainingPlan.fixed(4, 1.0), Cluster(servers=4, gpus_per_server=4)
    spread = make_placer("random", seed=1)
    assert empty_cluster_placement(plan, one_pool, DEFAULT_TIMING, spread).servers_used == 2
    estimate = empty_cluster_estimate(plan, one_pool, DEFAULT_TIMING, spread)
    assert (estimate.min_servers, estimate.pool_alpha_min) == (2, (estimate.alpha_min,))
    assert empty_cluster_estimate(plan, one_pool, DEFAULT_TIMING).min_servers == 1
    two_pools = Cluster(pools=[Pool("v100", 1, 4), Pool("k80", 2, 2)])
    for v100, k80, servers in ((1.0, 2.0, 1), (3.0, 1.0, 2)):
        plans = [TrainingPlan.fixed(4, v100), TrainingPlan.fixed(4, k80)]
        estimate = pooled_estimate(plans, two_pools, DEFAULT_TIMING)
        assert estimate.min_servers == servers
        assert estimate.pool_alpha_min == (pytest.approx(v100), pytest.approx(k80))
