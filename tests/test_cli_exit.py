"""The command skips the interpreter's teardown after a successful run (cli.py, "Exit": os._exit once the
exit handlers ran); with a non-daemon thread alive it exits as usual, joining it. A plugin module (imported by
`plugins=[...]`) leaves a mark of each: its atexit handler, a call of os._exit (which it wraps), and
optionally a thread that outlives main(). The runs have workers=1: a forked worker ends with os._exit too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
import atexit, os, threading

MARKS = os.environ["EXIT_MARKS"]


def mark(name):
    with open(os.path.join(MARKS, name), "w") as out:
        out.write(name)


atexit.register(mark, "atexit")
real_exit = os._exit


def spied_exit(code):
    mark("os._exit")
    real_exit(code)


os._exit = spied_exit

if os.environ.get("EXIT_THREAD"):
    def late():  # marks once the main thread has ended: at the usual exit, never after os._exit
        threading.main_thread().join()
        mark("thread")

    threading.Thread(target=late, daemon=False).start()
'''


def run(tmp_path: Path, command: list[str], thread: bool) -> tuple[set[str], str]:
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "exit_marks.py").write_text(PLUGIN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EXIT_MARKS": str(marks), "HYDRA_FULL_ERROR": "0"}
    env.pop("EXIT_THREAD", None)
    if thread:
        env["EXIT_THREAD"] = "1"
    done = subprocess.run([*command, "debug=tiny", "plugins=[exit_marks]", "progress=false", "workers=1",
                           f"cache.dir={tmp_path / 'cache'}", f"hydra.run.dir={tmp_path / 'run'}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "run" / "COMPLETE").is_file()
    return {path.name for path in marks.iterdir()}, done.stdout


def test_the_command_runs_its_exit_handlers_and_skips_the_teardown(tmp_path: Path) -> None:
    marks, out = run(tmp_path, [sys.executable, "-m", "asrpt_bench.cli"], thread=False)
    assert marks == {"atexit", "os._exit"}
    assert out.rstrip().endswith("run directory: run")  # stdout flushed whole
    assert "run directory:" in (tmp_path / "run" / "cli.log").read_text(encoding="utf-8")  # the log closed whole


def test_a_thread_to_join_keeps_the_usual_exit(tmp_path: Path) -> None:
    marks, _ = run(tmp_path, [sys.executable, "-m", "asrpt_bench.cli"], thread=True)
    assert marks == {"atexit", "thread"}


def test_main_called_from_other_code_returns(tmp_path: Path) -> None:
    """A script calling main() is not the command: main() returns and the script goes on."""
    script = ("import sys\nfrom asrpt_bench.cli import main\nsys.argv = ['asrpt-bench', *sys.argv[1:]]\nmain()\n"
              "print('after main')\n")
    marks, out = run(tmp_path, [sys.executable, "-c", script], thread=False)
    assert out.rstrip().endswith("after main")
    assert marks == {"atexit"}


def test_the_command_is_recognised_by_its_main_module(monkeypatch) -> None:
    """`python -m asrpt_bench.cli` (its spec) or the console script (a file named asrpt-bench), nothing else."""
    import importlib.machinery
    import types

    from asrpt_bench import cli

    def program(file: str | None = None, spec: str | None = None) -> types.ModuleType:
        module = types.ModuleType("__main__")
        module.__spec__ = None if spec is None else importlib.machinery.ModuleSpec(spec, None)
        if file is not None:
            module.__file__ = file
        return module

    for main_module, expected in [(program(file="/venv/bin/asrpt-bench"), True),
                                  (program(file="/x/asrpt_bench/cli.py", spec="asrpt_bench.cli"), True),
                                  (program(file="/venv/bin/pytest"), False), (program(spec="pytest.__main__"), False),
                                  (program(), False), (program(file="/home/me/asrpt-bench.py"), False)]:
        monkeypatch.setitem(sys.modules, "__main__", main_module)
        assert cli.is_the_command() is expected, main_module
