"""Task `predictor` (Fig 4): errors of the predictor fit on the history, on the held-out part."""

from __future__ import annotations

from typing import Any

from ..io import RunResult
from ..prediction import FIG4_BUCKETS, RELATIVE_BUCKETS, accuracy_summary, accuracy_table, prediction_errors
from ..prepare import fitted_predictor
from .base import Context, register_task


def _bucket_key(prefix: str, lower: float, upper: float) -> str:
    return f"share_{prefix}_{lower:g}_{upper:g}"


@register_task("predictor")
def predictor_report(context: Context) -> RunResult:
    """Fig 4: errors of the predictor fit on the history, on the whole held-out part of the trace."""
    config, workload = context.config, context.workload
    assert workload is not None
    predictor = fitted_predictor(config, workload)
    held_out = workload.later
    errors = prediction_errors(held_out, predictor.predict(held_out), predictor.unseen_mask(held_out))
    absolute = accuracy_table(errors, FIG4_BUCKETS, "abs_error")
    relative = accuracy_table(errors, RELATIVE_BUCKETS, "rel_error")
    summary: dict[str, Any] = {**context.provenance, **accuracy_summary(errors),
                               "history_jobs": len(workload.history), "held_out_jobs": len(held_out)}
    for prefix, table in (("abs", absolute), ("rel", relative)):
        summary.update({_bucket_key(prefix, row.lower, row.upper): row.share for row in table.itertuples()})
    return RunResult(task="predictor", summary=summary,
                     tables={"accuracy_abs": absolute, "accuracy_rel": relative,
                             "prediction_errors": errors.assign(job_id=errors["job_id"].astype(str))})
