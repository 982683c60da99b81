"""`hydra/launcher=submitit_local` (hydra-submitit-launcher, the plugin behind `hydra/launcher=submitit_slurm`):
a 4-point sweep through submitit's local executor, each point a submitit job in its own process, lands
exactly where and what the basic launcher writes. Slurm itself is not available here; the local
executor runs the same pickled job function that submitit submits to Slurm."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from asrpt_bench import io

pytest.importorskip("hydra_plugins.hydra_submitit_launcher",
                    reason="hydra-submitit-launcher is not installed (pip install -e '.[slurm]')")

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ["-m", "debug=tiny", "workload=synthetic", "task=simulate", "seed=0,1", "scheduler.tau=0,2"]


def sweep(tmp_path: Path, name: str, *launcher: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0"}
    return subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *SWEEP, *launcher,
                           f"hydra.sweep.dir={tmp_path / name}", f"cache.dir={tmp_path / 'cache'}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def point_dirs(root: Path) -> list[Path]:
    """The points' run directories (not submitit's own `.submitit` job folder)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


@pytest.mark.slow
def test_submitit_local_sweep_matches_the_basic_launcher_point_for_point(tmp_path: Path) -> None:
    basic = sweep(tmp_path, "basic")
    assert basic.returncode == 0, basic.stderr[-2000:]
    local = sweep(tmp_path, "submitit", "hydra/launcher=submitit_local", "hydra.launcher.timeout_min=5")
    assert local.returncode == 0, (local.stderr + local.stdout)[-3000:]
    assert "Submitit 'local' sweep output dir" in local.stderr + local.stdout
    basic_points, points = point_dirs(tmp_path / "basic"), point_dirs(tmp_path / "submitit")
    assert [p.name for p in points] == [p.name for p in basic_points] and len(points) == 4
    for ours, theirs in zip(points, basic_points):
        assert io.run_status(ours) == "complete", io.read_failure(ours)
        assert (ours / io.JOBS).read_bytes() == (theirs / io.JOBS).read_bytes()
        assert io.read_summary(ours)["config_hash"] == io.read_summary(theirs)["config_hash"]
    jobs = [p for p in (tmp_path / "submitit" / ".submitit").iterdir() if p.name.isdigit()]  # %j: the job id
    assert len(jobs) == 4  # one submitit job per point, each run by submitit in its own process
    assert "sweep: 4 of 4 points done: 4 complete, 0 skipped (complete), 0 failed" in local.stdout
    again = sweep(tmp_path, "submitit", "hydra/launcher=submitit_local", "hydra.launcher.timeout_min=5")
    assert again.returncode == 0, (again.stderr + again.stdout)[-3000:]
    assert "sweep: 4 of 4 points done: 0 complete, 4 skipped (complete), 0 failed" in again.stdout
