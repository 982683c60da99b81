"""Loader for the plain job table: a CSV file in the schema itself (design.md section 4).

Columns job_id, release (s), gpus, iterations and either model + config or alpha (s/iteration,
with optional alpha_max); optional user, group, duration (s). Hand-made theory instances are
written in this form. Row order is kept; errors name the file, the row and the column.

A row's `gpus` must be what its configuration uses (p<stages>xd<replicas>: stages x replicas): a
mismatch is refused rather than one silently overriding the other. A column the loader does not use
(a misspelt `alpha_mx`, a second `gpus`) is refused, and so is a row with a `duration` but neither
model+config nor alpha that gives `iterations` or a GPU count no zoo configuration has: the model
drawn from its duration would replace the iterations or round the GPUs.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..profiles import model_names
from ..profiles.configs import ParallelConfig
from ..profiles.zoo import DEFAULT_GPU_COUNTS
from .parsing import check_columns, read_text_csv
from .schema import COLUMNS, _where, validate_job_table


def load_csv(path: str | Path, delimiter: str = ",") -> pd.DataFrame:
    """The job table in `path` (.csv or .csv.gz; fields separated by `delimiter`), validated against the schema."""
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"path must be a CSV file path (str or Path), got {type(path).__name__} {path!r}")
    source = str(path)
    raw = read_text_csv(Path(path), source, delimiter=delimiter)
    _refuse_other_delimiter(raw, source, delimiter)
    check_columns(raw, [column.name for column in COLUMNS], source, "the job table's")
    table = validate_job_table(raw, source)
    if table.empty:
        raise ConfigError(f"{source}: no job rows (the file has a header line only)")
    _check_models(table, source)
    _check_iterations_kept(table, source)
    table.attrs.update({"source": source, "recurrence_keys": "file"})
    return table


def _refuse_other_delimiter(raw: pd.DataFrame, source: str, delimiter: str) -> None:
    """A header read as one field that holds another common delimiter: name the key that reads it."""
    if raw.shape[1] != 1:
        return
    header = str(raw.columns[0])
    for other in ",;|\t":
        if other != delimiter and other in header:
            raise ConfigError(f"{source}: the header line is one field {header[:60]!r}: its fields are separated by "
                              f"{other!r}, not {delimiter!r}; set workload.delimiter={other!r}")


def _check_iterations_kept(table: pd.DataFrame, source: str) -> None:
    """A row whose model is to be drawn from its duration (no model+config, no alpha) may not carry
    iterations (the drawn model's would replace them) nor a GPU count no zoo configuration has (it would
    be rounded): either would change the row without a word."""
    drawn = (table["model"].isna() & table["alpha"].isna() & table["duration"].notna()).to_numpy()
    with_iterations = drawn & table["iterations"].notna().to_numpy()
    if with_iterations.any():
        row = int(np.flatnonzero(with_iterations)[0])
        raise ConfigError(f"{_where(source, row, 'iterations')}: a row with iterations needs model+config or "
                          "alpha; without them a model is drawn from its duration, which would replace these "
                          "iterations (leave iterations empty to derive them from the duration)")
    odd = drawn & ~table["gpus"].isin(DEFAULT_GPU_COUNTS).to_numpy()
    if odd.any():
        row = int(np.flatnonzero(odd)[0])
        raise ConfigError(f"{_where(source, row, 'gpus')}: a model drawn from a duration runs on one of "
                          f"{list(DEFAULT_GPU_COUNTS)} GPUs, so gpus {int(table['gpus'].iloc[row])} would be changed; "
                          "give model+config or alpha for other sizes")


def _check_models(table: pd.DataFrame, source: str) -> None:
    """model and config come together, name a zoo model and a p<s>xd<r> configuration, and the
    configuration's GPUs equal the row's `gpus`."""
    has_model, has_config = table["model"].notna().to_numpy(), table["config"].notna().to_numpy()
    for column, lonely in (("config", has_model & ~has_config), ("model", has_config & ~has_model)):
        if lonely.any():
            row = int(np.flatnonzero(lonely)[0])
            other = "model" if column == "config" else "config"
            raise ConfigError(f"{_where(source, row, column)}: value is missing (a row with a {other} needs both "
                              "model and config)")
    known = set(model_names())
    for row in np.flatnonzero(has_model & has_config):
        model, config, gpus = table["model"].iloc[row], table["config"].iloc[row], int(table["gpus"].iloc[row])
        if model not in known:
            raise ConfigError(f"{_where(source, row, 'model')}: unknown model {model!r}; known: {sorted(known)}")
        try:
            parsed = ParallelConfig.parse(config)
        except ConfigError as error:
            raise ConfigError(f"{_where(source, row, 'config')}: {error}") from None
        if parsed.gpus != gpus:
            raise ConfigError(f"{source}: row {row + 1} (line {row + 2}), columns 'gpus' and 'config': {config} uses "
                              f"{parsed.gpus} GPUs ({parsed.stages} stages x {parsed.replicas} replicas) but gpus is "
                              f"{gpus}")
