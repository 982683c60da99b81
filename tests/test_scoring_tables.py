"""The per-job table of a scored run, built with less memory (tasks/scoring.py, sim/records.py): only the columns
jobs.parquet keeps, the owners read straight from the job table when its rows are the jobs' rows, the kept jobs
matched in one walk, the records and predictions let go before the tables are built. Each gives the frame and
the bytes the earlier construction gave: the whole records frame, its selection, a merge of the owner table."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.build import build_placer, build_scheduler
from asrpt_bench.composition import compose_run_config
from asrpt_bench.config import RunConfig
from asrpt_bench.prepare import fit_predictions, load_workload, simulated_predictions
from asrpt_bench.sim import simulate
from asrpt_bench.sim.records import RECORD_COLUMNS, comm_heavy_labels, records_frame
from asrpt_bench.tasks.base import comm_heavy_threshold
from asrpt_bench.tasks.scoring import (JOB_COLUMNS, VOLATILE, SharedScoring, kept_jobs, owner_table,
                                       owners_in_row_order, run_scheduler, safe_alpha_min, with_owners)
from asrpt_bench.workloads.pipeline import Workload

SMALL = ["debug=tiny", "workload=synthetic", "workload.synthetic_jobs=400", "workload.job_cap=150",
         "cluster.servers=1", "cluster.gpus_per_server=4", "cache.enabled=false"]
"""A workload with jobs larger than the cluster (dropped) and enough contention for srtf to suspend jobs."""


@pytest.fixture(scope="module")
def small() -> tuple[RunConfig, Workload]:
    config = compose_run_config(SMALL)
    return config, load_workload(config)


def _earlier_jobs_table(config: RunConfig, workload: Workload, name: str) -> tuple[pd.DataFrame, Any]:
    """The per-job table as scoring built it before: the whole records frame, its JOB_COLUMNS, the owners
    merged through the owner table."""
    result = simulate(workload.jobs, workload.cluster, build_scheduler(config, name), build_placer(config),
                      predictions=fit_predictions(config, workload), timing=workload.timing,
                      drop_oversize=workload.drop_oversize, progress=False, preemption=config.preemption)
    frame = result.frame()
    frame["comm_heavy"] = comm_heavy_labels(frame, comm_heavy_threshold(config))
    jobs = frame[[c for c in JOB_COLUMNS if c in frame.columns]]
    jobs["job_id"] = jobs["job_id"].astype(str)
    return with_owners(jobs, owner_table(workload.table)), result


@pytest.mark.parametrize("name", ["asrpt", "srtf"])
def test_the_jobs_table_is_the_one_built_from_the_whole_frame(small: tuple[RunConfig, Workload], name: str) -> None:
    """Strict A-SRPT and srtf with dropped jobs (and srtf's suspensions): the same frame, dtypes and parquet bytes
    as the whole-frame construction, and the same scalars whether or not the scores share their parts."""
    config, workload = small
    earlier, result = _earlier_jobs_table(config, workload, name)
    assert result.dropped and len(result.records) < len(workload.jobs)
    if name == "srtf":
        assert result.segments and earlier["preemptions"].max() > 0
    alone = run_scheduler(config, workload, fit_predictions(config, workload), build_scheduler(config, name), False)
    pd.testing.assert_frame_equal(alone.jobs, earlier, check_exact=True)
    assert alone.jobs.columns.tolist() == [*JOB_COLUMNS, "user", "group"]
    assert alone.jobs.to_parquet(index=False) == earlier.to_parquet(index=False)
    shared = run_scheduler(config, workload, fit_predictions(config, workload), build_scheduler(config, name), False,
                           SharedScoring())
    pd.testing.assert_frame_equal(shared.jobs, alone.jobs, check_exact=True)
    pd.testing.assert_frame_equal(shared.users, alone.users, check_exact=True)
    for key in set(alone.scalars) - set(VOLATILE):
        assert alone.scalars[key] == shared.scalars[key] or (alone.scalars[key] != alone.scalars[key]
                                                             and shared.scalars[key] != shared.scalars[key]), key


def test_a_run_whose_rows_are_the_tables_takes_the_owners_as_they_are() -> None:
    config = compose_run_config([*SMALL, "cluster.servers=16"])
    workload = load_workload(config)
    earlier, result = _earlier_jobs_table(config, workload, "asrpt")
    assert not result.dropped and len(workload.table) == len(earlier)
    jobs = run_scheduler(config, workload, fit_predictions(config, workload), build_scheduler(config), False).jobs
    pd.testing.assert_frame_equal(jobs, earlier, check_exact=True)
    assert jobs.to_parquet(index=False) == earlier.to_parquet(index=False)
    assert owners_in_row_order(workload.table, jobs.drop(columns=["user", "group"])) is not None


@pytest.mark.parametrize("table", [
    pd.DataFrame({"job_id": ["a", "b", "c"], "user": ["u1", None, "u3"], "group": ["g", "h", None]}),
    pd.DataFrame({"job_id": [1, 2, 3], "user": pd.Categorical(["x", "y", "x"])}),
    pd.DataFrame({"job_id": ["a", "b", "c"], "partition": pd.Series([None, "p", 3], dtype=object)}),
], ids=["strings", "int-ids-categorical", "object-column"])
def test_owners_in_row_order_is_the_left_merge(table: pd.DataFrame) -> None:
    jobs = pd.DataFrame({"job_id": table["job_id"].astype(str), "end": [1.0, 2.0, 3.0]})
    aligned = owners_in_row_order(table, jobs)
    assert aligned is not None
    pd.testing.assert_frame_equal(aligned, with_owners(jobs, owner_table(table)), check_exact=True)


@pytest.mark.parametrize("table_ids, job_ids", [(["a", "b", "c"], ["a", "c", "b"]), (["a", "b", "c"], ["a", "b"]),
                                                 (["a", "b", "b"], ["a", "b", "b"])],
                         ids=["another-order", "another-length", "a-repeated-id"])
def test_owners_in_row_order_declines_rows_that_are_not_the_tables(table_ids: list[str], job_ids: list[str]) -> None:
    table = pd.DataFrame({"job_id": table_ids, "user": ["u1", "u2", "u3"]})
    jobs = pd.DataFrame({"job_id": pd.Series(job_ids, dtype="str"), "end": np.arange(len(job_ids), dtype=float)})
    assert owners_in_row_order(table, jobs) is None


def test_owners_in_row_order_declines_a_table_without_owners() -> None:
    table = pd.DataFrame({"job_id": ["a", "b"], "user": [None, None]})
    assert owners_in_row_order(table, pd.DataFrame({"job_id": pd.Series(["a", "b"], dtype="str")})) is None


def test_kept_jobs_walks_in_order_and_falls_back_to_ids_in_another(small: tuple[RunConfig, Workload]) -> None:
    jobs = small[1].jobs[:6]
    ids = [job.job_id for job in jobs]
    assert kept_jobs(jobs, [ids[0], ids[2], ids[5]]) == [jobs[0], jobs[2], jobs[5]]
    assert kept_jobs(jobs, [ids[4], ids[1], ids[3]]) == [jobs[4], jobs[1], jobs[3]]
    assert kept_jobs(jobs, []) == []
    with pytest.raises(KeyError, match="no-such-job"):
        kept_jobs(jobs, [ids[0], "no-such-job"])


def test_alpha_min_without_a_cache_is_the_cached_values(small: tuple[RunConfig, Workload]) -> None:
    config, workload = small
    jobs = [job for job in workload.jobs if job.gpus <= workload.cluster.total_gpus]
    cached = safe_alpha_min(config, jobs, workload.cluster, {})
    alone = safe_alpha_min(config, jobs, workload.cluster)
    assert alone.dtype == cached.dtype and alone.tobytes() == cached.tobytes()


def test_records_frame_builds_only_the_columns_asked(small: tuple[RunConfig, Workload]) -> None:
    config, workload = small
    result = simulate(workload.jobs, workload.cluster, build_scheduler(config, "srtf"), build_placer(config),
                      timing=workload.timing, drop_oversize=True, progress=False, preemption=config.preemption)
    columns = ["wait_s", "placement", "job_id", "jct", "gpu_ids", "iterations"]
    whole = records_frame(result.records)
    assert whole.columns.tolist() == list(RECORD_COLUMNS)
    for records in (result.records, list(result.records)):
        pd.testing.assert_frame_equal(records_frame(records, columns), whole[columns], check_exact=True)
    assert whole["gpu_ids"].tolist() == [" ".join(map(str, record.gpu_ids)) for record in result.records]
    assert records_frame((), columns).columns.tolist() == columns
    by_hand = [dataclasses.replace(record, placement=list(record.placement), gpu_ids=list(record.gpu_ids))
               for record in result.records]  # a hand-made record may hold lists: the same strings
    pd.testing.assert_frame_equal(records_frame(by_hand, columns), whole[columns], check_exact=True)
    with pytest.raises(ValueError, match=r"records_frame: unknown column\(s\) \['user'\]"):
        records_frame(result.records, ["jct", "user"])


def test_predictions_by_job_key_the_jobs_own_ids_when_the_rows_are_the_jobs(small: tuple[RunConfig, Workload]) -> None:
    config, workload = small
    predictions = simulated_predictions(config, workload)
    by_job = predictions.by_job(workload)
    assert by_job == dict(zip(workload.table["job_id"].tolist(), predictions.predicted.tolist()))
    assert all(key is job.job_id for key, job in zip(by_job, workload.jobs))
    shuffled = dataclasses.replace(workload, jobs=workload.jobs[::-1])  # rows no longer the jobs: the table's ids
    again = predictions.by_job(shuffled)
    assert again == by_job and not any(key is job.job_id for key, job in zip(again, workload.jobs))


def test_records_frame_keeps_its_new_columns_without_stacking_a_copy(small: tuple[RunConfig, Workload]) -> None:
    config, workload = small
    result = simulate(workload.jobs, workload.cluster, build_scheduler(config, "asrpt"), build_placer(config),
                      timing=workload.timing, drop_oversize=True, progress=False)
    frame = records_frame(result.records, ["end", "start", "gpus"])
    assert frame._mgr.nblocks == 3  # one block per column: float64 columns not stacked into one copy
    assert frame["end"].tolist() == [record.end for record in result.records]
