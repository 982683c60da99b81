"""Task `simulate`: the scheduler group's scheduler on the workload."""

from __future__ import annotations

from ..build import build_scheduler
from ..io import RunResult
from ..prepare import fit_predictions
from .base import Context, register_task
from .scoring import run_scheduler


@register_task("simulate")
def simulate_one(context: Context) -> RunResult:
    """The scheduler group's scheduler on the workload."""
    config, workload = context.config, context.workload
    assert workload is not None
    predictions = fit_predictions(config, workload)
    scheduler = build_scheduler(config.scheduler.name, config.scheduler)
    run = run_scheduler(config, workload, predictions, scheduler, config.progress)
    return RunResult(task="simulate", summary={**context.provenance, **run.scalars}, jobs=run.jobs)
