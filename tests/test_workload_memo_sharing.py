"""The run's job table and the process memo's assigned table (workloads.pipeline): under pandas' copy-on-write
the run's table is a shallow copy, sharing the memo's columns (a replay of millions of jobs holds them once),
and a write into it never reaches the memo, so the next run on the same table loads the same values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from asrpt_bench import cache
from asrpt_bench.composition import compose_run_config
from asrpt_bench.prepare import load_workload
from asrpt_bench.workloads.pipeline import copies_on_write

TABLE = pd.DataFrame({"job_id": ["a", "b", "c"], "release": [0.0, 5.0, 9.0], "gpus": [1, 2, 4],
                      "iterations": [100, 50, 20], "alpha": [1.0, 2.0, 3.0]})


@pytest.fixture
def run_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(cache, "_memory", {})  # this test's memo only
    path = tmp_path / "jobs.csv"
    TABLE.to_csv(path, index=False)
    return compose_run_config(["workload=csv", f"workload.path={path}", "workload.train_fraction=0",
                               "cluster.servers=1", "cluster.gpus_per_server=8", "predictor=oracle",
                               "cache.enabled=false", "progress=false"])


def memoised_table() -> pd.DataFrame:
    (table,) = [value for key, value in cache._memory.items() if key[0] == "table"]
    return table


@pytest.mark.skipif(not copies_on_write(), reason="pandas without copy-on-write: the run's table is a deep copy")
def test_the_run_table_shares_the_memoised_columns(run_config):
    workload = load_workload(run_config)
    memo = memoised_table()
    for column in ("alpha", "gpus", "iterations"):
        assert np.shares_memory(memo[column].to_numpy(), workload.later[column].to_numpy()), column


def test_a_write_into_the_run_table_never_reaches_the_memo(run_config):
    first = load_workload(run_config)
    first.later.loc[0, "alpha"] = 99.0
    first.table.loc[1, "alpha"] = 98.0
    assert memoised_table()["alpha"].tolist() == [1.0, 2.0, 3.0]
    again = load_workload(run_config)
    assert again.cache_status["table"] == "memory"
    assert again.table["alpha"].tolist() == [1.0, 2.0, 3.0] and again.later["alpha"].tolist() == [1.0, 2.0, 3.0]
    assert [job.plan.declared_alpha for job in again.jobs] == [1.0, 2.0, 3.0]
