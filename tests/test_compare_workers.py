"""`workers`: a compare run's outputs are the same bytes whether its schedulers run one after another in
this process or side by side in forked workers (forked.py), warnings, adjustments and errors included;
the key is refused in one line at every door."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from asrpt_bench import io
from asrpt_bench.api import compare_run
from asrpt_bench.composition import compose_run_config
from asrpt_bench.config import RunConfig
from asrpt_bench.errors import ConfigError
from asrpt_bench.experiment import run_experiment
from asrpt_bench.forked import fork_refusal
from asrpt_bench.provenance import config_hash
from asrpt_bench.tasks.compare import compare_workers

ROOT = Path(__file__).resolve().parents[1]
VOLATILE = ("wall_time_s", "sim_wall_time_s", "cache")
"""Summary keys that differ between two identical runs (timings, and the cache's hit or miss)."""


def steady(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without its volatile keys, at the top and per scheduler."""
    kept = {key: value for key, value in summary.items() if key not in VOLATILE}
    kept["per_scheduler"] = {name: {k: v for k, v in scalars.items() if k not in VOLATILE}
                             for name, scalars in summary["per_scheduler"].items()}
    return kept


def assert_same_run(first: Path, second: Path, differing: tuple[str, ...] = ()) -> None:
    """Every output file of the two run directories is the same bytes, but summary.json (the same but its
    volatile keys) and the files naming the `workers` override (the same without it)."""
    names = set(io.listed_files(first))
    assert names == set(io.listed_files(second)) and {io.JOBS, io.COMPARISON, io.SUMMARY} <= names
    for name in sorted(names - {io.SUMMARY, *differing}):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    summaries = [json.loads((path / io.SUMMARY).read_text()) for path in (first, second)]
    assert steady(summaries[0]) == steady(summaries[1])


def run_app(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0"}
    return subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_default_compare_writes_the_same_outputs_serial_and_forked(tmp_path: Path) -> None:
    """The default compare (8 schedulers) on a synthetic trace from the command line: workers=1 (serial),
    the default (one per CPU) and 3 workers write the same files, printed table included."""
    runs, printed = {}, {}
    for workers in ("1", "null", "3"):
        run_dir = tmp_path / f"workers-{workers}"
        done = run_app("debug=tiny", "workload=synthetic", "workload.synthetic_jobs=400", "workload.job_cap=150",
                       f"workers={workers}", f"cache.dir={tmp_path / 'cache'}", f"hydra.run.dir={run_dir}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        runs[workers], printed[workers] = run_dir, done.stdout.replace(str(run_dir), "RUN")
    config = json.loads((runs["1"] / io.CONFIG).read_text())
    for workers in ("null", "3"):
        assert_same_run(runs["1"], runs[workers], differing=(io.CONFIG, io.OVERRIDES))
        other = json.loads((runs[workers] / io.CONFIG).read_text())
        assert other.pop("workers") == (None if workers == "null" else 3) and config.pop("workers", 1) == 1
        assert other == config
        assert printed[workers].split("wall time")[0] == printed["1"].split("wall time")[0]
    assert json.loads((runs["1"] / io.SUMMARY).read_text())["run_identity"] == json.loads(
        (runs["3"] / io.SUMMARY).read_text())["run_identity"]


@pytest.fixture()
def forking() -> None:
    """An in-process run here must take the forked path, or the comparison would prove nothing."""
    assert fork_refusal(2, 8) is None


def test_preemptive_schedulers_and_warnings_come_out_the_same(tmp_path: Path, forking: None) -> None:
    """Preemptive schedulers (segments.parquet), an adjustment (oversize jobs dropped) and a warning per
    scheduler: the same files, the same `warnings` and `adjustments` in the summary, in the same order."""
    overrides = ["debug=tiny", "workload=synthetic", "workload.synthetic_jobs=400", "workload.job_cap=150",
                 "cluster.servers=1", "cluster.gpus_per_server=4", "cache.enabled=false",
                 "task.schedulers=[asrpt,srtf,las2d,fifo,psjf,spjf+easy]"]
    results = {}
    for workers in (1, 2, 4):
        config = compose_run_config([*overrides, f"workers={workers}"])
        assert compare_workers(config, 6) == workers
        results[workers] = run_experiment(config)
        io.write_outputs(tmp_path / str(workers), results[workers])
    for workers in (2, 4):
        assert_same_run(tmp_path / "1", tmp_path / str(workers))
        assert results[workers].summary["warnings"] == results[1].summary["warnings"]
    assert results[1].segments is not None and len(results[1].segments) > 0
    assert results[1].summary["adjustments"] == {"dropped_oversize_jobs": 14}
    assert results[1].summary["warnings"][0].startswith("dropped 14 job(s) needing more than the cluster's 4 GPUs")


def test_a_failing_scheduler_fails_the_run_as_a_serial_run_does(tmp_path: Path, forking: None) -> None:
    """The recorded log replayed on a synthetic trace is refused when its turn comes (4th of 4): the same
    ConfigError, serial or forked."""
    overrides = ["debug=tiny", "workload=synthetic", "cache.enabled=false", "task.schedulers=[asrpt,fifo,spjf,recorded]"]
    messages, notes = [], []
    for workers in (1, 2):
        with pytest.raises(ConfigError) as raised:
            run_experiment(compose_run_config([*overrides, f"workers={workers}"]))
        messages.append(str(raised.value))
        notes.append("\n".join(getattr(raised.value, "__notes__", [])))
    assert messages[0] == messages[1] and messages[0].startswith("scheduler=recorded cannot replay the log: ")
    assert notes[0] == "" and (notes[1] == "" or (notes[1].startswith("in a forked worker:\nTraceback")
                                                  and "run_scheduler" in notes[1]))  # whichever process ran it


def test_workers_changes_no_hash_and_defaults_to_one_per_cpu() -> None:
    base = RunConfig()
    assert base.workers is None and config_hash(RunConfig(workers=1)) == config_hash(base)
    cpus = len(os.sched_getaffinity(0))
    assert compare_workers(base, 8) == min(cpus, 8) and compare_workers(base, 1) == 1
    assert compare_workers(dataclasses.replace(base, workers=5), 3) == 3


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "2"])
def test_a_bad_workers_value_is_refused_in_python(value: Any) -> None:
    with pytest.raises(ConfigError) as raised:
        RunConfig(workers=value).validate()
    assert str(raised.value) == f"workers must be null or an integer >= 1, got {value!r}"
    table = pd.DataFrame({"job_id": ["a"], "release": [0.0], "gpus": [1], "iterations": [10], "alpha": [1.0]})
    with pytest.raises(ConfigError, match="^workers must be null or an integer >= 1, got "):
        compare_run(table, ["fifo"], workers=value)


@pytest.mark.parametrize(("value", "said"), [("0", "workers must be null or an integer >= 1, got 0"),
                                            ("true", "workers must be null or an integer >= 1, got True"),
                                            ("abc", "workers")])
def test_a_bad_workers_value_is_refused_on_the_command_line(tmp_path: Path, value: str, said: str) -> None:
    done = run_app("debug=tiny", "workload=synthetic", f"workers={value}", f"hydra.run.dir={tmp_path / 'run'}",
                   cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("asrpt-bench: error: ") and said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()
