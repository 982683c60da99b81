"""One flat, frozen record per simulated job, the columnar table a run keeps them in, and the records ->
DataFrame conversion."""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, Hashable, Iterator, Sequence, overload

import numpy as np
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


NUMBER_FIELDS = ("release", "eligible", "start", "end", "alpha", "alpha_min", "alpha_max", "predicted_iterations",
                 "comm_ratio", "restore_s", "service_s", "gpus", "servers_used", "iterations", "preemptions")
NUMBER_TYPES = (float,) * 11 + (int,) * 4
"""The numeric fields of a record and the type each has in a run built from a job table."""
FLOAT_FIELDS, INT_FIELDS = NUMBER_FIELDS[:11], NUMBER_FIELDS[11:]
OBJECT_FIELDS = ("job_id", "model", "config", "placement", "gpu_ids", "pool")
CHUNK_ROWS = 4096
"""Rows a RecordTable gathers before it moves their numbers into its array."""


class RecordTable(Sequence[JobRecord]):
    """The records of one run, as columns: each numeric field in one contiguous array of every record's value
    (float64 for the times and rates, int64 for the counts), its id, names and GPU lists in lists, each distinct
    GPU or server list held once (most jobs run on one server, on a few sets of GPUs): about 170 bytes a job
    where a JobRecord, its floats and tuples take 560. A row whose numbers are not of NUMBER_TYPES (an int
    release of a hand-made instance) is also kept as given, so what is read back, by record or by column, is
    exactly what was written. Indexing and iteration build JobRecords; `column` reads a field (or a derived
    column: first_start_delay_s, wait_s, jct) of every record at once, a numeric field as a read-only view of
    its array (no copy: the audit, the metrics and the per-job table of a replay of millions of jobs read the
    run's own columns), so it is read once every record is written."""

    def __init__(self, size: int) -> None:
        self._floats = np.zeros((len(FLOAT_FIELDS), size))
        self._ints = np.zeros((len(INT_FIELDS), size), dtype=np.int64)
        self._objects = tuple([None] * size for _ in OBJECT_FIELDS)
        self._written = bytearray(size)
        self._unusual: dict[int, tuple] = {}
        self._shared: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._rows: list[tuple] = []
        self._row_index: list[int] = []

    def put(self, i: int, job_id: Hashable, model: str, config: str, placement: tuple[int, ...],
            gpu_ids: tuple[int, ...], pool: str, numbers: tuple) -> None:
        """Record `i`: its object fields, then its numbers in NUMBER_FIELDS order. The numbers wait in a chunk of
        at most CHUNK_ROWS rows, moved into the arrays column by column (`_flush`): a row written alone into
        numpy arrays, its types checked one by one, cost about three times as much."""
        shared = self._shared
        job_ids, models, configs, placements, gpu_id_lists, pools = self._objects
        job_ids[i], models[i], configs[i], pools[i] = job_id, model, config, pool
        placements[i], gpu_id_lists[i] = shared.setdefault(placement, placement), shared.setdefault(gpu_ids, gpu_ids)
        self._rows.append(numbers)
        self._row_index.append(i)
        self._written[i] = 1
        if len(self._rows) == CHUNK_ROWS:
            self._flush()

    def _flush(self) -> None:
        """Move the waiting rows into the arrays, one column at a time; a row with a number not of NUMBER_TYPES
        is also kept as given (its place in an int64 array holds 0: it is read from the row kept)."""
        rows, index = self._rows, self._row_index
        if not rows:
            return
        where = np.array(index, dtype=np.intp)
        floats = len(FLOAT_FIELDS)
        for k, (column, kind) in enumerate(zip(zip(*rows), NUMBER_TYPES)):
            usual = set(map(type, column)) == {kind}
            if not usual:
                self._unusual.update((i, row) for i, row in zip(index, rows) if type(row[k]) is not kind)
            if k < floats:
                self._floats[k, where] = np.fromiter(column, dtype=float, count=len(rows))
            else:
                self._ints[k - floats, where] = np.fromiter(
                    column if usual else (value if type(value) is int else 0 for value in column),
                    dtype=np.int64, count=len(rows))
        self._rows, self._row_index = [], []

    def written(self, i: int) -> bool:
        return bool(self._written[i])

    def missing(self) -> list[int]:
        """Indices of the records never written."""
        return np.flatnonzero(np.frombuffer(self._written, dtype=np.uint8) == 0).tolist()

    def __len__(self) -> int:
        return len(self._written)

    @overload
    def __getitem__(self, index: int) -> JobRecord: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[JobRecord, ...]: ...

    def __getitem__(self, index: int | slice) -> JobRecord | tuple[JobRecord, ...]:
        if isinstance(index, slice):
            return tuple(self[k] for k in range(*index.indices(len(self))))
        k = range(len(self))[index]
        if self._rows:
            self._flush()
        self._require_numbers()
        numbers = self._unusual.get(k)
        if numbers is None:
            numbers = (*self._floats[:, k].tolist(), *self._ints[:, k].tolist())
        return new_record(**dict(zip(OBJECT_FIELDS, (column[k] for column in self._objects))),
                          **dict(zip(NUMBER_FIELDS, numbers)))

    def __iter__(self) -> Iterator[JobRecord]:
        return map(self.__getitem__, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (RecordTable, tuple, list)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def column(self, name: str) -> np.ndarray | list[Any]:
        """Field (or derived column) `name` of every record: an array of the numbers (float64, int64 for
        counts), or a list where the values are objects or some row holds numbers of unusual types."""
        if name in DERIVED_COLUMNS:
            end, start, release = (_array(self.column(field)) for field in ("end", "start", "release"))
            if name == "first_start_delay_s":
                return start - release
            return (end - release) - _array(self.column("service_s")) - _array(self.column("restore_s")) \
                if name == "wait_s" else end - release
        if name in OBJECT_FIELDS:
            return self._objects[OBJECT_FIELDS.index(name)]
        self._flush()
        self._require_numbers()
        k = NUMBER_FIELDS.index(name)
        values = self._floats[k] if k < len(FLOAT_FIELDS) else self._ints[k - len(FLOAT_FIELDS)]
        values = values.view()
        values.flags.writeable = False
        return _with_unusual(values, k, NUMBER_TYPES[k], self._unusual)

    def hand_over(self) -> None:
        """Give up the numbers' arrays: the views `column` gave out (records_frame(..., take=True)'s frame) are
        then their only holders, and may be written. The records' ids, names and GPU lists stay readable; their
        numbers, by record or by column, no longer."""
        self._flush()
        self._require_numbers()
        self._floats = self._ints = None

    def _require_numbers(self) -> None:
        if self._floats is None:
            raise RuntimeError("these records' numbers were handed over to a frame (records_frame(..., take=True))")


def _number_block(rows: list[tuple], index: Sequence[int], types: tuple[type, ...],
                  unusual: dict[int, tuple]) -> np.ndarray:
    """The rows' numbers as one float64 block, moved in column by column (a row written alone into a numpy
    array, its types checked one by one, costs about three times as much); a row holding a number not of
    `types` is also kept as given in `unusual`, under its index, so that it reads back exactly."""
    block = np.empty((len(rows), len(types)))
    for k, (column, kind) in enumerate(zip(zip(*rows), types)):
        if set(map(type, column)) != {kind}:
            unusual.update((i, row) for i, row in zip(index, rows) if type(row[k]) is not kind)
        block[:, k] = np.fromiter(column, dtype=float, count=len(rows))
    return block


def _with_unusual(values: np.ndarray, k: int, kind: type, unusual: dict[int, tuple]) -> np.ndarray | list[Any]:
    """Column k's values as they are, or as a list with the number given where a row kept in `unusual` holds one
    of another type than `kind` there (so a column reads back exactly what was written)."""
    odd = [(i, numbers[k]) for i, numbers in unusual.items() if type(numbers[k]) is not kind]
    if not odd:
        return values
    listed = values.tolist()
    for i, value in odd:
        listed[i] = value
    return listed


def _array(values: np.ndarray | list[Any]) -> np.ndarray:
    return values if isinstance(values, np.ndarray) else np.asarray(values)


def record_column(records: Sequence[JobRecord] | Sequence[Segment], name: str) -> np.ndarray | list[Any]:
    """Field (or derived column) `name` of every record (or segment): from the columns of a RecordTable (or
    SegmentTable), else read one by one (a list)."""
    if isinstance(records, (RecordTable, SegmentTable)):
        return records.column(name)
    return list(map(attrgetter(name), records))


def put_preempted(records: RecordTable, i: int, job: Any, view: Any, estimate: Any, placement: tuple[int, ...],
                  gpu_ids: tuple[int, ...], pool: str, first_start: float, end: float, alpha: float, restarted: float,
                  ran: float, preemptions: int) -> None:
    """Record finished job i of a preemptive run (its release is its eligibility; its last segment's placement,
    GPUs and alpha): the one way both preemptive loops write a record."""
    records.put(i, job.job_id, job.plan.model, job.plan.config, placement, gpu_ids, pool,
                (job.release, job.release, first_start, end, alpha, estimate.alpha_min, estimate.alpha_max,
                 view.predicted_iterations, view.comm_ratio, restarted, ran, job.plan.gpus, len(set(placement)),
                 job.iterations, preemptions))


def records_frame(records: Sequence[JobRecord], columns: Sequence[str] = RECORD_COLUMNS, *,
                  take: bool = False) -> pd.DataFrame:
    """One row per job with `columns` of RECORD_COLUMNS, in that order (default: every record field plus
    `first_start_delay_s`, `wait_s` and `jct`).

    `placement` and `gpu_ids` become space-separated strings so the frame stays flat
    (and writes to CSV or parquet unchanged), one string per distinct list. Built column by column (a
    RecordTable gives its columns; other records are read whole by one attrgetter each, which zip turns into
    columns). Asking for only the columns a table needs builds no others: a caller that keeps some of them
    never holds the whole frame beside its selection (a replay of millions of jobs). The frame keeps the
    column arrays it was given, one block each, rather than stacking a copy of them by type. With `take`, a
    RecordTable's numeric columns become the frame's without a copy and the table gives them up
    (RecordTable.hand_over: its numbers cannot be read afterwards), so the records and the frame never hold
    the numbers twice; otherwise they are copied, and the records stay whole.
    """
    unknown = [name for name in columns if name not in RECORD_COLUMNS]
    if unknown:
        raise ValueError(f"records_frame: unknown column(s) {unknown}; a record has {list(RECORD_COLUMNS)}")
    if not records:
        return pd.DataFrame([], columns=list(columns))
    if isinstance(records, RecordTable):
        data = {name: records.column(name) for name in columns}
        if take:
            records.hand_over()
        for name, values in data.items():
            if isinstance(values, np.ndarray) and not values.flags.writeable:  # a view of the records' numbers
                if take:
                    values.flags.writeable = True
                else:
                    data[name] = values.copy()
    else:
        every = dict(zip(RECORD_COLUMNS, map(list, zip(*map(_ROW, records)))))
        data = {name: every[name] for name in columns}
    for name in ("placement", "gpu_ids"):
        if name in data:
            data[name] = _joined(data[name])
    return pd.DataFrame(data, columns=list(columns), copy=False)  # the columns are new: no second copy of them


def _joined(values: Sequence[Sequence[int]]) -> list[str]:
    """Each list as its space-separated string, one string object per distinct list (most jobs share a few
    GPU and server lists: a million rows hold a few thousand strings, not a million). The simulator's lists
    are tuples; a hand-made record's list is looked up as a tuple."""
    strings: dict[tuple[int, ...], str] = {}
    joined = []
    for value in values:
        key = value if type(value) is tuple else tuple(value)
        text = strings.get(key)
        if text is None:
            text = strings[key] = " ".join(map(str, value))
        joined.append(text)
    return joined


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
SEGMENT_NUMBERS = ("start", "end", "restart_s", "alpha")
SEGMENT_TYPES = (float,) * len(SEGMENT_NUMBERS)


class SegmentTable(Sequence[Segment]):
    """The run segments of a preemptive run, in the order they ended, as columns: a segment's four numbers in
    one row of a float64 array, its job id and its server and GPU lists in lists, each distinct list held once
    (as RecordTable does; a number of another type is also kept as given). About 60 bytes a segment where a
    Segment, its floats and its references take about 190, and a million-job srtf replay has four to five
    million segments. Indexing and iteration build Segments; `column` reads a field (or `iterations`, `gpus`)
    of every segment at once."""

    def __init__(self) -> None:
        self._blocks: list[np.ndarray] = []
        self._rows: list[tuple[float, float, float, float]] = []
        self._job_ids: list[Hashable] = []
        self._lists: tuple[list[tuple[int, ...]], list[tuple[int, ...]]] = ([], [])  # placement, gpu_ids
        self._shared: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._unusual: dict[int, tuple] = {}

    def append(self, job_id: Hashable, start: float, end: float, restart_s: float, alpha: float,
               placement: tuple[int, ...], gpu_ids: tuple[int, ...]) -> None:
        shared = self._shared
        self._job_ids.append(job_id)
        self._lists[0].append(shared.setdefault(placement, placement))
        self._lists[1].append(shared.setdefault(gpu_ids, gpu_ids))
        self._rows.append((start, end, restart_s, alpha))
        if len(self._rows) == CHUNK_ROWS:
            self._flush()

    def extend(self, job_ids: Sequence[Hashable], numbers: np.ndarray, placements: Sequence[tuple[int, ...]],
               gpu_ids: Sequence[tuple[int, ...]]) -> None:
        """Append many segments in order: `numbers` holds their (start, end, restart_s, alpha) rows as float64
        (the compiled loop's output, sim/preemptive_compiled.py)."""
        self._flush()
        shared = self._shared
        self._job_ids.extend(job_ids)
        self._lists[0].extend([shared.setdefault(servers, servers) for servers in placements])
        self._lists[1].extend([shared.setdefault(ids, ids) for ids in gpu_ids])
        self._blocks.append(np.array(numbers, dtype=float).reshape(-1, len(SEGMENT_NUMBERS)))

    def _flush(self) -> None:
        rows = self._rows
        if rows:
            first = len(self._job_ids) - len(rows)
            self._blocks.append(_number_block(rows, range(first, first + len(rows)), SEGMENT_TYPES, self._unusual))
            self._rows = []

    def _numbers(self) -> np.ndarray:
        """Every segment's numbers, as one array (the blocks joined once, when first read)."""
        self._flush()
        if len(self._blocks) != 1:
            self._blocks = [np.concatenate(self._blocks) if self._blocks else np.empty((0, len(SEGMENT_NUMBERS)))]
        return self._blocks[0]

    def __len__(self) -> int:
        return len(self._job_ids)

    @overload
    def __getitem__(self, index: int) -> Segment: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Segment, ...]: ...

    def __getitem__(self, index: int | slice) -> Segment | tuple[Segment, ...]:
        if isinstance(index, slice):
            return tuple(self[k] for k in range(*index.indices(len(self))))
        k = range(len(self))[index]
        block = self._numbers()  # flushes the waiting rows first, so an unusual one is known before it is read
        numbers = self._unusual.get(k)
        if numbers is None:
            numbers = block[k].tolist()
        return new_segment(job_id=self._job_ids[k], start=numbers[0], end=numbers[1], restart_s=numbers[2],
                           alpha=numbers[3], placement=self._lists[0][k], gpu_ids=self._lists[1][k])

    def __iter__(self) -> Iterator[Segment]:
        return map(self.__getitem__, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (SegmentTable, tuple, list)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def column(self, name: str) -> np.ndarray | list[Any]:
        """Field `name` of every segment (or `iterations`, done in it, or `gpus`, the GPUs it held): an array
        of the numbers, or a list where the values are objects or some row holds a number of another type."""
        if name == "job_id":
            return self._job_ids
        if name in ("placement", "gpu_ids"):
            return self._lists[name == "gpu_ids"]
        if name == "gpus":
            return np.fromiter(map(len, self._lists[1]), dtype=np.int64, count=len(self))
        if name == "iterations":  # Segment.iterations, elementwise
            start, end, restart, alpha = (_array(self.column(field)) for field in SEGMENT_NUMBERS)
            running = end - start - restart
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(running > 0, running / alpha, 0.0)
        k = SEGMENT_NUMBERS.index(name)
        return _with_unusual(self._numbers()[:, k].copy(), k, float, self._unusual)


def segments_frame(segments: Sequence[Segment]) -> pd.DataFrame:
    """One row per segment; `placement` and `gpu_ids` as space-separated strings (as in records_frame), one
    string per distinct list."""
    if not isinstance(segments, SegmentTable):
        table = SegmentTable()
        for s in segments:
            table.append(s.job_id, s.start, s.end, s.restart_s, s.alpha, s.placement, s.gpu_ids)
        segments = table
    data = {name: segments.column(name) for name in SEGMENT_COLUMNS}
    for name in ("placement", "gpu_ids"):
        data[name] = _joined(data[name])  # type: ignore[arg-type]
    return pd.DataFrame(data, columns=list(SEGMENT_COLUMNS))
