"""A preemptive scheduler's vectorised forms give the floats of its scalar ones, job by job.

The bounded walk ranks many running jobs at once with `priorities` and books when their bounds expire with
`bounds_until`; one job at a time it uses `priority` and `bound_until`. Which one a decision takes depends on
how many bounds went stale (more than ONE_BY_ONE: vectorised), so the two must agree exactly or schedules
would depend on that count. Small instances rarely take the vectorised path, so it is pinned here directly,
with run seconds near las2d's thresholds, where rounding decides the queue.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from asrpt_bench.core import TrainingPlan
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.las2d import QUEUE_THRESHOLDS
from asrpt_bench.schedulers.srtf import SRTF
from asrpt_bench.schedulers.views import JobView

PREEMPTIVE = ["srtf", "srtf_oracle", "psjf", "psjf_oracle", "las2d"]


def arrived(name: str, rng: np.random.Generator, n: int):
    """The scheduler with n jobs arrived (its per-job columns set), the jobs, and their input orders."""
    scheduler = make_scheduler(name)
    jobs = []
    for order in range(n):
        gpus = int(rng.choice([1, 2, 4, 8]))
        iterations = int(rng.integers(1, 10_000))
        job = JobView(job_id=f"j{order}", order=order, release=float(order), gpus=gpus,
                      plan=TrainingPlan.fixed(gpus, 1.0), user=None, group=None,
                      predicted_iterations=float(iterations) * float(rng.uniform(0.3, 3.0)),
                      alpha_min=float(rng.uniform(0.05, 4.0)), alpha_max=4.0, min_servers=1, iterations=iterations)
        scheduler.on_arrival(job, job.release)
        jobs.append(job)
    return scheduler, jobs, np.arange(n)


def run_seconds_near_thresholds(rng: np.random.Generator, jobs: list[JobView]) -> np.ndarray:
    """Run seconds spread over las2d's queues, a third of them at a threshold less its tolerance (1e-3
    GPU-seconds), within rounding."""
    seconds = []
    for job in jobs:
        threshold = float(rng.choice(QUEUE_THRESHOLDS))
        near = (threshold + float(rng.choice([-2e-3, -1e-3, -1e-3 + 1e-12, -1e-3 - 1e-12, 0.0, 1e-9]))) / job.gpus
        seconds.append(near if rng.random() < 0.35 else float(rng.uniform(0.0, 3 * threshold / job.gpus)))
    return np.array(seconds)


@pytest.mark.parametrize("name", PREEMPTIVE)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_priorities_and_bounds_are_the_scalar_ones_elementwise(name, seed):
    rng = np.random.default_rng(seed)
    scheduler, jobs, orders = arrived(name, rng, 300)
    seconds = run_seconds_near_thresholds(rng, jobs)
    progress = np.array([float(rng.uniform(0.0, 1.2)) * scheduler.known_iterations(job) for job in jobs])
    now = 1e6 + float(rng.uniform(0, 1e6))
    vectorised = scheduler.priorities(orders, progress, seconds)
    scalar = [scheduler.priority(job, p, s) for job, p, s in zip(jobs, progress.tolist(), seconds.tolist())]
    assert vectorised.tolist() == scalar
    untils = scheduler.bounds_until(orders, seconds, now)
    expected = [scheduler.bound_until(job, s, now) for job, s in zip(jobs, seconds.tolist())]
    assert untils.tolist() == expected
    if name == "las2d":  # the bounds expire, and at different instants: the comparison above says something
        finite = [until for until in expected if until != math.inf]
        assert len(finite) > 100 and len(set(finite)) > 100
    else:
        assert expected == [math.inf] * len(jobs)


def test_a_subclass_that_bounds_for_less_gets_its_bounds_job_by_job():
    """A plugin scheduler that overrides only the scalar `bound_until` (bounds that expire) still has them
    expire on the vectorised path: the default vectorised form asks it job by job."""

    class ExpiringSRTF(SRTF):
        label = "expiring_srtf"

        def bound_until(self, job: JobView, run_seconds: float, now: float) -> float:
            return now + 100.0 / job.gpus + run_seconds

    rng = np.random.default_rng(4)
    scheduler = ExpiringSRTF()
    _, jobs, orders = arrived("srtf", rng, 50)
    for job in jobs:
        scheduler.on_arrival(job, job.release)
        scheduler.running_[job.order] = job
    seconds = rng.uniform(0, 1e4, len(jobs))
    expected = [scheduler.bound_until(job, s, 7.0) for job, s in zip(jobs, seconds.tolist())]
    assert scheduler.bounds_until(orders, seconds, 7.0).tolist() == expected
    assert math.inf not in expected
