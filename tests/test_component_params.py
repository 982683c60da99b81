"""Each component owns its parameters: a key the chosen component does not read is refused in one line
(never recorded and ignored), and a job's comm-heavy label does not depend on the scheduler that ran it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.config import (PredictorConfig, RunConfig, SchedulerConfig, TaskConfig,
                                WorkloadConfig)
from asrpt_bench.core import Cluster, ConfigError
from asrpt_bench.experiment import run_experiment

ROOT = Path(__file__).resolve().parents[1]

IGNORED_BEFORE = [
    (["workload=csv", "workload.path=jobs.csv", "task=simulate", "predictor=oracle", "predictor.epsilon=0.2"],
     "predictor.epsilon: predictor 'oracle' has no parameter 'epsilon'; its parameters: none"),
    (["scheduler=fifo", "scheduler.tau=0.5", "task=simulate"],
     "scheduler.tau: scheduler 'fifo' has no parameter 'tau'; its parameters: ['dispatch', 'duration_source', 'overrun', 'min_estimate_s']"),
    (["scheduler=fifo", "scheduler.comm_heavy=3", "task=simulate"],
     "scheduler.comm_heavy: scheduler 'fifo' has no parameter 'comm_heavy'; its parameters: ['dispatch', 'duration_source', 'overrun', 'min_estimate_s']"),
    (["predictor=forest", "predictor.epsilon=0.5"],
     "predictor.epsilon: predictor 'forest' has no parameter 'epsilon'; its parameters: ['features', "
     "'n_estimators', 'unseen', 'log_target', 'n_jobs']"),
    (["task=simulate", "task.schedulers=[asrpt,fifo]"],
     "task.schedulers: task 'simulate' has no parameter 'schedulers'; its parameters: none"),
    (["scheduler=spjf", "scheduler.duration_source=oracle", "task.schedulers=[asrpt,fifo]"],
     "scheduler.duration_source configures scheduler 'spjf', which this task does not run (task.schedulers: "
     "['asrpt', 'fifo']); it acts on the listed schedulers that share its parameters"),
]


@pytest.mark.parametrize(("overrides", "message"), IGNORED_BEFORE, ids=[o[-1] for o, _ in IGNORED_BEFORE])
def test_a_key_the_component_does_not_read_is_refused(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        compose_run_config(overrides)
    assert str(refused.value) == message


def test_a_sweep_over_an_ignored_key_is_refused_before_any_point_runs(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", "-m", "debug=tiny", "predictor=oracle",
                           "task=simulate", "predictor.epsilon=0,0.2,0.5"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr) == (2, "asrpt-bench: error: predictor.epsilon: predictor 'oracle' has no "
                                                 "parameter 'epsilon'; its parameters: none\n")
    assert list(tmp_path.iterdir()) == []


def test_the_scheduler_group_configures_the_schedulers_that_share_its_parameters() -> None:
    config = compose_run_config(["scheduler.tau=2", "task.schedulers=[asrpt,asrpt_oracle,spjf]"])
    assert [config.takes_scheduler_group(name) for name in config.scheduler_names()] == [True, True, False]


def test_every_scheduler_labels_a_job_comm_heavy_alike() -> None:
    config = RunConfig(cluster=Cluster(servers=4, gpus_per_server=4),
                       workload=WorkloadConfig("philly", num_jobs=200, single_gpu_share=0.2, resample_replace=True,
                                               job_cap=60),
                       predictor=PredictorConfig("oracle"), scheduler=SchedulerConfig(comm_heavy=3.0),
                       task=TaskConfig("compare"), progress=False)
    jobs = run_experiment(config).jobs
    assert jobs["scheduler"].nunique() == 8
    assert (jobs.groupby("job_id")["comm_heavy"].nunique() == 1).all()
    assert (jobs["comm_heavy"] == (jobs["comm_ratio"] >= 3.0)).all()
    assert ((jobs["comm_ratio"] >= 1.5) & (jobs["comm_ratio"] < 3.0)).any()  # labelled by 3, not by 1.5


def option_keys_table() -> str:
    """The `keys per option` table of docs/experiments.md, from the registries."""
    from asrpt_bench.config import COMPONENT_GROUPS, component_registry
    from asrpt_bench.workloads.sources import TraceParams

    rows = ["| group | option | its keys |", "|---|---|---|"]
    for kind in COMPONENT_GROUPS:
        registry = component_registry(kind)
        for name in registry.names():
            params = registry.params_type(name)
            if issubclass(params, TraceParams):
                own = [key for key in params.names() if key not in TraceParams.names()]
                keys = ", ".join(["the trace keys", *(f"`{key}`" for key in own)])
            else:
                keys = ", ".join(f"`{key}`" for key in params.names()) or "none"
            rows.append(f"| `{kind}` | `{name}` | {keys} |")
    return "\n".join(rows)


def test_the_docs_list_every_options_keys() -> None:
    doc = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    assert option_keys_table() in doc, "regenerate the table in docs/experiments.md from option_keys_table()"
