"""The prepared work of a run, from its config: the workload (workloads.pipeline, which the config's
workload group, seed, cluster and timing model enter once), the fitted predictor and its predictions
on the simulated jobs (prediction.prepared), all behind the run's cache (the `cache` group)."""

from __future__ import annotations

from typing import Hashable

from .build import predictor_params
from .config import RunConfig
from .prediction import prepared
from .prediction.base import IterationPredictor
from .workloads import pipeline
from .workloads.pipeline import Workload


def load_workload(config: RunConfig) -> Workload:
    """Jobs to simulate and the predictor's history, per the workload group."""
    return pipeline.load_workload(config.workload.name, config.workload.params, seed=config.seed,
                                  cluster=config.cluster, timing=config.timing, cache=config.cache.open())


def fitted_predictor(config: RunConfig, workload: Workload) -> IterationPredictor:
    """The predictor group's predictor, fit on the workload's history."""
    return prepared.fitted_predictor(workload, *predictor_params(config), config.cache.open())


def simulated_predictions(config: RunConfig, workload: Workload) -> prepared.Predictions:
    """The predictor group's output on the simulated jobs."""
    return prepared.simulated_predictions(workload, *predictor_params(config), config.cache.open())


def fit_predictions(config: RunConfig, workload: Workload) -> dict[Hashable, float]:
    """job_id -> predicted iterations from the predictor fit on the workload's history."""
    return simulated_predictions(config, workload).by_job(workload)


def prediction_scalars(config: RunConfig, workload: Workload) -> dict[str, float]:
    """What the run reports about its predictions (prediction.prepared.prediction_scalars)."""
    return prepared.prediction_scalars(workload, simulated_predictions(config, workload))
