"""A run's predictions as one array in its jobs' order (prediction.by_job.JobPredictions): the mapping a dict
of every job gives, read whole by simulate() for its very jobs; and a task computes them (hashing a trace
workload's table for their key) once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import Cluster, ConfigError, Job, TrainingPlan
from asrpt_bench.experiment import run_experiment
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.prediction import prepared
from asrpt_bench.prediction.by_job import JobPredictions
from asrpt_bench.prepare import fit_predictions, load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate


def job(job_id: str, release: float = 0.0, gpus: int = 1, iterations: int = 4) -> Job:
    return Job(job_id, release, TrainingPlan.fixed(gpus, 1.0), iterations)


def test_the_mapping_a_dict_of_the_ids_gives():
    jobs = [job("a"), job("b"), job("a"), job("c")]
    values = np.array([1.0, 2.5, 3.0, 0.0])
    predictions, expected = JobPredictions(jobs, values), dict(zip(["a", "b", "a", "c"], values.tolist()))
    assert dict(predictions) == expected == {"a": 3.0, "b": 2.5, "c": 0.0}  # a repeated id keeps its last value
    assert list(predictions) == list(expected) and len(predictions) == 3
    assert "b" in predictions and "z" not in predictions and type(predictions["b"]) is float
    with pytest.raises(KeyError):
        predictions["z"]
    with pytest.raises(ValueError, match="3 values for 4 jobs"):
        JobPredictions(jobs, values[:3])


def test_aligned_values_only_for_the_same_ids_in_the_same_order():
    jobs = [job("a"), job("b"), job("c")]
    predictions = JobPredictions(jobs, np.array([1.0, 2.0, 3.0]))
    assert predictions.aligned_values([job("a"), job("b"), job("c")]) == [1.0, 2.0, 3.0]
    assert predictions.aligned_values(jobs[::-1]) is None and predictions.aligned_values(jobs[:2]) is None


@pytest.mark.parametrize("scheduler", ["asrpt", "srtf", "fifo"])
def test_a_run_with_them_is_the_run_with_the_dict(scheduler):
    jobs = [job(f"j{k}", release=float(k // 2), gpus=1 + k % 3, iterations=3 + (5 * k) % 7) for k in range(12)]
    values = np.array([float(1 + (3 * k) % 8) for k in range(12)])
    runs = [simulate(jobs, Cluster(1, 4), make_scheduler(scheduler), FirstFitPlacer(), predictions=given).frame()
            for given in (JobPredictions(jobs, values), dict(zip((j.job_id for j in jobs), values.tolist())))]
    pd.testing.assert_frame_equal(*runs, check_exact=True)
    assert runs[0]["predicted_iterations"].tolist() == values.tolist()


@pytest.mark.parametrize("bad", [float("nan"), -1.0, float("inf")])
def test_a_bad_value_is_refused_naming_the_job_as_from_a_dict(bad):
    jobs = [job("a"), job("b"), job("c")]
    values = np.array([1.0, bad, 2.0])
    messages = []
    for given in (JobPredictions(jobs, values), dict(zip("abc", values.tolist()))):
        with pytest.raises(ConfigError) as refused:
            simulate(jobs, Cluster(1, 4), make_scheduler("asrpt"), FirstFitPlacer(), predictions=given)
        messages.append(str(refused.value))
    assert messages[0] == messages[1] == f"job 'b': predicted iterations must be finite and >= 0, got {bad!r}"


def csv_config(tmp_path: Path, *overrides: str):
    path = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b", "c"], "release": [0.0, 1.0, 2.0], "gpus": [1, 2, 1],
                  "iterations": [10, 20, 30], "alpha": [1.0, 1.0, 2.0]}).to_csv(path, index=False)
    return compose_run_config(["workload=csv", f"workload.path={path}", "workload.train_fraction=0",
                               "cluster.servers=1", "cluster.gpus_per_server=4", "predictor=oracle",
                               "cache.enabled=false", "progress=false", *overrides])


def test_a_workload_s_predictions_are_its_jobs_values(tmp_path):
    config = csv_config(tmp_path)
    workload = load_workload(config)
    predictions = fit_predictions(config, workload)
    assert isinstance(predictions, JobPredictions) and dict(predictions) == {"a": 10.0, "b": 20.0, "c": 30.0}
    assert predictions.aligned_values(workload.jobs) == [10.0, 20.0, 30.0]


@pytest.mark.parametrize("task", ["simulate", "compare"])
def test_a_task_hashes_the_table_for_its_predictions_once(tmp_path, monkeypatch, task):
    calls = []
    original = prepared.frame_hash
    monkeypatch.setattr(prepared, "frame_hash", lambda frame: calls.append(len(frame)) or original(frame))
    overrides = ["task=compare", "task.schedulers=[asrpt,fifo]"] if task == "compare" else ["task=simulate"]
    result = run_experiment(csv_config(tmp_path, *overrides))
    assert calls == [3] and result.summary["predictor_median_rel_error_seen"] == 0
