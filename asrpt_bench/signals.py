"""SIGTERM and SIGINT stop the whole run: the main process and every worker it started.

`install` makes SIGTERM raise `Terminated` (a KeyboardInterrupt, so every launcher unwinds from it
as from Ctrl-C: joblib aborts its loky workers, the Ray launcher cancels its tasks and shuts Ray
down). `stop_descendants` then ends whatever child processes are still alive (found through
/proc, so it needs no psutil and never touches processes this one did not start), and the CLI exits
143 (SIGTERM) or 130 (SIGINT) with one line.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (raised in the main thread by the handler `install` sets)."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
    raise Terminated(signum)


def install() -> None:
    """Route SIGTERM to `Terminated` in this (main) process."""
    signal.signal(signal.SIGTERM, _raise_terminated)


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids of every process visible in /proc."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(pid: int | None = None) -> list[int]:
    """Every live process below `pid` (default: this process), children first."""
    tree, found, queue = _children(), [], [os.getpid() if pid is None else pid]
    while queue:
        for child in tree.get(queue.pop(0), []):
            found.append(child)
            queue.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def stop_descendants(grace_s: float = 3.0) -> None:
    """SIGTERM every descendant process, then SIGKILL those still alive after `grace_s` seconds."""
    targets = descendants()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in targets:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + (grace_s if sig == signal.SIGTERM else 1.0)
        while time.monotonic() < deadline:
            _reap()
            targets = [pid for pid in {*targets, *descendants()} if _alive(pid)]
            if not targets:
                return
            time.sleep(0.05)
