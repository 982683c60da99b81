"""Workload loaders by name (config `workload=<name>`): one registry instead of if-chains."""

from __future__ import annotations

import pandas as pd

from ..registry import Registry
from .csv_table import load_csv
from .pai2020 import load_pai2020
from .philly import load_philly
from .synthetic import synthetic_workload

WORKLOAD_LOADERS: Registry[pd.DataFrame] = Registry("workload", {
    "philly": load_philly,
    "pai2020": load_pai2020,
    "csv": load_csv,
    "synthetic": synthetic_workload,
})


def load_workload(name: str, **params: object) -> pd.DataFrame:
    """The job table of workload `name` built with `params` (the loader's keyword arguments)."""
    return WORKLOAD_LOADERS.make(name, **params)
