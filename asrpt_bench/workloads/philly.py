"""Loader for the Microsoft Philly job trace (packaged, or any file with the same columns).

The packaged file is the Pollux copy of the trace (asrpt_bench/data/traces/README.md): one row per
job with submit `timestamp`, `duration` (s), `num_gpus` and the virtual cluster `cluster`.
Jobs are sorted by submit time (ties keep file order) and releases shifted to 0. Philly has no
user or job group: by default synthetic recurrence keys are generated per virtual cluster (see
recurrence.py) on the whole trace before any slicing, so a slice keeps the keys it has in the full
trace and "new in the test period" refers to the predictor's own chronological cut.
"""

from __future__ import annotations

from contextlib import ExitStack
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import ConfigError
from .load import require_exact_releases
from .parsing import check_columns, parse_numeric, parse_text, parse_timestamps, read_text_csv, require_columns
from .recurrence import RecurrenceSpec, recurrence_keys
from .schema import MAX_GPUS, MAX_SECONDS, validate_job_table
from .slicing import slice_jobs, sort_by_release

PACKAGED_PHILLY = ("data", "traces", "philly.csv.gz")
PHILLY_COLUMNS = ["timestamp", "duration", "num_gpus", "cluster"]
PHILLY_KNOWN_COLUMNS = ["timestamp", "duration", "num_gpus", "gpu_time", "cluster"]
"""The published trace's columns; `gpu_time` (duration x num_gpus) is not used. Any other is refused."""
PHILLY_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def load_philly(path: str | Path | None = None, *, num_jobs: int | None = None, offset: int = 0,
                start: float | None = None, end: float | None = None, time_compression: float = 1.0,
                recurrence: RecurrenceSpec | str = "synthetic", seed: int = 0,
                train_fraction: float = 0.8) -> pd.DataFrame:
    """The Philly trace as a validated job table (durations, no models yet: see assign_models).

    path: None reads the packaged trace; otherwise a .csv or .csv.gz with the same columns.
    start, end: a window of submit times, seconds after the trace's first submission (trace time).
    num_jobs, offset: then take `num_jobs` consecutive jobs (submit order) from position `offset`.
    time_compression: releases are divided by this factor (> 1 packs arrivals closer); durations stay.
    recurrence: the key model (RecurrenceSpec; a string is shorthand for RecurrenceSpec(source=it)):
    "synthetic" generates `syn-` groups and users per virtual cluster from `seed`; "virtual_cluster"
    uses the VC as the group and leaves `user` empty. train_fraction: the history cut of the whole
    trace that "new group" refers to (the predictor's chronological split must use the same).
    The virtual cluster is kept in column `vc`; `attrs["recurrence_keys"]` says which keys are used.
    """
    spec = RecurrenceSpec(source=recurrence) if isinstance(recurrence, str) else recurrence
    spec.validate()
    if spec.source == "trace":
        raise ConfigError("workload.recurrence.source=trace: the Philly trace has no job groups; "
                          "use synthetic or virtual_cluster")
    if not time_compression > 0:
        raise ConfigError(f"workload.time_compression must be > 0, got {time_compression!r}")
    with ExitStack() as stack:
        if path is None:
            resource = resources.files("asrpt_bench").joinpath(*PACKAGED_PHILLY)
            file_path = stack.enter_context(resources.as_file(resource))
            source = "packaged Philly trace (asrpt_bench/data/traces/philly.csv.gz)"
        else:
            file_path, source = Path(path), str(path)
        raw = read_text_csv(file_path, source)
    table = recurrence_keys(_philly_table(raw, source), seed, spec, train_fraction=train_fraction, by="vc")
    table = slice_jobs(table, num_jobs=num_jobs, offset=offset, start=start, end=end, shift=True)
    table["release"] = table["release"] / time_compression
    require_exact_releases(float(table["release"].max()), "workload.time_compression", time_compression)
    validated = validate_job_table(table, source)
    validated.attrs.update(table.attrs)
    validated.attrs["source"] = source
    return validated


def _philly_table(raw: pd.DataFrame, source: str) -> pd.DataFrame:
    """Schema columns from the raw text columns, sorted by submit time, releases from the first job."""
    require_columns(raw, PHILLY_COLUMNS, source)
    check_columns(raw, PHILLY_KNOWN_COLUMNS, source, "the Philly format's")
    submit = parse_timestamps(raw, "timestamp", source, 1, PHILLY_TIME_FORMAT)
    duration = parse_numeric(raw, "duration", source, 1, minimum=0.0, maximum=MAX_SECONDS)
    gpus = parse_numeric(raw, "num_gpus", source, 1, integer=True, minimum=1, maximum=MAX_GPUS)
    cluster = parse_text(raw, "cluster", source, 1)
    table = pd.DataFrame({
        "job_id": [f"philly-{row:05d}" for row in range(len(raw))],
        "release": submit - (submit.min() if len(submit) else 0.0),
        "gpus": gpus.astype(np.int64),
        "duration": duration,
        "vc": cluster,
    })
    if table.empty:
        raise ConfigError(f"{source}: the trace has no jobs")
    return sort_by_release(table)
