"""The paper's predictor: a random forest on recurrence features (paper-notes 6, section 10 item 16).

sklearn RandomForestRegressor on ordinal-encoded (group, user) by default; numeric features
(gpus, trace_gpus) pass through unencoded. Target: raw iterations (or log1p with log_target).
A test job whose group never appears in the training table is *unseen*; the paper predicts 0
iterations for it (`unseen="zero"`). Other policies: "mean" (training mean), "user_mean" (mean of
the user's training jobs, else the training mean), "forest" (the forest's own output with the
unknown-category code). A job with no group is always unseen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..params import Params, param
from ..rules import Rule, flag, integer, one_of
from .base import IterationPredictor, register_predictor, true_iterations

NUMERIC_FEATURES = frozenset({"gpus", "trace_gpus"})
MISSING = "<missing>"
UNKNOWN_CODE = -1


UNSEEN_POLICY_NAMES = ("zero", "mean", "user_mean", "forest")


@dataclass(frozen=True)
class ForestParams(Params):
    """The forest's features, size, unseen-group policy and target transform."""

    features: list[str] = param(["group", "user"], Rule("a non-empty list of column names", lambda v: (
        isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(f, str) and f for f in v))),
        "job-table columns the forest splits on")
    n_estimators: int = param(100, integer(1), "trees in the forest")
    unseen: str = param("zero", one_of(*UNSEEN_POLICY_NAMES), "prediction for a group absent from the history "
                        "(the paper: zero)")
    log_target: bool = param(False, flag(), "fit log1p(iterations) instead of iterations")
    n_jobs: int = param(1, Rule("a positive integer or -1 (all cores)", lambda v: isinstance(v, int) and not
                                isinstance(v, bool) and (v >= 1 or v == -1)), "cores the forest fits on")


@register_predictor("forest", ForestParams, needs=("random_state",))
class ForestPredictor(IterationPredictor):
    """Random-forest iteration predictor keyed on recurrence features (module doc)."""

    needs_history = True

    def __init__(self, features: Sequence[str] = ("group", "user"), n_estimators: int = ForestParams.n_estimators,
                 unseen: str = ForestParams.unseen, log_target: bool = ForestParams.log_target, random_state: int = 0,
                 n_jobs: int = ForestParams.n_jobs) -> None:
        self.features = features
        self.n_estimators = n_estimators
        self.unseen = unseen
        self.log_target = log_target
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, table: pd.DataFrame) -> "ForestPredictor":
        from sklearn.ensemble import RandomForestRegressor  # scikit-learn only when a forest is fitted
        from sklearn.preprocessing import OrdinalEncoder

        features = self._check_params(table)
        target = true_iterations(table, "forest predictor (training table)")
        if len(table) == 0:
            raise ConfigError("forest predictor: the training table is empty; set workload.train_fraction > 0 "
                              "so the trace has a history, or use predictor=oracle (true iterations)")
        self.categorical_ = [f for f in features if f not in NUMERIC_FEATURES]
        self.encoder_ = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=UNKNOWN_CODE,
                                       dtype=np.float64)
        if self.categorical_:
            self.encoder_.fit(_categories(table, self.categorical_))
        self.forest_ = RandomForestRegressor(n_estimators=self.n_estimators, random_state=self.random_state,
                                             n_jobs=self.n_jobs)
        self.forest_.fit(self._matrix(table), np.log1p(target) if self.log_target else target)
        self.seen_groups_ = frozenset(table["group"].dropna().astype(str))
        self.train_mean_ = float(target.mean())
        users = table["user"].astype(object).where(table["user"].notna(), MISSING).astype(str)
        self.user_means_ = pd.Series(target).groupby(users.to_numpy()).mean().to_dict()
        return self

    def _predict(self, table: pd.DataFrame) -> np.ndarray:
        raw = self.forest_.predict(self._matrix(table))
        predicted = np.maximum(0.0, np.expm1(raw) if self.log_target else raw)
        unseen = self.unseen_mask(table)
        if unseen.any():
            predicted[unseen] = UNSEEN_POLICIES[self.unseen](self, table[unseen], predicted[unseen])
        return predicted

    def unseen_mask(self, table: pd.DataFrame) -> np.ndarray:
        groups = table["group"]
        return ~(groups.notna() & groups.astype(str).isin(self.seen_groups_)).to_numpy(dtype=bool)

    def _matrix(self, table: pd.DataFrame) -> np.ndarray:
        columns = []
        if self.categorical_:
            columns.append(self.encoder_.transform(_categories(table, self.categorical_)))
        numeric = [f for f in self.features if f in NUMERIC_FEATURES]
        if numeric:
            columns.append(table[numeric].to_numpy(dtype=float))
        return np.hstack(columns)

    def _check_params(self, table: pd.DataFrame) -> list[str]:
        ForestParams(self.features, self.n_estimators, self.unseen, self.log_target, self.n_jobs).check("predictor")
        features = list(self.features)
        missing = [f for f in features + ["group"] if f not in table.columns]
        if missing:
            raise ConfigError(f"forest predictor: feature column(s) {missing} not in the job table "
                              f"(columns: {list(table.columns)})")
        return features


def _categories(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Categorical features as strings, a missing value being its own category."""
    return pd.DataFrame({c: table[c].astype(object).where(table[c].notna(), MISSING).astype(str).to_numpy()
                         for c in columns})


def _zero(model: ForestPredictor, rows: pd.DataFrame, forest: np.ndarray) -> np.ndarray:
    return np.zeros(len(rows))


def _mean(model: ForestPredictor, rows: pd.DataFrame, forest: np.ndarray) -> np.ndarray:
    return np.full(len(rows), model.train_mean_)


def _user_mean(model: ForestPredictor, rows: pd.DataFrame, forest: np.ndarray) -> np.ndarray:
    users = rows["user"].astype(object).where(rows["user"].notna(), MISSING).astype(str)
    return users.map(model.user_means_).fillna(model.train_mean_).to_numpy(dtype=float)


def _forest(model: ForestPredictor, rows: pd.DataFrame, forest: np.ndarray) -> np.ndarray:
    return forest


UNSEEN_POLICIES: dict[str, Callable[[ForestPredictor, pd.DataFrame, np.ndarray], np.ndarray]] = {
    "zero": _zero,
    "mean": _mean,
    "user_mean": _user_mean,
    "forest": _forest,
}
assert tuple(UNSEEN_POLICIES) == UNSEEN_POLICY_NAMES
