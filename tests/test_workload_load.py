"""Offered load, releases scaled to a target load, injected unseen jobs, and the unseen / error scalars
every run reports, on hand-made tables checked by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import ConfigError
from asrpt_bench.experiment import run_experiment
from asrpt_bench.prepare import load_workload, prediction_scalars

# G = 8 (1 x 8). Work g*d: a 2*100, b 4*(50*2) = 400 -> offered load 600 / (8 * 50) = 1.5 over span 50 s.
TWO_JOBS = pd.DataFrame({"job_id": ["a", "b"], "release": [0.0, 50.0], "gpus": [2, 4], "iterations": [100, 50],
                         "alpha": [1.0, 2.0]})
# history: g1 (2 jobs), later: c in g1 (seen), d in g9 (unseen, 4 GPUs x 300 s of the 1 x 100 + 4 x 300 GPU-s)
HISTORY_TABLE = pd.DataFrame({"job_id": ["h1", "h2", "c", "d"], "release": [0.0, 1.0, 2.0, 3.0],
                              "gpus": [1, 1, 1, 4], "iterations": [100, 100, 100, 300], "alpha": [1.0] * 4,
                              "group": ["g1", "g1", "g1", "g9"], "user": ["u"] * 4})


def config(tmp_path: Path, table: pd.DataFrame, *overrides: str):
    path = tmp_path / "jobs.csv"
    table.to_csv(path, index=False)
    return compose_run_config(["workload=csv", f"workload.path={path}", "cluster.servers=1",
                               "cluster.gpus_per_server=8", "predictor=oracle", "progress=false", *overrides])


def test_offered_load_of_the_simulated_jobs(tmp_path):
    workload = load_workload(config(tmp_path, TWO_JOBS))
    assert workload.scalars["offered_load"] == 1.5 and workload.scalars["release_scale"] == 1.0
    assert workload.durations.tolist() == [100.0, 100.0]


def test_target_load_scales_releases_exactly(tmp_path):
    workload = load_workload(config(tmp_path, TWO_JOBS, "workload.target_load=0.75"))
    assert [job.release for job in workload.jobs] == [0.0, 100.0] and workload.table["release"].tolist() == [0.0, 100.0]
    assert workload.scalars["offered_load"] == 0.75 and workload.scalars["release_scale"] == 2.0
    result = run_experiment(config(tmp_path, TWO_JOBS, "workload.target_load=3", "task=simulate", "scheduler=fifo"))
    assert result.summary["offered_load"] == 3.0
    assert result.jobs.sort_values("job_id")["release"].tolist() == [0.0, 25.0]


def test_impossible_target_load_is_refused_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"workload\.target_load=1 cannot be reached by scaling releases: the "
                                          r"simulated jobs are all released at one instant"):
        load_workload(config(tmp_path, TWO_JOBS.iloc[:1], "workload.target_load=1"))
    with pytest.raises(ConfigError, match=r"workload\.target_load must be null \(as in the trace\) or a number > 0"):
        config(tmp_path, TWO_JOBS, "workload.target_load=0")


def test_unseen_shares_and_seen_error(tmp_path):
    run = config(tmp_path, HISTORY_TABLE, "predictor=forest", "predictor.n_estimators=5", "workload.train_fraction=0.5")
    workload = load_workload(run)
    assert workload.table["job_id"].tolist() == ["c", "d"]
    scalars = prediction_scalars(run, workload)
    assert scalars["unseen_share"] == 0.5
    assert scalars["unseen_gpu_time_share"] == pytest.approx(1200 / 1300)
    assert scalars["predictor_median_rel_error_seen"] == 0.0  # c's group always ran 100 iterations
    oracle = prediction_scalars(config(tmp_path, HISTORY_TABLE, "workload.train_fraction=0.5"), workload)
    assert oracle == {"unseen_share": 0.0, "unseen_gpu_time_share": 0.0, "predictor_median_rel_error_seen": 0.0}


def test_injected_jobs_are_unseen_gang_jobs_added_to_a_fixed_workload(tmp_path):
    base = ["workload=philly", "workload.num_jobs=40", "predictor=forest", "predictor.n_estimators=4",
            "workload.inject_gpus=16", "workload.inject_duration=1e5"]
    plain = load_workload(compose_run_config(base))
    three = load_workload(compose_run_config([*base, "workload.inject_jobs=3"]))
    five = load_workload(compose_run_config([*base, "workload.inject_jobs=5"]))
    added = five.table.iloc[40:]
    assert len(three.jobs) == 43 and len(five.jobs) == 45 and three.jobs[:40] == plain.jobs
    pd.testing.assert_frame_equal(three.table.iloc[:40], plain.table, check_dtype=False)
    assert added["job_id"].str.startswith("syn-inject-").all() and (added["gpus"] == 16).all()
    assert three.table.iloc[40:][["release", "model", "config", "iterations"]].equals(
        added.iloc[:3][["release", "model", "config", "iterations"]])
    span = plain.table["release"].max()
    assert added["release"].between(0, span).all()
    assert five.durations[40:] == pytest.approx([1e5] * 5, rel=1e-3)  # iterations = round(duration / alpha~min)
    run = compose_run_config([*base, "workload.inject_jobs=5"])
    scalars = prediction_scalars(run, five)
    unseen = scalars["unseen_share"] * 45
    assert unseen >= 5 and five.scalars["injected_jobs"] == 5
