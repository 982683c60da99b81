"""Summaries over seeds as text, shared by REPRODUCTION.md (reproduction.py) and the docs' generated
blocks (doc_numbers.py): a mean with its 95% Student-t interval and n (`plots.mean_ci`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .plots import SEED, mean_ci


def fmt_interval(row: pd.Series | dict[str, Any], scale: float = 100.0, unit: str = "%") -> str:
    """'12.3% [10.1, 14.5], n=5' for a mean_ci row (a single value when n < 2)."""
    mean, low, high, n = (float(row["mean"]) * scale, float(row["low"]) * scale, float(row["high"]) * scale,
                          int(row["n"]))
    if n < 2:
        return f"{mean:.3g}{unit} (n=1)"
    return f"{mean:.3g}{unit} [{low:.3g}, {high:.3g}], n={n}"


def interval(values: pd.Series) -> dict[str, float]:
    """mean_ci of one column without groups."""
    return mean_ci(pd.DataFrame({"value": values.to_numpy(dtype=float), "all": 0}), ["all"], "value").iloc[0].to_dict()


def per_seed_ratio(table: pd.DataFrame, numerator: str, denominator: str, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """total_jct(numerator) / total_jct(denominator) per seed (and per `by` point)."""
    keys = [*by, SEED]
    pivot = table.pivot_table(index=keys, columns="scheduler", values="total_jct", aggfunc="first")
    return (pivot[numerator] / pivot[denominator]).rename("ratio").reset_index()
