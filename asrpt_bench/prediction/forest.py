"""The paper's predictor: a random forest on recurrence features (paper-notes 6, section 10 item 16).

sklearn RandomForestRegressor on ordinal-encoded (group, user) by default; numeric features
(gpus, trace_gpus) pass through unencoded. Target: raw iterations (or log1p with log_target).
A test job whose group never appears in the training table is *unseen*; the paper predicts 0
iterations for it (`unseen="zero"`). Other policies: "mean" (training mean), "user_mean" (mean of
the user's training jobs, else the training mean), "forest" (the forest's own output with the
unknown-category code). A job with no group is always unseen.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..rules import check
from .base import IterationPredictor, register_predictor, true_iterations

NUMERIC_FEATURES = frozenset({"gpus", "trace_gpus"})
MISSING = "<missing>"
UNKNOWN_CODE = -1


@register_predictor("forest")
class ForestPredictor(IterationPredictor):
    """Random-forest iteration predictor keyed on recurrence features (module doc)."""

    def __init__(self, features: Sequence[str] = ("group", "user"), n_estimators: int = 100,
                 unseen: str = "zero", log_target: bool = False, random_state: int = 0,
                 n_jobs: int = 1) -> None:
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
        features = list(self.features)
        if not features:
            raise ConfigError("predictor.features must name at least one column")
        missing = [f for f in features + ["group"] if f not in table.columns]
        if missing:
            raise ConfigError(f"forest predictor: feature column(s) {missing} not in the job table "
                              f"(columns: {list(table.columns)})")
        check("predictor.unseen", self.unseen)
        check("predictor.n_estimators", self.n_estimators)
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
