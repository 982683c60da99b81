"""Task `lemma2`: A-SRPT on the workload with every step of the paper's Lemma 2 argument checked per job.

Like `simulate`, plus `theory.lemma2.lemma2_report` on the schedule (G = the workload's cluster, tau =
the scheduler's): the summary holds each inequality's violated jobs and largest violation, and the job
where Eq. 12 fails worst (its claim, the makespan of the jobs before it, its own completion); the per-job
check is the run's `lemma2_check` table. Made for hand-made instances such as `workload=lemma2_reviewer`,
whose table REPRODUCTION.md reads instead of simulating.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..build import build_scheduler
from ..core import ConfigError
from ..io import RunResult
from ..prepare import fit_predictions, prediction_scalars, simulated_predictions
from ..theory.lemma2 import lemma2_report
from .base import A_SRPT_SCHEDULERS, Context, register_task
from .scoring import run_scheduler


def worst_eq12(per_job: pd.DataFrame) -> dict[str, Any]:
    """The job whose Eq. 12 claim is exceeded the most (first in virtual order on ties)."""
    worst = per_job.loc[per_job["eq12_violation"].idxmax()]
    return {"eq12_worst_job": str(worst["job_id"]), "eq12_worst_claim": float(worst["eq12_claim"]),
            "eq12_worst_predecessors_makespan": float(worst["predecessors_makespan"]),
            "eq12_worst_end": float(worst["end"])}


@register_task("lemma2")
def check_lemma2_steps(context: Context) -> RunResult:
    """The scheduler group's A-SRPT scheduler on the workload, with the Lemma 2 check of its schedule."""
    config, workload = context.config, context.workload
    assert workload is not None
    if config.scheduler.name not in A_SRPT_SCHEDULERS:
        raise ConfigError(f"task=lemma2 checks A-SRPT's schedule: scheduler must be one of {list(A_SRPT_SCHEDULERS)}, "
                          f"got {config.scheduler.name!r}")
    predicted = simulated_predictions(config, workload)  # once: a trace workload's are keyed by a hash of its table
    predictions = fit_predictions(config, workload, predicted)
    scheduler = build_scheduler(config)
    run = run_scheduler(config, workload, predictions, scheduler, config.progress)
    report = lemma2_report(run.jobs, G=workload.cluster.total_gpus, tau=float(scheduler.tau))
    checked = {key: value for key, value in report.summary.items() if key != "num_jobs"}
    summary = {**context.provenance, **prediction_scalars(config, workload, predicted), **run.scalars, **checked,
               **worst_eq12(report.per_job)}
    per_job = report.per_job.assign(job_id=report.per_job["job_id"].astype(str))
    return RunResult(task="lemma2", summary=summary, jobs=run.jobs, tables={"lemma2_check": per_job})
