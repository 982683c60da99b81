"""Iteration predictors behind one sklearn-shaped interface (the chronological split they learn from is
workloads.slicing's). A built-in predictor's module is imported when its name is first looked up
(its registry's `declare` below) or a name of it first read here (exports.py), not by importing this package."""

from __future__ import annotations

from ..exports import lazy_exports
from .base import PREDICTORS, IterationPredictor, make_predictor, register_predictor

PREDICTORS.declare({  # the built-ins: each module is imported when one of its names is first looked up
    "forest": "asrpt_bench.prediction.forest",
    "noisy": "asrpt_bench.prediction.noisy",
    "oracle": "asrpt_bench.prediction.oracle",
    "walltime": "asrpt_bench.prediction.walltime",
})

__getattr__, __dir__ = lazy_exports(__name__, {
    "chronological_split": "asrpt_bench.workloads.slicing",
    "FIG4_BUCKETS": "asrpt_bench.prediction.accuracy",
    "RELATIVE_BUCKETS": "asrpt_bench.prediction.accuracy",
    "accuracy_summary": "asrpt_bench.prediction.accuracy",
    "accuracy_table": "asrpt_bench.prediction.accuracy",
    "evaluate_predictor": "asrpt_bench.prediction.accuracy",
    "prediction_errors": "asrpt_bench.prediction.accuracy",
    "UNSEEN_POLICIES": "asrpt_bench.prediction.forest",
    "ForestPredictor": "asrpt_bench.prediction.forest",
    "NoisyOraclePredictor": "asrpt_bench.prediction.noisy",
    "OraclePredictor": "asrpt_bench.prediction.oracle",
    "WalltimePredictor": "asrpt_bench.prediction.walltime",
})

__all__ = [
    "FIG4_BUCKETS", "PREDICTORS", "RELATIVE_BUCKETS", "UNSEEN_POLICIES", "ForestPredictor",
    "IterationPredictor", "NoisyOraclePredictor", "OraclePredictor", "accuracy_summary", "accuracy_table",
    "chronological_split", "evaluate_predictor", "make_predictor", "prediction_errors",
    "register_predictor", "WalltimePredictor",
]
