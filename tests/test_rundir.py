"""Run directories: unique names, nothing lost that a run did not write, and a sweep's skip check that
sees every change to what decides a point's result."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench import io, rundir
from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import ConfigError
from asrpt_bench.identity import run_identity

ROOT = Path(__file__).resolve().parents[1]
TABLE = "job_id,release,gpus,iterations,alpha\na,0,1,10,1.0\nb,1,2,5,1.0\n"
CSV_RUN = ("workload=csv", "predictor=oracle", "task=simulate", "progress=false")


def start_app(*args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0"}
    return subprocess.Popen([sys.executable, "-m", "asrpt_bench.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_app(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    process = start_app(*args, cwd=cwd)
    out, err = process.communicate(timeout=300)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file below `directory` (Hydra's own .hydra/ and cli.log included), by relative path."""
    return {str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*"))
            if path.is_file()}


def _result(total: float = 7.0) -> io.RunResult:
    return io.RunResult("simulate", {"total_jct": total}, jobs=pd.DataFrame({"job_id": ["a"], "end": [1.0]}))


def test_a_refused_run_leaves_the_earlier_run_in_its_directory(tmp_path: Path) -> None:
    (tmp_path / "ok.csv").write_text(TABLE)
    (tmp_path / "bad.csv").write_text(TABLE.replace("a,0,", "a,soon,"))
    first = run_app(*CSV_RUN, "workload.path=ok.csv", "hydra.run.dir=runs/r1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = snapshot(tmp_path / "runs" / "r1")
    refused = run_app(*CSV_RUN, "workload.path=bad.csv", "hydra.run.dir=runs/r1", cwd=tmp_path)
    assert refused.returncode == 2 and "column 'release': not a number" in refused.stderr
    assert ".hydra/overrides.yaml" in before and "cli.log" in before
    assert snapshot(tmp_path / "runs" / "r1") == before and io.run_status(tmp_path / "runs" / "r1") == "complete"
    assert not [path for path in (tmp_path / "runs").iterdir() if rundir.is_staging(path)]


def test_a_run_in_the_working_directory_never_overwrites_the_users_files(tmp_path: Path) -> None:
    (tmp_path / "ok.csv").write_text(TABLE)
    (tmp_path / "config.json").write_text("mine\n")
    (tmp_path / "summary.json").write_text("mine too\n")
    done = run_app(*CSV_RUN, "workload.path=ok.csv", "hydra.run.dir=.", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("already holds ['config.json', 'summary.json'], which no run wrote; a run "
                                        "never overwrites them: choose an empty or new output directory "
                                        "(hydra.run.dir=...)")
    assert (tmp_path / "config.json").read_text() == "mine\n"
    assert (tmp_path / "summary.json").read_text() == "mine too\n"


def test_two_runs_started_in_the_same_second_get_two_directories(tmp_path: Path) -> None:
    runs = [start_app("debug=tiny", "workload=synthetic", "task=simulate", f"seed={seed}", cwd=tmp_path)
            for seed in (0, 1)]
    assert [run.wait(timeout=300) for run in runs] == [0, 0]
    dirs = sorted((tmp_path / "outputs" / "simulate").iterdir())
    assert len(dirs) == 2 and all(io.run_status(path) == "complete" for path in dirs)
    assert sorted(io.read_config(path)["seed"] for path in dirs) == [0, 1]
    assert sorted(io.read_overrides(path)[-1] for path in dirs) == ["seed=0", "seed=1"]


def test_a_sweep_reruns_a_point_whose_input_file_changed(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(TABLE)
    args = ("-m", *CSV_RUN, "workload.path=jobs.csv", "scheduler.tau=0,1", f"hydra.sweep.dir={tmp_path / 'sweep'}")
    assert run_app(*args, cwd=tmp_path).returncode == 0
    points = sorted(p for p in (tmp_path / "sweep").iterdir() if p.is_dir())
    before = [io.read_summary(p)["total_jct"] for p in points]
    again = run_app(*args, cwd=tmp_path)
    assert again.returncode == 0 and again.stderr.count(": skipped (complete), ") == 2
    jobs.write_text(TABLE.replace("a,0,1,10,", "a,0,1,1000,"))
    edited = run_app(*args, cwd=tmp_path)
    assert edited.returncode == 0 and "skipped (complete)" not in edited.stderr
    after = [io.read_summary(p)["total_jct"] for p in points]
    assert all(new > old for new, old in zip(after, before))


def test_write_run_dir_keeps_what_no_run_wrote(tmp_path: Path) -> None:
    target = tmp_path / "run"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    rundir.write_run_dir(target, _result(), {"seed": 0})
    assert (target / "notes.txt").read_text() == "mine\n" and io.run_status(target) == "complete"
    rundir.write_run_dir(target, _result(9.0), {"seed": 1})  # an earlier run's record is replaced
    assert io.read_summary(target)["total_jct"] == 9.0 and (target / "notes.txt").exists()


def test_write_run_dir_refuses_a_directory_holding_the_users_summary(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "summary.json").write_text("mine\n")
    with pytest.raises(ConfigError, match="already holds \\['summary.json'\\], which no run wrote"):
        rundir.write_run_dir(target, _result(), {"seed": 0})
    assert [path.name for path in target.iterdir()] == ["summary.json"]
    assert (target / "summary.json").read_text() == "mine\n"
    assert [path.name for path in tmp_path.iterdir()] == ["mine"]  # no staging directory left


def test_write_run_dir_into_a_new_path_is_one_rename(tmp_path: Path) -> None:
    target = tmp_path / "new" / "run"
    rundir.write_run_dir(target, _result(), {"seed": 0}, ["seed=0"])
    assert io.run_status(target) == "complete" and io.read_overrides(target) == ["seed=0"]
    assert oct(target.stat().st_mode & 0o777) == "0o755"
    assert [path.name for path in target.parent.iterdir()] == ["run"]


def test_a_failed_run_publishes_its_record_but_not_its_partial_outputs(tmp_path: Path) -> None:
    target = tmp_path / "run"
    staging = rundir.stage(target, {"seed": 0}, ["seed=0"])
    io.atomic_write_frame(staging / "accuracy_abs.csv", pd.DataFrame({"x": [1]}))
    io.mark_failed(staging, "Traceback\nValueError: boom\n")
    rundir.publish(staging, target)
    assert sorted(path.name for path in target.iterdir()) == sorted([io.CONFIG, io.FAILED, io.OVERRIDES])
    rundir.write_run_dir(target, _result(), {"seed": 0})  # the rerun replaces the failed record
    assert io.run_status(target) == "complete" and not (target / io.FAILED).exists()


def test_the_run_identity_follows_the_input_bytes_and_the_plugin_code(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    plugin, jobs = tmp_path / "my_identity_plugin.py", tmp_path / "jobs.csv"
    plugin.write_text("X = 1\n")
    jobs.write_text(TABLE)
    config = RunConfig(plugins=["my_identity_plugin"], workload=WorkloadConfig(name="csv", path=str(jobs)))
    first = run_identity(config)
    assert run_identity(config) == first
    jobs.write_text(TABLE.replace("a,0,1,10,", "a,0,1,11,"))
    second = run_identity(config)
    plugin.write_text("X = 2  # edited\n")
    third = run_identity(config)
    assert len({first, second, third}) == 3
