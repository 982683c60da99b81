"""Chronological train/test split of a job table (paper-notes 6: first 80% for training)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd

from ..core import ConfigError


def history_size(num_jobs: int, train_fraction: float) -> int:
    """How many of `num_jobs` jobs (in release order) form the history: floor(train_fraction * num_jobs)
    of the decimal value as written (0.7 * 90 is 62.99999... in binary floating point, 63 here)."""
    if not 0.0 <= train_fraction < 1.0:
        raise ConfigError(f"workload.train_fraction must be in [0, 1), got {train_fraction!r}")
    return math.floor(Fraction(str(float(train_fraction))) * num_jobs)


def chronological_split(table: pd.DataFrame, train_fraction: float = 0.8) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(history, test): the first floor(train_fraction * N) jobs by release (ties keep row order)
    and the rest, each with a fresh index and the table's attrs. train_fraction = 0 gives no history
    (every job is simulated: hand-made instances with an oracle or noisy predictor)."""
    order = np.argsort(table["release"].to_numpy(dtype=float), kind="stable")
    cut = history_size(len(table), train_fraction)
    parts = []
    for rows in (order[:cut], order[cut:]):
        part = table.iloc[rows].reset_index(drop=True)
        part.attrs.update(table.attrs)
        parts.append(part)
    return parts[0], parts[1]
