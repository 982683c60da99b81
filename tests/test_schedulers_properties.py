"""Conformance on random small instances: every registered scheduler x every registered placer.

New schedulers and placers are picked up from the registries without editing this file. The
simulator audits every schedule it returns, so a run that finishes is a valid schedule; the tests
also re-audit, check determinism and the strict head-of-line order of A-SRPT.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import asrpt_bench.placement as placement_package
from asrpt_bench.core import GB, RESTART_S, Cluster, Job, Stage, TrainingPlan
from asrpt_bench.placement import PLACERS, make_placer
from asrpt_bench.schedulers import SCHEDULERS, make_scheduler
from asrpt_bench.sim import audit_schedule, simulate
from asrpt_bench.sim.audit import audit_preemptive

for module in pkgutil.iter_modules(placement_package.__path__):
    importlib.import_module(f"{placement_package.__name__}.{module.name}")

SLOW_PLACERS = {"ilp": 8}
FAST_EXAMPLES = 30


@st.composite
def instances(draw):
    cluster = Cluster(draw(st.integers(1, 3)), draw(st.integers(1, 4)), b_intra=100.0, b_inter=10.0)
    total = cluster.total_gpus
    jobs, predictions = [], {}
    for k in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            plan = TrainingPlan.fixed(draw(st.integers(1, total)), draw(st.sampled_from([0.5, 1.0, 2.0])))
        else:
            stages = []
            for _ in range(draw(st.integers(1, 2))):
                replicas = draw(st.integers(1, 2))
                stages.append(Stage(draw(st.sampled_from([0.1, 0.3])), draw(st.sampled_from([0.0, 0.4, 4.0])) * GB,
                                    draw(st.sampled_from([0.0, 0.1])) * GB, replicas))
            plan = TrainingPlan("random", "p%d" % len(stages), tuple(stages))
            if plan.gpus > total:
                plan = TrainingPlan.fixed(total, 1.0)
        job_id = f"j{k}"
        jobs.append(Job(job_id, float(draw(st.integers(0, 8))), plan, draw(st.integers(0, 12))))
        predictions[job_id] = float(draw(st.integers(0, 20)))
    return jobs, cluster, predictions


def scheduler_variants() -> list[tuple[str, dict]]:
    variants = [(name, {}) for name in sorted(SCHEDULERS) if name != "recorded"]  # replays a log: test_recorded.py
    variants += [("asrpt", {"tau": 0.0}), ("asrpt", {"tau": 2.0, "delay_origin": "head"}),
                 ("asrpt", {"consolidation_test": "servers", "backfill": True}),
                 ("spjf", {"duration_source": "oracle"}),
                 ("asrpt", {"dispatch": "easy"}), ("asrpt", {"dispatch": "conservative", "tau": 2.0}),
                 ("asrpt", {"eligibility": "release", "delay_origin": "head"}),
                 ("asrpt", {"eligibility": "release", "dispatch": "easy", "min_estimate_s": 2.0}),
                 ("spjf", {"dispatch": "easy", "overrun": "double"}),
                 ("fifo", {"dispatch": "conservative", "min_estimate_s": 2.0})]
    return variants


def run_all(jobs, cluster, predictions, placer_name):
    results = []
    for name, params in scheduler_variants():
        result = simulate(jobs, cluster, make_scheduler(name, **params), make_placer(placer_name),
                          predictions=predictions)
        if result.segments:
            audit_preemptive(result.records, result.segments, cluster, jobs, restart_s=RESTART_S)
        else:
            audit_schedule(result.records, cluster, jobs)
        results.append((name, params, result))
    return results


@pytest.mark.filterwarnings("ignore:.*need all")
@pytest.mark.parametrize("placer_name", sorted(PLACERS))
def test_every_scheduler_with_every_placer_gives_valid_deterministic_schedules(placer_name):
    @settings(max_examples=SLOW_PLACERS.get(placer_name, FAST_EXAMPLES), deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(instances())
    def check(instance):
        jobs, cluster, predictions = instance
        first = run_all(jobs, cluster, predictions, placer_name)
        again = run_all(jobs, cluster, predictions, placer_name)
        for (name, params, a), (_, _, b) in zip(first, again):
            assert a.records == b.records, (name, params)
            assert same_metrics(a.metrics, b.metrics), (name, params)
            if name.startswith("asrpt") and params.get("dispatch", "strict") == "strict" and not params.get("backfill") \
                    and params.get("eligibility", "virtual") == "virtual":
                assert_strict_head_of_line(a.records)

    check()


def same_metrics(a: dict, b: dict) -> bool:
    """Equal metrics, NaN (an undefined metric, e.g. reservation violations of a strict rule) equal to NaN."""
    return a.keys() == b.keys() and all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)


def assert_strict_head_of_line(records):
    """Without backfill, A-SRPT starts jobs in pending-queue order: eligible earlier -> starts no later."""
    by_eligible = sorted(records, key=lambda r: (r.eligible, r.start))
    for earlier, later in zip(by_eligible, by_eligible[1:]):
        assert earlier.start <= later.start, (earlier.job_id, later.job_id)


@pytest.mark.filterwarnings("ignore:.*need all")
@settings(max_examples=25, deadline=None, derandomize=True)
@given(instances())
def test_work_conserving_schedulers_never_idle_a_fitting_job(instance):
    """With first fit (which places a job whenever enough GPUs are idle), at every start or end
    instant no released, unstarted job fits in the idle GPUs under WCS-*."""
    jobs, cluster, predictions = instance
    for name in ("wcs_duration", "wcs_workload", "wcs_subtime"):
        records = simulate(jobs, cluster, make_scheduler(name), make_placer("first_fit"),
                           predictions=predictions).records
        for t in sorted({r.start for r in records} | {r.end for r in records}):
            busy = sum(r.gpus for r in records if r.start <= t < r.end)
            waiting = [r for r in records if r.release <= t < r.start]
            assert all(r.gpus > cluster.total_gpus - busy for r in waiting), (name, t)
