"""experiments/run_all.sh writes to a directory of its own, never over the committed results unless
told to publish, and never publishes quick numbers (tests/test_experiments_e2e.py runs the quick mode)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from asrpt_bench.quick import experiments, quick_overrides

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "experiments" / "run_all.sh"


def _run_all(*args: str, python: str = sys.executable) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHON": python})


@pytest.mark.parametrize(("args", "message"), [
    (("--quick", "--publish"), "run_all.sh: error: --publish needs the full runs; --quick numbers are never published"),
    (("--out", "."), "run_all.sh: error: --out . would write over the committed results/; pass --publish to do that "
                     "on purpose"),
    (("--bogus",), "run_all.sh: error: unknown option --bogus (see --help)"),
    (("--out",), "run_all.sh: error: --out needs a directory"),
])
def test_refuses_before_running_anything(args: tuple[str, ...], message: str) -> None:
    committed = {path.name: path.stat().st_mtime_ns for path in (ROOT / "results").glob("*.csv*")}
    done = _run_all(*args)
    assert done.returncode == 2
    assert done.stderr == message + "\n"
    assert done.stdout == ""
    assert {path.name: path.stat().st_mtime_ns for path in (ROOT / "results").glob("*.csv*")} == committed


def test_an_interpreter_without_the_package_is_named() -> None:
    done = _run_all("--quick", python="/bin/false")
    assert (done.returncode, done.stderr) == (2, "run_all.sh: error: /bin/false cannot import asrpt_bench; install "
                                                 "it (pip install -e .) or set PYTHON=/path/to/the/venv/python\n")


def test_quick_overrides_cut_every_sweep_to_a_few_points() -> None:
    assert quick_overrides("sensitivity") == ["experiment=sensitivity", "debug=tiny", "seed=0",
                                              "workload.target_load=0.4,0.6", "predictor.epsilon=0.0",
                                              "scheduler.comm_heavy=1.2", "scheduler.tau=0.0"]
    assert "sensitivity" in experiments() and "compare_default" in experiments()
    with pytest.raises(ValueError, match="unknown experiment 'nope'"):
        quick_overrides("nope")
