"""How near a scheduler comes to a reference, counted the same way everywhere.

A ratio's 95% interval (geometric, over seeds) is "within X%" of the reference when it lies inside
[1 - X, 1 + X], on both sides; it is "below 1" when it lies entirely below 1 (the scheduler beats the
reference), counted apart: an interval can be both (inside the band and below 1), and an interval below
1 - X is below 1 but not within X%. The findings, REPRODUCTION.md and the figure captions state these
definitions beside every count.
"""

from __future__ import annotations

import pandas as pd

WITHIN = 0.05
"""The X of "within X%" in the findings."""


def definition(within: float = WITHIN) -> str:
    """The two counts' definitions, as the generated text states them."""
    return (f"within {100 * within:g}%: the 95% interval lies inside [{1 - within:g}, {1 + within:g}]; below 1: the "
            "interval lies below 1 (counted apart)")


def band_counts(summary: pd.DataFrame, by: list[str], within: float = WITHIN) -> pd.DataFrame:
    """Per group of `by` over rows with geometric `mean`, `low`, `high`: points, `within` (interval inside
    [1 - within, 1 + within]), `below` (interval below 1), and the range of the means (`lowest`, `highest`)."""
    flags = summary.assign(inside=(summary["low"] >= 1 - within) & (summary["high"] <= 1 + within),
                           under=summary["high"] < 1)
    grouped = flags.groupby(by, sort=False, dropna=False)
    return pd.DataFrame({"points": grouped.size(), "within": grouped["inside"].sum().astype(int),
                         "below": grouped["under"].sum().astype(int), "lowest": grouped["mean"].min(),
                         "highest": grouped["mean"].max()}).reset_index()
