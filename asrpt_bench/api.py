"""The Python API for notebooks: compare schedulers on a job table held in memory.

    from asrpt_bench.api import compare
    frame = compare(table, ["asrpt", "wcs_duration", "fifo"], servers=2, gpus_per_server=4)

`table` follows the job-table schema (workloads/schema.py); it is checked like a CSV file, and the
run is `run_experiment` with `workload=memory` and `task=compare`, so every default, check and
metric is the CLI's. For confidence intervals over seeds, `asrpt_bench.report.plots.mean_ci` and
`geometric_ci` summarise a table of runs (one row per run and scheduler).
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import pandas as pd

from .config import PredictorConfig, RunConfig, SchedulerConfig, TaskConfig, WorkloadConfig
from .core import CLUSTER, Cluster
from .errors import ConfigError
from .experiment import run_experiment
from .io import RunResult
from .workloads.schema import check_given_table
from .workloads.sources import IN_MEMORY_TABLES


IN_MEMORY_SOURCE = "the in-memory table"
"""How messages name a table handed over in Python."""


def remember_table(table: pd.DataFrame) -> str:
    """Check `table` against the job-table schema and keep it for `workload=memory`; its id (the SHA-256
    of its CSV form, so equal tables share cache entries)."""
    if not isinstance(table, pd.DataFrame):
        raise ConfigError(f"table must be a pandas DataFrame of the job-table schema, got {type(table).__name__}")
    checked = check_given_table(table, IN_MEMORY_SOURCE)
    checked.attrs["source"] = IN_MEMORY_SOURCE
    table_id = hashlib.sha256(checked.to_csv(index=False).encode("utf-8")).hexdigest()
    IN_MEMORY_TABLES[table_id] = checked
    return table_id


def compare_run(table: pd.DataFrame, schedulers: Sequence[str], *, servers: int = 8, gpus_per_server: int = 8,
                predictor: str = "oracle", seed: int = 0, scheduler: str = "asrpt", scheduler_params: dict | None = None,
                train_fraction: float = 0.0, cluster: Cluster | None = None, workers: int | None = None,
                **workload: Any) -> RunResult:
    """The full RunResult of `task=compare` on the table (summary, per-job records, comparison); `cluster`
    (e.g. Cluster(pools=[...]), with the table's alpha_<type> columns) replaces servers x gpus_per_server;
    `workers` as the root key (processes simulating the schedulers side by side; None: one per CPU)."""
    if isinstance(schedulers, str) or not all(isinstance(name, str) for name in schedulers):
        raise ConfigError(f"schedulers must be a list of scheduler names, got {schedulers!r}")
    if cluster is not None and (servers, gpus_per_server) != (8, 8):
        raise ConfigError("give either cluster or servers and gpus_per_server, not both")
    cluster = Cluster(servers=servers, gpus_per_server=gpus_per_server) if cluster is None else cluster
    CLUSTER.require("cluster", cluster)
    config = RunConfig(seed=seed, progress=False, workers=workers, cluster=cluster,
                       workload=WorkloadConfig("memory", table_id=remember_table(table), train_fraction=train_fraction,
                                               **workload),
                       predictor=PredictorConfig(predictor),
                       scheduler=SchedulerConfig(scheduler, **(scheduler_params or {})),
                       task=TaskConfig("compare", schedulers=list(schedulers)))
    return run_experiment(config)


def compare(table: pd.DataFrame, schedulers: Sequence[str], **options: Any) -> pd.DataFrame:
    """One row per scheduler (total and mean JCT, makespan, lower bound, ... as in comparison.csv);
    `options` as `compare_run`."""
    result = compare_run(table, schedulers, **options)
    assert result.comparison is not None
    return result.comparison
