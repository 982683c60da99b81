"""What a formulation hands a backend and what it gets back: the solver-neutral linear model, the
solver settings and one result type, the same for every backend."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Literal, Mapping

import numpy as np

from ..params import Params, param
from ..registry import Registry
from ..rules import Rule, integer, number, seconds, shown

if TYPE_CHECKING:
    import scipy.sparse as sp

SolveStatus = Literal["optimal", "feasible", "infeasible", "time_limit_no_solution", "error"]

DEFAULT_SOLVER = "cpsat"
"""Chosen from measurements on this project's placement ILP (docs/solvers.md, bench_solvers.py)."""


class SolverError(RuntimeError):
    """A solve ended without a usable solution where the caller needs one."""


@dataclass(frozen=True)
class Variable:
    name: str
    lb: float
    ub: float
    integer: bool


@dataclass(frozen=True)
class Constraint:
    """lb <= sum(coef * x[index]) <= ub (either side may be infinite)."""

    terms: tuple[tuple[int, float], ...]
    lb: float
    ub: float
    name: str


Terms = Mapping[int, float] | Iterable[tuple[int, float]]


def _merge_terms(terms: Terms) -> tuple[tuple[int, float], ...]:
    items = terms.items() if isinstance(terms, Mapping) else terms
    merged: dict[int, float] = {}
    for index, coef in items:
        merged[index] = merged.get(index, 0.0) + float(coef)
    return tuple((index, coef) for index, coef in merged.items() if coef != 0.0)


class LinearModel:
    """Minimise objective . x + offset subject to ranged linear rows, variable bounds and integrality."""

    def __init__(self, name: str, integer_scale: float = 1.0) -> None:
        if not integer_scale > 0:
            raise ValueError(f"integer_scale must be > 0, got {integer_scale}")
        self.name = name
        self.integer_scale = float(integer_scale)
        self.variables: list[Variable] = []
        self.constraints: list[Constraint] = []
        self.objective: tuple[tuple[int, float], ...] = ()
        self.objective_offset = 0.0

    def add_var(self, name: str, lb: float = 0.0, ub: float = math.inf, integer: bool = False) -> int:
        """Add a variable and return its index."""
        if lb > ub:
            raise ValueError(f"variable {name}: lower bound {lb} exceeds upper bound {ub}")
        self.variables.append(Variable(name, float(lb), float(ub), integer))
        return len(self.variables) - 1

    def add_binary(self, name: str) -> int:
        return self.add_var(name, 0.0, 1.0, integer=True)

    def add_constraint(self, terms: Terms, lb: float = -math.inf, ub: float = math.inf, name: str = "") -> None:
        merged = _merge_terms(terms)
        for index, _ in merged:
            if not 0 <= index < len(self.variables):
                raise ValueError(f"constraint {name!r} uses unknown variable index {index}")
        self.constraints.append(Constraint(merged, float(lb), float(ub), name))

    def minimize(self, terms: Terms, offset: float = 0.0) -> None:
        self.objective = _merge_terms(terms)
        self.objective_offset = float(offset)

    @property
    def num_vars(self) -> int:
        return len(self.variables)

    @property
    def num_constraints(self) -> int:
        return len(self.constraints)

    @property
    def has_integers(self) -> bool:
        return any(v.integer for v in self.variables)

    def matrix(self) -> sp.csr_matrix:
        """The constraint matrix, one row per constraint."""
        import scipy.sparse as sp  # imported here: only solves need it, and it loads slowly

        rows = [r for r, con in enumerate(self.constraints) for _ in con.terms]
        cols = [i for con in self.constraints for i, _ in con.terms]
        data = [c for con in self.constraints for _, c in con.terms]
        return sp.csr_matrix((data, (rows, cols)), shape=(self.num_constraints, self.num_vars))

    def cost_vector(self) -> np.ndarray:
        cost = np.zeros(self.num_vars)
        for index, coef in self.objective:
            cost[index] = coef
        return cost


BACKENDS: Registry["SolveResult"] = Registry("solver")
"""The solver backends by name (backend.py registers them; SolverSettings checks names against it)."""


KNOWN_BACKEND = Rule(lambda: f"one of {BACKENDS.names()}", lambda v: isinstance(v, str) and v in BACKENDS,
                     lambda key, v: f"{key}: unknown solver {shown(v)}; known: {BACKENDS.names()}")

MIP_GAP = 0.0
"""The relative gap a solve must close before it is reported optimal. 0: the placement study and the
exact alpha_min compare Heavy-Edge against proven optima, which a positive gap would not be (with 1e-4
an 'optimal' alpha may lie 0.01% above the optimum, and Heavy-Edge could seem to beat it)."""


@dataclass(frozen=True)
class SolverSettings(Params):
    """Which backend and how long: the config group `solver`, handed as it is to every solve (the ILP
    placer, the placement study, the exact alpha_min)."""

    name: str = param(DEFAULT_SOLVER, KNOWN_BACKEND, "the backend; an unusable one falls back to cpsat")
    time_limit_s: float = param(600.0, seconds(strict=True),
                                "wall seconds per solve; then the best solution found, if any")
    mip_gap: float = param(MIP_GAP, number(0, below=1), "relative gap at which a solve stops as optimal")
    threads: int = param(1, integer(1), "solver threads per solve")

    def __post_init__(self) -> None:
        self.check("solver")


@dataclass(frozen=True)
class SolveResult:
    """Outcome of one solve. `gap` = (objective - bound) / |objective| computed the same way for every
    backend; "optimal" means proven within the requested mip_gap. `values` is indexed like the
    model's variables (None without a solution)."""

    status: SolveStatus
    objective: float | None
    bound: float | None
    gap: float | None
    wall_time_s: float
    solver: str
    values: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def has_solution(self) -> bool:
        return self.values is not None and self.status in ("optimal", "feasible")


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    if objective is None or bound is None or not math.isfinite(bound):
        return None
    if objective == bound:
        return 0.0
    if objective == 0.0:
        return math.inf
    return max(0.0, (objective - bound) / abs(objective))


def solve_result(status: SolveStatus, objective: float | None, bound: float | None, solver: str,
                 values: np.ndarray | None) -> SolveResult:
    """A backend's result, its gap computed the one way (an optimal solve without a bound is its own bound);
    `solve` fills in the wall time."""
    if status == "optimal" and bound is None:
        bound = objective
    return SolveResult(status, objective, bound, relative_gap(objective, bound), 0.0, solver, values)
