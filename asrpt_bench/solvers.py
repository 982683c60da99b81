"""MILP / CP backends behind one interface: a solver-neutral linear model, solver settings and one result type.

A formulation builds a `LinearModel` once (variables with bounds and integrality, ranged linear rows,
a linear objective to minimise) and `solve(model, settings)` hands it to the backend named in the
settings: `highs` (highspy), `cbc` (PuLP's bundled CBC), `cpsat` (OR-Tools CP-SAT) or `gurobi`
(gurobipy). Every solve reports status, objective, bound, gap and wall time in a `SolveResult`.

CP-SAT accepts only integer variables and coefficients. A model therefore carries `integer_scale`: for
CP-SAT every continuous variable becomes an integer count of 1/integer_scale units, and every row or
objective that contains one, or a non-integral coefficient, is multiplied by integer_scale before all
coefficients are rounded to the nearest integer (the placement ILP uses 1e9, i.e. nanoseconds); rows
with integral coefficients over integer variables only are kept unscaled, hence exact. The rounding
error is at most half a unit per coefficient. The row expression is then an integer, so its bounds
are rounded inwards (lower up, upper down, forgiving 1e-6 of a unit of float noise): exact for integer
rows, e.g. 2x >= 2.5 becomes 2x >= 3.

Availability is probed once per process. Gurobi counts only with a full licence: the pip wheel ships a
size-limited licence that refuses models past 2000 variables or rows, detected by optimising a
2001-variable model once (Gurobi error 10010). A missing, unavailable or size-limited backend falls back
to `DEFAULT_SOLVER` with one `SolverFallbackWarning` per requested name and process.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, Mapping

import numpy as np

from .adjustments import AdjustmentWarning, adjust
from .core import ConfigError
from .rules import check

if TYPE_CHECKING:
    import scipy.sparse as sp

SolveStatus = Literal["optimal", "feasible", "infeasible", "time_limit_no_solution", "error"]

DEFAULT_SOLVER = "cpsat"
"""Chosen from measurements on this project's placement ILP (docs/solvers.md, bench_solvers.py)."""

GUROBI_SIZE_LIMIT = 2000
"""Variables (and rows) the size-limited Gurobi licence accepts; the probe solves one variable more."""


class SolverError(RuntimeError):
    """A solve ended without a usable solution where the caller needs one."""


class SolverFallbackWarning(AdjustmentWarning):
    """The requested solver is unavailable (or size-limited); the default open solver is used instead
    (an adjustment: counted as `solver_fallback` in a run's summary.json)."""


# ---------------------------------------------------------------------------------------------------
# The solver-neutral model


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


# ---------------------------------------------------------------------------------------------------
# Settings and results


@dataclass(frozen=True)
class SolverSettings:
    """Which backend and how long: `time_limit_s` wall seconds, relative `mip_gap`, `threads`."""

    name: str = DEFAULT_SOLVER
    time_limit_s: float = 600.0
    mip_gap: float = 0.0
    threads: int = 1

    def __post_init__(self) -> None:
        for key in ("name", "time_limit_s", "mip_gap", "threads"):
            check(f"solver.{key}", getattr(self, key))


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


def _result(status: SolveStatus, objective: float | None, bound: float | None, solver: str,
            values: np.ndarray | None) -> SolveResult:
    if status == "optimal" and bound is None:
        bound = objective
    return SolveResult(status, objective, bound, relative_gap(objective, bound), 0.0, solver, values)


# ---------------------------------------------------------------------------------------------------
# Backends


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


def _import_probe(module: str) -> Callable[[], Availability]:
    def probe() -> Availability:
        try:
            __import__(module)
        except ImportError as exc:
            return Availability(False, False, f"{module} is not importable ({exc})")
        return Availability(True, True, f"{module} importable")

    return probe


def _probe_cbc() -> Availability:
    try:
        import pulp
    except ImportError as exc:
        return Availability(False, False, f"pulp is not importable ({exc})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ok = pulp.PULP_CBC_CMD(msg=False).available()
    return Availability(bool(ok), bool(ok), "PuLP's bundled CBC" if ok else "PuLP's bundled CBC binary is missing")


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


def backend_availability(name: str) -> Availability:
    """Cached availability and licence status of a registered backend."""
    if name not in BACKENDS:
        raise ConfigError(f"unknown solver {name!r}; known: {sorted(BACKENDS)}")
    return BACKENDS[name].probe()


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
        result = BACKENDS[name].solve(model, settings)
    except SolverError as exc:
        raise SolverError(f"{name} failed on model {model.name!r}: {exc}") from exc
    wall = time.perf_counter() - start
    return SolveResult(result.status, result.objective, result.bound, result.gap, wall, name, result.values)


@register_backend("highs", _import_probe("highspy"))
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
        return _result("optimal", objective, bound, "highs", values)
    if status in (codes.kInfeasible, codes.kUnboundedOrInfeasible):
        return _result("infeasible", None, None, "highs", None)
    if status in (codes.kTimeLimit, codes.kInterrupt, codes.kIterationLimit, codes.kSolutionLimit):
        if has_solution:
            return _result("feasible", objective, bound, "highs", values)
        return _result("time_limit_no_solution", None, bound, "highs", None)
    return _result("error", objective, bound, "highs", values)


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
            command = pulp.PULP_CBC_CMD(msg=False, timeLimit=settings.time_limit_s, gapRel=settings.mip_gap,
                                        threads=settings.threads, logPath=log_path)
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
        return _result("infeasible", None, None, "cbc", None)
    if has_solution and not stopped and problem.sol_status == pulp.LpSolutionOptimal:
        return _result("optimal", objective, bound, "cbc", values)
    if has_solution:
        return _result("feasible", objective, bound, "cbc", values)
    if stopped:
        return _result("time_limit_no_solution", None, bound, "cbc", None)
    return _result("error", None, None, "cbc", None)


_CPSAT_BOUND_SLACK = 1e-6
"""Float noise (in integer units) forgiven when a row bound is rounded inwards for CP-SAT."""


def _cpsat_coef(value: float, what: str) -> int:
    rounded = round(value)
    if abs(rounded) >= 2 ** 62:
        raise SolverError(f"{what}: coefficient {value:g} overflows CP-SAT's 64-bit integers; "
                          "lower the model's integer_scale")
    return int(rounded)


@register_backend("cpsat", _import_probe("ortools.sat.python.cp_model"))
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
        return _result(kind, objective_value, bound, "cpsat", values)
    if status == cp_model.INFEASIBLE:
        return _result("infeasible", None, None, "cpsat", None)
    if status == cp_model.UNKNOWN:
        return _result("time_limit_no_solution", None, None, "cpsat", None)
    return _result("error", None, None, "cpsat", None)


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
            return _result("optimal", objective, bound, "gurobi", values)
        if grb.Status in (GRB.INFEASIBLE, GRB.INF_OR_UNBD):
            return _result("infeasible", None, None, "gurobi", None)
        if grb.Status in (GRB.TIME_LIMIT, GRB.INTERRUPTED):
            kind: SolveStatus = "feasible" if has_solution else "time_limit_no_solution"
            return _result(kind, objective, bound, "gurobi", values)
        return _result("error", objective, bound, "gurobi", values)
