"""The HiGHS backend (highspy): MILP and LP."""

from __future__ import annotations

import math

import numpy as np

from .backend import import_probe, register_backend
from .model import LinearModel, SolveResult, SolverSettings, solve_result


@register_backend("highs", import_probe("highspy"))
def _solve_highs(model: LinearModel, settings: SolverSettings) -> SolveResult:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(settings.time_limit_s))
    h.setOptionValue("mip_rel_gap", float(settings.mip_gap))
    h.setOptionValue("threads", int(settings.threads))
    inf = highspy.kHighsInf
    csc = model.matrix().tocsc()
    lp = highspy.HighsLp()
    lp.num_col_ = model.num_vars
    lp.num_row_ = model.num_constraints
    lp.col_cost_ = model.cost_vector()
    lp.offset_ = model.objective_offset
    lp.col_lower_ = np.array([max(v.lb, -inf) for v in model.variables])
    lp.col_upper_ = np.array([min(v.ub, inf) for v in model.variables])
    lp.row_lower_ = np.array([max(c.lb, -inf) for c in model.constraints])
    lp.row_upper_ = np.array([min(c.ub, inf) for c in model.constraints])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = csc.indptr
    lp.a_matrix_.index_ = csc.indices
    lp.a_matrix_.value_ = csc.data
    lp.integrality_ = [highspy.HighsVarType.kInteger if v.integer else highspy.HighsVarType.kContinuous
                       for v in model.variables]
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    info = h.getInfo()
    has_solution = info.primal_solution_status == 2
    values = np.array(h.getSolution().col_value) if has_solution else None
    objective = info.objective_function_value if has_solution else None
    bound = info.mip_dual_bound if model.has_integers else None
    bound = bound if bound is not None and math.isfinite(bound) else None
    codes = highspy.HighsModelStatus
    if status == codes.kOptimal:
        return solve_result("optimal", objective, bound, "highs", values)
    if status in (codes.kInfeasible, codes.kUnboundedOrInfeasible):
        return solve_result("infeasible", None, None, "highs", None)
    if status in (codes.kTimeLimit, codes.kInterrupt, codes.kIterationLimit, codes.kSolutionLimit):
        if has_solution:
            return solve_result("feasible", objective, bound, "highs", values)
        return solve_result("time_limit_no_solution", None, bound, "highs", None)
    return solve_result("error", objective, bound, "highs", values)
