"""docs/operators.md runs verbatim: every ```bash block, in order, in one shell in an empty directory holding
the test fixtures of the other log formats (the page says to put your file there); every ```text block
that follows a bash block lists lines that block printed (a run's wall time is left out)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "operators.md"
FIXTURES = ("cluster_log.csv", "trace_seren.csv", "small.swf")
BLOCK = re.compile(r"^```(bash|text)\n(.*?)^```$", re.M | re.S)
MARK = "@@block"


def blocks(text: str) -> list[tuple[str, str]]:
    """(kind, body) of every ```bash and ```text block, in order."""
    return [(match[1], match[2]) for match in BLOCK.finditer(text)]


def run_doc(directory: Path) -> list[str]:
    """The combined stdout and stderr of each bash block of the page, run in order in one shell."""
    for name in FIXTURES:
        shutil.copy(ROOT / "tests" / "data" / "joblogs" / name, directory / name)
    bash = [body for kind, body in blocks(DOC.read_text(encoding="utf-8")) if kind == "bash"]
    script = "set -euo pipefail\n" + "".join(f"echo {MARK}\n{body}" for body in bash)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1",
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("HYDRA_FULL_ERROR", None)
    done = subprocess.run(["bash", "-c", script], cwd=directory, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-6000:]
    return done.stdout.split(f"{MARK}\n")[1:]


@pytest.mark.slow
def test_the_operators_page_runs_verbatim_and_prints_what_it_shows(tmp_path: Path) -> None:
    outputs = iter(run_doc(tmp_path))
    printed = ""
    for kind, body in blocks(DOC.read_text(encoding="utf-8")):
        if kind == "bash":
            printed = next(outputs)
            continue
        lines = printed.splitlines()
        for line in body.splitlines():
            assert line in lines, f"docs/operators.md shows a line the command did not print:\n{line}\n---\n{printed}"
    assert (tmp_path / "runs" / "policies" / "users.csv").is_file()


def test_every_bash_block_is_followed_by_what_it_prints() -> None:
    kinds = [kind for kind, _ in blocks(DOC.read_text(encoding="utf-8"))]
    assert kinds.count("bash") >= 5 and all(k == "bash" for k, nxt in zip(kinds, kinds[1:]) if nxt == "text")


if __name__ == "__main__":  # print each block's output, to write the page's text blocks from
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        for number, output in enumerate(run_doc(Path(directory))):
            print(f"===== block {number}\n{output}")
