"""What a run clamped, dropped or overrode to go on: one warning line each, and a count in summary.json.

Code that changes the user's input instead of refusing it (drops jobs larger than the cluster, falls
back to another solver, ...) calls `adjust(key, count, message)`. That issues one `AdjustmentWarning`
(a UserWarning, so Python users see it as usual) carrying the key and the count. `RunNotes`, which
`run_experiment` wraps around every run, shows each distinct warning once, however often it is
raised (a `compare` run drops the same jobs for every scheduler), and gives summary.json its
`adjustments` (key -> total count over distinct messages) and `warnings` (every distinct message).

Work served from a cache does not run again, so it does not warn again: a cache stores the
`Adjustment`s its work made (`RunNotes.adjustments`, or `caught_adjustments`) next to the result
and calls `replay` on a hit.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterable


PROG = "asrpt-bench"


@dataclass(frozen=True)
class Adjustment:
    """`count` items were changed in the way `key` names (e.g. dropped_oversize_jobs); `message` says how."""

    key: str
    count: int
    message: str


class AdjustmentWarning(UserWarning):
    """A warning that records an Adjustment; its text is the adjustment's message."""

    def __init__(self, adjustment: Adjustment) -> None:
        super().__init__(adjustment.message)
        self.adjustment = adjustment

    def __reduce__(self) -> tuple:
        """Pickled as its adjustment (its `args` hold only the message), so it survives the trip back from a
        forked worker (forked.py)."""
        return type(self), (self.adjustment,)


def adjust(key: str, count: int, message: str, category: type[AdjustmentWarning] = AdjustmentWarning,
           stacklevel: int = 2) -> Adjustment:
    """Say once that `count` items were adjusted (`key`), and count them in the current run's summary."""
    adjustment = Adjustment(key, int(count), message)
    warnings.warn(category(adjustment), stacklevel=stacklevel + 1)
    return adjustment


def replay(adjustments: Iterable[Adjustment]) -> None:
    """Re-issue adjustments made by cached work, so the run that reuses it reports them too."""
    for adjustment in adjustments:
        warnings.warn(AdjustmentWarning(adjustment), stacklevel=2)


def caught_adjustments(caught: Iterable[warnings.WarningMessage]) -> list[Adjustment]:
    """The adjustments among warnings recorded by `warnings.catch_warnings(record=True)`."""
    return [w.message.adjustment for w in caught if isinstance(w.message, AdjustmentWarning)]


class RunNotes:
    """Context manager for one run: every distinct UserWarning is shown once and recorded.

    Inside, UserWarnings are never suppressed by Python's once-per-location registry (a sweep runs
    many points in one process and each point's summary must list its own warnings); duplicates
    within the run are shown and recorded once. Other warnings keep the caller's filters.
    """

    def __init__(self) -> None:
        self.adjustments: list[Adjustment] = []
        self.warnings: list[str] = []
        self._catcher = warnings.catch_warnings()

    def __enter__(self) -> "RunNotes":
        self._catcher.__enter__()
        warnings.simplefilter("always", UserWarning)
        self._show = warnings.showwarning
        warnings.showwarning = self._note
        self._format = warnings.formatwarning
        warnings.formatwarning = self._one_line
        return self

    def __exit__(self, *exc_info: object) -> None:
        warnings.formatwarning = self._format
        self._catcher.__exit__(*exc_info)

    def _one_line(self, message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  line: str | None = None) -> str:
        """A run's UserWarning as the command line shows it, `asrpt-bench: warning: <message>`, also in Python
        (api.compare): where in the package it was raised says nothing to the user. Other warnings keep the
        format they had."""
        if issubclass(category, UserWarning):
            return f"{PROG}: warning: {message}\n"
        return self._format(message, category, filename, lineno, line)

    def _note(self, message: Warning | str, category: type[Warning], filename: str, lineno: int,
              file: Any = None, line: str | None = None) -> None:
        text = str(message)
        if text in self.warnings:
            return
        self.warnings.append(text)
        if isinstance(message, AdjustmentWarning):
            self.adjustments.append(message.adjustment)
        self._show(message, category, filename, lineno, file, line)

    def counts(self) -> dict[str, int]:
        """key -> total count over the distinct adjustments of the run (summary.json `adjustments`)."""
        totals: dict[str, int] = {}
        for adjustment in self.adjustments:
            totals[adjustment.key] = totals.get(adjustment.key, 0) + adjustment.count
        return totals

    def summary(self) -> dict[str, Any]:
        return {"adjustments": self.counts(), "warnings": list(self.warnings)}
