import math

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.theory.bound import (EPS_BAR_DEFINITIONS, RHO_BAR_DEFINITIONS, per_job_prediction_errors,
                                      theorem1_bound, theory_symbols)


@pytest.mark.parametrize("rho, rho_bar, eps_bar, tau, G, g_max, expected", [
    (1, 1, 0, 0, 100, 50, 4.0),                       # reviewer instance: 2 + 100/50
    (1, 1, 0, 0, 4, 1, 2 + 4 / 3),                    # 2 + G/(G - g_max)
    (2, 1, 0, 1, 10, 5, (2 + 1 + 2 * 2) * 2),         # (2 + tau + rho*2)*rho = 14
    (1, 2, 0.5, 0, 100, 50, 4 + 2 * 1 * 50 * 2 * (1 + 0 + 2 * 2) * 0.5),  # 4 + 500
])
def test_theorem1_bound_hand_values(rho, rho_bar, eps_bar, tau, G, g_max, expected):
    assert theorem1_bound(rho, rho_bar, eps_bar, tau, G, g_max) == pytest.approx(expected, rel=1e-12)


def test_theorem1_bound_grows_linearly_in_eps_bar():
    values = [theorem1_bound(1.5, 2.0, e, 0.5, 64, 8) for e in (0.0, 0.1, 0.2)]
    assert values[2] - values[1] == pytest.approx(values[1] - values[0])
    assert values[1] > values[0]


@pytest.mark.parametrize("kwargs, message", [
    (dict(g_max=100), "g_max < G"),
    (dict(g_max=120), "g_max < G"),
    (dict(rho=0.9), "rho must be >= 1"),
    (dict(rho_bar=0.5), "rho_bar must be >= 1"),
    (dict(eps_bar=-0.1), "eps_bar must be >= 0"),
    (dict(tau=-1), "tau must be >= 0"),
    (dict(rho=math.nan), "rho must be a finite number"),
    (dict(g_max=0), "g_max must be >= 1"),
])
def test_theorem1_bound_rejects_out_of_range_symbols(kwargs, message):
    args = dict(rho=1.0, rho_bar=1.0, eps_bar=0.0, tau=0.0, G=100, g_max=50) | kwargs
    with pytest.raises(ConfigError, match=message):
        theorem1_bound(**args)


def _table() -> pd.DataFrame:
    return pd.DataFrame({"job_id": ["a", "b", "c"], "gpus": [1, 2, 4], "iterations": [10, 20, 40],
                         "predicted_iterations": [12, 20, 30], "alpha_min": [1.0, 2.0, 1.0],
                         "alpha_max": [1.5, 2.0, 3.0]})


def test_theory_symbols_hand_values():
    symbols = theory_symbols(_table(), G=8, tau=0.5)
    assert symbols["rho"] == pytest.approx(3.0)
    assert symbols["rho_bar"] == pytest.approx(2.0)          # max alpha_min / min alpha_min
    assert symbols["eps_bar"] == pytest.approx(12 / 30)      # (2 + 0 + 10) / (3 jobs * n_min 10)
    assert symbols["g_max"] == 4 and symbols["G"] == 8 and symbols["num_jobs"] == 3
    expected = (2 + 0.5 + 3 * 2) * 3 + 2 * 3 * 4 * 2 * (1 + 0.5 + 4 * 2) * 0.4
    assert symbols["theorem1_bound"] == pytest.approx(expected)
    assert "reconstruction" in symbols["note"]
    assert symbols["rho_bar_definition"] == "alpha_min_spread"


def test_theory_symbols_alternative_definitions():
    symbols = theory_symbols(_table(), G=8, tau=0.0, rho_bar_definition="iterations_spread",
                             eps_bar_definition="mean_relative")
    assert symbols["rho_bar"] == pytest.approx(4.0)
    assert symbols["eps_bar"] == pytest.approx((0.2 + 0.0 + 0.25) / 3)
    assert set(RHO_BAR_DEFINITIONS) == {"alpha_min_spread", "iterations_spread"}
    assert set(EPS_BAR_DEFINITIONS) == {"per_smallest_job", "mean_relative"}


def test_theory_symbols_perfect_predictions_reduce_to_first_term():
    table = _table().assign(predicted_iterations=lambda t: t["iterations"])
    symbols = theory_symbols(table, G=8, tau=0.0)
    assert symbols["eps_bar"] == 0.0
    assert symbols["theorem1_bound"] == pytest.approx((2 + 3 * 2) * 3)


def test_theory_symbols_errors_name_the_problem():
    with pytest.raises(ConfigError, match="unknown rho_bar_definition 'typo'.*alpha_min_spread"):
        theory_symbols(_table(), G=8, tau=0, rho_bar_definition="typo")
    with pytest.raises(ConfigError, match=r"lacks column\(s\) \['alpha_max'\]"):
        theory_symbols(_table().drop(columns="alpha_max"), G=8, tau=0)
    with pytest.raises(ConfigError, match="smallest true iterations, which is 0"):
        theory_symbols(_table().assign(iterations=[0, 20, 40]), G=8, tau=0)
    with pytest.raises(ConfigError, match="row 2: alpha_max"):
        theory_symbols(_table().assign(alpha_max=[1.5, 1.0, 3.0]), G=8, tau=0)
    with pytest.raises(ConfigError, match="g_max < G"):
        theory_symbols(_table(), G=4, tau=0)


def test_per_job_prediction_errors():
    frame = pd.DataFrame({"job_id": [1, 2, 3], "iterations": [10, 0, 50], "predicted_iterations": [7, 4, 50]})
    errors = per_job_prediction_errors(frame)
    assert errors["job_id"].tolist() == [1, 2, 3]
    assert errors["abs_error"].tolist() == [3.0, 4.0, 0.0]
    assert errors["rel_error"].iloc[0] == pytest.approx(0.3)
    assert np.isnan(errors["rel_error"].iloc[1]) and errors["rel_error"].iloc[2] == 0.0
