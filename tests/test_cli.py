"""The asrpt-bench app end to end in subprocesses: outputs, validation exits, sweeps, resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from asrpt_bench import io

ROOT = Path(__file__).resolve().parents[1]
TINY = ["debug=tiny", "workload=synthetic"]
SUMMARY_KEYS = {"num_jobs", "total_jct", "mean_jct", "sum_completion", "makespan", "utilization", "lower_bound",
                "ratio_to_lower_bound", "theorem1_bound", "rho", "epsilon_bar", "wall_time_s", "versions",
                "config_hash", "dropped", "recurrence_keys", "offered_load", "unseen_share", "unseen_gpu_time_share",
                "predictor_median_rel_error_seen"}
JOB_COLUMNS = {"job_id", "release", "start", "end", "gpus", "model", "config", "servers_used", "alpha", "alpha_min",
               "alpha_max", "iterations", "predicted_iterations", "comm_heavy"}


def run_app(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0"}
    return subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_compare_writes_the_design_outputs(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = run_app(*TINY, f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "A-SRPT / scheduler" in done.stdout and "wcs_subtime" in done.stdout
    assert io.run_status(run_dir) == "complete" and (run_dir / ".hydra" / "config.yaml").exists()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert SUMMARY_KEYS <= set(summary) and summary["recurrence_keys"] == "synthetic"
    comparison = pd.read_csv(run_dir / "comparison.csv")
    for key in ("offered_load", "unseen_share", "unseen_gpu_time_share", "predictor_median_rel_error_seen"):
        assert (comparison[key] == summary[key]).all(), key
    assert summary["offered_load"] > 0 and 0 <= summary["unseen_share"] <= 1
    assert comparison["scheduler"].tolist() == ["asrpt", "asrpt_oracle", "spjf", "spwf", "wcs_duration",
                                                "wcs_workload", "wcs_subtime", "fifo"]
    asrpt_jct = comparison.set_index("scheduler").loc["asrpt", "total_jct"]
    assert (comparison["asrpt_reduction"] - (1 - asrpt_jct / comparison["total_jct"])).abs().max() < 1e-12
    jobs = pd.read_parquet(run_dir / "jobs.parquet")
    assert JOB_COLUMNS | {"scheduler"} <= set(jobs.columns)
    assert len(jobs) == 8 * summary["num_jobs"]
    assert summary["total_jct"] == asrpt_jct


def test_a_chosen_scheduler_is_the_reference_of_the_comparison(tmp_path: Path) -> None:
    """`scheduler=fifo` under the default compare task: fifo heads the summary and the ratio column."""
    run_dir = tmp_path / "run"
    done = run_app(*TINY, "scheduler=fifo", "task.schedulers=[asrpt,fifo]", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["reference_scheduler"] == "fifo" and summary["total_jct"] == summary["per_scheduler"]["fifo"]["total_jct"]
    header = done.stdout.splitlines()[1]
    assert header.split()[-3:] == ["fifo", "/", "scheduler"] and "fifo's run:" in done.stdout


def test_invalid_value_exits_before_work_naming_the_key(tmp_path: Path) -> None:
    run_dir = tmp_path / "bad"
    done = run_app(*TINY, "scheduler.comm_heavy=0.5", f"hydra.run.dir={run_dir}", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "asrpt-bench: error: scheduler.comm_heavy must be a number >= 1, got 0.5\n"
    assert not run_dir.exists()


def _three_job_table(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,release,gpus,iterations,alpha\na,0,1,10,1.0\nb,1,2,5,1.0\nc,2,1,7,1.0\n")
    return path


def test_sweep_records_failures_and_resume_skips_complete_points(tmp_path: Path) -> None:
    """A point that fails on its data (more jobs than the table has) is recorded; the sweep runs the
    other point, exits 1 naming the failed one, and a rerun skips the completed point."""
    sweep = tmp_path / "sweep"
    args = ("-m", "workload=csv", f"workload.path={_three_job_table(tmp_path).name}", "predictor=oracle",
            "task=simulate", "progress=false", "workload.num_jobs=2,9", f"hydra.sweep.dir={sweep}")
    first = run_app(*args, cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    assert "asrpt-bench: error: sweep point" in first.stderr and "workload.num_jobs=9" in first.stderr
    assert "sweep: 2 of 2 points done: 1 complete, 0 skipped (complete), 1 failed" in first.stdout  # Hydra's log
    good = next(sweep.glob("*workload.num_jobs=2*"))
    bad = next(sweep.glob("*workload.num_jobs=9*"))
    assert io.run_status(good) == "complete"
    assert io.run_status(bad) == "failed" and "workload.num_jobs=9 asks for more jobs than the 3" in io.read_failure(bad)
    stamp = (good / "summary.json").stat().st_mtime_ns
    second = run_app(*args, cwd=tmp_path)
    assert second.returncode == 1
    assert "workload.num_jobs=2): skipped (complete), sweep/" in second.stderr, second.stderr
    assert "sweep: 2 of 2 points done: 0 complete, 1 skipped (complete), 1 failed" in second.stdout
    assert (good / "summary.json").stat().st_mtime_ns == stamp
    assert io.run_status(bad) == "failed"


def test_joblib_launcher_runs_points_in_parallel_processes(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    done = run_app("-m", *TINY, "task=simulate", "seed=0,1", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
                   f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    dirs = sorted(p for p in sweep.iterdir() if p.is_dir())
    assert [io.run_status(p) for p in dirs] == ["complete", "complete"]
    hashes = {io.read_summary(p)["config_hash"] for p in dirs}
    assert len(hashes) == 2
    again = run_app("-m", *TINY, "task=simulate", "seed=0,1", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
                    f"hydra.sweep.dir={sweep}", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    said = sorted(line.split(" (")[0] for line in again.stderr.splitlines() if line.endswith(tuple(p.name for p in dirs)))
    assert said == ["point 1 of 2", "point 2 of 2"]  # each worker says its point was skipped, with the count
    assert again.stderr.count(": skipped (complete), ") == 2
    assert "sweep: 2 of 2 points done: 0 complete, 2 skipped (complete), 0 failed" in again.stdout


def test_two_ad_hoc_sweeps_get_two_directories_and_a_rerun_the_same_one(tmp_path: Path) -> None:
    """An ad-hoc sweep lands in multirun/<task>/<swept keys>-<hash>, so collect never mixes two sweeps;
    the launcher, progress and cache keys do not change it (a rerun resumes)."""
    from asrpt_bench.cli_args import sweep_dir_override

    first = sweep_dir_override(["-m", "scheduler.tau=0,2", "seed=0"])
    assert first is not None and first.startswith("hydra.sweep.dir=multirun/${task.name}/scheduler.tau-")
    assert sweep_dir_override(["seed=0", "-m", "scheduler.tau=0,2", "progress=false", "hydra/launcher=joblib",
                               "cache.enabled=false", "hydra.launcher.n_jobs=2"]) == first
    assert sweep_dir_override(["-m", "scheduler.tau=0,1", "seed=0"]) != first
    assert sweep_dir_override(["scheduler.tau=0"]) is None
    assert sweep_dir_override(["-m", "experiment=fig6_num_jobs"]) is None
    assert sweep_dir_override(["-m", "seed=0,1", "hydra.sweep.dir=here"]) is None
    for taus in ("0,2", "0,1"):  # -m first, then -m between the overrides (once Hydra's usage text)
        args = ["-m", *TINY, "task=simulate", f"scheduler.tau={taus}"] if taus == "0,2" else [
            *TINY, "task=simulate", "-m", f"scheduler.tau={taus}"]
        done = run_app(*args, cwd=tmp_path)
        assert done.returncode == 0 and "usage" not in done.stderr, done.stderr
    sweeps = [p for p in (tmp_path / "multirun" / "simulate").iterdir()]
    assert len(sweeps) == 2 and all(p.name.startswith("scheduler.tau-") for p in sweeps)
    taus = [{part for point in sweep.iterdir() if point.is_dir() for part in point.name.split(",")
             if part.startswith("scheduler.tau=")} for sweep in sweeps]
    assert sorted(map(sorted, taus)) == [["scheduler.tau=0", "scheduler.tau=1"], ["scheduler.tau=0", "scheduler.tau=2"]]


def test_options_go_after_the_overrides_with_their_values() -> None:
    """Hydra reads the overrides as one run of arguments: `-m` (or `--cfg job`) anywhere is moved after them."""
    from asrpt_bench.cli_args import overrides_first

    assert overrides_first(["seed=0,1", "-m", "scheduler.tau=0,1", "hydra.sweep.dir=x"]) == [
        "seed=0,1", "scheduler.tau=0,1", "hydra.sweep.dir=x", "-m"]
    assert overrides_first(["--cfg", "job", "seed=1", "-p", "task", "--info", "config", "x=1", "--info"]) == [
        "seed=1", "x=1", "--cfg", "job", "-p", "task", "--info", "config", "--info"]
    assert overrides_first(["--info", "seed=1", "--cfg=job"]) == ["seed=1", "--info", "--cfg=job"]
