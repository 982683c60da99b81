"""Loaders for the job traces of SenseTime's Helios (SC'21, `cluster_log.csv` of the HeliosData release)
and Shanghai AI Lab's Acme (NSDI'24, `trace_seren.csv` and `trace_kalos.csv` of the AcmeTrace release).

Both are comma-separated with a header line, one row per job, as published:

- Helios: job_id, user, vc, gpu_num, cpu_num, node_num, state, submit_time, start_time, end_time,
  duration, queue; times without a zone (`2020-06-09 18:41:01`), read in `workload.timezone`;
- Acme Seren: job_id, user, node_num, gpu_num, cpu_num, type, state, submit_time, start_time, end_time,
  duration, queue, gpu_time; times with their offset (`2023-03-01 00:18:22+08:00`);
- Acme Kalos: Seren's columns and mem_per_pod_GB, shared_mem_per_pod, fail_time, stop_time; offset +00:00.

A file must have exactly one of these column sets. Times with an offset are converted to UTC, so Seren and
Kalos runs share one clock; `duration`, `queue` and `gpu_time` are derived columns and not read (the run
time is end_time - start_time, as the releases define duration). States: COMPLETED, CANCELLED, FAILED,
TIMEOUT and NODE_FAIL end a job; PENDING, RUNNING and SUSPENDED (once in Helios' Uranus) did not.
`gpu_num = 0` rows are CPU jobs. User from `user`; group from Helios' virtual cluster `vc` (also its
partition) and from Acme's workload `type` (Pretrain, SFT, Eval, ...; Acme has no partition).

Which jobs are kept and the trace card: joblog.py.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import ConfigError
from .instants import StampColumn, repeated_hour_note, to_seconds, where
from .joblog import LogJobs, log_job_table
from .parsing import parse_numeric, parse_text, read_text_csv
from .schema import MAX_GPUS

FINISHED_STATES = ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL")
UNFINISHED_STATES = ("PENDING", "RUNNING", "SUSPENDED")
COLUMN_SETS = {
    "helios": {"Helios cluster_log.csv": ("job_id", "user", "vc", "gpu_num", "cpu_num", "node_num", "state",
                                          "submit_time", "start_time", "end_time", "duration", "queue")},
    "acme": {"Acme trace_seren.csv": ("job_id", "user", "node_num", "gpu_num", "cpu_num", "type", "state",
                                      "submit_time", "start_time", "end_time", "duration", "queue", "gpu_time"),
             "Acme trace_kalos.csv": ("job_id", "user", "node_num", "gpu_num", "cpu_num", "mem_per_pod_GB",
                                      "shared_mem_per_pod", "type", "state", "submit_time", "start_time", "end_time",
                                      "fail_time", "stop_time", "duration", "queue", "gpu_time")},
}
GROUP_COLUMN = {"helios": "vc", "acme": "type"}


def load_helios(path: str | Path, *, timezone: str = "UTC", states: list[str] | None = None) -> pd.DataFrame:
    """A Helios `cluster_log.csv` as a job table with its trace card (module doc)."""
    return _load("helios", path, timezone, states)


def load_acme(path: str | Path, *, timezone: str = "UTC", states: list[str] | None = None) -> pd.DataFrame:
    """An Acme `trace_seren.csv` or `trace_kalos.csv` as a job table with its trace card (module doc)."""
    return _load("acme", path, timezone, states)


def _load(log_format: str, path: str | Path, timezone: str, states: list[str] | None) -> pd.DataFrame:
    source = str(path)
    raw = read_text_csv(Path(path), source)
    _check_column_set(raw, log_format, source)
    if raw.empty:
        raise ConfigError(f"{source}: no job rows (the file has a header line only)")
    return log_job_table(_log_jobs(raw, log_format, source, timezone), states)


def _check_column_set(raw: pd.DataFrame, log_format: str, source: str) -> None:
    """The header is exactly one of the format's published column sets."""
    columns = [str(c) for c in raw.columns]
    sets = COLUMN_SETS[log_format]
    if any(sorted(columns) == sorted(expected) for expected in sets.values()):
        return
    known = sorted({c for expected in sets.values() for c in expected})
    unknown = [c for c in columns if c not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problem = f"unknown column {unknown[0]!r}{hint}"
    else:
        nearest = min(sets.values(), key=lambda expected: len(set(expected) ^ set(columns)))
        missing = [c for c in nearest if c not in columns]
        problem = f"missing column(s) {missing}" if missing else "a column appears more than once"
    described = "; ".join(f"{name}: {list(expected)}" for name, expected in sets.items())
    raise ConfigError(f"{source}: not a workload={log_format} file: {problem}; the published columns are {described}")


def _log_jobs(raw: pd.DataFrame, log_format: str, source: str, timezone: str) -> LogJobs:
    lines = np.arange(len(raw)) + 2
    job_ids = parse_text(raw, "job_id", source, 1)
    duplicated = pd.Series(job_ids).duplicated().to_numpy()
    if duplicated.any():
        i = int(np.flatnonzero(duplicated)[0])
        raise ConfigError(f"{where(source, i, int(lines[i]), 'job_id')}: duplicate job id {job_ids[i]!r}")
    state = parse_text(raw, "state", source, 1)
    unknown = np.flatnonzero(~np.isin(state, FINISHED_STATES + UNFINISHED_STATES))
    if len(unknown):
        i = int(unknown[0])
        raise ConfigError(f"{where(source, i, int(lines[i]), 'state')}: unknown job state {state[i]!r}; the "
                          f"published states are {list(FINISHED_STATES + UNFINISHED_STATES)}")
    gpus = parse_numeric(raw, "gpu_num", source, 1, integer=True, minimum=0, maximum=MAX_GPUS)
    parse_text(raw, "submit_time", source, 1)
    stamps = [StampColumn(name, raw[name].to_numpy(dtype=object), lines)
              for name in ("submit_time", "start_time", "end_time")]
    (submit, start, end), repeated = to_seconds(stamps, source, timezone)
    group = _text_or_none(raw[GROUP_COLUMN[log_format]])
    return LogJobs(source=source, format=log_format, job_id=job_ids, lines=lines, submit=submit, start=start, end=end,
                   gpus=gpus, state=state, finished_states=FINISHED_STATES,
                   columns={"submit": "submit_time", "start": "start_time", "end": "end_time"},
                   user=_text_or_none(raw["user"]), group=group, partition=group if log_format == "helios" else None,
                   read={"rows": len(raw)}, notes=[repeated_hour_note(source, timezone, repeated)] if repeated else [])


def _text_or_none(column: pd.Series) -> np.ndarray:
    return np.array([None if pd.isna(v) or not str(v).strip() else str(v).strip() for v in column], dtype=object)
