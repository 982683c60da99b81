"""Preemptive schedulers through the asrpt-bench app: the issue-19 command, its outputs, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench import io
from test_cli import run_app

ONE_GPU = ["workload=csv", "workload.path=jobs.csv", "workload.num_jobs=3", "predictor=oracle", "task=simulate",
           "progress=false", "cluster.servers=1", "cluster.gpus_per_server=1"]


def _table(tmp_path: Path) -> None:
    (tmp_path / "jobs.csv").write_text("job_id,release,gpus,iterations,alpha\na,0,1,10,1.0\nb,2,1,3,1.0\nc,3,1,1,1.0\n")


def test_srtf_oracle_without_restart_runs_preemptive_srpt(tmp_path: Path) -> None:
    """a 0-2, b 2-3, c 3-4, b 4-6, a 6-14: the SRPT schedule, in jobs.parquet and segments.parquet."""
    _table(tmp_path)
    run_dir = tmp_path / "run"
    done = run_app(*ONE_GPU, "scheduler=srtf_oracle", "preemption.restart_s=0", "preemption.min_run_s=0",
                   f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert io.run_status(run_dir) == "complete"
    jobs = pd.read_parquet(run_dir / "jobs.parquet").set_index("job_id")
    assert jobs["end"].to_dict() == {"a": 14.0, "b": 6.0, "c": 4.0}
    assert jobs["preemptions"].to_dict() == {"a": 1, "b": 1, "c": 0} and (jobs["restore_s"] == 0).all()
    segments = pd.read_parquet(run_dir / "segments.parquet")
    assert list(zip(segments["job_id"], segments["start"], segments["end"])) == [
        ("a", 0, 2), ("b", 2, 3), ("c", 3, 4), ("b", 4, 6), ("a", 6, 14)]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["preemptions"] == 2 and summary["scheduler"] == "srtf_oracle"


def test_las2d_and_its_restart_price_through_the_cli(tmp_path: Path) -> None:
    """las2d with a 1 s restart and one queue threshold of 2 GPU-s: every resumption is priced."""
    _table(tmp_path)
    run_dir = tmp_path / "run"
    done = run_app(*ONE_GPU, "scheduler=las2d", "preemption.restart_s=1", "scheduler.queue_thresholds=[2.0]",
                   f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    jobs = pd.read_parquet(run_dir / "jobs.parquet").set_index("job_id")
    assert (jobs["restore_s"] == jobs["preemptions"] * 1.0).all() and jobs["preemptions"].sum() > 0
    # wait_s = every second without GPUs: from release to the first segment, and every gap between segments
    segments = pd.read_parquet(run_dir / "segments.parquet").sort_values(["job_id", "start"])
    for job_id, own in segments.groupby("job_id"):
        gaps = (own["start"].iloc[1:].to_numpy() - own["end"].iloc[:-1].to_numpy()).sum()
        row = jobs.loc[job_id]
        assert row["wait_s"] == pytest.approx(own["start"].iloc[0] - row["release"] + gaps, abs=1e-9)
        assert row["service_s"] == pytest.approx((own["end"] - own["start"] - own["restart_s"]).sum(), abs=1e-9)
        assert row["first_start_delay_s"] == own["start"].iloc[0] - row["release"]
    assert (jobs["wait_s"] > jobs["first_start_delay_s"]).any()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["mean_wait"] == pytest.approx(jobs["wait_s"].mean())


def test_a_negative_restart_is_refused_naming_the_key(tmp_path: Path) -> None:
    _table(tmp_path)
    done = run_app(*ONE_GPU, "scheduler=srtf", "preemption.restart_s=-1", f"hydra.run.dir={tmp_path / 'bad'}",
                   cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "asrpt-bench: error: preemption.restart_s must be a number of seconds in [0, 1e+12], got -1.0\n"


def test_a_preemption_price_without_a_preemptive_scheduler_is_refused(tmp_path: Path) -> None:
    """The price acts only on the preemptive schedulers; beside asrpt alone it would change nothing."""
    _table(tmp_path)
    done = run_app(*ONE_GPU, "scheduler=asrpt", "preemption.restart_s=0", f"hydra.run.dir={tmp_path / 'bad'}",
                   cwd=tmp_path)
    assert done.returncode == 2 and not (tmp_path / "bad").exists()
    assert done.stderr == ("asrpt-bench: error: preemption.restart_s prices the suspensions of preemptive schedulers "
                           "(las2d, psjf, psjf_oracle, srtf, srtf_oracle); this run's schedulers never preempt: "
                           "['asrpt']\n")


def test_a_compare_run_writes_the_segments_of_its_preemptive_schedulers(tmp_path: Path) -> None:
    """compare with asrpt, srtf_oracle and las2d: segments.parquet holds the two preemptive schedulers'
    segments, labelled, and srtf_oracle's are those of its own simulate run."""
    _table(tmp_path)
    run_dir = tmp_path / "run"
    args = [a for a in ONE_GPU if a != "task=simulate"]
    done = run_app(*args, "task=compare", "task.schedulers=[asrpt,srtf_oracle,las2d]", "preemption.restart_s=0",
                   "preemption.min_run_s=0", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    segments = pd.read_parquet(run_dir / "segments.parquet")
    assert set(segments["scheduler"]) == {"srtf_oracle", "las2d"}
    srtf = segments[segments["scheduler"] == "srtf_oracle"]
    assert list(zip(srtf["job_id"], srtf["start"], srtf["end"])) == [
        ("a", 0, 2), ("b", 2, 3), ("c", 3, 4), ("b", 4, 6), ("a", 6, 14)]
