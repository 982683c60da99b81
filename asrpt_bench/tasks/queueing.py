"""Task `queueing`: the simulator against the M/G/1 closed forms (docs/queueing-theory.md).

On one GPU with the `mg1` workload (Poisson arrivals of 1-GPU jobs, i.i.d. sizes), perfect predictions
and free preemption, fifo is FCFS, spjf is non-preemptive SJF, psjf_oracle is preemptive SJF and
srtf_oracle is SRPT. Each is simulated on the same arrivals; its mean response time over the measured
jobs (the middle of the stream: the first and last `trim_share` of the jobs by release are left out, so
neither the empty start nor the drained end biases it) is set beside the closed form at the
workload's load and size distribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..build import build_scheduler
from ..config import RunConfig
from ..core import ConfigError
from ..io import RunResult
from ..params import Params, param
from ..prepare import fit_predictions
from ..rules import Rule, number
from ..theory.queueing import mean_response_time
from ..workloads.sources import MG1Params
from .base import Context, register_task
from .scoring import VOLATILE, run_scheduler

CLOSED_FORMS = {"fifo": "fcfs", "spjf": "sjf", "psjf_oracle": "psjf", "srtf_oracle": "srpt"}
"""Scheduler -> the M/G/1 discipline it is on one GPU with perfect predictions and free preemption."""
PREEMPTIVE = ("psjf_oracle", "srtf_oracle")
STREAM_KEYS = ("single_gpu_share", "target_load", "inject_jobs")
"""Workload keys that would reshape the M/G/1 arrival stream (they must keep their defaults); a slice
(num_jobs, offset, job_cap) keeps a contiguous part of it, which is the same queue."""


def _closed_form_schedulers() -> Rule:
    known = list(CLOSED_FORMS)
    return Rule(f"a non-empty list of distinct names among {known}", lambda v: (
        isinstance(v, (list, tuple)) and len(v) >= 1 and len(set(v)) == len(v) and all(n in CLOSED_FORMS for n in v)))


@dataclass(frozen=True)
class QueueingParams(Params):
    """Which schedulers are set beside their closed forms, and which jobs are measured."""

    schedulers: list[str] = param(list(CLOSED_FORMS), _closed_form_schedulers(),
                                  "schedulers with an M/G/1 closed form (fifo, spjf, psjf_oracle, srtf_oracle)")
    trim_share: float = param(0.1, number(0, below=0.5), "share of the jobs left out at each end of the stream")


def check_queueing_config(config: RunConfig) -> None:
    """Refuse, in one line, a run whose schedules are not the M/G/1 disciplines of the closed forms."""
    if config.workload.name != "mg1":
        raise ConfigError(f"task=queueing needs workload=mg1 (the closed forms need its Poisson arrivals and size "
                          f"distribution), got workload={config.workload.name}")
    if (config.cluster.servers, config.cluster.gpus_per_server) != (1, 1):
        raise ConfigError("task=queueing simulates one GPU: set cluster.servers=1 cluster.gpus_per_server=1, got "
                          f"{config.cluster.servers} x {config.cluster.gpus_per_server}")
    if config.predictor.name != "oracle":
        raise ConfigError("task=queueing needs predictor=oracle (spjf must order jobs by their true sizes), got "
                          f"predictor={config.predictor.name}")
    if any(name in PREEMPTIVE for name in config.task.params.schedulers) and (
            config.preemption.restart_s != 0 or config.preemption.min_run_s != 0):
        raise ConfigError("task=queueing needs preemption.restart_s=0 and preemption.min_run_s=0 (the SRPT and PSJF "
                          f"closed forms preempt for free), got {config.preemption.restart_s} and "
                          f"{config.preemption.min_run_s}")
    params = config.workload.params
    defaults = MG1Params()
    for key in STREAM_KEYS:
        if getattr(params, key) != getattr(defaults, key):
            raise ConfigError(f"task=queueing simulates the whole M/G/1 stream: workload.{key} must keep its default "
                              f"{getattr(defaults, key)!r}, got {getattr(params, key)!r}")


def trimmed_mean_response(jct: np.ndarray, trim_share: float) -> tuple[float, int]:
    """(mean, count) of the response times of the jobs in release order after leaving out the first and
    last `trim_share` of them."""
    cut = int(len(jct) * trim_share)
    measured = jct[cut:len(jct) - cut]
    return float(measured.mean()) if len(measured) else float("nan"), len(measured)


@register_task("queueing", QueueingParams)
def queueing(context: Context) -> RunResult:
    """Each listed scheduler on the M/G/1 stream, its trimmed mean response time beside the closed form."""
    config, workload = context.config, context.workload
    assert workload is not None
    check_queueing_config(config)
    params: QueueingParams = config.task.params  # type: ignore[assignment]
    stream: MG1Params = config.workload.params  # type: ignore[assignment]
    distribution = stream.distribution()
    predictions = fit_predictions(config, workload)
    order = np.argsort([job.release for job in workload.jobs], kind="stable")
    rows, runs = [], {}
    for name in params.schedulers:
        run = runs[name] = run_scheduler(config, workload, predictions, build_scheduler(config, name), False)
        measured, count = trimmed_mean_response(run.jobs["jct"].to_numpy(dtype=float)[order], params.trim_share)
        formula = mean_response_time(CLOSED_FORMS[name], distribution, stream.load)
        scalars = {key: value for key, value in run.scalars.items() if key not in VOLATILE}
        rows.append({**scalars, "discipline": CLOSED_FORMS[name], "mean_response_s": measured,
                     "formula_mean_response_s": formula, "response_over_formula": measured / formula,
                     "measured_jobs": count, "load": stream.load, "size_distribution": distribution.name,
                     "size_scv": stream.size_scv, "mean_size_s": stream.mean_size_s})
    comparison = pd.DataFrame(rows)
    jobs = pd.concat([run.jobs.assign(scheduler=name) for name, run in runs.items()], ignore_index=True)
    summary = {**context.provenance, "per_scheduler": {name: run.scalars for name, run in runs.items()},
               "measured_jobs": rows[0]["measured_jobs"]}
    return RunResult(task="queueing", summary=summary, jobs=jobs, comparison=comparison)
