"""Adjustments: one warning line each, a count in summary.json, once per run however often raised."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from asrpt_bench import solvers
from asrpt_bench.adjustments import Adjustment, AdjustmentWarning, RunNotes, adjust, caught_adjustments, replay
from asrpt_bench.config import PlacementConfig, PredictorConfig, RunConfig, TaskConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.experiment import run_experiment


def test_run_notes_show_and_count_each_distinct_adjustment_once() -> None:
    with warnings.catch_warnings(record=True) as shown:
        with RunNotes() as notes:
            for _ in range(3):
                adjust("dropped_oversize_jobs", 2, "dropped 2 job(s)")
            adjust("dropped_oversize_jobs", 1, "dropped 1 job(s) of the second table")
            warnings.warn("a plain warning")
    distinct = ["dropped 2 job(s)", "dropped 1 job(s) of the second table", "a plain warning"]
    assert notes.counts() == {"dropped_oversize_jobs": 3}
    assert notes.summary()["warnings"] == distinct
    assert [str(w.message) for w in shown] == distinct


def test_each_run_reports_its_own_adjustments_in_one_process() -> None:
    """Python's once-per-location registry must not hide the second run's warning from its summary."""
    for _ in range(2):
        with RunNotes() as notes:
            adjust("solver_fallback", 1, "solver 'x' unusable")
        assert notes.counts() == {"solver_fallback": 1}


def test_cached_work_replays_its_adjustments() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        adjust("num_jobs_truncated", 5, "kept 5")
    made = caught_adjustments(caught)
    assert made == [Adjustment("num_jobs_truncated", 5, "kept 5")]
    with RunNotes() as notes:
        replay(made)
    assert notes.counts() == {"num_jobs_truncated": 5}


def test_adjustment_is_an_ordinary_user_warning_outside_a_run() -> None:
    with pytest.warns(AdjustmentWarning, match="clamped") as record:
        adjust("k", 1, "clamped")
    assert record[0].message.adjustment.count == 1
    assert issubclass(AdjustmentWarning, UserWarning)


def _csv_run(path: Path, **task: object) -> RunConfig:
    return RunConfig(cluster=Cluster(servers=1, gpus_per_server=4),
                     workload=WorkloadConfig(name="csv", path=str(path), num_jobs=None, train_fraction=0.0,
                                             drop_oversize=True),
                     predictor=PredictorConfig(name="oracle"), placement=PlacementConfig(name="first_fit"),
                     task=TaskConfig(**task), progress=False)


def test_compare_counts_a_dropped_job_once_not_once_per_scheduler(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,release,gpus,iterations,alpha\na,0,2,10,1.0\nbig,1,8,10,1.0\nb,2,1,5,1.0\n")
    summary = run_experiment(_csv_run(path, name="compare", schedulers=["asrpt", "fifo"])).summary
    assert summary["adjustments"] == {"dropped_oversize_jobs": 1}
    assert summary["warnings"] == ["dropped 1 job(s) needing more than the cluster's 4 GPUs "
                                   "(first: 'big'; workload.drop_oversize=true)"]
    assert summary["num_jobs"] == 2


def test_solver_fallback_is_in_every_runs_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    restricted = solvers.backend_entry("gurobi", lambda: solvers.Availability(True, False, "size-limited Gurobi licence"),
                                 solvers.BACKENDS["gurobi"].factory)
    monkeypatch.setitem(solvers.BACKENDS, "gurobi", restricted)
    monkeypatch.setattr(solvers.fallback, "_FALLBACK_WARNED", set())
    config = RunConfig(task=TaskConfig(name="placement", study_models=["vgg19"], study_gpu_counts=[2],
                                       study_patterns=["empty"]), progress=False,
                       solver=solvers.SolverSettings("gurobi", time_limit_s=10.0))
    message = "solver 'gurobi' unusable: size-limited Gurobi licence; using 'cpsat' instead"
    for _ in range(2):
        summary = run_experiment(config).summary
        assert summary["adjustments"] == {"solver_fallback": 1}
        assert summary["warnings"] == [message]
        assert summary["solver_used"] == "cpsat"
