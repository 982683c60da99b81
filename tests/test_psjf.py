"""Preemptive shortest job first: the gang schedulers psjf / psjf_oracle and A-SRPT's virtual PSJF machine
(`scheduler.virtual=psjf`), on hand-worked schedules and against an independent implementation: the
preemptive simulator's psjf_oracle on one GPU is single-machine PSJF, written apart from VirtualPSJF."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.core import Cluster, Job, PreemptionPrice, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.virtual_psjf import VirtualPSJF
from asrpt_bench.schedulers.virtual_srpt import VirtualSRPT
from asrpt_bench.sim import simulate


def one_gpu_jobs(spec: list[tuple[str, float, int]]) -> list[Job]:
    return [Job(name, release, TrainingPlan.fixed(1, 1.0), size) for name, release, size in spec]


def ends(name: str, jobs: list[Job], cluster: Cluster = Cluster(1, 1), predictions: dict | None = None,
         **price: float) -> dict[str, float]:
    result = simulate(jobs, cluster, make_scheduler(name), FirstFitPlacer(), predictions=predictions,
                      preemption=PreemptionPrice(**{"restart_s": 0.0, **price}))
    return {record.job_id: record.end for record in result.records}


def test_psjf_keeps_the_rank_of_arrival_where_srtf_follows_the_remaining_work():
    """One GPU. A (size 10) at 0, B (size 6) at 7: at 7 A has 3 left. SRTF keeps A (3 < 6): A 10, B 16.
    PSJF preempts A for B (6 < 10): B 13, A 16."""
    jobs = one_gpu_jobs([("A", 0, 10), ("B", 7, 6)])
    assert ends("srtf_oracle", jobs) == {"A": 10.0, "B": 16.0}
    assert ends("psjf_oracle", jobs) == {"A": 16.0, "B": 13.0}


def test_psjf_ranks_by_the_predicted_size_and_an_under_estimate_does_not_block():
    """One GPU. A (true 10, predicted 2) at 0, B (true 3, predicted 3) at 4. SRTF on predictions: at 4 A's
    predicted remaining time is 0 (< 3), so A runs on to 10 and B ends 13. PSJF on predictions: A's rank 2
    beats B's 3 too, the same schedule; with A predicted 5 instead, PSJF preempts A (3 < 5): B 7, A 13,
    while SRTF still sees A's remaining 1 (< 3) and keeps it."""
    jobs = one_gpu_jobs([("A", 0, 10), ("B", 4, 3)])
    assert ends("srtf", jobs, predictions={"A": 2, "B": 3}) == {"A": 10.0, "B": 13.0}
    assert ends("psjf", jobs, predictions={"A": 2, "B": 3}) == {"A": 10.0, "B": 13.0}
    assert ends("psjf", jobs, predictions={"A": 5, "B": 3}) == {"A": 13.0, "B": 7.0}
    assert ends("srtf", jobs, predictions={"A": 5, "B": 3}) == {"A": 10.0, "B": 13.0}


def test_gang_psjf_admits_by_size_and_skips_what_does_not_fit():
    """Two GPUs. A (2 GPUs, size 8) at 0; B (1 GPU, size 3) at 1 ranks first and suspends A; C (1 GPU,
    size 5) at 1 ranks before A and fills the other GPU. B ends 4; at 4 A (2 GPUs) does not fit beside C, so
    it waits; C ends 6, then A resumes with 7 left: ends 13."""
    jobs = [Job("A", 0.0, TrainingPlan.fixed(2, 1.0), 8), Job("B", 1.0, TrainingPlan.fixed(1, 1.0), 3),
            Job("C", 1.0, TrainingPlan.fixed(1, 1.0), 5)]
    assert ends("psjf_oracle", jobs, Cluster(1, 2)) == {"A": 13.0, "B": 4.0, "C": 6.0}


def reference_psjf(jobs: list[tuple[float, float]]) -> list[float]:
    """Single-machine PSJF on (release, size), written from the definition with exact event stepping: at
    each event the released unfinished job of least (size, release, index) runs."""
    left = [size for _, size in jobs]
    done = [None] * len(jobs)
    now = 0.0
    while any(d is None for d in done):
        ready = [k for k, (release, _) in enumerate(jobs) if release <= now and done[k] is None]
        future = [release for release, _ in jobs if release > now]
        if not ready:
            now = min(future)
            continue
        k = min(ready, key=lambda j: (jobs[j][1], jobs[j][0], j))
        step = min([left[k]] + [release - now for release in future])
        left[k] -= step
        now += step
        if left[k] <= 0:
            done[k] = now
    return done  # type: ignore[return-value]


instances = st.lists(st.tuples(st.integers(0, 20), st.integers(0, 9)), min_size=1, max_size=9)


@settings(max_examples=120, deadline=None)
@given(instances)
def test_virtual_psjf_matches_the_reference_and_the_simulators_psjf(spec):
    machine = VirtualPSJF()
    finished: dict[int, float] = {}
    for k, (release, size) in sorted(enumerate(spec), key=lambda item: (item[1][0], item[0])):
        finished.update(machine.add(k, float(size), (float(release), k), float(release)))
    finished.update(machine.advance_to(1e9))
    reference = reference_psjf([(float(r), float(s)) for r, s in spec])
    assert [finished[k] for k in range(len(spec))] == reference
    positive = [(f"j{k}", float(r), s) for k, (r, s) in enumerate(spec) if s > 0]
    if positive:
        simulated = ends("psjf_oracle", one_gpu_jobs(positive))
        assert simulated == {name: reference[int(name[1:])] for name, _, _ in positive}


def test_virtual_psjf_and_srpt_differ_where_the_remaining_work_shrinks():
    """A (10) at 0, B (6) at 7: virtual SRPT keeps A (3 left < 6), virtual PSJF runs B first."""
    for machine, expected in ((VirtualSRPT(), [("A", 10.0), ("B", 16.0)]), (VirtualPSJF(), [("B", 13.0), ("A", 16.0)])):
        machine.add("A", 10.0, (0.0, 0), 0.0)
        machine.add("B", 6.0, (7.0, 1), 7.0)
        assert machine.advance_to(100.0) == expected
        assert machine.ranks(100.0) == {}


def test_asrpt_with_a_virtual_psjf_machine_orders_eligibility_by_it():
    """G = 2, 1-GPU jobs (p~ = size / 2): A (size 20, p~ 10) at 0, B (size 12, p~ 6) at 7. Virtual SRPT: A
    eligible at 10, B at 16; virtual PSJF: B at 13, A at 16. Both start at eligibility on the idle cluster."""
    jobs = one_gpu_jobs([("A", 0, 20), ("B", 7, 12)])

    def run(virtual: str) -> dict[str, tuple[float, float]]:
        result = simulate(jobs, Cluster(1, 2), make_scheduler("asrpt", tau=0.0, virtual=virtual), FirstFitPlacer())
        return {record.job_id: (record.eligible, record.start) for record in result.records}

    assert run("srpt") == {"A": (10.0, 10.0), "B": (16.0, 16.0)}
    assert run("psjf") == {"A": (16.0, 16.0), "B": (13.0, 13.0)}


def test_release_eligibility_orders_unfinished_jobs_by_virtual_rank():
    """G = 2, every job on both GPUs (p~ = predicted size). A (true 4, predicted 1) at 0 starts at once and
    holds the cluster to 4; virtually it is done at 1. B (10) at 0.5 runs virtually from 1; C (9) at 3. At
    4 neither is virtually finished: SRPT ranks B first (7 left < 9), PSJF ranks C first (9 < 10)."""
    jobs = [Job("A", 0.0, TrainingPlan.fixed(2, 1.0), 4), Job("B", 0.5, TrainingPlan.fixed(2, 1.0), 10),
            Job("C", 3.0, TrainingPlan.fixed(2, 1.0), 9)]

    def run(virtual: str) -> dict[str, float]:
        scheduler = make_scheduler("asrpt", tau=0.0, eligibility="release", virtual=virtual)
        result = simulate(jobs, Cluster(1, 2), scheduler, FirstFitPlacer(), predictions={"A": 1, "B": 10, "C": 9})
        return {record.job_id: record.start for record in result.records}

    assert run("srpt") == {"A": 0.0, "B": 4.0, "C": 14.0}
    assert run("psjf") == {"A": 0.0, "B": 13.0, "C": 4.0}


def test_virtual_psjf_refuses_to_go_back_in_time():
    machine = VirtualPSJF()
    machine.advance_to(5.0)
    with pytest.raises(ValueError, match=r"^virtual PSJF cannot go back in time from 5.0 to 3.0$"):
        machine.advance_to(3.0)
