"""Per-user metrics (users.csv) and the fairness figures of the summary, against hand computations."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.config import PredictorConfig, RunConfig, TaskConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.experiment import run_experiment
from asrpt_bench.tasks.scoring import owner_table, with_owners
from asrpt_bench.tasks import users as users_module
from asrpt_bench.tasks.users import fairness, user_table

LOGS = Path(__file__).parent / "data" / "joblogs"


def jobs(*rows: tuple) -> pd.DataFrame:
    """(job_id, user, gpus, release, start, end, iterations, alpha_min) rows as a per-job table."""
    frame = pd.DataFrame(rows, columns=["job_id", "user", "gpus", "release", "start", "end", "iterations",
                                        "alpha_min"])
    return frame.assign(jct=frame["end"] - frame["release"], wait_s=frame["start"] - frame["release"])


def test_per_user_jobs_wait_slowdown_and_gpu_hours() -> None:
    table = jobs(("a", "ann", 2, 0.0, 0.0, 3600.0, 3600, 1.0),     # slowdown 1, 2 GPU-h
                 ("b", "ann", 1, 0.0, 3600.0, 7200.0, 1800, 2.0),  # waited 1 h, slowdown 2, 1 GPU-h
                 ("c", "bo", 4, 100.0, 400.0, 1300.0, 0, 1.0),     # no ideal duration: no slowdown
                 ("d", None, 1, 0.0, 600.0, 1200.0, 600, 1.0))     # no user; slowdown 2
    users = user_table(table)
    assert users.to_dict("records") == [
        {"user": "(none)", "jobs": 1, "mean_wait_s": 600.0, "mean_slowdown": 2.0, "gpu_hours": 600 / 3600},
        {"user": "ann", "jobs": 2, "mean_wait_s": 1800.0, "mean_slowdown": 1.5, "gpu_hours": 3.0},
        {"user": "bo", "jobs": 1, "mean_wait_s": 300.0, "mean_slowdown": pytest.approx(float("nan"), nan_ok=True),
         "gpu_hours": 1.0}]
    # Jain over the two users with a slowdown, (2 + 1.5)^2 / (2 (4 + 2.25)); worst / median = 2 / 1.75
    assert fairness(users) == {"users": 3, "jain_user_slowdown": pytest.approx(12.25 / 12.5),
                               "worst_user_slowdown_ratio": pytest.approx(2.0 / 1.75)}


def test_jain_is_one_when_users_are_slowed_alike_and_one_over_n_when_one_takes_it_all() -> None:
    alike = pd.DataFrame({"user": ["a", "b", "c"], "mean_slowdown": [3.0, 3.0, 3.0]})
    assert fairness(alike)["jain_user_slowdown"] == 1.0 and fairness(alike)["worst_user_slowdown_ratio"] == 1.0
    lopsided = pd.DataFrame({"user": ["a", "b", "c", "d"], "mean_slowdown": [1e9, 1e-9, 1e-9, 1e-9]})
    assert fairness(lopsided)["jain_user_slowdown"] == pytest.approx(0.25)


def test_a_preempted_job_holds_gpus_only_in_its_segments() -> None:
    table = jobs(("a", "ann", 2, 0.0, 0.0, 5000.0, 1800, 1.0))
    segments = pd.DataFrame({"job_id": ["a", "a"], "start": [0.0, 3200.0], "end": [1800.0, 5000.0],
                             "gpus": [2, 2]})
    assert user_table(table, segments)["gpu_hours"].tolist() == [2 * 3600 / 3600]


def test_every_compare_and_simulate_run_writes_users_with_the_fairness_in_the_summary() -> None:
    config = RunConfig(cluster=Cluster(servers=2, gpus_per_server=8),
                       workload=WorkloadConfig("slurm", path=str(LOGS / "sacct.txt"), train_fraction=0.0),
                       predictor=PredictorConfig("oracle"), task=TaskConfig("compare", schedulers=["fifo", "spjf"]),
                       progress=False)
    result = run_experiment(config)
    users = result.tables["users"]
    assert users.columns.tolist() == ["scheduler", "user", "jobs", "mean_wait_s", "mean_slowdown", "gpu_hours"]
    assert sorted(set(users["scheduler"])) == ["fifo", "recorded", "spjf"]
    assert users[users["scheduler"] == "fifo"]["user"].tolist() == ["alice", "bob", "dave", "erin"]
    for name in ("fifo", "spjf", "recorded"):
        expected = fairness(users[users["scheduler"] == name])
        assert {key: result.summary["per_scheduler"][name][key] for key in expected} == expected
    assert result.summary["jain_user_slowdown"] == result.summary["per_scheduler"]["fifo"]["jain_user_slowdown"]
    config.task = TaskConfig("simulate")
    alone = run_experiment(config)
    assert alone.tables["users"].columns.tolist() == ["user", "jobs", "mean_wait_s", "mean_slowdown", "gpu_hours"]
    assert "jain_user_slowdown" in alone.summary


@pytest.mark.parametrize("table", [
    pd.DataFrame({"job_id": ["c", "a", "a", "x"], "user": ["u1", "u2", "u3", "u9"], "group": [None, "g", "h", "k"]}),
    pd.DataFrame({"job_id": [1, 2], "user": ["u", None]}),
    pd.DataFrame({"job_id": ["a", "b"], "partition": pd.Series([None, "p"], dtype=object)}),
    pd.DataFrame({"job_id": ["a", "b", "c", "d"], "user": pd.Categorical(["x", "y", "x", None])}),
], ids=["strings-first-row-wins-missing-job", "int-ids", "object-column", "categorical"])
def test_owners_are_appended_as_a_left_merge_appends_them(table: pd.DataFrame) -> None:
    """with_owners gives the frame of a left merge on job_id (values, dtypes, missing owners, row order and
    index), without copying the per-job columns."""
    per_job = pd.DataFrame({"job_id": pd.Series(["d", "a", "b", "c"], dtype="str"), "end": [4.0, 1.0, 2.0, 3.0]})
    owners = owner_table(table)
    merged = per_job.merge(owners, on="job_id", how="left", validate="one_to_one")
    pd.testing.assert_frame_equal(with_owners(per_job, owners), merged, check_exact=True)
    assert with_owners(per_job, None) is per_job


@pytest.mark.parametrize("dtype", ["str", object])
def test_user_keys_are_one_object_per_user_with_the_table_a_per_job_conversion_gives(dtype) -> None:
    """The user table groups by one key object per distinct user (no string per job): the same rows as grouping
    the column converted to objects, a missing user (None, NaN) under `(none)`, also beside a user named so."""
    names = ["bo", None, "ann", "(none)", "bo", float("nan"), "ann", "cy"]
    table = jobs(*[(f"j{k}", name, 1 + k % 3, 0.0, 10.0 * k, 10.0 * k + 50 + k, 7 * k, 0.5 + k % 2)
                   for k, name in enumerate(names)])
    table["user"] = table["user"].astype(dtype)
    users = user_table(table)
    per_job = table.assign(user=table["user"].astype(object).where(table["user"].notna(), "(none)"))
    grouped = per_job.assign(ideal=per_job["iterations"] * per_job["alpha_min"]).groupby("user", sort=True)
    assert users["user"].tolist() == ["(none)", "ann", "bo", "cy"] and users["jobs"].tolist() == [3, 2, 2, 1]
    assert users["mean_wait_s"].tolist() == grouped["wait_s"].mean().tolist()
    keys = users_module._user_keys(table["user"])
    assert keys.dtype == object and keys.tolist() == per_job["user"].tolist()
    assert len({id(key) for key in keys}) == 5  # one per distinct user, and NO_USER beside the user named so
