"""A hand-made job table runs through the app unchanged: every row is simulated, and a forest without
history is refused naming the key."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import ConfigError
from asrpt_bench.experiment import run_experiment
from asrpt_bench.workloads.instances import get_instance


def reviewer_csv(tmp_path: Path) -> Path:
    path = tmp_path / "reviewer.csv"
    get_instance("lemma2_reviewer").table.to_csv(path, index=False)
    return path


def test_csv_instance_simulates_every_row_with_the_hand_schedule(tmp_path: Path) -> None:
    """The reviewer's instance as a CSV on 1 x 100 GPUs, tau = 0, perfect predictions:
    C_A = 101000, C_B = 4000 (paper-notes 7.5)."""
    config = compose_run_config(["task=simulate", "scheduler=asrpt", "scheduler.tau=0", "predictor=oracle",
                                 "cluster.servers=1", "cluster.gpus_per_server=100", "workload=csv",
                                 f"workload.path={reviewer_csv(tmp_path)}", "progress=false"])
    result = run_experiment(config)
    ends = dict(zip(result.jobs["job_id"].astype(str), result.jobs["end"]))
    assert len(ends) == 2 and sorted(ends.values()) == [4000.0, 101000.0]
    assert result.summary["sum_completion"] == 105000.0


def test_forest_on_a_table_without_history_names_the_key(tmp_path: Path) -> None:
    config = compose_run_config(["task=simulate", "predictor=forest", "cluster.servers=1",
                                 "cluster.gpus_per_server=100", "workload=csv",
                                 f"workload.path={reviewer_csv(tmp_path)}", "progress=false"])
    with pytest.raises(ConfigError, match="workload.train_fraction"):
        run_experiment(config)


def test_solver_fallback_is_counted_in_the_summary(tmp_path: Path) -> None:
    """Without a full Gurobi licence, `solver=gurobi` runs on the default open solver and says so."""
    from asrpt_bench.solvers import DEFAULT_SOLVER, backend_availability

    status = backend_availability("gurobi")
    if status.available and status.full:
        pytest.skip("a full Gurobi licence is present: no fallback happens")
    config = compose_run_config(["task=simulate", "scheduler=asrpt", "predictor=oracle", "placement=ilp",
                                 "solver=gurobi", "cluster.servers=1", "cluster.gpus_per_server=100",
                                 "workload=csv", f"workload.path={reviewer_csv(tmp_path)}", "progress=false"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the one-line warning is tested in test_solvers (once per process)
        result = run_experiment(config)
    assert result.summary["solver"] == "gurobi" and result.summary["solver_used"] == DEFAULT_SOLVER
    assert result.summary["solver_fallback"] == 1
