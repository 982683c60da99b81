"""One flat, frozen record per simulated job, and the records -> DataFrame conversion."""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Hashable, Sequence

import pandas as pd

from ..core import frozen_builder


@dataclass(frozen=True, slots=True)
class JobRecord:
    """What happened to one job.

    eligible: when the job became dispatchable (its virtual completion under A-SRPT, its release
    otherwise). alpha_min is the empty-cluster estimate the
    schedulers used; comm_ratio = alpha_max / alpha_min, which scoring compares with the run's
    COMM_HEAVY threshold (`comm_heavy_labels`), so a job's label never depends on the scheduler that ran
    it. placement is the server of every job-graph vertex and gpu_ids the concrete GPUs (same order),
    so the audit can check occupancy.

    Preemptive runs (sim/preemptive.py): start is the first segment's start, end the completion,
    alpha, placement, gpu_ids and servers_used are those of the last segment, `preemptions` counts
    suspensions and `restore_s` the seconds spent restoring checkpoints; both stay 0 without preemption.

    The time from release to completion splits alike for every scheduler: jct = wait_s + service_s +
    restore_s, where `service_s` is the seconds the job held GPUs making progress (end - start without
    preemption) and `wait_s` every second it held none: before its first start and while suspended.
    `first_start_delay_s` = start - release is the wait up to the first start only.
    """

    job_id: Hashable
    release: float
    eligible: float
    start: float
    end: float
    gpus: int
    model: str
    config: str
    servers_used: int
    alpha: float
    alpha_min: float
    alpha_max: float
    iterations: int
    predicted_iterations: float
    comm_ratio: float
    placement: tuple[int, ...]
    gpu_ids: tuple[int, ...]
    preemptions: int
    restore_s: float
    service_s: float
    pool: str = ""
    """The name of the pool the job ran in (its last segment's, in a preemptive run): its GPU type, unless
    the cluster names its pools."""

    @property
    def jct(self) -> float:
        return self.end - self.release

    @property
    def first_start_delay_s(self) -> float:
        return self.start - self.release

    @property
    def wait_s(self) -> float:
        return self.jct - self.service_s - self.restore_s


new_record = frozen_builder(JobRecord)
FIELD_NAMES = tuple(f.name for f in fields(JobRecord))
DERIVED_COLUMNS = ("first_start_delay_s", "wait_s", "jct")
RECORD_COLUMNS = FIELD_NAMES + DERIVED_COLUMNS


def records_frame(records: Sequence[JobRecord]) -> pd.DataFrame:
    """One row per job with every record field plus `first_start_delay_s`, `wait_s` and `jct`.

    `placement` and `gpu_ids` become space-separated strings so the frame stays flat
    (and writes to CSV or parquet unchanged). Built column by column: a full trace has 10^5 records, whose
    rows one attrgetter reads whole and zip turns into columns (not one getattr per record and column).
    """
    if not records:
        return pd.DataFrame([], columns=list(RECORD_COLUMNS))
    columns = dict(zip(RECORD_COLUMNS, map(list, zip(*map(_ROW, records)))))
    for name in ("placement", "gpu_ids"):
        columns[name] = [" ".join(map(str, value)) for value in columns[name]]
    return pd.DataFrame(columns, columns=list(RECORD_COLUMNS))


_ROW = attrgetter(*RECORD_COLUMNS)
"""One record's values in RECORD_COLUMNS order (fields, then the derived properties)."""


def comm_heavy_labels(frame: pd.DataFrame, threshold: float) -> pd.Series:
    """Per row, whether the job is communication-heavy at `threshold` (alpha_max / alpha_min >= it)."""
    return frame["comm_ratio"] >= threshold


@dataclass(frozen=True, slots=True)
class Segment:
    """One uninterrupted stretch of a job on fixed GPUs (preemptive runs): it holds `gpu_ids` over
    [start, end), spends the first `restart_s` seconds restoring its checkpoint without progress, then
    runs at `alpha` seconds per iteration."""

    job_id: Hashable
    start: float
    end: float
    restart_s: float
    alpha: float
    placement: tuple[int, ...]
    gpu_ids: tuple[int, ...]

    @property
    def iterations(self) -> float:
        """Iterations done in the segment (fluid: fractions count)."""
        running = self.end - self.start - self.restart_s
        return running / self.alpha if running > 0 else 0.0


new_segment = frozen_builder(Segment)
SEGMENT_COLUMNS = ("job_id", "start", "end", "restart_s", "iterations", "alpha", "gpus", "placement", "gpu_ids")


def segments_frame(segments: Sequence[Segment]) -> pd.DataFrame:
    """One row per segment; `placement` and `gpu_ids` as space-separated strings (as in records_frame)."""
    rows = [(s.job_id, s.start, s.end, s.restart_s, s.iterations, s.alpha, len(s.gpu_ids),
             " ".join(map(str, s.placement)), " ".join(map(str, s.gpu_ids))) for s in segments]
    return pd.DataFrame(rows, columns=list(SEGMENT_COLUMNS))
