"""Noisy oracle: true iterations times (1 +/- e), with e drawn so the mean relative error is epsilon.

For the COMM_HEAVY x tau x epsilon sensitivity study: predicted = n * (1 + s * e), where
s = +1 ("over"), -1 ("under") or a fair random sign ("both"), and e >= 0 has mean epsilon:
- "uniform" (default): e ~ U[0, 2 epsilon];
- "exponential": e ~ Exp(mean epsilon);
- "fixed": e = epsilon for every job.
Predictions are clipped at 0, so under-prediction with e > 1 (possible when epsilon > 0.5 for
"uniform", any epsilon for "exponential") measures a mean relative error below epsilon.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from ..params import Params, param
from ..rules import number, one_of
from ..workloads.seeding import component_rng
from .base import IterationPredictor, register_predictor, true_iterations

MAGNITUDES: dict[str, Callable[[np.random.Generator, float, int], np.ndarray]] = {
    "uniform": lambda rng, eps, size: rng.uniform(0.0, 2.0 * eps, size),
    "exponential": lambda rng, eps, size: rng.exponential(eps, size) if eps > 0 else np.zeros(size),
    "fixed": lambda rng, eps, size: np.full(size, eps),
}
SIGNS: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "both": lambda rng, size: rng.choice(np.array([-1.0, 1.0]), size),
    "under": lambda rng, size: -np.ones(size),
    "over": lambda rng, size: np.ones(size),
}


@dataclass(frozen=True)
class NoisyParams(Params):
    """The size, sign and shape of the noisy oracle's relative error (module doc)."""

    epsilon: float = param(0.5, number(0), "mean relative error of the predictions")
    mode: str = param("both", one_of(*SIGNS), "over-, under-prediction, or a fair random sign")
    distribution: str = param("uniform", one_of(*MAGNITUDES), "shape of the error's magnitude")


@register_predictor("noisy", NoisyParams, needs=("random_state",))
class NoisyOraclePredictor(IterationPredictor):
    """True iterations with multiplicative noise of mean relative size `epsilon` (module doc)."""

    oracle = True

    def __init__(self, epsilon: float = NoisyParams.epsilon, mode: str = NoisyParams.mode,
                 distribution: str = NoisyParams.distribution, random_state: int = 0) -> None:
        self.epsilon = epsilon
        self.mode = mode
        self.distribution = distribution
        self.random_state = random_state

    def fit(self, table: pd.DataFrame | None = None) -> "NoisyOraclePredictor":
        NoisyParams(self.epsilon, self.mode, self.distribution).check("predictor")
        self.fitted_ = True
        return self

    def _predict(self, table: pd.DataFrame) -> np.ndarray:
        truth = true_iterations(table, "noisy oracle predictor")
        rng = component_rng(self.random_state, "noisy_oracle")
        magnitude = MAGNITUDES[self.distribution](rng, float(self.epsilon), len(truth))
        sign = SIGNS[self.mode](rng, len(truth))
        return np.maximum(0.0, truth * (1.0 + sign * magnitude))
