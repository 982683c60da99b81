"""The on-disk cache of prepared work: a hit gives the same outputs as a miss, keys follow content."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench import cache
from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import ConfigError
from asrpt_bench.prepare import TableSpec
from asrpt_bench.provenance import config_hash

ROOT = Path(__file__).resolve().parents[1]
TINY = ["debug=tiny", "workload=synthetic", "task=compare", "task.schedulers=[asrpt,wcs_duration]"]


def run_app(cache_dir: Path, run_dir: Path, *overrides: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0"}
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *TINY, *overrides, f"cache.dir={cache_dir}",
                           f"hydra.run.dir={run_dir}"], cwd=run_dir.parent, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((run_dir / "summary.json").read_text())


def test_a_hit_gives_byte_identical_outputs_to_a_miss(tmp_path: Path) -> None:
    store = tmp_path / "cache"
    first = run_app(store, tmp_path / "miss")
    second = run_app(store, tmp_path / "hit")
    assert first["cache"] == {"table": "miss", "jobs": "miss", "predictor": "miss"}
    assert second["cache"] == {"table": "hit", "jobs": "hit", "predictor": "hit"}
    assert (tmp_path / "miss" / "jobs.parquet").read_bytes() == (tmp_path / "hit" / "jobs.parquet").read_bytes()
    volatile = ["sim_wall_time_s"]
    comparisons = [pd.read_csv(tmp_path / name / "comparison.csv").drop(columns=volatile) for name in ("miss", "hit")]
    pd.testing.assert_frame_equal(*comparisons)
    assert first["config_hash"] == second["config_hash"] and first["total_jct"] == second["total_jct"]
    disabled = run_app(store, tmp_path / "off", "cache.enabled=false")
    assert disabled["cache"] == {"table": "off", "jobs": "off", "predictor": "off"}
    assert (tmp_path / "off" / "jobs.parquet").read_bytes() == (tmp_path / "hit" / "jobs.parquet").read_bytes()


def test_another_predictor_reuses_the_table_but_not_the_fit(tmp_path: Path) -> None:
    store = tmp_path / "cache"
    run_app(store, tmp_path / "a")
    other = run_app(store, tmp_path / "b", "predictor.n_estimators=3")
    assert other["cache"] == {"table": "hit", "jobs": "hit", "predictor": "miss"}
    fewer = run_app(store, tmp_path / "c", "workload.job_cap=20")
    assert fewer["cache"] == {"table": "hit", "jobs": "miss", "predictor": "hit"}


def test_every_table_deciding_key_enters_the_key() -> None:
    spec = TableSpec.of(RunConfig())
    payload = cache._jsonable(spec.cache_inputs())
    assert {f.name for f in dataclasses.fields(TableSpec) if f.name != "params"} <= set(payload)
    assert set(payload["cluster"]) >= {"servers", "gpus_per_server", "b_intra", "b_inter"}
    assert {"time_compression", "recurrence", "train_fraction", "max_gpus"} <= set(payload["table_params"])
    assert not {"num_jobs", "target_load", "inject_jobs"} & set(payload["table_params"])  # they only select

    def key(config: RunConfig, kind: str = "table") -> str:
        return cache.cache_key(kind, spec=TableSpec.of(config).cache_inputs(), trace=None)

    base = key(RunConfig())
    assert key(RunConfig(workload=WorkloadConfig(time_compression=2.0))) != base
    assert key(RunConfig(seed=1)) != base
    assert key(RunConfig(), "predictor") != base
    assert key(RunConfig(workload=WorkloadConfig(num_jobs=10))) == key(RunConfig()) == base


def test_a_changed_trace_file_changes_the_key(tmp_path: Path) -> None:
    trace = tmp_path / "jobs.csv"
    trace.write_text("job_id,release,gpus,iterations,alpha\na,0,1,10,1.0\n")
    before = cache.content_hash(trace)
    trace.write_text("job_id,release,gpus,iterations,alpha\na,0,1,11,1.0\nb,1,1,5,1.0\n")
    assert cache.content_hash(trace) != before


def test_an_entry_that_does_not_load_is_recomputed(tmp_path: Path) -> None:
    store = cache.DiskCache(tmp_path)
    assert store.get_or_compute("table", "k", lambda: [1, 2]) == ([1, 2], "miss")
    assert store.get_or_compute("table", "k", lambda: [3]) == ([1, 2], "hit")
    store.path("table", "k").write_bytes(b"not a pickle")
    with pytest.warns(UserWarning, match="does not load"):
        assert store.get_or_compute("table", "k", lambda: [3]) == ([3], "miss")
    assert cache.DiskCache(None).get_or_compute("table", "k", lambda: [4]) == ([4], "off")


def test_clear_removes_every_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = cache.DiskCache(tmp_path)
    store.get_or_compute("table", "a", lambda: 1)
    store.get_or_compute("predictor", "b", lambda: 2)
    cache.main(["info", "--dir", str(tmp_path)])
    assert "2 entries (predictor, table)" in capsys.readouterr().out
    cache.main(["clear", "--dir", str(tmp_path)])
    assert "removed 2 entries" in capsys.readouterr().out
    assert cache.entries(tmp_path) == []


def test_cache_keys_are_validated_and_do_not_change_the_config_hash(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    config = RunConfig()
    config.cache.dir = str(not_a_dir)
    with pytest.raises(ConfigError, match=r"cache.dir must be a directory \(it names a file\)"):
        config.validate()
    moved = RunConfig()
    moved.cache.dir, moved.cache.enabled = str(tmp_path), False
    assert config_hash(moved) == config_hash(RunConfig())
