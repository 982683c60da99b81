"""Run directories are written atomically and collected into one tidy table that flags bad runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from asrpt_bench import io, rundir
from asrpt_bench.collect import collect, flatten, main, run_directories
from asrpt_bench.report.plots import mean_ci

ROOT = Path(__file__).resolve().parents[1]


def _result(task: str = "simulate", with_comparison: bool = False) -> io.RunResult:
    jobs = pd.DataFrame({"job_id": ["a", "b"], "release": [0.0, 1.0], "end": [3.0, 5.0]})
    comparison = None
    summary = {"total_jct": 7.0, "config_hash": "abc", "versions": {"numpy": "1"}}
    if with_comparison:
        comparison = pd.DataFrame({"scheduler": ["asrpt", "fifo"], "total_jct": [6.0, 9.0]})
        summary["per_scheduler"] = {"asrpt": {"total_jct": 6.0}, "fifo": {"total_jct": 9.0}}
    return io.RunResult(task=task, summary=summary, jobs=jobs, comparison=comparison)


def _config(tau: float) -> dict:
    return {"seed": 0, "scheduler": {"name": "asrpt", "tau": tau}, "task": {"name": "simulate"}}


def test_write_outputs_marks_complete_last(tmp_path: Path) -> None:
    io.mark_started(tmp_path, _config(1.0), ["scheduler.tau=1.0"])
    assert io.run_status(tmp_path) == "incomplete"
    io.write_outputs(tmp_path, _result())
    assert io.run_status(tmp_path) == "complete"
    assert not (tmp_path / io.INCOMPLETE).exists()
    assert io.read_summary(tmp_path)["total_jct"] == 7.0
    assert io.read_jobs(tmp_path)["job_id"].tolist() == ["a", "b"]
    assert io.is_complete(tmp_path, "abc") and not io.is_complete(tmp_path, "other")
    assert not list(tmp_path.glob(".*.tmp"))


def test_failed_write_leaves_no_partial_file(tmp_path: Path) -> None:
    bad = pd.DataFrame({"x": [object()]})  # parquet cannot store a bare object
    with pytest.raises(Exception):
        io.atomic_write_frame(tmp_path / "jobs.parquet", bad)
    assert list(tmp_path.iterdir()) == []


def test_write_run_dir_is_all_or_nothing(tmp_path: Path) -> None:
    target = tmp_path / "run"
    rundir.write_run_dir(target, _result(), _config(0.5))
    assert io.run_status(target) == "complete"
    assert not (tmp_path / "run.incomplete").exists()


def test_restart_clears_an_earlier_failure(tmp_path: Path) -> None:
    io.mark_started(tmp_path, _config(1.0), [])
    io.mark_failed(tmp_path, "Traceback\nValueError: boom\n")
    assert io.run_status(tmp_path) == "failed"
    io.mark_started(tmp_path, _config(1.0), [])
    assert io.run_status(tmp_path) == "incomplete"


def test_rerun_in_the_same_directory_drops_the_earlier_runs_outputs(tmp_path: Path) -> None:
    io.mark_started(tmp_path, _config(1.0), [])
    earlier = _result("compare", with_comparison=True)
    earlier.tables["extra"] = pd.DataFrame({"x": [1]})
    io.write_outputs(tmp_path, earlier)
    io.mark_started(tmp_path, _config(1.0), [])
    assert not any((tmp_path / name).exists() for name in (io.SUMMARY, io.JOBS, io.COMPARISON, "extra.csv"))
    io.write_outputs(tmp_path, io.RunResult(task="simulate", summary={"total_jct": 5.0}))
    table = collect([tmp_path])
    assert len(table) == 1 and table["total_jct"].tolist() == [5.0]  # no stale comparison rows
    assert (tmp_path / io.CONFIG).exists() and (tmp_path / io.OVERRIDES).exists()


def test_collect_flags_failed_and_incomplete_runs(tmp_path: Path) -> None:
    good, failed, unfinished = tmp_path / "good", tmp_path / "failed", tmp_path / "unfinished"
    io.mark_started(good, _config(1.0), ["scheduler.tau=1.0"])
    io.write_outputs(good, _result())
    io.mark_started(failed, _config(2.0), ["scheduler.tau=2.0"])
    io.mark_failed(failed, "Traceback (most recent call last):\nValueError: boom\n")
    io.mark_started(unfinished, _config(3.0), ["scheduler.tau=3.0"])
    table = collect([tmp_path]).set_index("scheduler.tau")
    assert table.loc[1.0, "status"] == "complete" and table.loc[1.0, "total_jct"] == 7.0
    assert table.loc[2.0, "status"] == "failed" and table.loc[2.0, "error"] == "ValueError: boom"
    assert np.isnan(table.loc[2.0, "total_jct"])
    assert table.loc[3.0, "status"] == "incomplete"
    assert table.loc[1.0, "overrides"] == "scheduler.tau=1.0"
    assert table.loc[1.0, "versions.numpy"] == "1"


def test_compare_runs_give_one_row_per_scheduler(tmp_path: Path) -> None:
    io.mark_started(tmp_path, _config(1.0), [])
    io.write_outputs(tmp_path, _result("compare", with_comparison=True))
    table = collect([tmp_path])
    assert table["scheduler"].tolist() == ["asrpt", "fifo"]
    assert table["total_jct"].tolist() == [6.0, 9.0]
    assert (table["scheduler.tau"] == 1.0).all()


def test_collect_cli_writes_csv_and_rejects_missing_dirs(tmp_path: Path) -> None:
    run = tmp_path / "sweep" / "p1"
    io.mark_started(run, _config(1.0), [])
    io.write_outputs(run, _result())
    out = tmp_path / "results" / "x.csv"
    assert main([str(tmp_path / "sweep"), "--out", str(out)]) == 0
    assert pd.read_csv(out)["status"].tolist() == ["complete"]
    assert main([str(tmp_path / "absent")]) == 2


def test_collect_cli_refuses_failed_or_incomplete_runs_unless_allowed(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    done, failed, unfinished = (tmp_path / "sweep" / name for name in ("done", "failed", "unfinished"))
    io.mark_started(done, _config(1.0), ["experiment=sensitivity", "seed=0"])
    io.write_outputs(done, _result())
    io.mark_started(failed, _config(2.0), ["experiment=sensitivity", "seed=1"])
    io.mark_failed(failed, "Traceback ...\nValueError: boom\n")
    io.mark_started(unfinished, _config(3.0), ["experiment=sensitivity", "seed=2"])
    out = tmp_path / "results" / "x.csv"
    assert main([str(tmp_path / "sweep"), "--out", str(out)]) == 1
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and "{'failed': 1, 'incomplete': 1}" in message and "ValueError: boom" in message
    assert not out.exists()
    assert main([str(tmp_path / "sweep"), "--out", str(out), "--allow-partial"]) == 0
    table = pd.read_csv(out)
    assert sorted(table["status"]) == ["complete", "failed", "incomplete"]
    assert set(table["experiment"]) == {"sensitivity"}


def test_flatten_makes_dotted_scalar_columns() -> None:
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": "x"}) == {"a.b": 1, "a.c": "[1, 2]", "d": "x"}


def test_mean_ci_is_the_student_t_interval() -> None:
    table = pd.DataFrame({"x": [1, 1, 1, 2], "v": [1.0, 2.0, 3.0, 5.0]})
    summary = mean_ci(table, ["x"], "v").set_index("x")
    half = 4.302652729911275 * 1.0 / np.sqrt(3)  # t(0.975, 2) * s / sqrt(n), s = 1
    assert summary.loc[1, "mean"] == pytest.approx(2.0)
    assert summary.loc[1, "high"] - summary.loc[1, "mean"] == pytest.approx(half)
    assert summary.loc[2, "low"] == summary.loc[2, "high"] == 5.0 and summary.loc[2, "n"] == 1


def _sweep_point(root: Path, overrides: list[str], starts: list[float]) -> None:
    jobs = pd.DataFrame({"job_id": ["a", "b"], "release": [0.0, 1.0], "start": starts,
                         "end": [s + 2.0 for s in starts]})
    result = io.RunResult(task="simulate", summary={"task": "simulate", "num_jobs": 2, "total_jct": 7.0}, jobs=jobs)
    rundir.write_run_dir(root / ",".join(overrides), result, {"seed": 0}, overrides)


def test_collect_names_a_swept_key_that_changed_no_schedule(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # tau changes nothing at either comm_heavy; comm_heavy=3 moves job b, so comm_heavy is not inert.
    for tau in ("0", "1", "2"):
        _sweep_point(tmp_path, [f"scheduler.tau={tau}", "scheduler.comm_heavy=1.5", "seed=0"], [0.0, 1.0])
        _sweep_point(tmp_path, [f"scheduler.tau={tau}", "scheduler.comm_heavy=3", "seed=0"], [0.0, 4.0])
        _sweep_point(tmp_path, [f"scheduler.tau={tau}", "scheduler.comm_heavy=1.5", "seed=1"], [0.5, 1.0])
    assert main([str(tmp_path), "--out", str(tmp_path / "table.csv")]) == 0
    assert capsys.readouterr().err == ("asrpt-bench-collect: warning: inert sweep: scheduler.tau took 3 values and "
                                       "changed no schedule\n")
    assert pd.read_csv(tmp_path / "table.csv")["schedule_fingerprint"].nunique() == 3


def test_a_null_sweep_value_is_written_null_and_keeps_its_row(tmp_path: Path) -> None:
    """A sweep over workload.recurrence.sigma=0,1,null: the null point's cell reads "null", so an analysis
    that keeps it as text groups it with the others instead of dropping it as NaN."""
    for sigma in (0.0, 1.0, None):
        overrides = [f"workload.recurrence.sigma={'null' if sigma is None else sigma}"]
        result = io.RunResult(task="simulate", summary={"task": "simulate", "num_jobs": 2, "total_jct": 7.0},
                              jobs=pd.DataFrame({"job_id": ["a", "b"], "release": [0.0, 1.0], "end": [3.0, 5.0]}))
        rundir.write_run_dir(tmp_path / overrides[0], result,
                             {"seed": 0, "workload": {"name": "philly", "recurrence": {"sigma": sigma}}}, overrides)
    assert main([str(tmp_path), "--out", str(tmp_path / "table.csv")]) == 0
    text = pd.read_csv(tmp_path / "table.csv", keep_default_na=False, na_values=[""])
    groups = text.groupby("workload.recurrence.sigma")["total_jct"].size()
    assert sorted(groups.index.astype(str)) == ["0.0", "1.0", "null"] and groups.sum() == 3
    assert pd.read_csv(tmp_path / "table.csv")["workload.recurrence.sigma"].isna().sum() == 1


def test_complete_is_a_checksum_manifest_that_sha256sum_checks(tmp_path: Path) -> None:
    io.mark_started(tmp_path, _config(1.0), ["scheduler.tau=1.0"])
    io.write_outputs(tmp_path, _result("compare", with_comparison=True))
    lines = (tmp_path / io.COMPLETE).read_text().splitlines()
    assert lines[0] == "ok"
    assert [line.split("  ")[1] for line in lines[1:]] == [io.CONFIG, io.OVERRIDES, io.JOBS, io.COMPARISON,
                                                         io.SUMMARY]
    checked = subprocess.run(["sha256sum", "-c"], input="\n".join(lines[1:]) + "\n", cwd=tmp_path, text=True,
                             capture_output=True)
    assert checked.returncode == 0 and checked.stdout.count(": OK") == 5
    assert io.verify_manifest(tmp_path) == "" and io.is_complete(tmp_path)
    (tmp_path / io.CONFIG).write_text((tmp_path / io.CONFIG).read_text().replace("1.0", "2.0"))
    assert io.verify_manifest(tmp_path).startswith("config.json: its SHA-256 differs")
    assert not io.is_complete(tmp_path)  # a sweep reruns the point instead of skipping it


def test_a_compare_run_is_complete_only_with_every_scheduler_of_its_config(tmp_path: Path) -> None:
    result = _result("compare", with_comparison=True)
    rundir.write_run_dir(tmp_path / "run", result, {"task": {"name": "compare", "schedulers": ["asrpt", "fifo"]}})
    assert collect([tmp_path])["status"].tolist() == ["complete", "complete"]
    rundir.write_run_dir(tmp_path / "run", result,
                         {"task": {"name": "compare", "schedulers": ["asrpt", "fifo", "spjf"]}})
    table = collect([tmp_path])
    assert table["status"].tolist() == ["corrupt"]
    assert table["error"].iloc[0] == ("comparison.csv: no row of scheduler 'spjf', which the run's config or "
                                      "summary lists")


def _killed(target: Path, config: dict, started_ns: int) -> Path:
    staging = rundir.stage(target, config, [])
    os.utime(staging / io.CONFIG, ns=(started_ns, started_ns))
    return staging


def test_a_later_complete_run_or_the_same_config_supersedes_a_killed_runs_staging(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "r1"
    earlier = _killed(target, _config(1.0), 1)
    rundir.write_run_dir(target, _result(), _config(2.0))
    started = (target / io.CONFIG).stat().st_mtime_ns
    same = _killed(target, _config(2.0), started + 10**9)  # a rerun of the same config, killed
    other = _killed(target, _config(3.0), started + 10**9)  # a newer run of another config, killed
    assert rundir.target_of(earlier) == rundir.target_of(other) == target
    assert [rundir.superseded(path) for path in (earlier, same, other)] == [True, True, False]
    runs, superseded = run_directories([tmp_path])
    assert runs == [other, target] and superseded == sorted([earlier, same])
    assert collect([tmp_path])["status"].tolist() == ["incomplete", "complete"]
    truncate_half(target / io.JOBS)
    assert not any(rundir.superseded(path) for path in (earlier, same))  # only a whole run supersedes


def truncate_half(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def test_collect_writes_parquet_with_nulls_and_lists_and_gzipped_csv(tmp_path: Path) -> None:
    config = {"seed": 0, "workload": {"path": None, "sigma": 0.5}, "task": {"schedulers": ["asrpt", "fifo"]}}
    rundir.write_run_dir(tmp_path / "runs" / "a", _result(), config, ["seed=0"])
    mixed = {**config, "workload": {"path": "jobs.csv", "sigma": "auto"}}
    rundir.write_run_dir(tmp_path / "runs" / "b", _result(), mixed, ["seed=1"])
    assert main([str(tmp_path / "runs"), "--out", str(tmp_path / "t.parquet")]) == 0
    table = pq.read_table(tmp_path / "t.parquet")
    assert table.column("overrides").to_pylist() == ["seed=0", "seed=1"]
    assert table.column("workload.path").to_pylist() == [None, "jobs.csv"]  # a null, not the text "null"
    assert table.column("task.schedulers").to_pylist() == [["asrpt", "fifo"]] * 2
    assert table.column("workload.sigma").to_pylist() == ["0.5", "auto"]  # mixed kinds: each value's text
    assert main([str(tmp_path / "runs"), "--out", str(tmp_path / "t.csv.gz")]) == 0
    assert (tmp_path / "t.csv.gz").read_bytes()[:2] == b"\x1f\x8b"
    text = pd.read_csv(tmp_path / "t.csv.gz", keep_default_na=False, na_values=[""]).set_index("overrides")
    assert text.loc["seed=0", "workload.path"] == "null"
    assert text.loc["seed=0", "task.schedulers"] == '["asrpt", "fifo"]'


def test_a_real_compare_run_cut_in_its_comparison_is_corrupt(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HYDRA_FULL_ERROR", None)
    subprocess.run([sys.executable, "-m", "asrpt_bench.cli", "debug=tiny", "progress=false", "hydra.run.dir=run"],
                   cwd=tmp_path, env=env, check=True, capture_output=True)
    assert main([str(tmp_path / "run"), "--out", str(tmp_path / "t.parquet")]) == 0
    table = pq.read_table(tmp_path / "t.parquet")
    assert table.num_rows == 8 and table.column("total_jct").null_count == 0
    assert table.column("task.schedulers").to_pylist()[0] == table.column("scheduler").to_pylist()
    assert table.column("cache.dir").to_pylist() == [None] * 8
    comparison = tmp_path / "run" / io.COMPARISON
    comparison.write_bytes(comparison.read_bytes()[: comparison.stat().st_size // 2])
    assert main([str(tmp_path / "run"), "--out", str(tmp_path / "t2.csv")]) == 1
    assert not (tmp_path / "t2.csv").exists()


def test_collect_counts_the_runs_in_which_no_job_waited(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for load, waited in (("0.1", True), ("0.2", True), ("0.9", False)):
        jobs = pd.DataFrame({"job_id": ["a"], "release": [0.0], "start": [0.0], "end": [float(load)]})
        summary = {"task": "simulate", "num_jobs": 1, "total_jct": 1.0, "no_job_waited": waited}
        overrides = [f"workload.target_load={load}"]
        rundir.write_run_dir(tmp_path / overrides[0], io.RunResult(task="simulate", summary=summary, jobs=jobs),
                             {"seed": 0}, overrides)
    assert main([str(tmp_path), "--out", str(tmp_path / "table.csv")]) == 0
    first = tmp_path / "workload.target_load=0.1"
    assert capsys.readouterr().err == (f"asrpt-bench-collect: warning: no job waited in 2 of 3 runs (first: {first}): "
                                       "the schedulers cannot differ there\n")
