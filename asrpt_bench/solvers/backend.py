"""The backend table: a backend is a name, a probe (is it installed, with a full licence?) and a solve
function; each backend module registers itself here with `register_backend`."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from .model import LinearModel, SolveResult, SolverSettings


@dataclass(frozen=True)
class Availability:
    available: bool
    full: bool
    reason: str


@dataclass(frozen=True)
class Backend:
    name: str
    probe: Callable[[], Availability]
    solve: Callable[[LinearModel, SolverSettings], SolveResult]


BACKENDS: dict[str, Backend] = {}


def register_backend(name: str, probe: Callable[[], Availability]) -> Callable:
    """Function decorator: register `solve(model, settings)` as the backend `name`."""

    def decorator(solve_fn: Callable[[LinearModel, SolverSettings], SolveResult]) -> Callable:
        BACKENDS[name] = Backend(name, functools.cache(probe), solve_fn)
        return solve_fn

    return decorator


def import_probe(module: str) -> Callable[[], Availability]:
    def probe() -> Availability:
        try:
            __import__(module)
        except ImportError as exc:
            return Availability(False, False, f"{module} is not importable ({exc})")
        return Availability(True, True, f"{module} importable")

    return probe
