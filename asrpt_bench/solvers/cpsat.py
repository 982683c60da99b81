"""The CP-SAT backend (OR-Tools), which accepts only integer variables and coefficients.

A model therefore carries `integer_scale`: for CP-SAT every continuous variable becomes an integer count
of 1/integer_scale units, and every row or objective that contains one, or a non-integral coefficient, is
multiplied by integer_scale before all coefficients are rounded to the nearest integer (the placement ILP
uses 1e9, i.e. nanoseconds); rows with integral coefficients over integer variables only are kept
unscaled, hence exact. The rounding error is at most half a unit per coefficient. The row expression is
then an integer, so its bounds are rounded inwards (lower up, upper down, forgiving 1e-6 of a unit of
float noise): exact for integer rows, e.g. 2x >= 2.5 becomes 2x >= 3.
"""

from __future__ import annotations

import math

import numpy as np

from .backend import import_probe, register_backend
from .model import LinearModel, SolveResult, SolverError, SolverSettings, SolveStatus, solve_result

_CPSAT_BOUND_SLACK = 1e-6
"""Float noise (in integer units) forgiven when a row bound is rounded inwards for CP-SAT."""


def _cpsat_coef(value: float, what: str) -> int:
    rounded = round(value)
    if abs(rounded) >= 2 ** 62:
        raise SolverError(f"{what}: coefficient {value:g} overflows CP-SAT's 64-bit integers; "
                          "lower the model's integer_scale")
    return int(rounded)


@register_backend("cpsat", import_probe("ortools.sat.python.cp_model"))
def _solve_cpsat(model: LinearModel, settings: SolverSettings) -> SolveResult:
    from ortools.sat.python import cp_model

    scale = model.integer_scale
    cp = cp_model.CpModel()
    xs = []
    for v in model.variables:
        if math.isinf(v.lb) or math.isinf(v.ub):
            raise SolverError(f"CP-SAT needs finite bounds; variable {v.name} has [{v.lb}, {v.ub}]")
        if v.integer:
            xs.append(cp.new_int_var(math.ceil(v.lb - 1e-9), math.floor(v.ub + 1e-9), v.name))
        else:  # rounded outwards: the integer domain never cuts off a feasible continuous value
            xs.append(cp.new_int_var(math.floor(v.lb * scale), math.ceil(v.ub * scale), v.name))
    continuous = [not v.integer for v in model.variables]

    def scaled(terms: tuple[tuple[int, float], ...], what: str) -> tuple[cp_model.LinearExpr, float]:
        exact = all(not continuous[i] and float(c).is_integer() for i, c in terms)
        row_scale = 1.0 if exact else scale
        coefs = [_cpsat_coef(c if continuous[i] else c * row_scale, what) for i, c in terms]
        return cp_model.LinearExpr.weighted_sum([xs[i] for i, _ in terms], coefs), row_scale

    for con in model.constraints:
        what = f"row {con.name}"
        expr, row_scale = scaled(con.terms, what)
        if not math.isinf(con.lb):
            cp.add(expr >= _cpsat_coef(math.ceil(con.lb * row_scale - _CPSAT_BOUND_SLACK), what))
        if not math.isinf(con.ub):
            cp.add(expr <= _cpsat_coef(math.floor(con.ub * row_scale + _CPSAT_BOUND_SLACK), what))
    objective, objective_scale = scaled(model.objective, "objective")
    cp.minimize(objective)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(settings.time_limit_s)
    solver.parameters.relative_gap_limit = float(settings.mip_gap)
    solver.parameters.num_workers = int(settings.threads)
    solver.parameters.random_seed = 0
    status = solver.solve(cp)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        values = np.array([solver.value(x) / (scale if continuous[i] else 1.0) for i, x in enumerate(xs)])
        objective_value = solver.objective_value / objective_scale + model.objective_offset
        bound = solver.best_objective_bound / objective_scale + model.objective_offset
        kind: SolveStatus = "optimal" if status == cp_model.OPTIMAL else "feasible"
        return solve_result(kind, objective_value, bound, "cpsat", values)
    if status == cp_model.INFEASIBLE:
        return solve_result("infeasible", None, None, "cpsat", None)
    if status == cp_model.UNKNOWN:
        return solve_result("time_limit_no_solution", None, None, "cpsat", None)
    return solve_result("error", None, None, "cpsat", None)
