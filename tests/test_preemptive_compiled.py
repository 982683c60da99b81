"""The compiled preemptive loop (sim/preemptive_jit.py, driven by sim/preemptive_compiled.py) makes exactly the
Python loop's schedules: every record, every run segment and every metric, for each rule it takes, on the Philly
trace's first jobs and on hand-made instances, with and without the price of a suspension; and the runs it does
not take go through the Python loop."""

from __future__ import annotations

import math
import random
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import asrpt_bench.sim.preemptive as preemptive_loop
import asrpt_bench.sim.preemptive_compiled as compiled
from asrpt_bench.core import Cluster, Job, Placement, PreemptionPrice, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer, HeavyEdgePlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.srtf import SRTF
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.jobs import jobs_from_table

TABLE = Path(__file__).resolve().parent / "data" / "fixed_jobs.csv"
RULES = ("srtf", "srtf_oracle", "psjf", "psjf_oracle", "las2d")


def table_jobs() -> list[Job]:
    return jobs_from_table(load_csv(TABLE), str(TABLE))


def noisy(jobs: list[Job], seed: int = 25) -> dict:
    """True iterations times a log-normal factor (sigma 1): running jobs outlive their predictions."""
    rng = random.Random(seed)
    return {job.job_id: job.iterations * rng.lognormvariate(0.0, 1.0) for job in jobs}


def run(jobs, cluster, name, params=None, placer=None, predictions=None, progress=False, **price):
    return simulate(jobs, cluster, make_scheduler(name, **(params or {})), placer or HeavyEdgePlacer(),
                    predictions=predictions, progress=progress, preemption=PreemptionPrice(**price))


def python_loop(monkeypatch) -> None:
    monkeypatch.setattr(preemptive_loop, "compiled_rule", lambda *arguments: None)


def assert_same_run(a, b) -> None:
    assert list(a.records) == list(b.records)
    assert list(a.segments) == list(b.segments)
    assert a.metrics == b.metrics


def both(monkeypatch, jobs, cluster, name, params=None, **keywords):
    """The compiled run and the Python run of one instance, after checking the first took the compiled loop."""
    assert compiled.compiled_rule(make_scheduler(name, **(params or {})), cluster, jobs) is not None
    fast = run(jobs, cluster, name, params, **keywords)
    with monkeypatch.context() as patch:
        python_loop(patch)
        slow = run(jobs, cluster, name, params, **keywords)
    return fast, slow


@pytest.mark.parametrize("name", RULES)
@pytest.mark.parametrize("price", [{}, {"restart_s": 0.0}, {"restart_s": 30.0, "min_run_s": 600.0}],
                         ids=["default", "free", "min_run"])
def test_each_rule_makes_the_python_loops_schedule_on_the_fixed_table(monkeypatch, name, price):
    jobs = table_jobs()
    fast, slow = both(monkeypatch, jobs, Cluster(servers=8, gpus_per_server=8), name, **price)
    assert_same_run(fast, slow)
    assert fast.metrics["preemptions"] > 0


@pytest.mark.parametrize("name", ["srtf", "psjf", "las2d"])
def test_overrun_predictions_and_short_las2d_queues_keep_the_schedule(monkeypatch, name):
    """Predictions off by a log-normal factor (srtf's remaining time reaches 0 while jobs run on), and las2d with
    thresholds that most jobs cross several times."""
    jobs = table_jobs()
    params = {"queue_thresholds": (40.0, 400.0, 4000.0)} if name == "las2d" else None
    fast, slow = both(monkeypatch, jobs, Cluster(servers=16, gpus_per_server=4), name, params,
                      predictions=noisy(jobs), restart_s=5.0)
    assert_same_run(fast, slow)


@pytest.mark.parametrize("name", ["srtf", "las2d"])
def test_a_few_thousand_philly_jobs_against_the_python_loop(monkeypatch, philly_jobs, name):
    """Issue 25's check on the trace: 3,000 jobs on 16 x 8 GPUs, where the queue grows to hundreds."""
    jobs = philly_jobs[:3000]
    fast, slow = both(monkeypatch, jobs, Cluster(servers=16, gpus_per_server=8), name,
                      predictions={job.job_id: float(job.iterations) for job in jobs})
    assert_same_run(fast, slow)
    assert fast.metrics["preemptions"] > 1000


@pytest.fixture(scope="module")
def philly_jobs() -> list[Job]:
    from asrpt_bench.config import RunConfig, WorkloadConfig
    from asrpt_bench.prepare import load_workload

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no jobs to train the forest on: oracle predictions, as asked
        return load_workload(RunConfig(workload=WorkloadConfig("philly", num_jobs=3000,
                                                                train_fraction=0.0)).validate()).jobs


def test_colliding_hashes_are_told_apart_by_the_stored_state(monkeypatch):
    """With every server's key zero, all states of a plan hash alike: each hit is checked against the free GPUs
    it was stored for, so the schedule stays the same and the placer is asked about every new state."""
    jobs = table_jobs()
    cluster = Cluster(servers=16, gpus_per_server=4)
    calls = []

    @dataclass(frozen=True)
    class Counting:
        name: str = "heavy_edge"

        def place(self, plan, free, cluster):
            calls.append((id(plan), tuple(free)))
            return HeavyEdgePlacer().place(plan, free, cluster)

    hashed = run(jobs, cluster, "srtf", placer=Counting())
    distinct = len(set(calls))
    assert distinct == len(calls)  # the memo asks once per state it has not met

    random_keys = compiled.zobrist

    def colliding(servers, gps, plans):
        keys, plan_keys = random_keys(servers, gps, plans)
        return np.zeros_like(keys), plan_keys

    monkeypatch.setattr(compiled, "zobrist", colliding)
    calls.clear()
    collided = run(jobs, cluster, "srtf", placer=Counting())
    assert_same_run(collided, hashed)
    assert len(calls) >= distinct


def test_output_and_memo_grow_from_one_row(monkeypatch):
    """Room for one segment and one memo entry at first: every growth path (segments, GPU ids, entries, the
    table's rehash) runs, and the schedule is the one made with room to spare."""
    jobs = table_jobs()
    cluster = Cluster(servers=8, gpus_per_server=8)
    roomy = run(jobs, cluster, "las2d")
    monkeypatch.setattr(compiled, "SEGMENTS_PER_JOB", 0)
    monkeypatch.setattr(compiled, "ENTRIES", 1)
    assert_same_run(run(jobs, cluster, "las2d"), roomy)


def test_the_progress_bar_counts_every_job_and_changes_nothing(monkeypatch, capsys):
    jobs = table_jobs()
    cluster = Cluster(servers=8, gpus_per_server=8)
    quiet = run(jobs, cluster, "srtf")
    monkeypatch.setattr(compiled, "REPORT_EVERY", 7)
    shown = run(jobs, cluster, "srtf", progress=True)
    assert_same_run(shown, quiet)
    assert f"{len(jobs)}/{len(jobs)}" in capsys.readouterr().err


def fixed(job_id: str, release: float, gpus: int, iterations: int) -> Job:
    return Job(job_id, release, TrainingPlan.fixed(gpus, 1.0), iterations)


def test_a_job_no_placement_holds_is_named_as_in_the_python_loop(monkeypatch):
    """A placer that never places 2-GPU jobs: both loops refuse the run naming the scheduler, placer and job."""

    @dataclass(frozen=True)
    class OneGPUOnly:
        name: str = "one_gpu_only"

        def place(self, plan, free, cluster):
            return FirstFitPlacer().place(plan, free, cluster) if plan.gpus == 1 else None

    jobs = [fixed("a", 0.0, 1, 5), fixed("b", 1.0, 2, 5), fixed("c", 2.0, 1, 5)]
    message = r"scheduler 'srtf' with placer 'one_gpu_only' never finished 1 job\(s\), first 'b'"
    with pytest.raises(RuntimeError, match=message):
        run(jobs, Cluster(servers=1, gpus_per_server=4), "srtf", placer=OneGPUOnly())
    python_loop(monkeypatch)
    with pytest.raises(RuntimeError, match=message):
        run(jobs, Cluster(servers=1, gpus_per_server=4), "srtf", placer=OneGPUOnly())


def test_an_invalid_placement_is_refused_naming_the_placer():
    @dataclass(frozen=True)
    class Crowding:
        name: str = "crowding"

        def place(self, plan, free, cluster):
            return Placement((0,) * plan.gpus)

    jobs = [fixed("a", 0.0, 2, 5), fixed("b", 0.0, 1, 5)]
    with pytest.raises(RuntimeError, match="placer 'crowding' returned an invalid placement for job 'b'"):
        run(jobs, Cluster(servers=2, gpus_per_server=2), "srtf", placer=Crowding())


class Subclass(SRTF):
    """Any subclass may change a method the compiled loop does not call."""


@pytest.mark.parametrize("case", ["subclass", "net_gain", "promote_knob", "pooled", "wide_servers", "int_release"])
def test_the_runs_the_compiled_loop_does_not_take_go_through_the_python_loop(case):
    jobs = [fixed("a", 0.0, 1, 5), fixed("b", 1.0, 1, 3)]
    cluster = Cluster(servers=1, gpus_per_server=2)
    scheduler = make_scheduler("srtf")
    if case == "subclass":
        scheduler = Subclass()
    elif case == "net_gain":
        scheduler = make_scheduler("srtf", preempt_rule="net_gain")
    elif case == "promote_knob":
        scheduler = make_scheduler("las2d", promote_knob=2.0)
    elif case == "pooled":
        cluster = Cluster(pools=[{"type": "v100", "servers": 1, "gpus_per_server": 2}])
    elif case == "wide_servers":
        cluster = Cluster(servers=1, gpus_per_server=compiled.MAX_GPUS_PER_SERVER + 1)
    else:
        jobs = [Job("a", 0, TrainingPlan.fixed(1, 1.0), 5)]
    assert compiled.compiled_rule(scheduler, cluster, jobs) is None
    assert compiled.compiled_rule(make_scheduler("srtf"), Cluster(servers=1, gpus_per_server=2),
                                  [fixed("a", 0.0, 1, 5)]) == "remaining"
    result = simulate(jobs, cluster, scheduler, FirstFitPlacer())
    assert math.isfinite(result.metrics["makespan"])
