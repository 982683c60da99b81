"""Extending the toolkit in one file: a module named in `plugins` registers a scheduler, a placer and
a workload, and the CLI runs them by name (docs/extending.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.config import RunConfig
from asrpt_bench.core import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = '''
from dataclasses import dataclass

import pandas as pd

from asrpt_bench.core import Placement
from asrpt_bench.placement import register_placer
from asrpt_bench.prepare import register_workload
from asrpt_bench.schedulers import QueueScheduler, register_scheduler


@register_scheduler("lifo")
class LIFO(QueueScheduler):
    """Strict last-in first-out: the latest release is the head."""

    def __init__(self, duration_source="predicted"):
        super().__init__("lifo", lambda job, source: -job.release, strict=True, duration_source=duration_source)


@register_placer("last_fit")
@dataclass(frozen=True)
class LastFit:
    """Fill the highest-numbered server first."""

    name: str = "last_fit"

    def place(self, plan, free, cluster):
        servers = []
        for h in reversed(range(len(free))):
            servers.extend([h] * min(free[h], plan.gpus - len(servers)))
        return Placement(tuple(sorted(servers))) if len(servers) == plan.gpus else None


@register_workload("three_jobs")
def three_jobs(spec):
    return pd.DataFrame({"job_id": ["a", "b", "c"], "release": [0.0, 1.0, 2.0], "gpus": [4, 4, 4],
                         "iterations": [10, 10, 10], "alpha": [1.0, 1.0, 1.0]})
'''


def test_a_plugin_module_adds_a_scheduler_a_placer_and_a_workload(tmp_path: Path) -> None:
    (tmp_path / "my_extension.py").write_text(PLUGIN, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "asrpt_bench.cli", "plugins=[my_extension]", "workload.name=three_jobs",
         "workload.num_jobs=null", "workload.train_fraction=0", "predictor=oracle", "placement.name=last_fit",
         "task.schedulers=[fifo,lifo]", "cluster.servers=1", "cluster.gpus_per_server=4", "progress=false",
         f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    jobs = pd.read_parquet(tmp_path / "run" / "jobs.parquet")
    starts = {name: dict(zip(part["job_id"], part["start"])) for name, part in jobs.groupby("scheduler")}
    assert starts == {"fifo": {"a": 0.0, "b": 10.0, "c": 20.0}, "lifo": {"a": 0.0, "b": 20.0, "c": 10.0}}
    assert set(pd.read_csv(tmp_path / "run" / "comparison.csv")["placer"]) == {"last_fit"}


def test_a_plugin_that_cannot_be_imported_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^plugins: cannot import 'no_such_module': ModuleNotFoundError: No module "
                                          r"named 'no_such_module'$"):
        RunConfig(plugins=["no_such_module"]).validate()
