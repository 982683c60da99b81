"""Every scalar metric of a run, on a schedule computed by hand (docs/simulator.md defines them)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from asrpt_bench.cluster import Pool
from asrpt_bench.core import Cluster, Job, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.sim.metrics import preemption_counts, schedule_metrics, type_metrics


def fixed(job_id: str, release: float, gpus: int, iterations: int, alpha: float = 1.0) -> Job:
    return Job(job_id, release, TrainingPlan.fixed(gpus, alpha), iterations)


def test_every_metric_of_a_strict_fifo_schedule():
    """16 GPUs, strict FIFO. a (1 GPU, 10 s) runs 0-10; b (all 16, 5 x 2 s) waits for it, 10-20; c (6 GPUs,
    3 s, released 2) and d (9 GPUs, 4 s, released 3) start together at 20, ending 23 and 24.
    JCT 10, 20, 21, 21; waits 0, 10, 18, 17; busy GPU-s 10 + 160 + 18 + 36 = 224 of 16 x 24;
    slowdown JCT / (n x alpha~min) = 1, 2, 7, 5.25."""
    jobs = [fixed("a", 0.0, 1, 10), fixed("b", 0.0, 16, 5, alpha=2.0), fixed("c", 2.0, 6, 3), fixed("d", 3.0, 9, 4)]
    with pytest.warns(UserWarning, match="1 job"):
        result = simulate(jobs, Cluster(2, 8), make_scheduler("fifo"), FirstFitPlacer())
    assert [(r.job_id, r.start, r.end) for r in result.records] == [
        ("a", 0.0, 10.0), ("b", 10.0, 20.0), ("c", 20.0, 23.0), ("d", 20.0, 24.0)]
    metrics = result.metrics
    assert {key: metrics[key] for key in ("num_jobs", "dropped", "total_jct", "sum_completion", "mean_jct",
                                          "makespan", "mean_wait", "max_wait", "mean_first_start_delay",
                                          "max_first_start_delay", "mean_slowdown")} == {
        "num_jobs": 4, "dropped": 0, "total_jct": 72.0, "sum_completion": 77.0, "mean_jct": 18.0, "makespan": 24.0,
        "mean_wait": 11.25, "max_wait": 18.0, "mean_first_start_delay": 11.25, "max_first_start_delay": 18.0,
        "mean_slowdown": 3.8125}
    # contention: b, c and d waited; over the release span [0, 3] only a held GPUs (1 of 16)
    assert (metrics["waited_share"], metrics["busy_share"]) == (0.75, pytest.approx(3 / (16 * 3), rel=1e-12))
    # numpy's linear percentiles: JCT sorted 10, 20, 21, 21; slowdown sorted 1, 2, 5.25, 7
    assert (metrics["p50_jct"], metrics["p95_jct"], metrics["p99_jct"]) == (20.5, 21.0, 21.0)
    assert metrics["p99_slowdown"] == pytest.approx(5.25 + 0.97 * 1.75, rel=1e-12)
    assert metrics["utilization"] == pytest.approx(224 / (16 * 24), rel=1e-12)
    # waits by GPU count: 1 GPU (a) 0; none of 2-4; 5-8 (c) 18; 9 or more (b, d) (10 + 17) / 2
    assert (metrics["mean_wait_gpus_1"], metrics["mean_wait_gpus_5_8"], metrics["mean_wait_gpus_9plus"]) == (
        0.0, 18.0, 13.5)
    assert math.isnan(metrics["mean_wait_gpus_2_4"])
    assert metrics["backfilled_starts"] == 0 and math.isnan(metrics["reservation_violations"])


def test_a_wait_within_rounding_of_the_jct_is_not_counted_as_waiting():
    """waited_share counts a job whose wait exceeds 1e-9 of its JCT (preemptive waits are exact only to
    rounding): b waits 1e-4 s of a JCT of 1e6 s, so no job waited; 10 s would count."""
    for late, share in ((1e-4, 0.0), (10.0, 0.5)):
        jobs = [fixed("a", 0.0, 2, 10**6), fixed("b", 10**6 - late, 2, 10**6)]
        result = simulate(jobs, Cluster(1, 3), make_scheduler("fifo"), FirstFitPlacer())
        assert result.records[1].wait_s == pytest.approx(late, rel=1e-6) and result.metrics["waited_share"] == share


def test_slowdown_skips_jobs_with_no_ideal_duration_and_is_nan_without_any():
    only_empty = simulate([fixed("z", 1.0, 1, 0)], Cluster(1, 2), make_scheduler("fifo"), FirstFitPlacer())
    assert math.isnan(only_empty.metrics["mean_slowdown"]) and math.isnan(only_empty.metrics["p99_slowdown"])
    assert only_empty.metrics["utilization"] == 0.0  # no span: the only job starts and ends at its release
    mixed = simulate([fixed("z", 0.0, 1, 0), fixed("y", 0.0, 1, 4)], Cluster(1, 2), make_scheduler("fifo"),
                     FirstFitPlacer())
    assert mixed.metrics["mean_slowdown"] == mixed.metrics["p99_slowdown"] == 1.0


def test_a_schedule_without_jobs_has_zero_totals_and_no_ratios():
    metrics = schedule_metrics([], Cluster(1, 2), dropped=3)
    undefined = {name for name, value in metrics.items() if math.isnan(value)}
    assert undefined == {"mean_slowdown", "p99_slowdown", "waited_share", "busy_share", "mean_wait_gpus_1",
                         "mean_wait_gpus_2_4", "mean_wait_gpus_5_8", "mean_wait_gpus_9plus"}
    assert {name: value for name, value in metrics.items() if name not in undefined} == {
        "num_jobs": 0, "total_jct": 0.0, "sum_completion": 0.0, "mean_jct": 0.0, "p95_jct": 0.0, "makespan": 0.0,
        "utilization": 0.0, "mean_wait": 0.0, "mean_first_start_delay": 0.0, "p50_jct": 0.0, "p99_jct": 0.0,
        "max_wait": 0.0, "max_first_start_delay": 0.0, "dropped": 3}
    pools = Cluster(pools=[Pool("v100", 1, 2), Pool("k80", 1, 2)])
    typed = type_metrics([], pools, schedule_metrics([], pools))
    assert [name for name, value in typed.items() if math.isnan(value)] == ["mean_jct_v100", "mean_jct_k80"]
    assert {name: value for name, value in typed.items() if not name.startswith("mean_jct")} == {
        "busy_gpu_s_v100": 0.0, "utilization_v100": 0.0, "jobs_v100": 0, "busy_gpu_s_k80": 0.0,
        "utilization_k80": 0.0, "jobs_k80": 0}
    counts = preemption_counts([])
    assert list(counts) == ["preempted_share", "mean_preemptions", "p99_preemptions", "max_preemptions"]
    assert all(math.isnan(value) for value in counts.values())


def test_preemption_counts_spread_over_the_jobs():
    """Suspensions 0, 1, ..., 100 of 101 jobs: numpy's linear 99th percentile is 99, the largest 100."""
    records = [SimpleNamespace(preemptions=k) for k in range(101)]
    assert preemption_counts(records) == {"preempted_share": 100 / 101, "mean_preemptions": 50.0,
                                          "p99_preemptions": 99.0, "max_preemptions": 100.0}
