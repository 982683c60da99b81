"""Fixed-alpha jobs whose per-iteration time depends on whether they span servers (Gavel's measured
consolidated and unconsolidated throughputs: workload.gavel_placement=measured)."""

from __future__ import annotations

import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import Cluster, ConfigError, Job, TrainingPlan
from asrpt_bench.placement import make_placer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.gavel import load_gavel


def run(cluster: Cluster) -> float:
    job = Job("j", 0.0, TrainingPlan.fixed(4, 1.0, alpha_spread=3.0), 10)
    record = simulate([job], cluster, make_scheduler("fifo"), make_placer("first_fit"), progress=False).records[0]
    return record.end


def test_the_spread_time_applies_only_across_servers() -> None:
    assert run(Cluster(servers=1, gpus_per_server=4)) == 10.0   # one server: alpha 1
    assert run(Cluster(servers=2, gpus_per_server=2)) == 30.0   # two servers: alpha_spread 3


def test_a_spread_time_below_alpha_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"alpha_spread \(0\.5\) must be >= alpha \(1\.0\)"):
        TrainingPlan.fixed(4, 1.0, alpha_spread=0.5)


def test_gavel_measured_placement_uses_the_unconsolidated_throughput() -> None:
    consolidated = load_gavel()
    measured = load_gavel(placement="measured")
    assert "alpha_spread" not in consolidated.columns or consolidated["alpha_spread"].isna().all()
    ratio = measured["alpha_spread"] / measured["alpha"]
    assert (ratio >= 1.0).all() and (ratio > 1.01).any()
    assert compose_run_config(["workload=gavel", "workload.gavel_placement=measured"]).workload.gavel_placement == \
        "measured"
