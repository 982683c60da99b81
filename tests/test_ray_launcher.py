"""`hydra/launcher=ray`: a 4-point sweep on a Ray instance started on this machine lands exactly where
and what the basic launcher writes."""

from __future__ import annotations

import os
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
    return sorted(p for p in root.iterdir() if p.is_dir())


@pytest.mark.slow
def test_ray_sweep_matches_the_basic_launcher_point_for_point(tmp_path: Path) -> None:
    basic = sweep(tmp_path, "basic")
    assert basic.returncode == 0, basic.stderr[-2000:]
    ray = sweep(tmp_path, "ray", "hydra/launcher=ray", "hydra.launcher.num_cpus=2")
    assert ray.returncode == 0, ray.stderr[-2000:]
    assert "Ray launcher: 4 points" in ray.stderr + ray.stdout
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
