"""Predictors: registry, sklearn shape, the forest's unseen rule and accuracy, oracle and noisy oracle."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from asrpt_bench.core import ConfigError
from asrpt_bench.prediction import (
    PREDICTORS,
    ForestPredictor,
    NoisyOraclePredictor,
    OraclePredictor,
    chronological_split,
    make_predictor,
)
from asrpt_bench.workloads.schema import validate_job_table
from asrpt_bench.workloads.synthetic import synthetic_workload


def with_iterations(table, alpha=2.0):
    """Fixed-alpha iterations n = round(duration / alpha): what assign_models does for alpha rows."""
    table = table.copy()
    table["iterations"] = np.maximum(1, np.rint(table["duration"] / alpha))
    return table


def tiny():
    return validate_job_table(pd.DataFrame({
        "job_id": ["a", "b", "c", "d", "e"], "release": [0.0, 1.0, 2.0, 3.0, 4.0], "gpus": [1, 1, 2, 1, 4],
        "iterations": [100, 110, 1000, 0, 50], "alpha": [1.0] * 5,
        "group": ["g1", "g1", "g2", None, "g9"], "user": ["u1", "u1", "u2", "u1", "u3"]}), "tiny")


def test_registry_names_and_errors():
    assert {"forest", "oracle", "noisy"} <= set(PREDICTORS)
    assert isinstance(make_predictor("noisy", epsilon=0.2), NoisyOraclePredictor)
    assert make_predictor("forest", n_estimators=5).get_params()["n_estimators"] == 5
    with pytest.raises(ConfigError, match="unknown predictor 'lstm'; known:"):
        make_predictor("lstm")
    with pytest.raises(ConfigError, match=r"^predictor\.eps: predictor 'noisy' has no parameter 'eps'; its parameters: \['epsilon', 'mode', 'distribution'\]$"):
        make_predictor("noisy", eps=0.1)


def test_sklearn_shape_init_stores_fit_returns_self():
    forest = ForestPredictor(n_estimators=7, random_state=3)
    assert not any(name.endswith("_") for name in vars(forest))
    assert clone(forest).get_params() == forest.get_params()
    train = tiny().iloc[:3]
    assert forest.fit(train) is forest and hasattr(forest, "forest_")
    with pytest.raises(Exception, match="not fitted"):
        ForestPredictor().predict(train)


def test_forest_predicts_zero_for_unseen_groups():
    table = tiny()
    forest = ForestPredictor(n_estimators=10).fit(table.iloc[:3])
    test = table.iloc[3:]
    assert forest.unseen_mask(test).tolist() == [True, True]  # missing group and g9 never seen
    assert forest.predict(test).tolist() == [0.0, 0.0]
    seen = forest.predict(table.iloc[:2])
    assert np.all(seen > 0)
    mean = ForestPredictor(n_estimators=10, unseen="mean").fit(table.iloc[:3]).predict(test)
    assert mean.tolist() == pytest.approx([1210 / 3] * 2)
    by_user = ForestPredictor(n_estimators=10, unseen="user_mean").fit(table.iloc[:3]).predict(test)
    assert by_user.tolist() == pytest.approx([105.0, 1210 / 3])  # u1's mean; u3 unknown -> overall mean
    with pytest.raises(ConfigError, match="predictor.unseen must be one of"):
        ForestPredictor(unseen="median").fit(table)


def test_forest_beats_a_constant_mean_on_recurring_jobs():
    table = with_iterations(synthetic_workload(3000, seed=11, num_groups=60, num_users=15))
    history, test = chronological_split(table, 0.8)
    forest = ForestPredictor(n_estimators=30, random_state=0).fit(history)
    predicted = forest.predict(test)
    truth = test["iterations"].to_numpy()
    forest_mae = np.abs(predicted - truth).mean()
    constant_mae = np.abs(history["iterations"].mean() - truth).mean()
    assert forest_mae < 0.6 * constant_mae
    again = ForestPredictor(n_estimators=30, random_state=0).fit(history).predict(test)
    assert np.array_equal(predicted, again)


def test_forest_feature_options():
    table = with_iterations(synthetic_workload(400, seed=2))
    history, test = chronological_split(table)
    with_gpus = ForestPredictor(features=("group", "user", "gpus"), n_estimators=5, log_target=True).fit(history)
    assert np.all(with_gpus.predict(test) >= 0)
    with pytest.raises(ConfigError, match=r"feature column\(s\) \['queue'\] not in the job table"):
        ForestPredictor(features=("queue",)).fit(history)
    with pytest.raises(ConfigError, match="has no iterations; assign models first"):
        ForestPredictor().fit(synthetic_workload(20, seed=0))


def test_oracle_returns_true_iterations():
    table = tiny()
    assert OraclePredictor().fit(table).predict(table).tolist() == [100, 110, 1000, 0, 50]
    assert OraclePredictor.oracle and not ForestPredictor.oracle
    assert OraclePredictor().fit().predictions(table)["c"] == 1000


@pytest.mark.parametrize("distribution", ["uniform", "exponential"])
@pytest.mark.parametrize("epsilon", [0.05, 0.3])
def test_noisy_oracle_mean_relative_error_matches_epsilon(distribution, epsilon):
    n = 20000
    table = pd.DataFrame({"job_id": np.arange(n), "iterations": np.random.default_rng(0).integers(1, 10**6, n)})
    predicted = NoisyOraclePredictor(epsilon, distribution=distribution, random_state=4).fit().predict(table)
    relative = np.abs(predicted - table["iterations"]) / table["iterations"]
    # standard error of the mean of e: <= epsilon / sqrt(n) = 0.7% of epsilon; allow 4% (plus rounding-free)
    assert relative.mean() == pytest.approx(epsilon, rel=0.04)
    over = (predicted > table["iterations"]).mean()
    assert 0.48 < over < 0.52


def test_noisy_oracle_modes_and_determinism():
    table = pd.DataFrame({"job_id": np.arange(1000), "iterations": np.full(1000, 200.0)})
    under = NoisyOraclePredictor(0.2, mode="under").fit().predict(table)
    over = NoisyOraclePredictor(0.2, mode="over").fit().predict(table)
    assert np.all(under <= 200.0) and np.all(over >= 200.0)
    fixed = NoisyOraclePredictor(0.25, mode="under", distribution="fixed").fit().predict(table)
    assert np.all(fixed == 150.0)
    clipped = NoisyOraclePredictor(3.0, mode="under", distribution="fixed").fit().predict(table)
    assert np.all(clipped == 0.0)
    a = NoisyOraclePredictor(0.2, random_state=1).fit().predict(table)
    assert np.array_equal(a, NoisyOraclePredictor(0.2, random_state=1).fit().predict(table))
    assert not np.array_equal(a, NoisyOraclePredictor(0.2, random_state=2).fit().predict(table))
    with pytest.raises(ConfigError, match="predictor.epsilon"):
        NoisyOraclePredictor(-0.1).fit()
    with pytest.raises(ConfigError, match="predictor.mode"):
        NoisyOraclePredictor(0.1, mode="sideways").fit()


def test_chronological_split():
    table = tiny().iloc[::-1]
    history, test = chronological_split(table, 0.6)
    assert history["job_id"].tolist() == ["a", "b", "c"] and test["job_id"].tolist() == ["d", "e"]
    with pytest.raises(ConfigError, match="train_fraction"):
        chronological_split(table, 1.0)


def test_chronological_split_is_exact_for_decimal_fractions():
    """0.7 * 90 is 62.999... in binary floating point; the history must still hold 63 jobs."""
    table = validate_job_table(pd.DataFrame({"job_id": [f"j{i}" for i in range(90)], "release": range(90),
                                             "gpus": 1, "iterations": 1, "alpha": 1.0}), "ninety")
    for fraction, expected in ((0.7, 63), (0.29, 26), (0.0, 0), (0.5, 45)):
        history, test = chronological_split(table, fraction)
        assert (len(history), len(test)) == (expected, 90 - expected)
