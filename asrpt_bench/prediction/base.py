"""The iteration-predictor interface and the registry every predictor joins by name.

Predictors are scikit-learn shaped (design.md 6): `__init__` only stores parameters, `fit(table)`
returns self, fitted state ends in `_`, randomness enters as `random_state`. They read job tables
(workloads.schema) and return predicted iterations as a float array in row order. A predictor
that reads the true iterations at predict time declares `oracle = True`.

The base class implements scikit-learn's estimator API itself (`get_params`/`set_params`, so
`sklearn.base.clone` works) instead of inheriting `BaseEstimator`: importing scikit-learn costs about a
second, and only the forest needs it (it imports scikit-learn when it fits).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, ClassVar

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..params import NoParams, Params
from ..registry import Registry


def constructor_parameters(cls: type) -> list[str]:
    """The keyword names of a class's constructor (scikit-learn's get_params reads them)."""
    return [p for p in inspect.signature(cls).parameters if p not in ("self", "name")]


class NotFittedError(ValueError, AttributeError):
    """predict was called before fit (the same bases as scikit-learn's NotFittedError)."""


class IterationPredictor:
    """Base class: subclasses implement `fit` and `_predict`; `unseen_mask` defaults to none unseen."""

    name: ClassVar[str] = ""
    oracle: ClassVar[bool] = False
    needs_history: ClassVar[bool] = False
    """True for a predictor that learns from the history: a run without one uses the oracle (prepare.py)."""

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters and their values (scikit-learn's estimator API)."""
        return {key: getattr(self, key) for key in constructor_parameters(type(self))}

    def set_params(self, **params: Any) -> "IterationPredictor":
        known = constructor_parameters(type(self))
        for key, value in params.items():
            if key not in known:
                raise ValueError(f"{type(self).__name__}: unknown parameter {key!r}; known: {known}")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"

    def fit(self, table: pd.DataFrame) -> "IterationPredictor":
        raise NotImplementedError

    def is_fitted(self) -> bool:
        """Fitted state ends in `_` (scikit-learn's convention), so fit has run iff such an attribute exists."""
        return any(key.endswith("_") and not key.startswith("__") for key in vars(self))

    def predict(self, table: pd.DataFrame) -> np.ndarray:
        """Predicted iterations (>= 0), one per row of `table`."""
        if not self.is_fitted():
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call fit first")
        return self._predict(table)

    def _predict(self, table: pd.DataFrame) -> np.ndarray:
        raise NotImplementedError

    def unseen_mask(self, table: pd.DataFrame) -> np.ndarray:
        """True for rows the predictor has no history for (the paper predicts 0 for them)."""
        return np.zeros(len(table), dtype=bool)

    def predictions(self, table: pd.DataFrame) -> dict[object, float]:
        """job_id -> predicted iterations, the form the simulator takes."""
        return dict(zip(table["job_id"].tolist(), self.predict(table).tolist()))


PREDICTORS: Registry[IterationPredictor] = Registry("predictor")


def make_predictor(name: str, **keywords: Any) -> IterationPredictor:
    """Predictor `name` from its parameters and `random_state` (for predictors that draw), as keywords."""
    return PREDICTORS.make_from_keywords(name, **keywords)


def register_predictor(name: str, params: type[Params] = NoParams, *, needs: tuple[str, ...] = (),
                       replace: bool = False) -> Callable[[type[IterationPredictor]], type[IterationPredictor]]:
    """Class decorator: the predictor is `predictor=<name>` with the keys of `params`; `needs`:
    ("random_state",) for a predictor that draws (the run derives it from its seed)."""

    def decorator(cls: type[IterationPredictor]) -> type[IterationPredictor]:
        cls.name = name
        return PREDICTORS.register(name, params, needs=needs, replace=replace)(cls)

    return decorator


def true_iterations(table: pd.DataFrame, who: str) -> np.ndarray:
    """The `iterations` column as floats; a missing value is an error naming the job."""
    if "iterations" not in table.columns:
        raise ConfigError(f"{who}: the job table has no 'iterations' column")
    values = pd.to_numeric(table["iterations"], errors="coerce").to_numpy(dtype=float)
    missing = np.isnan(values)
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise ConfigError(f"{who}: job {table['job_id'].iloc[row]!r} (row {row + 1}) has no iterations; "
                          "assign models first (workloads.assign_models)")
    return values
