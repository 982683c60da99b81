"""Strict parsing of raw trace columns; every error names the file, the row, the line and the column.

Raw traces are read as text first, so a malformed value is reported where it is instead of
silently becoming NaN.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import io
import re
import zlib
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..io import GZIP_MAGIC, compressed_twin, read_file_bytes




def read_text_csv(path: str | Path | IO[bytes], source: str, names: list[str] | None = None,
                  compression: str = "infer", delimiter: str = ",") -> pd.DataFrame:
    """Read a CSV with every cell as text (None for empty cells). `names` reads a headerless file. Every
    line must have as many fields as `names` (or the header line): pandas would otherwise shift a row
    with one field too many into an index, or pad a short row with empty cells, without a word."""
    try:
        data = _raw_bytes(path, source, compression)
        _check_field_counts(data, names, source, delimiter)
        path = io.BytesIO(data)
        compression = None  # type: ignore[assignment]  # already decompressed
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], header=None if names else "infer",
                           names=names, compression=compression, sep=delimiter, engine="c")
    except FileNotFoundError:
        twin = compressed_twin(Path(path)) if isinstance(path, (str, Path)) else None
        hint = f" ({twin.name} is there: give that name)" if twin is not None and twin.is_file() else ""
        raise ConfigError(f"{source}: file not found{hint}") from None
    except IsADirectoryError:
        raise ConfigError(f"{source}: is a directory, not a CSV file") from None
    except pd.errors.EmptyDataError:
        raise ConfigError(f"{source}: the file is empty (no header line, no rows)") from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, EOFError, zlib.error) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConfigError(f"{source}: cannot be read as CSV: {first_line}") from None


def read_text(path: Path, source: str) -> str:
    """A UTF-8 text file's content (gunzipped when named .gz); errors in one line naming the file."""
    try:
        return _raw_bytes(path, source, "infer").decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{source}: file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{source}: is a directory, not a file") from None
    except (UnicodeDecodeError, OSError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConfigError(f"{source}: cannot be read as text: {first_line}") from None


def _raw_bytes(path: str | Path | IO[bytes], source: str, compression: str) -> bytes:
    """The file's bytes: a named file gunzipped as its name says (io.read_file_bytes refuses a name that
    contradicts the bytes), an open stream (an archive member) gunzipped when its bytes are gzip."""
    if isinstance(path, (str, Path)):
        if compression == "infer":
            return read_file_bytes(Path(path), source)
        data = Path(path).read_bytes()
    else:
        data = path.read()
    return gzip.decompress(data) if data[:2] == GZIP_MAGIC else data


def _check_field_counts(data: bytes, names: list[str] | None, source: str, delimiter: str = ",") -> None:
    """Every non-empty line has len(names) fields separated by `delimiter`, or as many as the header line
    when `names` is None (quotes respected when present)."""
    if b'"' in data:
        records = csv.reader(io.StringIO(data.decode("utf-8")), delimiter=delimiter)
        counts = ((number, len(fields)) for number, fields in enumerate(records, start=1) if fields)
    else:
        separator = delimiter.encode("utf-8")
        counts = ((number, line.count(separator) + 1) for number, line in enumerate(data.splitlines(), start=1)
                  if line.strip())
    header_lines = 0 if names is not None else 1
    expected = len(names) if names is not None else None
    for number, count in counts:
        if expected is None:
            expected = count
        elif count != expected:
            shape = f": {names}" if names is not None else " (as the header line)"
            raise ConfigError(f"{source}: row {number - header_lines} (line {number}) has {count} field(s), expected "
                              f"{expected}{shape}")


def location(source: str, row: int, column: str, header_lines: int) -> str:
    """'file: row r (line l), column c' for 0-based data row `row`."""
    return f"{source}: row {row + 1} (line {row + 1 + header_lines}), column {column!r}"


def check_columns(frame: pd.DataFrame, known: list[str], source: str, what: str) -> None:
    """Every column is one of `known`, once (pandas renames a repeated `gpus` to `gpus.1`); `what` names
    the format in the message."""
    for name in map(str, frame.columns):
        if name in known:
            continue
        repeated = re.fullmatch(r"(.+)\.[0-9]+", name)
        if repeated and repeated.group(1) in known and repeated.group(1) in frame.columns:
            raise ConfigError(f"{source}: column {repeated.group(1)!r} appears more than once in the header line")
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{source}: unknown column {name!r}{hint}; {what} columns are {known}")


def require_columns(frame: pd.DataFrame, required: list[str], source: str) -> None:
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ConfigError(f"{source}: missing required column(s) {missing}; columns are {list(frame.columns)}")


def parse_numeric(frame: pd.DataFrame, column: str, source: str, header_lines: int, *,
                  required: bool = True, integer: bool = False, minimum: float | None = None,
                  strictly_positive: bool = False, maximum: float | None = None) -> np.ndarray:
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
    if maximum is not None:
        _fail_first(finite & (values > maximum), frame, column, source, header_lines, f"must be <= {maximum:.0e}")
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
