"""jobs.parquet and segments.parquet written a row group at a time (io.atomic_write_parquet): the file a run
leaves reads back as the one frame.to_parquet wrote, for a strict and a preemptive scheduler, and a failed
write leaves no file behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from asrpt_bench import io
from asrpt_bench.cache import CacheSettings
from asrpt_bench.config import PredictorConfig, RunConfig, SchedulerConfig, TaskConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.experiment import run_experiment

JOBS = 3000
GROUP = 700
"""Rows per group in the chunked runs: several groups, the last one short."""
VOLATILE = ("sim_wall_time_s", "wall_time_s", "cache")
"""Summary keys that differ between two runs in one process (times; the second run finds the jobs cached)."""


def _frame() -> pd.DataFrame:
    """Every kind of column a run's table has: ids and strings, floats, counts, flags, an owner column that
    is empty in the first rows only (its type comes from the whole frame, never from the first group)."""
    rows = 2500
    return pd.DataFrame({"job_id": [f"j{k}" for k in range(rows)], "end": np.arange(rows) * 0.5,
                         "gpus": np.arange(rows) % 8 + 1, "comm_heavy": np.arange(rows) % 3 == 0,
                         "user": [None] * 1000 + [f"u{k % 7}" for k in range(rows - 1000)]})


def test_the_default_group_size_gives_the_bytes_of_to_parquet(tmp_path: Path) -> None:
    frame = _frame()
    described = frame[frame["gpus"] > 2].copy()  # an index with gaps, which neither writer keeps
    described.attrs["source"] = "a trace"
    for table in (frame, frame.iloc[:0], described):
        digest = io.atomic_write_frame(tmp_path / "jobs.parquet", table)
        written = (tmp_path / "jobs.parquet").read_bytes()
        assert written == table.to_parquet(index=False)
        assert digest == io.hashlib.sha256(written).hexdigest()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["jobs.parquet"]


@pytest.mark.parametrize("group_rows", [1, 999, 2500, 10_000])
def test_any_group_size_reads_back_as_the_frame(tmp_path: Path, group_rows: int) -> None:
    frame = _frame()
    io.atomic_write_parquet(tmp_path / "t.parquet", frame, group_rows)
    groups = pq.ParquetFile(tmp_path / "t.parquet").metadata.num_row_groups
    assert groups == -(-len(frame) // group_rows)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "t.parquet"), frame)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "t.parquet"),
                                  pd.read_parquet(pd.io.common.BytesIO(frame.to_parquet(index=False))))


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "100"])
def test_a_group_size_that_is_not_a_positive_count_is_refused(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(ValueError, match=f"group_rows must be a positive whole number of rows, got {bad!r}"):
        io.atomic_write_parquet(tmp_path / "t.parquet", _frame(), bad)
    assert not list(tmp_path.iterdir())


def test_a_write_that_fails_in_a_later_group_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "t.parquet").write_bytes(b"the earlier file")
    written = []
    original = pq.ParquetWriter.write_table

    def full_after_two(self: pq.ParquetWriter, table: Any, *args: Any, **kwargs: Any) -> None:
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(table.num_rows)
        original(self, table, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full_after_two)
    with pytest.raises(OSError, match=f"No space left on device"):
        io.atomic_write_parquet(tmp_path / "t.parquet", _frame(), 1000)
    assert written == [1000, 1000]
    assert [path.name for path in tmp_path.iterdir()] == ["t.parquet"]
    assert (tmp_path / "t.parquet").read_bytes() == b"the earlier file"


def _run(run_dir: Path, scheduler: str) -> None:
    config = RunConfig(workload=WorkloadConfig("synthetic", synthetic_jobs=JOBS, train_fraction=0.0),
                       cluster=Cluster(servers=4), cache=CacheSettings(enabled=False),
                       predictor=PredictorConfig(name="oracle"), scheduler=SchedulerConfig(name=scheduler),
                       task=TaskConfig(name="simulate"), progress=False)
    io.mark_started(run_dir, {}, [])
    io.write_outputs(run_dir, run_experiment(config))


@pytest.mark.parametrize("scheduler", ["asrpt", "srtf"])
def test_a_run_written_in_small_groups_leaves_the_tables_of_one_group(tmp_path: Path, scheduler: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _run(tmp_path / "whole", scheduler)
    monkeypatch.setattr(io, "ROW_GROUP_ROWS", GROUP)
    _run(tmp_path / "chunked", scheduler)
    names = [io.JOBS, io.SEGMENTS] if scheduler == "srtf" else [io.JOBS]
    for name in names:
        whole, chunked = (pq.ParquetFile(tmp_path / run / name) for run in ("whole", "chunked"))
        assert whole.metadata.num_row_groups == 1
        assert chunked.metadata.num_row_groups == -(-whole.metadata.num_rows // GROUP) > 1
        assert chunked.schema_arrow == whole.schema_arrow
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "chunked" / name),
                                      pd.read_parquet(tmp_path / "whole" / name), check_exact=True)
    jobs = pd.read_parquet(tmp_path / "chunked" / io.JOBS)
    assert len(jobs) == JOBS
    assert io.read_summary(tmp_path / "chunked")["num_jobs"] == JOBS
    summaries = [{key: value for key, value in io.read_summary(tmp_path / run).items()
                  if key not in VOLATILE} for run in ("whole", "chunked")]
    assert summaries[0] == summaries[1]
    assert io.is_complete(tmp_path / "chunked") and not io.verify_manifest(tmp_path / "chunked")
