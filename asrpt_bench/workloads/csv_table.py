"""Loader for the plain job table: a CSV file in the schema itself (design.md section 4).

Columns job_id, release (s), gpus, iterations and either model + config or alpha (s/iteration,
with optional alpha_max); optional user, group, duration (s). Hand-made theory instances are
written in this form. Row order is kept; errors name the file, the row and the column.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .parsing import read_text_csv
from .schema import validate_job_table


def load_csv(path: str | Path) -> pd.DataFrame:
    """The job table in `path` (.csv or .csv.gz), validated against the schema."""
    source = str(path)
    table = validate_job_table(read_text_csv(Path(path), source), source)
    table.attrs.update({"source": source, "recurrence_keys": "file"})
    return table
