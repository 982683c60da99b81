"""random_order: a no-information order, a random permutation fixed per run and drawn from the run's seed
(schedules under every dispatch rule are checked against the independent implementation in
tests/test_dispatch.py)."""

from __future__ import annotations

import pandas as pd

from asrpt_bench.api import compare_run
from asrpt_bench.core import Cluster, Job, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.testing import check_scheduler

JOBS = [Job(f"j{k}", 0.0, TrainingPlan.fixed(1, 1.0), 1 + k) for k in range(8)]


def start_order(seed: int) -> list[str]:
    result = simulate(JOBS, Cluster(1, 1), make_scheduler("random_order", seed=seed), FirstFitPlacer())
    return [record.job_id for record in sorted(result.records, key=lambda record: record.start)]


def test_the_order_is_a_permutation_fixed_by_the_seed_and_blind_to_release_and_size():
    orders = {seed: start_order(seed) for seed in range(4)}
    assert all(sorted(order) == sorted(job.job_id for job in JOBS) for order in orders.values())
    assert start_order(2) == orders[2] and len({tuple(order) for order in orders.values()}) == 4
    assert orders[0] != [job.job_id for job in JOBS]  # not the release (input) order


def test_the_runs_seed_draws_the_permutation():
    table = pd.DataFrame({"job_id": [f"j{k}" for k in range(6)], "release": 0.0, "gpus": 1,
                          "iterations": [1, 2, 3, 4, 5, 6], "alpha": 1.0})

    def starts(seed: int) -> list[float]:
        result = compare_run(table, ["random_order", "fifo"], servers=1, gpus_per_server=1, seed=seed)
        jobs = result.jobs[result.jobs["scheduler"] == "random_order"]
        return jobs.sort_values("job_id")["start"].tolist()

    assert starts(0) == starts(0) and starts(0) != starts(1)


def test_random_order_passes_the_conformance_kit():
    check_scheduler("random_order")
