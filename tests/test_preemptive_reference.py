"""Each preemptive rule (srtf, srtf_oracle, psjf, psjf_oracle, las2d) against the plain reference of
tests/reference_preemptive.py on 2,000 Philly jobs: the library's admission walk (waiting lists per GPU
count, running jobs ranked in one vectorised step, decisions skipped once settled) gives the same schedule,
segment for segment, as re-sorting every released job at every decision instant."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from asrpt_bench.config import PredictorConfig, RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster, PreemptionPrice
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.prepare import load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from reference_preemptive import PlainLAS2D, PlainPSJF, PlainSRTF

REFERENCES = {"srtf": (PlainSRTF, False), "srtf_oracle": (PlainSRTF, True), "psjf": (PlainPSJF, False),
              "psjf_oracle": (PlainPSJF, True), "las2d": (PlainLAS2D, False)}


@pytest.fixture(scope="module")
def philly_head():
    """The first 2,000 jobs of the packaged Philly trace on 16 x 8 GPUs, with predictions off by a seeded
    log-normal factor (sigma 1), so srtf's running jobs overrun their estimates."""
    config = RunConfig(workload=WorkloadConfig("philly", num_jobs=2000, train_fraction=0.0),
                       cluster=Cluster(servers=16), predictor=PredictorConfig("oracle"))
    workload = load_workload(config.validate())
    rng = random.Random(5)
    predictions = {job.job_id: job.iterations * rng.lognormvariate(0.0, 1.0) for job in workload.jobs}
    return workload.jobs, workload.cluster, predictions


def schedule(result) -> tuple[dict, dict]:
    records = {r.job_id: (r.start, r.end, r.placement, r.gpu_ids, r.preemptions) for r in result.records}
    segments = defaultdict(list)
    for s in result.segments:
        segments[s.job_id].append((s.start, s.end, s.restart_s, s.placement, s.gpu_ids))
    return records, {job_id: sorted(own) for job_id, own in segments.items()}


@pytest.mark.filterwarnings("ignore:.*need all")
@pytest.mark.parametrize("name", ["srtf", "srtf_oracle", "las2d", *(pytest.param(name, marks=pytest.mark.slow)
                                                                   for name in ("psjf", "psjf_oracle"))])
def test_a_preemptive_rule_matches_the_plain_reference_on_two_thousand_philly_jobs(philly_head, name):
    jobs, cluster, predictions = philly_head
    reference, oracle = REFERENCES[name]
    plain = reference(name)
    plain.oracle = oracle
    got = simulate(jobs, cluster, make_scheduler(name), HeavyEdgePlacer(), predictions=predictions)
    expected = simulate(jobs, cluster, plain, HeavyEdgePlacer(), predictions=predictions)
    got_records, got_segments = schedule(got)
    expected_records, expected_segments = schedule(expected)
    assert got.metrics["preemptions"] > 100  # the instance exercises suspension
    assert [job_id for job_id in got_records if got_records[job_id] != expected_records[job_id]] == []
    assert got_segments == expected_segments


@pytest.mark.filterwarnings("ignore:.*need all")
@pytest.mark.parametrize("name", ["srtf", "psjf", "las2d"])
@pytest.mark.parametrize("restart_s, min_run_s", [(0.0, 0.0), (0.0, 120.0), (30.0, 300.0)])
def test_the_bounded_walk_matches_the_plain_reference_under_other_preemption_prices(philly_head, name, restart_s,
                                                                                      min_run_s):
    """srtf, psjf and las2d walk on priority bounds (AdmissionScheduler._bounded_walk): a job started with no
    protection is suspendable at once, one with a min-run window only after it; both must rank as the reference
    does."""
    jobs, cluster, predictions = philly_head
    jobs = jobs[:700]
    reference, oracle = REFERENCES[name]
    plain = reference(name)
    plain.oracle = oracle
    price = PreemptionPrice(restart_s=restart_s, min_run_s=min_run_s)
    got = simulate(jobs, cluster, make_scheduler(name), HeavyEdgePlacer(), predictions=predictions, preemption=price)
    expected = simulate(jobs, cluster, plain, HeavyEdgePlacer(), predictions=predictions, preemption=price)
    assert got.metrics["preemptions"] > 20
    assert schedule(got) == schedule(expected)
