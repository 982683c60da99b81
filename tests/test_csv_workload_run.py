"""A hand-made job table runs through the app unchanged: every row is simulated; the default forest, which
has no history to learn from there, gives way to the oracle with one warning line; any field delimiter."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import ConfigError
from asrpt_bench.experiment import run_experiment
from asrpt_bench.workloads.csv_table import load_csv
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


def reviewer_run(path: Path, *overrides: str) -> dict:
    config = compose_run_config(["task=simulate", "scheduler=asrpt", "scheduler.tau=0", "cluster.servers=1",
                                 "cluster.gpus_per_server=100", "workload=csv", f"workload.path={path}",
                                 "progress=false", *overrides])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_experiment(config).summary


def test_a_forest_without_history_gives_way_to_the_oracle_and_says_so(tmp_path: Path) -> None:
    forest = reviewer_run(reviewer_csv(tmp_path), "predictor=forest")
    oracle = reviewer_run(reviewer_csv(tmp_path), "predictor=oracle")
    assert forest["predictor_used"] == "oracle" and oracle["predictor_used"] == "oracle"
    assert forest["sum_completion"] == oracle["sum_completion"] == 105000.0
    assert forest["adjustments"] == {"predictor_oracle_without_history": 1}
    assert forest["warnings"] == ["predictor=forest learns from the jobs before workload.train_fraction, and "
                                  "workload 'csv' has none (train_fraction=0); the run predicts with predictor=oracle "
                                  "(true iterations) instead"]
    assert oracle["adjustments"] == {}


def test_with_a_history_the_forest_is_used(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,release,gpus,duration\n" + "".join(f"j{i},{60 * i},1,{600 + i}\n" for i in range(10)))
    summary = reviewer_run(path, "predictor=forest", "workload.train_fraction=0.5")
    assert summary["predictor_used"] == "forest" and summary["adjustments"] == {}


def test_a_table_with_another_delimiter_reads_the_same(tmp_path: Path) -> None:
    path = reviewer_csv(tmp_path)
    semicolons = tmp_path / "semicolons.csv"
    semicolons.write_text(path.read_text().replace(",", ";"))
    assert load_csv(semicolons, delimiter=";").equals(load_csv(path))
    assert reviewer_run(semicolons, "predictor=oracle", "workload.delimiter=';'")["sum_completion"] == 105000.0
    with pytest.raises(ConfigError) as error:
        load_csv(semicolons)
    assert str(error.value) == (f"{semicolons}: the header line is one field 'job_id;release;gpus;iterations;alpha': "
                                "its fields are separated by ';', not ','; set workload.delimiter=';'")
    with pytest.raises(ConfigError, match="workload.delimiter must be one character other than a quote"):
        reviewer_run(semicolons, "workload.delimiter=ab")


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
