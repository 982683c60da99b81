"""Loader for the plain job table: a CSV file in the schema itself (design.md section 4).

Columns job_id, release (s), gpus, iterations and either model + config or alpha (s/iteration,
with optional alpha_max); optional user, group, duration (s). Hand-made theory instances are
written in this form. Row order is kept; errors name the file, the row and the column. The file is
checked as every table given from outside is (`schema.check_given_table`: the DataFrame of
`api.compare`, a plugin source's table).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..core import ConfigError
from .parsing import read_text_csv
from .schema import check_given_table


def load_csv(path: str | Path, delimiter: str = ",") -> pd.DataFrame:
    """The job table in `path` (.csv or .csv.gz; fields separated by `delimiter`), validated against the schema."""
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"path must be a CSV file path (str or Path), got {type(path).__name__} {path!r}")
    source = str(path)
    raw = read_text_csv(Path(path), source, delimiter=delimiter)
    _refuse_other_delimiter(raw, source, delimiter)
    if raw.empty:
        raise ConfigError(f"{source}: no job rows (the file has a header line only)")
    table = check_given_table(raw, source)
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
