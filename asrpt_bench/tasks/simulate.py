"""Task `simulate`: the scheduler group's scheduler on the workload."""

from __future__ import annotations

from ..build import build_scheduler
from ..io import RunResult
from ..prepare import fit_predictions, prediction_scalars
from .base import Context, register_task
from .scoring import run_scheduler


@register_task("simulate")
def simulate_one(context: Context) -> RunResult:
    """The scheduler group's scheduler on the workload."""
    config, workload = context.config, context.workload
    assert workload is not None
    predictions = fit_predictions(config, workload)
    scheduler = build_scheduler(config)
    run = run_scheduler(config, workload, predictions, scheduler, config.progress)
    summary = {**context.provenance, **prediction_scalars(config, workload), **run.scalars}
    return RunResult(task="simulate", summary=summary, jobs=run.jobs, segments=run.segments,
                     tables={"users": run.users})
