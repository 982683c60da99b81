"""Progress of the report commands (asrpt-bench-report, asrpt-bench-figures), whose steps take from a
second to a minute each: a bar on stderr naming the step at work, by default only when stderr is a
terminal, so a log or a pipe stays as it was."""

from __future__ import annotations

import sys

from tqdm.autonotebook import tqdm


def progress_bar(total: int, desc: str, unit: str, enabled: bool | None = None) -> tqdm:
    """A bar of `total` steps; `enabled` None: shown only on a terminal."""
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None if enabled is None else not enabled)


def step_name(function: object) -> str:
    """The name a step's function shows in the bar ('' for a lambda)."""
    name = getattr(function, "__name__", "")
    return "" if name == "<lambda>" else name
