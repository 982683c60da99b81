"""The preemptive loop's events: arrivals read beside the heap in their place of the order, and dead events
(a suspended job's completion, a replaced timer) dropped from the heap without changing any schedule."""

from __future__ import annotations

import numpy as np
import pytest

import asrpt_bench.sim.preemptive as preemptive_loop
from asrpt_bench.core import Cluster, Job, PreemptionPrice, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate


def fixed(job_id: str, release: float, gpus: int, iterations: int) -> Job:
    return Job(job_id, release, TrainingPlan.fixed(gpus, 1.0), iterations)


def run(jobs, cluster, name="srtf_oracle", params=None, **preemption):
    return simulate(jobs, cluster, make_scheduler(name, **(params or {})), FirstFitPlacer(),
                    predictions={job.job_id: float(job.iterations) for job in jobs},
                    preemption=PreemptionPrice(**preemption))


def test_a_completion_frees_its_gpu_for_an_arrival_at_the_same_instant():
    """a ends at 4 as b arrives: completions come first, so b starts at 4 on the one GPU without suspending
    anyone, and c, arriving at 4 too but longer, waits for b."""
    jobs = [fixed("a", 0.0, 1, 4), fixed("b", 4.0, 1, 2), fixed("c", 4.0, 1, 3)]
    records = {r.job_id: r for r in run(jobs, Cluster(1, 1), restart_s=1.0).records}
    assert [(records[j].start, records[j].end, records[j].preemptions) for j in "abc"] == [
        (0.0, 4.0, 0), (4.0, 6.0, 0), (6.0, 9.0, 0)]


def test_arrivals_at_one_instant_come_in_input_order():
    """Two equal jobs released together: the first in input order runs first (ties by release, then order)."""
    jobs = [fixed("late", 1.0, 1, 3), fixed("x", 0.0, 1, 2), fixed("y", 0.0, 1, 2)]
    records = {r.job_id: r for r in run(jobs, Cluster(1, 1)).records}
    assert [(records[j].start, records[j].end) for j in ("x", "y", "late")] == [(0.0, 2.0), (2.0, 4.0), (4.0, 7.0)]


def random_jobs(seed: int, n: int) -> list[Job]:
    """Sizes spread over three orders of magnitude, so that short arrivals suspend long jobs often."""
    rng = np.random.default_rng(seed)
    return [fixed(f"j{k}", float(rng.integers(0, 8000)), int(rng.choice([1, 1, 1, 2])), int(np.exp(rng.uniform(0, 8))))
            for k in range(n)]


@pytest.mark.parametrize("name, params, preemption", [
    ("srtf_oracle", {}, {"restart_s": 3.0}),
    ("las2d", {"queue_thresholds": (40.0, 400.0), "promote_knob": 4.0}, {"restart_s": 2.0, "min_run_s": 5.0}),
    ("psjf", {}, {"min_run_s": 4.0})])
def test_dead_events_are_dropped_and_every_schedule_stays_the_same(monkeypatch, name, params, preemption):
    """The Python loop's compaction (the compiled loop's is checked by its schedules, test_preemptive_compiled)."""
    monkeypatch.setattr(preemptive_loop, "compiled_rule", lambda *arguments: None)
    compactions = []
    compact = preemptive_loop._PreemptiveSimulation._compact

    def watched(simulation):
        before = len(simulation.heap)
        compact(simulation)
        timers = [event for event in simulation.heap if event[3] < 0]
        assert all(event[0] == simulation.timer for event in timers)  # only the scheduler's live timer stays
        compactions.append((before, len(simulation.heap), simulation.table.size))

    jobs, cluster = random_jobs(7, 400), Cluster(2, 4)
    monkeypatch.setattr(preemptive_loop, "COMPACT_SLACK", 8)
    monkeypatch.setattr(preemptive_loop._PreemptiveSimulation, "_compact", watched)
    compacted = run(jobs, cluster, name, params, **preemption)
    assert len(compactions) > 3
    for before, after, running in compactions:  # every dead event went: what is left is live
        assert after <= preemptive_loop.EVENTS_PER_RUNNING * running + 1 and 2 * after < before
    monkeypatch.setattr(preemptive_loop, "COMPACT_SLACK", 10 ** 9)  # never compacted
    plain = run(jobs, cluster, name, params, **preemption)
    assert list(compacted.records) == list(plain.records) and list(compacted.segments) == list(plain.segments)
    assert sum(r.preemptions for r in plain.records) > 20
