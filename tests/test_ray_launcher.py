"""`hydra/launcher=ray`: a 4-point sweep on a Ray instance started on this machine lands exactly where
and what the basic launcher writes, and says so in one plain line per point; on a two-node cluster
started with `ray start` and Ray's token authentication, it does the same with the token and is refused
without it."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from asrpt_bench import io

pytest.importorskip("ray", reason="Ray is not installed here (no Ray wheel for this platform or Python); "
                                  "pip install -e '.[ray]'")

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ["-m", "debug=tiny", "workload=synthetic", "task=simulate", "seed=0,1", "scheduler.tau=0,2"]


def sweep(tmp_path: Path, name: str, *launcher: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0", "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *SWEEP, *launcher,
                           f"hydra.sweep.dir={tmp_path / name}", f"cache.dir={tmp_path / 'cache'}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def point_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


POINT_LINE = re.compile(r"\t#(\d+) : (.*) : (COMPLETED|FAILED.*)$")


def assert_plain_one_line_per_point(output: str, points: int) -> None:
    """What a sweep printed through a pipe: no ANSI codes, no Ray token warning, no forwarded worker
    lines, and exactly one line per point saying it completed."""
    from hydra_plugins.asrpt_ray_launcher.ray_launcher import RAY_AUTH_ENABLED_WARNING

    assert "\x1b" not in output, output[-2000:]
    assert RAY_AUTH_ENABLED_WARNING not in output
    assert "pid=" not in output, output[-2000:]  # Ray's "(run_point pid=...)" prefix of forwarded lines
    lines = [match for match in map(POINT_LINE.search, output.splitlines()) if match]
    assert sorted(int(match[1]) for match in lines) == list(range(points)), output[-2000:]
    assert all(match[3] == "COMPLETED" for match in lines), output[-2000:]


def test_ray_log_filter_drops_the_token_warning_and_strips_colour_off_a_terminal() -> None:
    from hydra_plugins.asrpt_ray_launcher.ray_launcher import RAY_AUTH_ENABLED_WARNING, _PlainRayLog

    def record(message: str, *args: object) -> logging.LogRecord:
        return logging.LogRecord("ray._private.worker", logging.INFO, __file__, 1, message, args, None)

    plain, terminal = _PlainRayLog(plain=True), _PlainRayLog(plain=False)
    warning = record(RAY_AUTH_ENABLED_WARNING + ". Set RAY_AUTH_MODE=disabled to opt out.")
    assert not plain.filter(warning) and not terminal.filter(warning)
    coloured = record("Connected to Ray cluster. View the dashboard at %s%s%s", "\x1b[1m\x1b[32m", "http://h:8265",
                      "\x1b[39m\x1b[22m")
    assert plain.filter(coloured)
    assert coloured.getMessage() == "Connected to Ray cluster. View the dashboard at http://h:8265"
    kept = record("Connected %s", "\x1b[32mthere\x1b[0m")
    assert terminal.filter(kept) and kept.getMessage() == "Connected \x1b[32mthere\x1b[0m"


@pytest.mark.slow
def test_ray_sweep_matches_the_basic_launcher_point_for_point(tmp_path: Path) -> None:
    basic = sweep(tmp_path, "basic")
    assert basic.returncode == 0, basic.stderr[-2000:]
    ray = sweep(tmp_path, "ray", "hydra/launcher=ray", "hydra.launcher.num_cpus=2")
    assert ray.returncode == 0, ray.stderr[-2000:]
    assert "Ray launcher: 4 points" in ray.stderr + ray.stdout
    assert_plain_one_line_per_point(ray.stderr + ray.stdout, 4)  # captured: stderr is a pipe
    basic_points, ray_points = point_dirs(tmp_path / "basic"), point_dirs(tmp_path / "ray")
    assert [p.name for p in ray_points] == [p.name for p in basic_points] and len(ray_points) == 4
    for ours, theirs in zip(ray_points, basic_points):
        assert io.run_status(ours) == "complete", io.read_failure(ours)
        assert (ours / io.JOBS).read_bytes() == (theirs / io.JOBS).read_bytes()
        assert io.read_summary(ours)["config_hash"] == io.read_summary(theirs)["config_hash"]
    stamps = [(p / io.SUMMARY).stat().st_mtime_ns for p in ray_points]
    again = sweep(tmp_path, "ray", "hydra/launcher=ray", "hydra.launcher.num_cpus=2")
    assert again.returncode == 0, again.stderr[-2000:]
    assert [(p / io.SUMMARY).stat().st_mtime_ns for p in ray_points] == stamps  # every point skipped
