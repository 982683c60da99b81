"""A-SRPT's relaxed eligibility (`scheduler.eligibility=reservation`): a job may start before its virtual
completion where, by the estimates, it delays no virtually completed job's reservation. Hand-worked
schedules under strict dispatch, and the conformance kit under every dispatch rule."""

from __future__ import annotations

import pytest

from asrpt_bench.core import Cluster, Job, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.testing import check_scheduler

pytestmark = pytest.mark.filterwarnings("ignore:.*need all")


def job(name: str, release: float, gpus: int, size: int) -> Job:
    return Job(name, release, TrainingPlan.fixed(gpus, 1.0), size)


def run(jobs: list[Job], eligibility: str, cluster: Cluster = Cluster(1, 2)) -> dict[str, tuple[float, float, float]]:
    result = simulate(jobs, cluster, make_scheduler("asrpt", tau=0.0, eligibility=eligibility), FirstFitPlacer())
    return {record.job_id: (record.eligible, record.start, record.end) for record in result.records}


def test_an_idle_cluster_starts_a_job_at_release():
    """G = 2, A (1 GPU, 10 s: p~ 5) alone: the paper's rule makes it wait for its virtual completion."""
    assert run([job("A", 0, 1, 10)], "virtual") == {"A": (5.0, 5.0, 15.0)}
    assert run([job("A", 0, 1, 10)], "reservation") == {"A": (0.0, 0.0, 10.0)}


def test_a_job_starts_in_a_hole_only_where_it_delays_no_pending_reservation():
    """G = 2, perfect predictions. H (1 GPU, 10 s, p~ 5) starts at 0 on the idle cluster. P (2 GPUs, 2 s,
    p~ 2) arrives at 1, completes virtually at 3 and is blocked (one GPU idle): it reserves [10, 12), when H
    ends. U2 (1 GPU, 40 s) at 3.5 would run past 10: it waits. U1 (1 GPU, 4 s) at 4 fits in [4, 8): it starts.
    At 12, nothing pending, U2 starts (its virtual completion is 29). Under the paper's rule the virtual
    completions (P 3, U1 6, H 9, U2 29) are the starts but for U1, H which wait for GPUs."""
    jobs = [job("H", 0, 1, 10), job("P", 1, 2, 2), job("U2", 3.5, 1, 40), job("U1", 4, 1, 4)]
    assert run(jobs, "reservation") == {"H": (0.0, 0.0, 10.0), "P": (3.0, 10.0, 12.0), "U2": (12.0, 12.0, 52.0),
                                        "U1": (4.0, 4.0, 8.0)}
    assert run(jobs, "virtual") == {"H": (9.0, 9.0, 19.0), "P": (3.0, 3.0, 5.0), "U2": (29.0, 29.0, 69.0),
                                    "U1": (6.0, 6.0, 10.0)}


def test_the_hole_start_counts_as_backfilled_while_a_pending_job_waits():
    jobs = [job("H", 0, 1, 10), job("P", 1, 2, 2), job("U2", 3.5, 1, 40), job("U1", 4, 1, 4)]
    scheduler = make_scheduler("asrpt", tau=0.0, eligibility="reservation")
    result = simulate(jobs, Cluster(1, 2), scheduler, FirstFitPlacer())
    assert result.metrics["backfilled_starts"] == 1.0  # U1 passed the blocked P; H and U2 started with none pending


@pytest.mark.parametrize("dispatch", ["strict", "easy", "conservative", "greedy"])
def test_relaxed_eligibility_passes_the_conformance_kit(dispatch):
    check_scheduler("asrpt", {"eligibility": "reservation", "dispatch": dispatch})


def test_a_greedy_pass_counts_each_job_that_passed_a_waiting_one():
    """Eligibility "release" with the greedy rule, G = 2, perfect predictions. P (2 GPUs) is virtually done
    at 3 and first in the queue, but H holds one GPU until 10 and then U1 or U2 holds one: U2 starts at 3.5
    and U1 at 10, each passing the waiting P (two backfilled starts); P starts when U2 ends."""
    jobs = [job("H", 0, 1, 10), job("P", 1, 2, 2), job("U2", 3.5, 1, 40), job("U1", 4, 1, 4)]
    scheduler = make_scheduler("asrpt", tau=0.0, eligibility="release", dispatch="greedy")
    result = simulate(jobs, Cluster(1, 2), scheduler, FirstFitPlacer())
    assert {record.job_id: (record.start, record.end) for record in result.records} == {
        "H": (0.0, 10.0), "P": (43.5, 45.5), "U2": (3.5, 43.5), "U1": (10.0, 14.0)}
    assert result.metrics["backfilled_starts"] == 2.0
