"""Accuracy report: per-job errors, Fig 4 buckets and summary scalars on a hand-checked example."""

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from asrpt_bench.core import ConfigError
from asrpt_bench.prediction import (
    RELATIVE_BUCKETS,
    ForestPredictor,
    accuracy_summary,
    accuracy_table,
    evaluate_predictor,
    prediction_errors,
)
from asrpt_bench.report.plots import plot_accuracy

TABLE = pd.DataFrame({"job_id": ["a", "b", "c", "d", "e"], "iterations": [100, 50, 2000, 0, 40000]})
PREDICTED = [105.0, 0.0, 2500.0, 3.0, 10000.0]
UNSEEN = [False, True, False, False, False]


def errors():
    return prediction_errors(TABLE, PREDICTED, UNSEEN)


def test_per_job_errors():
    frame = errors()
    assert frame["abs_error"].tolist() == [5.0, 50.0, 500.0, 3.0, 30000.0]
    assert frame["rel_error"].tolist()[:3] == [0.05, 1.0, 0.25]
    assert math.isnan(frame["rel_error"].iloc[3]) and frame["rel_error"].iloc[4] == 0.75
    with pytest.raises(ConfigError, match="4 predictions for 5 jobs"):
        prediction_errors(TABLE, PREDICTED[:4])


def test_fig4_buckets():
    table = accuracy_table(errors())
    assert table["bucket"].tolist() == ["[0,10)", "[10,1e2)", "[1e2,1e3)", "[1e3,1e4)", ">=1e4"]
    assert table["jobs"].tolist() == [2, 1, 1, 0, 1]  # |err| 5 and 3; 50; 500; none; 30000
    assert table["unseen_jobs"].tolist() == [0, 1, 0, 0, 0]
    assert table["share"].tolist() == [0.4, 0.2, 0.2, 0.0, 0.2]
    relative = accuracy_table(errors(), RELATIVE_BUCKETS, column="rel_error")
    assert relative["jobs"].tolist() == [1, 0, 1, 1, 1]  # 0.05; 0.25; 0.75; 1.0 (n = 0 excluded)
    assert relative["share"].tolist() == [0.25, 0.0, 0.25, 0.25, 0.25]
    with pytest.raises(ConfigError, match="increasing"):
        accuracy_table(errors(), (0, 10, 5))


def test_summary():
    summary = accuracy_summary(errors())
    assert summary["jobs"] == 5 and summary["unseen_share"] == 0.2
    assert summary["mae"] == pytest.approx((5 + 50 + 500 + 3 + 30000) / 5)
    assert summary["median_abs_error"] == 50.0
    assert summary["median_relative_error"] == pytest.approx((0.25 + 0.75) / 2)
    assert summary["mean_relative_error"] == pytest.approx((0.05 + 1.0 + 0.25 + 0.75) / 4)
    assert summary["mae_seen"] == pytest.approx((5 + 500 + 3 + 30000) / 4)
    assert summary["median_relative_error_seen"] == 0.25


def test_evaluate_and_plot():
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"job_id": np.arange(200), "release": np.arange(200.0),
                          "group": rng.choice(["x", "y", "z"], 200), "user": "u",
                          "iterations": rng.integers(1, 1000, 200)})
    frame = evaluate_predictor(ForestPredictor(n_estimators=5), table, 0.75)
    assert len(frame) == 50 and not frame["unseen"].any()
    figure = plot_accuracy(accuracy_table(frame))
    assert isinstance(figure, Figure)
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()][0] == "[0,10)"
