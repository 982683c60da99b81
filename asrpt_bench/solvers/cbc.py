"""The CBC backend (PuLP's bundled CBC binary); the best bound is read from CBC's log."""

from __future__ import annotations

import math
import os
import re
import tempfile
import warnings

import numpy as np

from .backend import Availability, register_backend
from .model import LinearModel, SolveResult, SolverSettings, solve_result


def _probe_cbc() -> Availability:
    try:
        import pulp
    except ImportError as exc:
        return Availability(False, False, f"pulp is not importable ({exc})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ok = pulp.PULP_CBC_CMD(msg=False).available()
    return Availability(bool(ok), bool(ok), "PuLP's bundled CBC" if ok else "PuLP's bundled CBC binary is missing")


_CBC_BOUND = re.compile(r"^Lower bound:\s*(\S+)", re.MULTILINE)


@register_backend("cbc", _probe_cbc)
def _solve_cbc(model: LinearModel, settings: SolverSettings) -> SolveResult:
    import pulp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        problem = pulp.LpProblem(re.sub(r"\W", "_", model.name) or "model", pulp.LpMinimize)
        xs = [pulp.LpVariable(f"x{i}", None if math.isinf(v.lb) else v.lb, None if math.isinf(v.ub) else v.ub,
                              cat=pulp.LpInteger if v.integer else pulp.LpContinuous)
              for i, v in enumerate(model.variables)]
        problem += pulp.LpAffineExpression([(xs[i], c) for i, c in model.objective]) + model.objective_offset
        for r, con in enumerate(model.constraints):
            expr = pulp.LpAffineExpression([(xs[i], c) for i, c in con.terms])
            if con.lb == con.ub:
                problem += (expr == con.lb, f"r{r}")
                continue
            if not math.isinf(con.lb):
                problem += (expr >= con.lb, f"r{r}_lo")
            if not math.isinf(con.ub):
                problem += (expr <= con.ub, f"r{r}_hi")
        with tempfile.TemporaryDirectory(prefix="asrpt_cbc_") as tmp:
            log_path = os.path.join(tmp, "cbc.log")
            # CBC's `threads` option switches on its threaded search even for 1 thread, which now and then
            # waits out the whole time limit after proving optimality ("Stopped on time limit", gap 0,
            # 0.00 CPU seconds); one thread is CBC's default, so the option is passed only for more.
            command = pulp.PULP_CBC_CMD(msg=False, timeLimit=settings.time_limit_s, gapRel=settings.mip_gap,
                                        threads=settings.threads if settings.threads > 1 else None,
                                        logPath=log_path)
            problem.solve(command)
            with open(log_path, encoding="utf-8", errors="replace") as handle:
                log = handle.read()
    match = _CBC_BOUND.search(log)
    bound = float(match.group(1)) + model.objective_offset if match else None
    stopped = "Stopped on" in log
    has_solution = problem.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    values = np.array([x.varValue if x.varValue is not None else 0.0 for x in xs]) if has_solution else None
    objective = pulp.value(problem.objective) if has_solution else None
    if problem.status == pulp.LpStatusInfeasible:
        return solve_result("infeasible", None, None, "cbc", None)
    if has_solution and not stopped and problem.sol_status == pulp.LpSolutionOptimal:
        return solve_result("optimal", objective, bound, "cbc", values)
    if has_solution:
        return solve_result("feasible", objective, bound, "cbc", values)
    if stopped:
        return solve_result("time_limit_no_solution", None, bound, "cbc", None)
    return solve_result("error", None, None, "cbc", None)
