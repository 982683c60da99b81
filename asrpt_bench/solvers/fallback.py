"""Which backend runs: availability probed once per process, and the fallback to `DEFAULT_SOLVER`
(one SolverFallbackWarning per requested name and process, recorded as the `solver_fallback` adjustment)."""

from __future__ import annotations

import time

from ..adjustments import AdjustmentWarning, adjust
from ..errors import ConfigError
from .backend import BACKENDS, Availability, probe, solve_with
from .model import DEFAULT_SOLVER, LinearModel, SolveResult, SolverError, SolverSettings


class SolverFallbackWarning(AdjustmentWarning):
    """The requested solver is unavailable (or size-limited); the default open solver is used instead
    (an adjustment: counted as `solver_fallback` in a run's summary.json)."""


def backend_availability(name: str) -> Availability:
    """Cached availability and licence status of a registered backend."""
    if name not in BACKENDS:
        raise ConfigError(f"unknown solver {name!r}; known: {BACKENDS.names()}")
    return probe(name)


_FALLBACK_WARNED: set[str] = set()


def resolve_solver(name: str) -> str:
    """The backend that will run for `name`: itself if available with a full licence, else the default
    open solver (one SolverFallbackWarning per name and process)."""
    status = backend_availability(name)
    if status.available and status.full:
        return name
    default_status = backend_availability(DEFAULT_SOLVER)
    if not (default_status.available and default_status.full):
        raise ConfigError(f"solver {name!r} is unusable ({status.reason}) and the default "
                          f"{DEFAULT_SOLVER!r} is too ({default_status.reason})")
    if name not in _FALLBACK_WARNED:
        _FALLBACK_WARNED.add(name)
        report_fallback(name, stacklevel=3)
    return DEFAULT_SOLVER


def report_fallback(name: str, stacklevel: int = 2) -> None:
    """Say that `name` falls back to the default solver, as an adjustment (`solver_fallback`).
    resolve_solver says it once per process; a run that uses a fallback repeats it for its summary."""
    reason = backend_availability(name).reason
    adjust("solver_fallback", 1, f"solver {name!r} unusable: {reason}; using {DEFAULT_SOLVER!r} instead",
           category=SolverFallbackWarning, stacklevel=stacklevel + 1)


def solve(model: LinearModel, settings: SolverSettings) -> SolveResult:
    """Solve `model` with the backend `settings` name (after fallback); wall time includes translation."""
    name = resolve_solver(settings.name)
    start = time.perf_counter()
    try:
        result = solve_with(name, model, settings)
    except SolverError as exc:
        raise SolverError(f"{name} failed on model {model.name!r}: {exc}") from exc
    wall = time.perf_counter() - start
    return SolveResult(result.status, result.objective, result.bound, result.gap, wall, name, result.values)
