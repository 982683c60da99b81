"""Loader for the Standard Workload Format (SWF 2.2) of the Parallel Workloads Archive.

One job per line, 18 whitespace-separated numbers, -1 where unknown; lines starting with `;` are header
comments (`; UnixStartTime: <epoch s>` dates the log's clock). The fields, numbered as the standard
numbers them: 1 job number, 2 submit time (s from the log's start), 3 wait time, 4 run time, 5 allocated
processors, 6 average CPU time, 7 used memory, 8 requested processors, 9 requested time (s), 10 requested
memory, 11 status (1 completed, 0 failed, 5 cancelled, 2/3/4 partial executions of a checkpointed job,
-1 unknown), 12 user id, 13 group id, 14 executable, 15 queue, 16 partition, 17 preceding job, 18 think time.

Per job: release from the submit time; run time from field 4 (unknown: the job never ran); start = submit
+ wait where the wait is known (`scheduler=recorded` needs it); GPUs = ceil(processors x
`gpus_per_processor`) with the allocated processors, else the requested ones (the archive's logs are of
CPU machines: by default one processor is one GPU); time limit from field 9 (-1 or 0: none); user `u<id>`,
group `g<id>`, partition `p<id>`. The partial executions of one checkpointed job (status 2, 3, 4) share its
job number and become jobs `<n>`, `<n>-2`, `<n>-3`, ...; any other repeated job number is refused.

Which jobs are kept and the trace card: joblog.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import ConfigError
from .joblog import LogJobs, log_job_table
from .parsing import read_text

FIELDS = ("Job Number", "Submit Time", "Wait Time", "Run Time", "Number of Allocated Processors",
          "Average CPU Time Used", "Used Memory", "Requested Number of Processors", "Requested Time",
          "Requested Memory", "Status", "User ID", "Group ID", "Executable Number", "Queue Number",
          "Partition Number", "Preceding Job Number", "Think Time from Preceding Job")
STATUS = {1: "COMPLETED", 0: "FAILED", 5: "CANCELLED", 2: "PARTIAL", 3: "PARTIAL_COMPLETED", 4: "PARTIAL_FAILED",
          -1: "UNKNOWN"}
FINISHED_STATES = tuple(STATUS.values())
"""Every SWF status is a finished one (a line is written when a job or a partial execution ends)."""
PARTIAL = (2, 3, 4)
START_TIME = re.compile(r"^;\s*UnixStartTime:\s*(-?\d+)\s*$")


def load_swf(path: str | Path, *, gpus_per_processor: float = 1.0, states: list[str] | None = None) -> pd.DataFrame:
    """The jobs of the SWF log at `path` as a job table with its trace card (module doc)."""
    source = str(path)
    values, lines, unix_start = _read(Path(path), source)
    return log_job_table(_log_jobs(values, lines, unix_start, source, gpus_per_processor), states)


def field_at(source: str, row: int, line: int, number: int) -> str:
    """'source: row r (line l), field n 'Name'' for 0-based data row `row`."""
    return f"{source}: row {row + 1} (line {line}), field {number} {FIELDS[number - 1]!r}"


def _read(path: Path, source: str) -> tuple[np.ndarray, np.ndarray, float | None]:
    """The 18 numbers of every job line, the file line of each, and the header's UnixStartTime."""
    rows, lines, unix_start = [], [], None
    for number, line in enumerate(read_text(path, source).splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            found = START_TIME.match(stripped)
            unix_start = float(found.group(1)) if found else unix_start
            continue
        fields = stripped.split()
        if len(fields) != len(FIELDS):
            raise ConfigError(f"{source}: row {len(rows) + 1} (line {number}) has {len(fields)} field(s), expected "
                              f"{len(FIELDS)} (the Standard Workload Format)")
        rows.append(fields)
        lines.append(number)
    if not rows:
        raise ConfigError(f"{source}: no job lines (only comments or nothing)")
    text = np.array(rows, dtype=object)
    values = pd.DataFrame(text).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        row, column = (int(k) for k in bad[0])
        raise ConfigError(f"{field_at(source, row, lines[row], column + 1)}: not a number, got {text[row, column]!r}")
    return values, np.array(lines), unix_start


def _refuse(bad: np.ndarray, values: np.ndarray, lines: np.ndarray, source: str, number: int, problem: str) -> None:
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ConfigError(f"{field_at(source, row, lines[row], number)}: {problem}, got {values[row, number - 1]:g}")


def _log_jobs(values: np.ndarray, lines: np.ndarray, unix_start: float | None, source: str,
              gpus_per_processor: float) -> LogJobs:
    column = {number: values[:, number - 1] for number in range(1, len(FIELDS) + 1)}
    _refuse(column[2] < 0, values, lines, source, 2, "must be >= 0 (a job needs its submit time)")
    for number in (3, 4, 5, 8, 9):
        _refuse((column[number] < 0) & (column[number] != -1), values, lines, source, number,
                "must be >= 0, or -1 for unknown")
    status = column[11]
    _refuse(~np.isin(status, list(STATUS)), values, lines, source, 11,
            f"not an SWF status (one of {sorted(STATUS)})")
    job_ids = _job_ids(column[1], status, lines, source)
    offset = unix_start if unix_start is not None else 0.0
    submit = column[2] + offset
    wait, run = _known(column[3]), _known(column[4])
    processors = np.where(column[5] >= 0, column[5], _known(column[8]))
    limit = _known(column[9])
    return LogJobs(source=source, format="swf", job_id=job_ids, lines=lines, submit=submit, start=submit + wait,
                   end=submit + wait + run, gpus=np.ceil(np.round(processors * gpus_per_processor, 9)),
                   state=np.array([STATUS[int(s)] for s in status], dtype=object), finished_states=FINISHED_STATES,
                   columns={"submit": FIELDS[1], "start": FIELDS[2], "end": FIELDS[3]},
                   user=_labels("u", column[12]), group=_labels("g", column[13]), partition=_labels("p", column[16]),
                   time_limit=np.where(limit > 0, limit, np.nan), run_time=run, epoch_known=unix_start is not None,
                   read={"job lines": len(values)})


def _known(values: np.ndarray) -> np.ndarray:
    return np.where(values == -1, np.nan, values)


def _labels(prefix: str, values: np.ndarray) -> np.ndarray:
    return np.array([None if v == -1 else f"{prefix}{int(v) if v == int(v) else v:g}" for v in values], dtype=object)


def _job_ids(numbers: np.ndarray, status: np.ndarray, lines: np.ndarray, source: str) -> np.ndarray:
    """`<n>` per line; the k-th partial execution of job n (k >= 2) is `<n>-<k>`."""
    ids, seen = [], {}
    for row, (number, code) in enumerate(zip(numbers, status)):
        label = f"{int(number)}" if number == int(number) else f"{number:g}"
        count = seen.get(label, 0) + 1
        if count > 1 and int(code) not in PARTIAL:
            raise ConfigError(f"{field_at(source, row, lines[row], 1)}: job number {label} appears again on a line "
                              "that is not a partial execution (status 2, 3 or 4)")
        seen[label] = count
        ids.append(label if count == 1 else f"{label}-{count}")
    return np.array(ids, dtype=object)
