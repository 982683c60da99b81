"""Checks a collected results table must pass before a report or a figure uses it.

`read_table` reads a table as UTF-8 CSV; `check_table` then refuses, in one line naming the file,
the row (and line) and the column:
- a non-numeric cell in a column the consumer reads as numbers (`n/a` would otherwise become NaN
  and silently drop a seed from a mean);
- derived columns that do not follow from the raw ones they come from: `total_jct` must equal
  `mean_jct` x `num_jobs`, and `asrpt_reduction` must equal 1 - total_jct(A-SRPT) / total_jct of the
  same run, so an edited `total_jct` is caught whichever column a claim reads;
- an incomplete seed set: every point of the sweep (its swept keys and scheduler) must hold every
  seed the table holds.
"""

from __future__ import annotations

import math
from io import BytesIO
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from .. import io
from ..collect import experiment_of
from ..core import ConfigError

NUMERIC = ("total_jct", "mean_jct", "num_jobs", "asrpt_reduction", "seed")
"""Columns read as numbers wherever they appear."""
RELATIVE_TOLERANCE = 1e-9
SPECIAL = ("nan", "inf", "-inf", "+inf", "true", "false", "null")
"""Cell spellings that are not numbers to pd.to_numeric but are fine in a numeric or boolean column (`null`:
a config key set to null, as collect writes it)."""
REFERENCE = "asrpt"


def table_path(results: Path, name: str) -> Path:
    """results/`name` (a .csv file name), or its gzipped copy when only that exists (a committed table
    above a few MB is stored gzipped: results/dispatch_map.csv.gz); the plain name (for messages) when
    neither does. Both at once are refused: which one is current would be a guess."""
    path = Path(results) / name
    io.refuse_twins(path)
    packed = io.compressed_twin(path)
    return packed if not path.exists() and packed.exists() else path


def read_table(path: Path, **options: object) -> pd.DataFrame:
    """The collected table at `path` (gunzipped when its name ends in .gz; `options` go to pd.read_csv);
    ConfigError naming the file for one that is not UTF-8 CSV, is empty, or is a gzip file cut short,
    damaged or named against its bytes."""
    path = Path(path)
    try:
        data = io.read_file_bytes(path)
        return pd.read_csv(BytesIO(data), encoding="utf-8", low_memory=False, **options)
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (byte {error.start}: {error.reason}); a collected table is "
                          "UTF-8 CSV") from None
    except pd.errors.EmptyDataError:
        raise ConfigError(f"{path}: the file is empty") from None
    except pd.errors.ParserError as error:
        raise ConfigError(f"{path}: cannot be read as CSV: {str(error).strip().splitlines()[0]}") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a CSV table") from None


def _where(path: Path, row: int, column: str | None = None) -> str:
    return f"{path}: row {row + 1} (line {row + 2})" + (f", column {column!r}" if column else "")


def check_numeric(table: pd.DataFrame, path: Path, columns: Iterable[str], keys: Iterable[str] = ()) -> None:
    """Every non-empty cell of `columns` is a number (pandas reads `n/a`, `NA`, `None` as empty), and so is
    every cell of a `keys` column holding any number (a key column of names is text)."""
    raw = read_table(path, dtype=str, keep_default_na=False)
    numeric = set(columns)
    for column in dict.fromkeys([*columns, *keys]):
        if column not in table.columns or column not in raw.columns:
            continue
        text = raw[column].str.strip()
        numbers = pd.to_numeric(text.where(~text.str.lower().isin(SPECIAL), "0"),
                                errors="coerce")
        bad = (numbers.isna() & (text != "")).to_numpy()
        if not bad.any():
            continue
        if column not in numeric and not pd.api.types.is_numeric_dtype(table[column]) and numbers.notna().sum() == 0:
            continue  # a key column of names (e.g. workload.name): not read as numbers
        row = int(np.flatnonzero(bad)[0])
        raise ConfigError(f"{_where(path, row, column)}: not a number: {raw[column].iloc[row]!r}")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12)


def check_derived(table: pd.DataFrame, path: Path) -> None:
    """total_jct = mean_jct x num_jobs, and asrpt_reduction = 1 - total_jct(the run's reference) / total_jct,
    per row."""
    if {"total_jct", "mean_jct", "num_jobs"} <= set(table.columns):
        for row, (total, mean, count) in enumerate(zip(table["total_jct"], table["mean_jct"], table["num_jobs"])):
            values = (float(total), float(mean), float(count))
            if all(math.isfinite(v) for v in values) and count > 0 and not _close(values[0], values[1] * values[2]):
                raise ConfigError(f"{_where(path, row, 'total_jct')}: {total:g} is not mean_jct x num_jobs "
                                  f"({mean:g} x {count:g} = {mean * count:g}); the table was edited after collection")
    if {"asrpt_reduction", "total_jct", "scheduler", "run_dir"} <= set(table.columns):
        # each run's reduction is relative to its own reference (summary key reference_scheduler; A-SRPT in
        # tables collected before it was recorded)
        named = table["reference_scheduler"] if "reference_scheduler" in table.columns else REFERENCE
        own = table[table["scheduler"] == pd.Series(named, index=table.index).fillna(REFERENCE)]
        reference = own.drop_duplicates("run_dir").set_index("run_dir")["total_jct"]
        for row, (run, total, reduction) in enumerate(zip(table["run_dir"], table["total_jct"],
                                                          table["asrpt_reduction"])):
            if run not in reference.index or not math.isfinite(float(reduction)) or not float(total):
                continue
            expected = 1.0 - float(reference[run]) / float(total)
            if not _close(float(reduction), expected):
                raise ConfigError(f"{_where(path, row, 'asrpt_reduction')}: {reduction:g} does not follow from "
                                  f"total_jct (1 - {reference[run]:g} / {total:g} = {expected:g}); the table was "
                                  "edited after collection")


def check_seeds(table: pd.DataFrame, path: Path, keys: Iterable[str]) -> None:
    """Every point (the given key columns, and the scheduler) holds every seed the table holds."""
    if "seed" not in table.columns:
        return
    by = [key for key in dict.fromkeys([*keys, "scheduler", "placer"]) if key in table.columns and key != "seed"]
    seeds = sorted(set(table["seed"].dropna()))
    if not by:
        return
    for point, group in table.groupby(by, dropna=False, sort=True):
        found = sorted(set(group["seed"].dropna()))
        if found != seeds:
            point = point if isinstance(point, tuple) else (point,)
            named = ", ".join(f"{key}={value}" for key, value in zip(by, point))
            raise ConfigError(f"{path}: incomplete seed set: {named} has seeds {[_plain(s) for s in found]} of "
                              f"{[_plain(s) for s in seeds]}; collect the whole sweep")


def _plain(value: object) -> object:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def check_table(table: pd.DataFrame, path: Path, read: Iterable[str] = (), keys: Iterable[str] = ()) -> None:
    """Every check of the module docstring. NUMERIC columns must hold numbers; `read` (the columns a
    consumer reads) and `keys` (the sweep's point keys) must too when they hold any number."""
    keys = list(keys)
    check_numeric(table, path, NUMERIC, [*keys, *read])
    check_derived(table, path)
    check_seeds(table, path, keys)


def recorded_experiments(table: pd.DataFrame) -> set[str]:
    """The experiments a collected table's runs belong to: its `experiment` column, or for tables
    collected before that column existed, the `experiment=` token of its `overrides`."""
    if "experiment" in table.columns:
        return {str(name) for name in table["experiment"].fillna("")} - {""}
    if "overrides" in table.columns:
        return {experiment_of(str(text).split()) for text in table["overrides"].fillna("")} - {""}
    return set()
