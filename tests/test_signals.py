"""A signal stops a sweep and every worker it started: one line, no process left. SIGTERM (exit 143)
is the catalogue's `terminated-sweep` case (tests/test_bad_inputs.py); SIGINT (exit 130) is here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

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
