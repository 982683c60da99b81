"""The Gurobi backend (gurobipy). It counts only with a full licence: the pip wheel's size-limited licence
refuses models past GUROBI_SIZE_LIMIT variables or rows, found by optimising one variable more once."""

from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator

import numpy as np

from .backend import Availability, register_backend
from .model import LinearModel, SolveResult, SolverError, SolverSettings, SolveStatus, solve_result

GUROBI_SIZE_LIMIT = 2000
"""Variables (and rows) the size-limited Gurobi licence accepts; the probe solves one variable more."""


def _probe_gurobi() -> Availability:
    try:
        import gurobipy as gp
    except ImportError as exc:
        return Availability(False, False, f"gurobipy is not importable ({exc})")
    try:
        with _gurobi_env(gp) as env, gp.Model(env=env) as model:
            model.addMVar(GUROBI_SIZE_LIMIT + 1)
            model.optimize()
    except gp.GurobiError as exc:
        if exc.errno == gp.GRB.Error.SIZE_LIMIT_EXCEEDED:
            return Availability(True, False, "size-limited Gurobi licence (models up to "
                                f"{GUROBI_SIZE_LIMIT} variables/rows)")
        return Availability(False, False, f"no usable Gurobi licence ({exc})")
    return Availability(True, True, "full Gurobi licence")


@contextlib.contextmanager
def _gurobi_env(gp: Any) -> Iterator[Any]:
    """A silent Gurobi environment (no licence banner, no log), disposed on exit."""
    env = gp.Env(empty=True)
    try:
        env.setParam("OutputFlag", 0)
        env.start()
        yield env
    finally:
        env.dispose()


@register_backend("gurobi", _probe_gurobi)
def _solve_gurobi(model: LinearModel, settings: SolverSettings) -> SolveResult:
    import gurobipy as gp

    GRB = gp.GRB
    with _gurobi_env(gp) as env, gp.Model(model.name, env=env) as grb:
        grb.Params.TimeLimit = settings.time_limit_s
        grb.Params.MIPGap = settings.mip_gap
        grb.Params.Threads = settings.threads
        x = grb.addMVar(model.num_vars,
                        lb=[-GRB.INFINITY if math.isinf(v.lb) else v.lb for v in model.variables],
                        ub=[GRB.INFINITY if math.isinf(v.ub) else v.ub for v in model.variables],
                        vtype=[GRB.INTEGER if v.integer else GRB.CONTINUOUS for v in model.variables])
        matrix = model.matrix()
        lower = np.array([c.lb for c in model.constraints])
        upper = np.array([c.ub for c in model.constraints])
        for sense, rhs, rows in ((GRB.EQUAL, lower, lower == upper),
                                 (GRB.GREATER_EQUAL, lower, (lower != upper) & np.isfinite(lower)),
                                 (GRB.LESS_EQUAL, upper, (lower != upper) & np.isfinite(upper))):
            if rows.any():
                grb.addMConstr(matrix[rows], x, sense, rhs[rows])
        grb.setObjective(model.cost_vector() @ x + model.objective_offset, GRB.MINIMIZE)
        try:
            grb.optimize()
        except gp.GurobiError as exc:
            raise SolverError(str(exc)) from exc
        has_solution = grb.SolCount > 0
        values = np.array(x.X) if has_solution else None
        objective = grb.ObjVal if has_solution else None
        bound = grb.ObjBound if model.has_integers and grb.Status in (GRB.OPTIMAL, GRB.TIME_LIMIT) else None
        if grb.Status == GRB.OPTIMAL:
            return solve_result("optimal", objective, bound, "gurobi", values)
        if grb.Status in (GRB.INFEASIBLE, GRB.INF_OR_UNBD):
            return solve_result("infeasible", None, None, "gurobi", None)
        if grb.Status in (GRB.TIME_LIMIT, GRB.INTERRUPTED):
            kind: SolveStatus = "feasible" if has_solution else "time_limit_no_solution"
            return solve_result(kind, objective, bound, "gurobi", values)
        return solve_result("error", objective, bound, "gurobi", values)
