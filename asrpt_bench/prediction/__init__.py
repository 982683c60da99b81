"""Iteration predictors behind one sklearn-shaped interface (the chronological split they learn from is
workloads.slicing's); importing registers the built-ins."""

from ..workloads.slicing import chronological_split
from .accuracy import (
    FIG4_BUCKETS,
    RELATIVE_BUCKETS,
    accuracy_summary,
    accuracy_table,
    evaluate_predictor,
    prediction_errors,
)
from .base import PREDICTORS, IterationPredictor, make_predictor, register_predictor
from .forest import UNSEEN_POLICIES, ForestPredictor
from .noisy import NoisyOraclePredictor
from .oracle import OraclePredictor
from .walltime import WalltimePredictor

__all__ = [
    "FIG4_BUCKETS", "PREDICTORS", "RELATIVE_BUCKETS", "UNSEEN_POLICIES", "ForestPredictor",
    "IterationPredictor", "NoisyOraclePredictor", "OraclePredictor", "accuracy_summary", "accuracy_table",
    "chronological_split", "evaluate_predictor", "make_predictor", "prediction_errors",
    "register_predictor", "WalltimePredictor",
]
