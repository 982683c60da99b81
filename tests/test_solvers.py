"""The solver layer: settings validation, every available backend on the same models, fallback warning."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from asrpt_bench import solvers
from asrpt_bench.core import ConfigError
from asrpt_bench.solvers import (
    BACKENDS,
    DEFAULT_SOLVER,
    Availability,
    LinearModel,
    SolverFallbackWarning,
    SolverSettings,
    backend_availability,
    solve,
)


def backend_param(name: str) -> object:
    """One pytest param per backend; Gurobi is skipped without a full licence (the suite would silently
    run the fallback solver otherwise)."""
    status = backend_availability(name)
    skip = not (status.available and status.full)
    return pytest.param(name, id=name, marks=pytest.mark.skipif(skip, reason=f"{name}: {status.reason}"))


ALL_BACKENDS = [backend_param(name) for name in sorted(BACKENDS)]


def knapsack_model() -> LinearModel:
    """min t + 0.5 s.t. t >= 2 - value.x, weights.x <= 17, x integer in [0, 3].

    Hand-checked: value.x can reach 2 only with 3*x1 weight 12 (value 1.5) + x2 (weight 5, 0.61) = 17,
    giving value 2.11 >= 2, so t = 0 and the objective is 0.5; the LP bound is the same."""
    model = LinearModel("knapsack", integer_scale=1e9)
    weights, values = [3, 4, 5, 6, 7], [0.4, 0.5, 0.61, 0.7, 0.9]
    xs = [model.add_var(f"x{i}", 0, 3, integer=True) for i in range(5)]
    t = model.add_var("t", 0.0, 100.0)
    model.add_constraint(list(zip(xs, weights)), ub=17, name="weight")
    model.add_constraint([(t, 1.0)] + list(zip(xs, values)), lb=2.0, name="value")
    model.minimize([(t, 1.0)], offset=0.5)
    return model


def fractional_model() -> LinearModel:
    """min t s.t. t >= 0.3 + 0.2*y1, t >= 0.45 - 0.1*y2, y1 + y2 >= 1, y binary.

    y1=0,y2=1: t = max(0.3, 0.35) = 0.35; y1=1,y2=0: max(0.5, 0.45) = 0.5; both: 0.5. Optimum 0.35."""
    model = LinearModel("fractional", integer_scale=1e9)
    y1, y2 = model.add_binary("y1"), model.add_binary("y2")
    t = model.add_var("t", 0.0, 10.0)
    model.add_constraint([(t, 1.0), (y1, -0.2)], lb=0.3)
    model.add_constraint([(t, 1.0), (y2, 0.1)], lb=0.45)
    model.add_constraint([(y1, 1.0), (y2, 1.0)], lb=1.0)
    model.minimize([(t, 1.0)])
    return model


def market_split_model(rows: int = 4, cols: int = 30, seed: int = 7) -> LinearModel:
    """Cornuejols-Dawande market split (minimise the total deviation): tiny but notoriously hard for
    branch and bound, so a short time limit is reliably hit. x = 0 is feasible, so there is always a
    solution."""
    rng = np.random.default_rng([seed, 1])
    a = rng.integers(0, 100, size=(rows, cols))
    model = LinearModel("market_split")
    xs = [model.add_binary(f"x{j}") for j in range(cols)]
    deviations = []
    for i in range(rows):
        plus, minus = model.add_var(f"p{i}", 0, 10_000, True), model.add_var(f"m{i}", 0, 10_000, True)
        target = int(a[i].sum() // 2)
        model.add_constraint([(x, float(a[i, j])) for j, x in enumerate(xs)] + [(plus, 1.0), (minus, -1.0)],
                             target, target, f"split{i}")
        deviations += [(plus, 1.0), (minus, 1.0)]
    model.minimize(deviations)
    return model


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_backend_solves_knapsack_to_the_hand_checked_optimum(name: str) -> None:
    result = solve(knapsack_model(), SolverSettings(name, time_limit_s=10))
    assert result.status == "optimal"
    assert result.solver == name
    assert result.objective == pytest.approx(0.5, abs=1e-9)
    assert result.bound == pytest.approx(0.5, abs=1e-6)
    assert result.gap == pytest.approx(0.0, abs=1e-6)
    assert result.wall_time_s > 0
    x = result.values[:5]
    assert np.allclose(x, np.round(x)) and np.dot([3, 4, 5, 6, 7], np.round(x)) <= 17


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_backend_keeps_fractional_times_exact(name: str) -> None:
    """CP-SAT sees nanoseconds; every backend must report 0.35 s with y = (0, 1)."""
    result = solve(fractional_model(), SolverSettings(name, time_limit_s=10))
    assert result.status == "optimal"
    assert result.objective == pytest.approx(0.35, abs=1e-9)
    assert list(np.round(result.values[:2])) == [0.0, 1.0]
    assert result.values[2] == pytest.approx(0.35, abs=1e-9)


def integer_rows_model() -> LinearModel:
    """Integer variables only, with a fractional bound, a fractional coefficient and a fractional
    objective: 2x >= 2.5 forces x >= 2, 0.5y >= 1.2 forces y >= 3, min 0.4x + 0.7y = 0.8 + 2.1 = 2.9.
    (CP-SAT once rounded these rows unscaled: 2x >= 2, 0y >= 1 infeasible, objective 0x + 1y.)"""
    model = LinearModel("integer_rows", integer_scale=1e9)
    x, y = model.add_var("x", 0, 5, integer=True), model.add_var("y", 0, 5, integer=True)
    model.add_constraint([(x, 2.0)], lb=2.5, name="fractional_bound")
    model.add_constraint([(y, 0.5)], lb=1.2, name="fractional_coefficient")
    model.add_constraint([(x, 1.0), (y, 1.0)], ub=7.9, name="fractional_upper")
    model.minimize([(x, 0.4), (y, 0.7)])
    return model


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_backend_keeps_integer_rows_with_fractional_data_exact(name: str) -> None:
    result = solve(integer_rows_model(), SolverSettings(name, time_limit_s=10))
    assert result.status == "optimal"
    assert list(np.round(result.values)) == [2.0, 3.0]
    assert result.objective == pytest.approx(2.9, abs=1e-9)


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_backend_reports_infeasible(name: str) -> None:
    model = LinearModel("infeasible")
    x = model.add_var("x", 0, 5, integer=True)
    model.add_constraint([(x, 2.0)], 3.0, 3.0)  # 2x = 3 has no integer solution
    model.minimize([(x, 1.0)])
    result = solve(model, SolverSettings(name, time_limit_s=10))
    assert result.status == "infeasible"
    assert result.objective is None and result.values is None and not result.has_solution


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_backend_stops_at_the_time_limit_and_reports_the_gap(name: str) -> None:
    limit = 0.3
    result = solve(market_split_model(), SolverSettings(name, time_limit_s=limit))
    assert result.status == "feasible"
    assert result.wall_time_s < limit + 1.5
    assert result.objective > 0 and result.bound is not None and result.bound <= result.objective + 1e-6
    assert result.gap == pytest.approx((result.objective - result.bound) / result.objective)
    assert result.gap > 0


@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_mip_gap_setting_allows_early_stop_within_the_gap(name: str) -> None:
    result = solve(market_split_model(rows=2, cols=12), SolverSettings(name, time_limit_s=10, mip_gap=0.5))
    assert result.status in ("optimal", "feasible")
    assert result.gap is not None


def test_gurobi_adapter_on_a_model_within_the_size_limited_licence() -> None:
    """The adapter code runs even where only the pip wheel's restricted licence is present."""
    status = backend_availability("gurobi")
    if not status.available:
        pytest.skip(status.reason)
    result = BACKENDS["gurobi"].factory(fractional_model(), SolverSettings("gurobi", time_limit_s=10))
    assert result.status == "optimal"
    assert result.objective == pytest.approx(0.35)


@pytest.mark.parametrize("bad, message", [
    (dict(name="glpk"), "solver.name: unknown solver 'glpk'; known: ['cbc', 'cpsat', 'gurobi', 'highs']"),
    (dict(time_limit_s=0), "solver.time_limit_s must be a number of seconds in (0, 1e+12], got 0"),
    (dict(time_limit_s=math.inf), "solver.time_limit_s must be a number of seconds in (0, 1e+12], got inf"),
    (dict(time_limit_s=1e13), "solver.time_limit_s must be a number of seconds in (0, 1e+12], got 10000000000000.0"),
    (dict(mip_gap=1.0), "solver.mip_gap must be a number in [0, 1), got 1.0"),
    (dict(mip_gap=-0.1), "solver.mip_gap must be a number in [0, 1), got -0.1"),
    (dict(threads=0), "solver.threads must be a positive integer"),
])
def test_settings_validation_names_the_key(bad: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        SolverSettings(**bad)
    assert message in str(info.value)


def test_unusable_gurobi_falls_back_with_exactly_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    restricted = solvers.backend_entry("gurobi", lambda: Availability(True, False, "size-limited Gurobi licence"),
                                 BACKENDS["gurobi"].factory)
    monkeypatch.setitem(BACKENDS, "gurobi", restricted)
    monkeypatch.setattr(solvers.fallback, "_FALLBACK_WARNED", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = solve(fractional_model(), SolverSettings("gurobi"))
        second = solve(fractional_model(), SolverSettings("gurobi"))
    fallback = [w for w in caught if issubclass(w.category, SolverFallbackWarning)]
    assert len(fallback) == 1
    assert "size-limited Gurobi licence" in str(fallback[0].message)
    assert f"using {DEFAULT_SOLVER!r}" in str(fallback[0].message)
    assert first.solver == second.solver == DEFAULT_SOLVER
    assert first.objective == pytest.approx(0.35)


def test_probe_is_cached() -> None:
    assert backend_availability("cpsat") is backend_availability("cpsat")


def test_default_solver_is_open_and_available() -> None:
    status = backend_availability(DEFAULT_SOLVER)
    assert DEFAULT_SOLVER != "gurobi" and status.available and status.full


def test_linear_model_rejects_unknown_variables_and_empty_bounds() -> None:
    model = LinearModel("m")
    x = model.add_var("x", 0, 1)
    with pytest.raises(ValueError, match="unknown variable index 5"):
        model.add_constraint([(x, 1.0), (5, 1.0)], ub=1)
    with pytest.raises(ValueError, match="lower bound 2 exceeds upper bound 1"):
        model.add_var("y", 2, 1)


def test_linear_model_merges_repeated_terms() -> None:
    model = LinearModel("m")
    x = model.add_var("x", 0, 1)
    model.add_constraint([(x, 1.0), (x, 2.0)], ub=3)
    assert model.constraints[0].terms == ((x, 3.0),)
    assert model.matrix().toarray().tolist() == [[3.0]]
