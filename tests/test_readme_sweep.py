"""The README's sweep example changes schedules: every key it sweeps acts (no inert sweep)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from asrpt_bench.collect import collect, inert_sweeps
from test_cli import ROOT, run_app

MARK = "# 4-point sweep"


def readme_sweep() -> list[str]:
    """The overrides of the README command whose last line is marked `# 4-point sweep` (after
    `asrpt-bench -m`; a command may continue over lines ending in a backslash)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    ends = [k for k, line in enumerate(lines) if MARK in line]
    assert len(ends) == 1, f"README.md needs exactly one line marked {MARK!r}"
    start = ends[0]
    while start > 0 and lines[start - 1].rstrip().endswith("\\"):
        start -= 1
    command = " ".join(line.split("#", 1)[0].rstrip().rstrip("\\") for line in lines[start:ends[0] + 1])
    words = shlex.split(command)
    assert words[:2] == ["asrpt-bench", "-m"], command
    return words[2:]


@pytest.mark.slow
def test_the_readme_sweep_changes_schedules_along_every_swept_key(tmp_path: Path) -> None:
    overrides = readme_sweep()
    swept = {word.split("=", 1)[0] for word in overrides if "," in word}
    assert swept == {"scheduler.comm_heavy", "scheduler.tau"}
    done = run_app("-m", *overrides, "progress=false", f"hydra.sweep.dir={tmp_path / 'sweep'}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = collect([tmp_path / "sweep"])
    assert len(table) == 4 and (table["status"] == "complete").all()
    assert inert_sweeps(table) == []
    assert table["schedule_fingerprint"].nunique() >= 3
