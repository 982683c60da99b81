"""The solver backends: each is a registry entry (registry.py) whose component is its solve function,
with its probe (is it installed, with a full licence?) in the entry's `meta`; each backend module
registers itself here with `register_backend`. The solver group's keys (time limit, gap, threads) act
on every backend through `SolverSettings`, so a backend has no parameters of its own."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from ..params import NoParams
from ..registry import Entry
from .model import BACKENDS, LinearModel, SolveResult, SolverSettings


@dataclass(frozen=True)
class Availability:
    available: bool
    full: bool
    reason: str


Solve = Callable[[LinearModel, SolverSettings], SolveResult]


def register_backend(name: str, probe: Callable[[], Availability], *, replace: bool = False) -> Callable:
    """Function decorator: register `solve(model, settings)` as the backend `name` (`solver.name=<name>`)."""
    return BACKENDS.register(name, replace=replace, probe=functools.cache(probe))


def backend_entry(name: str, probe: Callable[[], Availability], solve: Solve) -> Entry[SolveResult]:
    """An entry for backend `name` (tests swap one in with `monkeypatch.setitem(BACKENDS, name, ...)`)."""
    return Entry(name, solve, NoParams, (), getattr(solve, "__module__", "?"), {"probe": probe})


def probe(name: str) -> Availability:
    """The backend's availability (probed once per process)."""
    return BACKENDS.entry(name).meta["probe"]()


def solve_with(name: str, model: LinearModel, settings: SolverSettings) -> SolveResult:
    return BACKENDS.entry(name).factory(model, settings)


def import_probe(module: str) -> Callable[[], Availability]:
    def probe() -> Availability:
        try:
            __import__(module)
        except ImportError as exc:
            return Availability(False, False, f"{module} is not importable ({exc})")
        return Availability(True, True, f"{module} importable")

    return probe
