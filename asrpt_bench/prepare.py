"""The prepared work of a run, from its config: the workload (workloads.pipeline, which the config's
workload group, seed, cluster and timing model enter once), the fitted predictor and its predictions
on the simulated jobs (prediction.prepared), all behind the run's cache (the `cache` group)."""

from __future__ import annotations

from typing import Any, Hashable

from .adjustments import adjust
from .build import predictor_params
from .config import RunConfig
from .prediction import PREDICTORS, prepared
from .prediction.base import IterationPredictor
from .workloads import pipeline
from .workloads.pipeline import Workload


def load_workload(config: RunConfig) -> Workload:
    """Jobs to simulate and the predictor's history, per the workload group; its scalars say which
    predictor the run uses (`predictor_used`, see run_predictor)."""
    workload = pipeline.load_workload(config.workload.name, config.workload.params, seed=config.seed,
                                      cluster=config.cluster, timing=config.timing, cache=config.cache.open())
    workload.scalars["predictor_used"] = run_predictor(config, workload)[0]
    return workload


def run_predictor(config: RunConfig, workload: Workload) -> tuple[str, dict[str, Any]]:
    """The predictor group's predictor and keywords, or the oracle when that predictor learns from a history
    (`needs_history`) and the workload has none (a CSV table simulates every row by default): said in one
    warning line and counted as `predictor_oracle_without_history`."""
    name, params = predictor_params(config)
    if workload.history.empty and getattr(PREDICTORS.entry(name).factory, "needs_history", False):
        fraction = getattr(config.workload.params, "train_fraction", None)
        adjust("predictor_oracle_without_history", 1,
               f"predictor={name} learns from the jobs before workload.train_fraction, and workload "
               f"{config.workload.name!r} has none" + ("" if fraction is None else f" (train_fraction={fraction:g})")
               + "; the run predicts with predictor=oracle (true iterations) instead", stacklevel=3)
        return "oracle", {}
    return name, params


def fitted_predictor(config: RunConfig, workload: Workload) -> IterationPredictor:
    """The run's predictor (`run_predictor`), fit on the workload's history."""
    return prepared.fitted_predictor(workload, *run_predictor(config, workload), config.cache.open(), config.progress)


def simulated_predictions(config: RunConfig, workload: Workload) -> prepared.Predictions:
    """The run's predictor's output on the simulated jobs."""
    return prepared.simulated_predictions(workload, *run_predictor(config, workload), config.cache.open(),
                                          config.progress)


def fit_predictions(config: RunConfig, workload: Workload,
                    predictions: prepared.Predictions | None = None) -> dict[Hashable, float]:
    """job_id -> predicted iterations from the predictor fit on the workload's history (`predictions`: the run's
    simulated_predictions, when the caller already has them)."""
    return (simulated_predictions(config, workload) if predictions is None else predictions).by_job(workload)


def prediction_scalars(config: RunConfig, workload: Workload,
                       predictions: prepared.Predictions | None = None) -> dict[str, float]:
    """What the run reports about its predictions (prediction.prepared.prediction_scalars; `predictions` as in
    fit_predictions)."""
    return prepared.prediction_scalars(workload, simulated_predictions(config, workload) if predictions is None
                                       else predictions)
