"""The README's first screen: the output block under "It prints:" is what the default `asrpt-bench`
prints, line for line, but for the values of the wall time and the run directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_cli import ROOT, run_app

VARIABLE = re.compile(r"^(\s*wall time: |run directory: outputs/compare/)")
"""Lines whose value changes from run to run: only their start is compared."""


def readme_output() -> list[str]:
    """The lines of the code block that follows "It prints:" in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("It prints:\n\n```\n") + len("It prints:\n\n```\n")
    return text[start:text.index("```\n", start)].splitlines()


def comparable(lines: list[str]) -> list[str]:
    return [match[1] if (match := VARIABLE.match(line)) else line for line in lines]


@pytest.mark.slow
def test_the_readme_output_block_is_what_the_default_run_prints(tmp_path: Path) -> None:
    done = run_app(cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = done.stdout.splitlines()
    assert comparable(readme_output()) == comparable(printed)
    assert printed[-1].startswith("run directory: outputs/compare/")
    assert (tmp_path / printed[-1].split(": ")[1]).is_dir()
