"""Strict parsing of raw trace columns; every error names the file, the row, the line and the column.

Raw traces are read as text first, so a malformed value is reported where it is instead of
silently becoming NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core import ConfigError


def read_text_csv(path: str | Path, source: str, names: list[str] | None = None,
                  compression: str = "infer") -> pd.DataFrame:
    """Read a CSV with every cell as text (None for empty cells). `names` reads a headerless file."""
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], header=None if names else "infer",
                           names=names, compression=compression)
    except FileNotFoundError:
        raise ConfigError(f"{source}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{source}: is a directory, not a CSV file") from None
    except pd.errors.EmptyDataError:
        raise ConfigError(f"{source}: the file is empty (no header line, no rows)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, EOFError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConfigError(f"{source}: cannot be read as CSV: {first_line}") from None


def location(source: str, row: int, column: str, header_lines: int) -> str:
    """'file: row r (line l), column c' for 0-based data row `row`."""
    return f"{source}: row {row + 1} (line {row + 1 + header_lines}), column {column!r}"


def require_columns(frame: pd.DataFrame, required: list[str], source: str) -> None:
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ConfigError(f"{source}: missing required column(s) {missing}; columns are {list(frame.columns)}")


def parse_numeric(frame: pd.DataFrame, column: str, source: str, header_lines: int, *,
                  required: bool = True, integer: bool = False, minimum: float | None = None,
                  strictly_positive: bool = False) -> np.ndarray:
    """The column as float64; empty cells are NaN when not `required`, otherwise an error."""
    text = frame[column]
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    _fail_first(np.isnan(values) & text.notna().to_numpy(), frame, column, source, header_lines,
                "not a number")
    _fail_first(np.isinf(values), frame, column, source, header_lines, "not a finite number")
    if required:
        _fail_first(np.isnan(values), frame, column, source, header_lines, "value is missing")
    finite = ~np.isnan(values)
    if integer:
        _fail_first(finite & (values != np.floor(values)), frame, column, source, header_lines, "not an integer")
    if minimum is not None:
        _fail_first(finite & (values < minimum), frame, column, source, header_lines, f"must be >= {minimum:g}")
    if strictly_positive:
        _fail_first(finite & (values <= 0), frame, column, source, header_lines, "must be > 0")
    return values


def parse_timestamps(frame: pd.DataFrame, column: str, source: str, header_lines: int,
                     fmt: str) -> np.ndarray:
    """Wall-clock timestamps in `fmt` as float seconds since the epoch."""
    text = frame[column]
    stamps = pd.to_datetime(text, format=fmt, errors="coerce")
    _fail_first(stamps.isna().to_numpy(), frame, column, source, header_lines,
                f"not a timestamp in format {fmt!r}")
    return (stamps - pd.Timestamp(0)).dt.total_seconds().to_numpy(dtype=float)


def parse_text(frame: pd.DataFrame, column: str, source: str, header_lines: int) -> np.ndarray:
    """A required text column (no empty cells)."""
    text = frame[column]
    _fail_first(text.isna().to_numpy(), frame, column, source, header_lines, "value is missing")
    return text.str.strip().to_numpy(dtype=object)


def _fail_first(bad: np.ndarray, frame: pd.DataFrame, column: str, source: str, header_lines: int,
                problem: str) -> None:
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ConfigError(f"{location(source, row, column, header_lines)}: {problem}, "
                          f"got {frame[column].iloc[row]!r}")
