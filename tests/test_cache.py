"""The on-disk cache of prepared work: a hit gives the same outputs as a miss, keys follow content."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from asrpt_bench import cache, cache_trust
from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import ConfigError
from asrpt_bench.workloads.pipeline import TableSpec
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
    assert first["cache"] == {"table": "miss", "jobs": "miss", "predictor": "miss", "predictions": "miss"}
    # the warm run takes the predictions from the cache: it never loads the fitted forest
    assert second["cache"] == {"table": "hit", "jobs": "hit", "predictor": "unused", "predictions": "hit"}
    assert (tmp_path / "miss" / "jobs.parquet").read_bytes() == (tmp_path / "hit" / "jobs.parquet").read_bytes()
    assert (tmp_path / "miss" / "comparison.csv").read_bytes() == (tmp_path / "hit" / "comparison.csv").read_bytes()
    assert first["config_hash"] == second["config_hash"] and first["total_jct"] == second["total_jct"]
    disabled = run_app(store, tmp_path / "off", "cache.enabled=false")
    assert disabled["cache"] == {"table": "off", "jobs": "off", "predictor": "off", "predictions": "off"}
    assert (tmp_path / "off" / "jobs.parquet").read_bytes() == (tmp_path / "hit" / "jobs.parquet").read_bytes()


def test_another_predictor_reuses_the_table_but_not_the_fit(tmp_path: Path) -> None:
    store = tmp_path / "cache"
    run_app(store, tmp_path / "a")
    other = run_app(store, tmp_path / "b", "predictor.n_estimators=3")
    assert other["cache"] == {"table": "hit", "jobs": "hit", "predictor": "miss", "predictions": "miss"}
    fewer = run_app(store, tmp_path / "c", "workload.job_cap=5")  # fewer jobs (the tiny run simulates 12)
    assert fewer["cache"] == {"table": "hit", "jobs": "miss", "predictor": "hit", "predictions": "miss"}
    same = run_app(store, tmp_path / "d", "workload.job_cap=20")  # keeps all 12: other jobs' key, same content
    assert same["cache"] == {"table": "hit", "jobs": "miss", "predictor": "unused", "predictions": "hit"}


def test_whatever_decides_the_predictions_misses_their_cache(tmp_path: Path) -> None:
    """The predictions' key is the fitted predictor's (seed, predictor, its parameters, the table) plus
    the simulated jobs' content: any change recomputes them."""
    store = tmp_path / "cache"
    run_app(store, tmp_path / "a")
    changes = {"seed": "seed=1", "n_estimators": "predictor.n_estimators=3", "unseen": "predictor.unseen=mean",
               "load": "workload.target_load=0.5"}  # the last keeps the fit and changes only the jobs
    for name, override in changes.items():
        assert run_app(store, tmp_path / name, override)["cache"]["predictions"] == "miss", name
    again = run_app(store, tmp_path / "load_again", changes["load"])
    assert again["cache"] == {"table": "hit", "jobs": "hit", "predictor": "unused", "predictions": "hit"}
    assert (tmp_path / "load_again" / "jobs.parquet").read_bytes() == (tmp_path / "load" / "jobs.parquet").read_bytes()
    assert run_app(store, tmp_path / "b")["cache"]["predictions"] == "hit"  # the first entry is still there


def test_predictions_entries_are_under_the_size_cap_and_the_switch(tmp_path: Path) -> None:
    store = tmp_path / "cache"
    run_app(store, tmp_path / "a")
    assert sorted(path.parent.name for path in cache.entries(store)) == ["jobs", "predictions", "predictor", "table"]
    capped = tmp_path / "capped"  # room for less than one entry: each write evicts every older one
    run_app(capped, tmp_path / "b", "cache.max_size_gb=1e-9")
    assert [path.parent.name for path in cache.entries(capped)] == ["predictions"]  # the last written
    off = tmp_path / "off"
    disabled = run_app(off, tmp_path / "c", "cache.enabled=false")
    assert disabled["cache"]["predictions"] == "off" and not off.exists()


def spec_of(config: RunConfig) -> TableSpec:
    return TableSpec.of(config.workload.name, config.workload.params, config.seed, config.cluster, config.timing)


def test_every_table_deciding_key_enters_the_key() -> None:
    spec = spec_of(RunConfig())
    payload = cache._jsonable(spec.cache_inputs())
    assert {f.name for f in dataclasses.fields(TableSpec) if f.name != "params"} <= set(payload)
    assert set(payload["cluster"]) >= {"servers", "gpus_per_server", "b_intra", "b_inter"}
    assert {"time_compression", "recurrence", "train_fraction", "max_gpus"} <= set(payload["table_params"])
    assert not {"num_jobs", "target_load", "inject_jobs"} & set(payload["table_params"])  # they only select

    def key(config: RunConfig, kind: str = "table") -> str:
        return cache.cache_key(kind, spec=spec_of(config).cache_inputs(), trace=None)

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
    store.path("table", "k").write_bytes(cache_trust.sign("table", "k", b"not a pickle"))
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
    with pytest.raises(ConfigError, match=r"cache.dir must be a directory \(it names a file\)"):
        cache.CacheSettings(dir=str(not_a_dir))
    with pytest.raises(ConfigError, match=r"cache.dir must be a directory \(it names a file\)"):
        RunConfig.from_dict({"cache": {"dir": str(not_a_dir)}})
    moved = RunConfig(cache=cache.CacheSettings(dir=str(tmp_path), enabled=False))
    assert config_hash(moved) == config_hash(RunConfig())


class _Planted:
    """A pickle that creates a file when it is loaded."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple:
        return (open, (str(self.target), "w"))


def test_a_planted_entry_is_never_loaded(tmp_path: Path) -> None:
    store, proof = cache.DiskCache(tmp_path / "cache"), tmp_path / "pwned"
    assert store.get_or_compute("table", "k", lambda: [1]) == ([1], "miss")
    planted = pickle.dumps(_Planted(proof))
    other_key = cache_trust.MAGIC + b"0" * 64 + b"\n" + planted
    for entry in (planted, other_key):  # unsigned, and signed under someone else's key
        store.path("table", "k").write_bytes(entry)
        with pytest.warns(UserWarning, match="is not trusted"):
            assert store.get_or_compute("table", "k", lambda: [2]) == ([2], "miss")
        assert not proof.exists()
    assert store.get_or_compute("table", "k", lambda: [3]) == ([2], "hit")  # the rewritten entry is signed


def test_the_signing_key_is_private_to_the_user() -> None:
    cache_trust.signing_key()
    assert oct(cache_trust.key_path().stat().st_mode & 0o777) == "0o600"


def test_clear_removes_only_what_the_cache_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "cache"
    store = cache.DiskCache(root)
    store.get_or_compute("table", "a", lambda: 1)
    (root / "table" / "notes.txt").write_text("mine\n")
    (root / "table" / "mine.pkl").write_bytes(pickle.dumps(1))
    (root / "results").mkdir()
    (root / "results" / "model.pkl").write_bytes(pickle.dumps(2))
    cache.main(["clear", "--dir", str(root)])
    assert "removed 1 entries" in capsys.readouterr().out
    left = sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())
    assert left == [cache.MARKER, "results/model.pkl", "table/mine.pkl", "table/notes.txt"]


def test_clear_refuses_a_directory_the_cache_did_not_make(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "model.pkl").write_bytes(b"x")
    with pytest.raises(SystemExit) as exit_info:
        cache.main(["clear", "--dir", str(tmp_path)])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (f"asrpt-bench-cache: error: {tmp_path}: not an asrpt-bench cache (no "
                                       f"{cache.MARKER} file); nothing removed\n")
    assert (tmp_path / "project" / "model.pkl").read_bytes() == b"x"


def test_a_cache_directory_every_user_can_write_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(ConfigError, match="is writable by every user \\(mode 0777\\)"):
        cache.CacheSettings(dir=str(shared)).open()
    monkeypatch.setenv(cache_trust.ALLOW_WRITABLE, "1")
    assert cache.CacheSettings(dir=str(shared)).open().root == shared


def test_an_unwritable_config_directory_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "file"))  # the key cannot be made below a file
    with pytest.warns(UserWarning, match="cannot read or make the cache signing key"):
        assert cache.DiskCache(tmp_path / "cache").get_or_compute("table", "k", lambda: 1) == (1, "off")
    assert not (tmp_path / "cache").exists()


def test_a_size_cap_evicts_the_least_recently_used_entries(tmp_path: Path) -> None:
    probe = cache.DiskCache(tmp_path / "probe")
    probe.get_or_compute("table", "size", lambda: b"x" * 1000)
    entry = next((tmp_path / "probe").glob("*/*.pkl")).stat().st_size
    store = cache.DiskCache(tmp_path / "cache", max_bytes=2 * entry)  # room for two entries
    for key in ("a", "b"):
        store.get_or_compute("table", key, lambda: b"x" * 1000)
    os.utime(store.path("table", "a"), ns=(1, 1))
    os.utime(store.path("table", "b"), ns=(2, 2))
    assert store.get_or_compute("table", "a", lambda: b"y" * 1000) == (b"x" * 1000, "hit")  # a: used last
    store.get_or_compute("table", "c", lambda: b"x" * 1000)
    assert [path.stem for path in cache.entries(tmp_path / "cache")] == ["a", "c"]  # b was the least recent


def test_the_cap_is_a_validated_key() -> None:
    from asrpt_bench.composition import compose_run_config

    assert compose_run_config(["cache.max_size_gb=null"]).cache.max_size_gb is None
    with pytest.raises(ConfigError, match=r"^cache\.max_size_gb must be null \(no cap\) or a size > 0 in GB, got 0\.0$"):
        compose_run_config(["cache.max_size_gb=0"])


@pytest.mark.parametrize(("progress", "trees"), [(True, 3), (False, 4)])  # trees: a fit of its own each
def test_a_cold_predictor_fit_says_when_it_starts_and_ends(progress: bool, trees: int,
                                                           caplog: pytest.LogCaptureFixture,
                                                           monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The first run's longest silent phase, the forest fit on the trace's history, says when it starts
    and how long it took (with progress on); a cache hit fits nothing and says nothing."""
    import logging
    import re

    from asrpt_bench import cache, prepare
    from asrpt_bench.prediction import prepared
    from asrpt_bench.composition import compose_run_config

    config = compose_run_config(["workload.num_jobs=20", f"predictor.n_estimators={trees}", "task=simulate",
                                 f"progress={str(progress).lower()}", f"cache.dir={tmp_path / 'cache'}"])
    workload = prepare.load_workload(config)
    monkeypatch.setattr(cache, "_memory", {})  # cold: no fit an earlier test left in this process or on disk
    with caplog.at_level(logging.INFO, logger=prepared.log.name):
        prepare.fitted_predictor(config, workload)
        prepare.fitted_predictor(config, workload)
    said = [record.getMessage() for record in caplog.records if record.name == prepared.log.name]
    assert workload.cache_status["predictor"] == "miss"
    if not progress:
        assert said == []
        return
    assert len(said) == 2 and said[0] == f"fitting predictor 'forest' on {len(workload.history):,} history jobs ..."
    assert re.fullmatch(r"fitted predictor 'forest' in \d+\.\d s", said[1])
