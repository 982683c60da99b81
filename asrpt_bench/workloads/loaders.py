"""Workload loaders by name (config `workload=<name>`): one registry instead of if-chains."""

from __future__ import annotations

import inspect
from typing import Callable

import pandas as pd

from ..core import ConfigError
from .csv_table import load_csv
from .pai2020 import load_pai2020
from .philly import load_philly
from .synthetic import synthetic_workload

WORKLOAD_LOADERS: dict[str, Callable[..., pd.DataFrame]] = {
    "philly": load_philly,
    "pai2020": load_pai2020,
    "csv": load_csv,
    "synthetic": synthetic_workload,
}


def load_workload(name: str, **params: object) -> pd.DataFrame:
    """The job table of workload `name` built with `params` (the loader's keyword arguments)."""
    if name not in WORKLOAD_LOADERS:
        raise ConfigError(f"unknown workload {name!r}; known: {sorted(WORKLOAD_LOADERS)}")
    loader = WORKLOAD_LOADERS[name]
    accepted = inspect.signature(loader).parameters
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ConfigError(f"workload {name!r}: unknown parameter(s) {unknown}; known: {sorted(accepted)}")
    return loader(**params)
