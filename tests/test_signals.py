"""A signal stops a sweep and every worker it started: one line, no process left. SIGTERM (exit 143)
is the catalogue's `terminated-sweep` case (tests/test_bad_inputs.py); SIGINT (exit 130) is here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from asrpt_bench import signals

ROOT = Path(__file__).resolve().parents[1]
# Two points whose forests take far longer to fit than the test waits.
SLOW_SWEEP = ("-m", "debug=tiny", "workload=synthetic", "task=simulate", "seed=0,1", "hydra/launcher=joblib",
              "hydra.launcher.n_jobs=2", "workload.synthetic_jobs=4000", "workload.job_cap=null",
              "workload.resample_replace=true", "predictor.n_estimators=50000", "cache.enabled=false")


def session_members(session: int) -> list[int]:
    """Live processes of a session (field 6 of /proc/PID/stat)."""
    members = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and int(fields[3]) == session and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def terminated_sweep(tmp: Path, sig: int = signal.SIGTERM) -> tuple[int, str, list[int]]:
    """(exit status, stderr, processes left) of a joblib sweep sent `sig` once its workers compute."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HYDRA_FULL_ERROR", None)
    process = subprocess.Popen([sys.executable, "-m", "asrpt_bench.cli", *SLOW_SWEEP, f"hydra.sweep.dir={tmp}/sweep"],
                               cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(signals.descendants(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(3.0)  # the workers are fitting their forests
        process.send_signal(sig)
        _, err = process.communicate(timeout=60)  # returns only once nothing holds stderr open
        time.sleep(0.5)
        return process.returncode, err, session_members(process.pid)
    finally:
        for pid in session_members(process.pid):
            os.kill(pid, signal.SIGKILL)


def test_sigint_stops_a_joblib_sweep_and_every_worker(tmp_path: Path) -> None:
    status, err, left = terminated_sweep(tmp_path, signal.SIGINT)
    assert status == 130
    assert err.splitlines() == ["asrpt-bench: interrupted; completed runs are kept (a rerun of a sweep skips them)"]
    assert left == []


class _InterruptedRay:
    """Stands in for the ray module: two points are submitted, waiting on the first is interrupted."""

    exceptions = types.SimpleNamespace(RayError=RuntimeError)

    def __init__(self) -> None:
        self.cancelled: list[tuple[str, bool]] = []
        self.submitted = 0

    def is_initialized(self) -> bool:
        return True  # an instance the launcher did not start: it is left running, the tasks are not

    def remote(self, **options: object) -> object:
        def wrap(function: object) -> object:
            def submit(*args: object) -> str:
                self.submitted += 1
                return f"point-{self.submitted}"
            return types.SimpleNamespace(remote=submit)
        return wrap

    def get(self, ref: str) -> object:
        raise signals.Terminated(signal.SIGTERM)

    def wait(self, refs: list[str], num_returns: int) -> object:
        raise signals.Terminated(signal.SIGTERM)

    def cancel(self, ref: str, force: bool) -> None:
        self.cancelled.append((ref, force))


def test_an_interrupted_ray_sweep_cancels_every_pending_point(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ray_launcher = pytest.importorskip("hydra_plugins.asrpt_ray_launcher.ray_launcher")
    fake = _InterruptedRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    point = OmegaConf.create({"hydra": {"job": {"name": "cli"}, "sweep": {"dir": str(tmp_path)}}})
    launcher = ray_launcher.RayLauncher(address="auto")
    launcher.setup(hydra_context=types.SimpleNamespace(config_loader=types.SimpleNamespace(
                       load_sweep_config=lambda config, overrides: point.copy())),
                   task_function=lambda config: None,
                   config=OmegaConf.create({"hydra": {"hydra_logging": None, "verbose": False,
                                                      "sweep": {"dir": str(tmp_path)}}}))
    with pytest.raises(signals.Terminated):
        launcher.launch([["seed=0"], ["seed=1"]], initial_job_idx=0)
    assert fake.cancelled == [("point-1", True), ("point-2", True)]
