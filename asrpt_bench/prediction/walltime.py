"""The requested time limit as the duration estimate, as Slurm's backfilling uses it (`predictor=walltime`).

A job log gives each job the run time its user requested (sacct's TimelimitRaw, SWF's requested time:
`time_limit` in the job table). Predicted iterations = time_limit / alpha~min, the limit in the job's
iterations on its empty-cluster placement (`alpha_min_estimate`, written by model assignment), so a job that
ran until its limit is predicted exactly and one that finished early is over-predicted by limit / run time.
A job without a limit (UNLIMITED, -1) gets the largest limit of the history's jobs (`no_limit="history_max"`,
as a partition's maximum stands in for a missing limit) or 0 (`"zero"`, the paper's choice for a job the
forest knows nothing of); either way it counts as unseen. Nothing is learnt from the history but that
maximum, so a run without a history still predicts every job with a limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..params import Params, param
from ..rules import one_of
from .base import IterationPredictor, register_predictor

NO_LIMIT_POLICIES = ("history_max", "zero")


@dataclass(frozen=True)
class WalltimeParams(Params):
    """What a job without a requested time limit is predicted to run."""

    no_limit: str = param("history_max", one_of(*NO_LIMIT_POLICIES),
                          "a job without a limit: the history's largest limit, or zero")


def _limits(table: pd.DataFrame, who: str) -> np.ndarray:
    limits = (pd.to_numeric(table["time_limit"], errors="coerce").to_numpy(dtype=float)
              if "time_limit" in table.columns else np.full(len(table), np.nan))
    if len(table) and np.isnan(limits).all():
        raise ConfigError(f"{who}: none of the {len(table):,} jobs has a requested time limit (column 'time_limit'); "
                          "predictor=walltime reads the limits of a job log (workload=slurm, swf, ...) or of a job "
                          "table with a time_limit column")
    return limits


@register_predictor("walltime", WalltimeParams)
class WalltimePredictor(IterationPredictor):
    """Predicted iterations = requested time limit / alpha~min (module doc)."""

    def __init__(self, no_limit: str = WalltimeParams.no_limit) -> None:
        self.no_limit = no_limit

    def fit(self, table: pd.DataFrame) -> "WalltimePredictor":
        WalltimeParams(self.no_limit).check("predictor")
        limits = pd.to_numeric(table["time_limit"], errors="coerce").to_numpy(dtype=float) \
            if "time_limit" in table.columns else np.empty(0)
        known = limits[~np.isnan(limits)]
        self.fallback_s_ = float(known.max()) if self.no_limit == "history_max" and len(known) else 0.0
        return self

    def _predict(self, table: pd.DataFrame) -> np.ndarray:
        limits = _limits(table, "walltime predictor")
        if "alpha_min_estimate" not in table.columns:
            raise ConfigError("walltime predictor: the job table has no 'alpha_min_estimate' column; assign models "
                              "first (workloads.assign_models writes it)")
        alpha_min = pd.to_numeric(table["alpha_min_estimate"], errors="coerce").to_numpy(dtype=float)
        seconds = np.where(np.isnan(limits), self.fallback_s_, limits)
        return seconds / alpha_min

    def unseen_mask(self, table: pd.DataFrame) -> np.ndarray:
        """The jobs without a time limit."""
        return np.isnan(_limits(table, "walltime predictor"))
