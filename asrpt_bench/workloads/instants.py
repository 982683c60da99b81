"""Wall-clock time stamps of a job log as seconds on one clock (UTC), with the log's time zone rules.

A stamp either carries its own UTC offset (`2023-03-01 00:18:22+08:00`, Acme) or none (`2023-03-01T00:18:22`,
sacct and Helios): stamps without an offset are read in the time zone the user names (`workload.timezone`,
an IANA name such as `Europe/Berlin`; default UTC). A log that mixes the two kinds is refused, since no one
clock fits both. A local time repeated when daylight saving time ends is read as its first (summer-time)
occurrence and counted; a local time that does not exist (skipped when it begins) is refused.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..rules import Rule

OFFSET = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")
EPOCH = pd.Timestamp(0, tz="UTC")


def is_time_zone(value: object) -> bool:
    """Whether `value` names an IANA time zone this machine knows."""
    if not isinstance(value, str) or not value or value != value.strip():
        return False
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


TIME_ZONE = Rule("an IANA time zone name such as 'UTC' or 'Europe/Berlin'", is_time_zone)


@dataclass(frozen=True)
class StampColumn:
    """One time-stamp column of a log: its name in the log, its cells (None where unknown) and the file
    line of each cell's row (for messages)."""

    name: str
    cells: np.ndarray
    lines: np.ndarray


def where(source: str, row: int, line: int, column: str) -> str:
    """'source: row r (line l), column c' for 0-based data row `row` on file line `line`."""
    return f"{source}: row {row + 1} (line {line}), column {column!r}"


def to_seconds(columns: list[StampColumn], source: str, timezone: str) -> tuple[list[np.ndarray], int]:
    """Each column as float seconds since 1970-01-01 UTC (NaN where the cell is None), and how many
    stamps fell in a repeated daylight-saving hour (read as its first occurrence)."""
    TIME_ZONE.require("workload.timezone", timezone)
    _refuse_mixed_zones(columns, source)
    converted, repeated = [], 0
    for column in columns:
        seconds, ambiguous = _column_seconds(column, source, timezone)
        converted.append(seconds)
        repeated += ambiguous
    return converted, repeated


def repeated_hour_note(source: str, timezone: str, count: int) -> dict[str, object]:
    """The run note (joblog.LogJobs.notes) for `count` stamps read in a repeated daylight-saving hour."""
    return {"key": "log_times_in_repeated_dst_hour", "count": count,
            "message": f"{source}: {count} time stamp(s) fall in the hour {timezone} repeats when daylight saving "
                       "time ends; each is read as its first (summer-time) occurrence"}


def _refuse_mixed_zones(columns: list[StampColumn], source: str) -> None:
    """All stamps of the log carry an offset, or none does."""
    first: tuple[bool, str, int, int, str] | None = None
    for column in columns:
        present = np.flatnonzero(pd.notna(column.cells))
        if not len(present):
            continue
        aware = np.array([bool(OFFSET.search(column.cells[i].strip())) for i in present])
        if first is None:
            i = present[0]
            first = (bool(aware[0]), column.name, int(i), int(column.lines[i]), column.cells[i])
        odd = np.flatnonzero(aware != first[0])
        if len(odd):
            i = present[odd[0]]
            kind = "has no UTC offset" if first[0] else "has a UTC offset"
            other = "has one" if first[0] else "has none"
            raise ConfigError(f"{where(source, int(i), int(column.lines[i]), column.name)}: mixed time zones: "
                              f"{column.cells[i]!r} {kind} while {first[4]!r} (row {first[2] + 1}, column "
                              f"{first[1]!r}) {other}; give every stamp of the log in one form")


def _column_seconds(column: StampColumn, source: str, timezone: str) -> tuple[np.ndarray, int]:
    cells = pd.Series(column.cells, dtype=object)
    present = cells.notna().to_numpy()
    text = cells[present].astype(str).str.strip()
    aware = bool(len(text)) and bool(OFFSET.search(text.iloc[0]))
    stamps = pd.to_datetime(text, format="ISO8601", errors="coerce", utc=aware)
    _refuse_first(stamps.isna().to_numpy(), column, present, source, "not a time stamp such as 2023-03-01T08:30:00")
    seconds = np.full(len(cells), np.nan)
    if not len(text):
        return seconds, 0
    if aware:
        seconds[present] = (stamps - EPOCH).dt.total_seconds().to_numpy(dtype=float)
        return seconds, 0
    local = stamps.dt.tz_localize(timezone, ambiguous="NaT", nonexistent="NaT")
    unresolved = local.isna().to_numpy()
    repeated = 0
    if unresolved.any():
        summer = stamps[unresolved].dt.tz_localize(timezone, ambiguous=True, nonexistent="NaT")
        skipped = np.zeros(len(local), dtype=bool)
        skipped[np.flatnonzero(unresolved)] = summer.isna().to_numpy()
        _refuse_first(skipped, column, present, source, f"this local time does not exist in {timezone} (the hour "
                      "skipped when daylight saving time begins)")
        repeated = int(unresolved.sum())
        local = local.astype(summer.dtype)
        local[unresolved] = summer
    seconds[present] = (local - EPOCH).dt.total_seconds().to_numpy(dtype=float)
    return seconds, repeated


def _refuse_first(bad: np.ndarray, column: StampColumn, present: np.ndarray, source: str, problem: str) -> None:
    if bad.any():
        i = int(np.flatnonzero(present)[np.flatnonzero(bad)[0]])
        raise ConfigError(f"{where(source, i, int(column.lines[i]), column.name)}: {problem}, got {column.cells[i]!r}")
