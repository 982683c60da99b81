"""Perfect prediction: the true iterations (the paper's "A-SRPT (oracle)" variant, ñ_i = n_i)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .base import IterationPredictor, register_predictor, true_iterations


@register_predictor("oracle")
class OraclePredictor(IterationPredictor):
    """Predicts each job's true iterations; needs no history."""

    oracle = True

    def fit(self, table: pd.DataFrame | None = None) -> "OraclePredictor":
        self.fitted_ = True
        return self

    def _predict(self, table: pd.DataFrame) -> np.ndarray:
        return true_iterations(table, "oracle predictor")
