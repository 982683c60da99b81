"""Chronological train/test split of a job table (paper-notes 6: first 80% for training)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..workloads.slicing import history_size


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
