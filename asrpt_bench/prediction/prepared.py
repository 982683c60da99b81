"""A workload's predictor and predictions, behind the same cache as the workload's table.

For a trace workload the predictor is fit on the trace's history (keyed like the assigned table, plus
the history cut and the predictor's parameters) and its predictions on the simulated jobs are keyed by
those jobs' content too (cache.frame_hash: released, scaled and injected as simulated), both on disk and
memoised per process, so a warm run neither unpickles the predictor (a forest: tens of MB, and importing
scikit-learn) nor predicts. A hand-made instance's predictor is fit on its (usually empty) history.
`prediction_scalars` is what every run reports about the predictions (unseen share, median error).
"""

from __future__ import annotations

import json
import logging
import operator
import time
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Hashable, Mapping

import numpy as np

from ..cache import DiskCache, cache_key, frame_hash, memoised
from ..workloads.pipeline import TableSpec, Workload, assigned_table
from ..workloads.slicing import chronological_split
from .accuracy import accuracy_summary, prediction_errors
from .base import IterationPredictor, make_predictor
from .by_job import JobPredictions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Predictions:
    """The fitted predictor's output on the simulated jobs, in the table's row order: predicted
    iterations (`predict`) and the rows it has no history for (`unseen_mask`)."""

    predicted: np.ndarray
    unseen: np.ndarray

    def by_job(self, workload: Workload) -> Mapping[Hashable, float]:
        """job_id -> predicted iterations. When the table's rows are the workload's jobs (the same ids in the same
        order) a JobPredictions over the jobs (their own id objects, the values as one array: a replay of millions
        of jobs holds no second string per id nor a dict of every job while it simulates), else a dict."""
        ids = workload.table["job_id"].tolist()
        jobs = workload.jobs
        if len(jobs) == len(ids) and all(map(operator.eq, map(attrgetter("job_id"), jobs), ids)):
            return JobPredictions(jobs, self.predicted)
        return dict(zip(ids, self.predicted.tolist()))


def _fit_inputs(spec: TableSpec, train_fraction: float, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """What a predictor fit on a trace's history depends on (its cache key's inputs)."""
    return {"spec": spec.cache_inputs(), "trace": spec.input_hash(), "train_fraction": train_fraction,
            "predictor": name, "params": params}


def _memo_key(kind: str, spec: TableSpec, train_fraction: float, name: str, params: dict[str, Any],
              *more: Any) -> tuple:
    return (kind, spec, spec.input_hash(), train_fraction, name, json.dumps(params, sort_keys=True), *more)


def fitted_predictor(workload: Workload, name: str, params: dict[str, Any], cache: DiskCache,
                     progress: bool = False) -> IterationPredictor:
    """Predictor `name` (its constructor keywords `params`) fit on the workload's history: for a trace, from
    this process's memory, the disk cache, or fitted now (the run's first fit says where it came from). A
    fit on a trace's history takes seconds to minutes (a forest on 65,797 Philly jobs): with `progress`,
    one line says when it starts and one how long it took."""
    spec = workload.spec
    if spec is None:
        return make_predictor(name, **params).fit(workload.history)

    def fit() -> IterationPredictor:
        history, _ = chronological_split(assigned_table(spec, cache), workload.train_fraction)
        started = time.perf_counter()
        if progress:
            log.info("fitting predictor %r on %s history jobs ...", name, f"{len(history):,}")
        predictor = make_predictor(name, **params).fit(history)
        if progress:
            log.info("fitted predictor %r in %.1f s", name, time.perf_counter() - started)
        return predictor

    def compute() -> tuple[IterationPredictor, str]:
        key = cache_key("predictor", **_fit_inputs(spec, workload.train_fraction, name, params)) if cache.root else ""
        return cache.get_or_compute("predictor", key, fit)

    predictor, status = memoised(_memo_key("predictor", spec, workload.train_fraction, name, params, cache), compute)
    workload.cache_status.setdefault("predictor", status)
    return predictor


def _predict(workload: Workload, name: str, params: dict[str, Any], cache: DiskCache, progress: bool) -> Predictions:
    predictor = fitted_predictor(workload, name, params, cache, progress)
    return Predictions(predictor.predict(workload.table), predictor.unseen_mask(workload.table))


def simulated_predictions(workload: Workload, name: str, params: dict[str, Any], cache: DiskCache,
                          progress: bool = False) -> Predictions:
    """The predictor's output on the simulated jobs; for a trace workload cached on disk and memoised (module
    doc), so that summary's cache then says `"predictions": "hit"` and `"predictor": "unused"`."""
    spec = workload.spec
    if spec is None:
        return _predict(workload, name, params, cache, progress)
    jobs = frame_hash(workload.table)

    def compute() -> tuple[Predictions, str]:
        key = (cache_key("predictions", **_fit_inputs(spec, workload.train_fraction, name, params), jobs=jobs)
               if cache.root else "")
        return cache.get_or_compute("predictions", key, lambda: _predict(workload, name, params, cache, progress))

    predictions, status = memoised(_memo_key("predictions", spec, workload.train_fraction, name, params, jobs,
                                             cache), compute)
    workload.cache_status.setdefault("predictions", status)
    workload.cache_status.setdefault("predictor", "unused")  # set by fitted_predictor if it was needed
    return predictions


def prediction_scalars(workload: Workload, predictions: Predictions) -> dict[str, float]:
    """On the simulated jobs: the share whose group the predictor never saw (`unseen_share`; always 0
    for predictors that need no history, oracle and noisy), their share of the GPU time g_i d_i
    (`unseen_gpu_time_share`), and the median relative error |n~ - n| / n on the seen ones
    (`predictor_median_rel_error_seen`)."""
    unseen = predictions.unseen
    errors = accuracy_summary(prediction_errors(workload.table, predictions.predicted, unseen))
    work = np.array([job.gpus for job in workload.jobs], dtype=float) * workload.durations
    fits = ~np.isnan(work)
    total = float(work[fits].sum())
    return {"unseen_share": errors["unseen_share"],
            "unseen_gpu_time_share": float(work[fits & unseen].sum()) / total if total > 0 else float("nan"),
            "predictor_median_rel_error_seen": errors["median_relative_error_seen"]}
