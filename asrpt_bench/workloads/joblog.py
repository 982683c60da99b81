"""A cluster's job log (Slurm, SWF, Helios, Acme) as a job table: what every log format is read into,
which jobs are kept, and the trace card that says so.

Each format's parser (slurm.py, swf.py, helios.py) turns its file into `LogJobs`: one entry per job with
submit, start and end time on one clock, GPUs, final state, user, group (account), partition and the
requested time limit. `log_job_table` then

- refuses a start before its submission or an end before its start, naming the file, row and column;
- leaves out, and counts by the first reason that applies: jobs that had not finished when the log was
  written (`not_finished`: PENDING, RUNNING, ...), jobs without an observed run time (`never_started`: no
  start or no end, e.g. cancelled while queued), jobs without GPUs (`no_gpu`: CPU jobs) and jobs whose
  state is not among `states` (`state_not_selected`; by default every finished state is kept, with its
  observed duration);
- gives every kept job release = submit - the first kept submission, duration = end - start (the run
  time the log observed; SWF gives it as a field), recorded_wait = start - submit (unknown where the log
  has no start) (what `scheduler=recorded` replays) and
  time_limit (what `predictor=walltime` reads), sorted by release (ties keep file order);
- attaches the trace card (`attrs["trace_card"]`, tracecard.py) and the log's notes (`attrs["notes"]`:
  what was read in a way the user should hear about, replayed as warnings by every run that uses it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ..core import ConfigError
from .instants import where
from .schema import validate_job_table
from .slicing import sort_by_release
from .tracecard import trace_card

DROP_REASONS = ("not_finished", "never_started", "no_gpu", "state_not_selected")


@dataclass
class LogJobs:
    """The jobs of one log, before any is left out. Times are seconds since 1970-01-01 UTC (NaN where
    the log does not know them); `lines` are the file lines of each job's row, `columns` the log's own
    names of the submit, start and end fields (for messages)."""

    source: str
    format: str
    job_id: np.ndarray
    lines: np.ndarray
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray
    gpus: np.ndarray
    state: np.ndarray
    finished_states: tuple[str, ...]
    columns: dict[str, str]
    user: np.ndarray | None = None
    group: np.ndarray | None = None
    partition: np.ndarray | None = None
    time_limit: np.ndarray | None = None
    run_time: np.ndarray | None = None
    """The observed run time where the log gives it apart from start and end (SWF); else end - start."""
    epoch_known: bool = True
    """False when the times count from an unknown origin (an SWF log without UnixStartTime)."""
    read: dict[str, int] = field(default_factory=dict)
    """What the parser counted while reading (rows, folded job steps, ...), shown on the trace card."""
    notes: list[dict[str, object]] = field(default_factory=list)


def check_states(states: Sequence[str] | None, finished: Sequence[str], key: str = "workload.states") -> None:
    """`states` is null or a non-empty list of distinct finished states of the format."""
    if states is None:
        return
    if not isinstance(states, (list, tuple)) or not states or len(set(states)) != len(states):
        raise ConfigError(f"{key} must be null (every finished state) or a non-empty list of distinct states, "
                          f"got {states!r}")
    unknown = [s for s in states if s not in finished]
    if unknown:
        raise ConfigError(f"{key}: {unknown[0]!r} is not a finished state of this log format; its finished states "
                          f"are {list(finished)}")


def log_job_table(log: LogJobs, states: Sequence[str] | None) -> pd.DataFrame:
    """The kept jobs of `log` as a validated job table with its trace card (module doc)."""
    check_states(states, log.finished_states)
    _refuse_reversed(log)
    reason = _drop_reasons(log, log.finished_states if states is None else tuple(states))
    kept = reason == ""
    dropped = {name: int((reason == name).sum()) for name in DROP_REASONS}
    if not kept.any():
        raise ConfigError(f"{log.source}: no job of the log can be simulated ({len(reason)} jobs: "
                          + ", ".join(f"{name} {count}" for name, count in dropped.items()) + ")")
    submit, start = log.submit[kept], log.start[kept]
    table = pd.DataFrame({
        "job_id": log.job_id[kept].astype(str),
        "release": submit - submit.min(),
        "gpus": log.gpus[kept].astype(np.int64),
        "duration": _run_time(log)[kept],
        "recorded_wait": start - submit,
        "time_limit": _optional(log.time_limit, kept, float),
        "user": _optional(log.user, kept, object),
        "group": _optional(log.group, kept, object),
        "partition": _optional(log.partition, kept, object),
        "state": log.state[kept],
    })
    table = validate_job_table(sort_by_release(table), log.source)
    card = trace_card(log.format, log.source, table, submit_min=float(submit.min()) if log.epoch_known else None,
                      read=log.read, jobs=len(reason), dropped=dropped)
    table.attrs.update({"source": log.source, "recurrence_keys": "trace", "trace_card": card,
                        "notes": list(log.notes)})
    return table


def _run_time(log: LogJobs) -> np.ndarray:
    return log.run_time if log.run_time is not None else log.end - log.start


def _optional(values: np.ndarray | None, kept: np.ndarray, kind: type) -> np.ndarray:
    if values is None:
        return np.full(int(kept.sum()), np.nan if kind is float else None, dtype=kind)
    return values[kept]


def _refuse_reversed(log: LogJobs) -> None:
    """A start before its submission, or an end before its start, is refused where it is."""
    for later, earlier in (("start", "submit"), ("end", "start")):
        first, then = getattr(log, earlier), getattr(log, later)
        with np.errstate(invalid="ignore"):
            reversed_ = np.flatnonzero(then < first)
        if len(reversed_):
            i = int(reversed_[0])
            seconds = first[i] - then[i]
            raise ConfigError(f"{where(log.source, i, int(log.lines[i]), log.columns[later])}: before "
                              f"{log.columns[earlier]!r} of the same job (by {seconds:g} s); times are reversed")


def _drop_reasons(log: LogJobs, selected: tuple[str, ...]) -> np.ndarray:
    """Per job, the first reason it is left out ('' if kept)."""
    reason = np.full(len(log.job_id), "", dtype=object)
    finished = np.isin(log.state, log.finished_states)
    checks = (("not_finished", ~finished),
              ("never_started", np.isnan(_run_time(log))),
              ("no_gpu", ~(log.gpus >= 1)),
              ("state_not_selected", ~np.isin(log.state, selected)))
    for name, applies in checks:
        reason[(reason == "") & applies] = name
    return reason
