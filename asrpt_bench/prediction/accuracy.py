"""Prediction accuracy (paper Fig 4): histogram of absolute errors, relative errors, summary scalars.

`prediction_errors` gives one row per job; `accuracy_table` buckets them (Fig 4's buckets of
|ñ - n| in iterations by default); `accuracy_summary` gives MAE, median relative error and the
unseen share. `report.plots.plot_accuracy` draws the bucket table: figures read tables and never refit.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..workloads.slicing import chronological_split
from .base import IterationPredictor, true_iterations

FIG4_BUCKETS: tuple[float, ...] = (0.0, 10.0, 1e2, 1e3, 1e4, np.inf)
"""Edges of Fig 4's absolute-error buckets, in iterations: [0,10), [10,1e2), ..., >= 1e4."""
RELATIVE_BUCKETS: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5, 1.0, np.inf)
"""Edges for the relative error |ñ - n| / n."""


def prediction_errors(table: pd.DataFrame, predicted: Sequence[float] | np.ndarray,
                      unseen: Sequence[bool] | np.ndarray | None = None) -> pd.DataFrame:
    """One row per job: job_id, iterations, predicted, abs_error, rel_error (NaN when n = 0), unseen."""
    truth = true_iterations(table, "prediction_errors")
    predicted = np.asarray(predicted, dtype=float)
    if predicted.shape != truth.shape:
        raise ConfigError(f"prediction_errors: {len(predicted)} predictions for {len(truth)} jobs")
    unseen = np.zeros(len(truth), dtype=bool) if unseen is None else np.asarray(unseen, dtype=bool)
    abs_error = np.abs(predicted - truth)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_error = np.where(truth > 0, abs_error / truth, np.nan)
    return pd.DataFrame({"job_id": table["job_id"].to_numpy(), "iterations": truth, "predicted": predicted,
                         "abs_error": abs_error, "rel_error": rel_error, "unseen": unseen})


def evaluate_predictor(predictor: IterationPredictor, table: pd.DataFrame,
                       train_fraction: float = 0.8) -> pd.DataFrame:
    """Fit on the chronologically first `train_fraction` of `table`; per-job errors on the rest."""
    history, test = chronological_split(table, train_fraction)
    predictor.fit(history)
    return prediction_errors(test, predictor.predict(test), predictor.unseen_mask(test))


def accuracy_table(errors: pd.DataFrame, buckets: Sequence[float] = FIG4_BUCKETS,
                   column: str = "abs_error") -> pd.DataFrame:
    """Jobs per error bucket [lower, upper): columns bucket, lower, upper, jobs, seen_jobs,
    unseen_jobs, share (fraction of the jobs with a defined error). `column`: abs_error or rel_error."""
    edges = np.asarray(buckets, dtype=float)
    if len(edges) < 2 or np.any(np.diff(edges) <= 0):
        raise ConfigError(f"accuracy buckets must be increasing edges, got {list(buckets)}")
    if column not in ("abs_error", "rel_error"):
        raise ConfigError(f"accuracy column must be 'abs_error' or 'rel_error', got {column!r}")
    values = errors[column].to_numpy(dtype=float)
    defined = ~np.isnan(values)
    unseen = errors["unseen"].to_numpy(dtype=bool)
    rows = []
    for lower, upper in zip(edges[:-1], edges[1:]):
        inside = defined & (values >= lower) & (values < upper)
        rows.append({"bucket": _label(lower, upper, column), "lower": lower, "upper": upper,
                     "jobs": int(inside.sum()), "seen_jobs": int((inside & ~unseen).sum()),
                     "unseen_jobs": int((inside & unseen).sum())})
    result = pd.DataFrame(rows)
    total = int(defined.sum())
    result["share"] = result["jobs"] / total if total else np.nan
    result.attrs["error_column"] = column
    return result


def accuracy_summary(errors: pd.DataFrame) -> dict[str, float]:
    """Scalars: jobs, mae, median_abs_error, mean_relative_error, median_relative_error,
    unseen_share, and the same errors over seen jobs only (suffix _seen)."""
    unseen = errors["unseen"].to_numpy(dtype=bool)
    summary: dict[str, float] = {"jobs": int(len(errors)),
                                 "unseen_share": float(unseen.mean()) if len(errors) else float("nan")}
    for suffix, rows in (("", np.ones(len(errors), dtype=bool)), ("_seen", ~unseen)):
        absolute = errors["abs_error"].to_numpy(dtype=float)[rows]
        relative = errors["rel_error"].to_numpy(dtype=float)[rows]
        relative = relative[~np.isnan(relative)]
        summary[f"mae{suffix}"] = _stat(np.mean, absolute)
        summary[f"median_abs_error{suffix}"] = _stat(np.median, absolute)
        summary[f"mean_relative_error{suffix}"] = _stat(np.mean, relative)
        summary[f"median_relative_error{suffix}"] = _stat(np.median, relative)
    return summary


def _label(lower: float, upper: float, column: str) -> str:
    if np.isinf(upper):
        return f">={_number(lower, column)}"
    return f"[{_number(lower, column)},{_number(upper, column)})"


def _number(value: float, column: str) -> str:
    if column == "abs_error" and value >= 100:
        return f"1e{int(round(np.log10(value)))}"
    return f"{value:g}"


def _stat(function, values: np.ndarray) -> float:
    return float(function(values)) if len(values) else float("nan")
