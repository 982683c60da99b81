"""MILP / CP backends behind one interface: a solver-neutral linear model, solver settings and one result type.

A formulation builds a `LinearModel` once (variables with bounds and integrality, ranged linear rows,
a linear objective to minimise) and `solve(model, settings)` hands it to the backend named in the
settings: `highs` (highspy), `cbc` (PuLP's bundled CBC), `cpsat` (OR-Tools CP-SAT) or `gurobi`
(gurobipy). Every solve reports status, objective, bound, gap and wall time in a `SolveResult`.

- model.py: LinearModel, SolverSettings, SolveResult, DEFAULT_SOLVER.
- backend.py: the backend table (name -> probe, solve) each backend registers itself in.
- fallback.py: availability probed once per process; a missing, unavailable or size-limited backend
  falls back to `DEFAULT_SOLVER` with one `SolverFallbackWarning` per requested name and process.
- highs.py, cbc.py, cpsat.py, gurobi.py: one backend each (cpsat.py says how continuous variables
  are scaled to integers, gurobi.py how a size-limited licence is detected).

Importing the package registers every backend.
"""

from . import cbc, cpsat, gurobi, highs  # noqa: F401  (each registers its backend)
from .backend import BACKENDS, Availability, backend_entry, register_backend
from .fallback import SolverFallbackWarning, backend_availability, report_fallback, resolve_solver, solve
from .gurobi import GUROBI_SIZE_LIMIT
from .model import (DEFAULT_SOLVER, Constraint, LinearModel, SolveResult, SolverError, SolverSettings, SolveStatus,
                    Variable, relative_gap)

__all__ = ["BACKENDS", "DEFAULT_SOLVER", "GUROBI_SIZE_LIMIT", "Availability", "Constraint",
           "LinearModel", "SolveResult", "SolveStatus", "SolverError", "SolverFallbackWarning", "SolverSettings",
           "Variable", "backend_availability", "backend_entry", "register_backend", "relative_gap", "report_fallback",
           "resolve_solver", "solve"]
