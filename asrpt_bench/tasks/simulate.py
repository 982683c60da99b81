"""Task `simulate`: the scheduler group's scheduler on the workload."""

from __future__ import annotations

from ..build import build_scheduler
from ..io import RunResult
from ..prepare import fit_predictions, prediction_scalars, simulated_predictions
from .base import Context, register_task
from .scoring import run_scheduler


@register_task("simulate")
def simulate_one(context: Context) -> RunResult:
    """The scheduler group's scheduler on the workload."""
    config, workload = context.config, context.workload
    assert workload is not None
    # the predictions once (a trace workload's are keyed by a hash of its whole table), their figures before the
    # replay, so that this pass over the jobs does not add to the memory the replay's records and tables hold;
    # the job_id -> prediction dict is passed on without a name, so that scoring frees it once the replay is done
    predictions = simulated_predictions(config, workload)
    predicted = prediction_scalars(config, workload, predictions)
    scheduler = build_scheduler(config)
    run = run_scheduler(config, workload, fit_predictions(config, workload, predictions), scheduler, config.progress)
    summary = {**context.provenance, **predicted, **run.scalars}
    return RunResult(task="simulate", summary=summary, jobs=run.jobs, segments=run.segments,
                     tables={"users": run.users})
