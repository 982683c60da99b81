"""Strict-priority baselines (paper-notes 8): SPJF and SPWF.

Non-preemptive; by default the job with the smallest key is the head and blocks everything behind
it while it does not fit (dispatch "strict"; any dispatch rule of dispatch.py may replace it).
"""

from __future__ import annotations

from .base import QueueParams, QueueScheduler, duration_key, register_scheduler, workload_key


@register_scheduler("spjf", QueueParams)
class SPJF(QueueScheduler):
    """Shortest Predicted Job First: key n~ * alpha~min."""

    def __init__(self, dispatch: str = QueueParams.dispatch, duration_source: str = QueueParams.duration_source,
                 overrun: str = QueueParams.overrun, min_estimate_s: float = QueueParams.min_estimate_s) -> None:
        super().__init__("spjf", duration_key, dispatch=dispatch,
                         duration_source=duration_source, overrun=overrun, min_estimate_s=min_estimate_s)


@register_scheduler("spwf", QueueParams)
class SPWF(QueueScheduler):
    """Shortest Predicted Workload First: key g * n~ * alpha~min."""

    def __init__(self, dispatch: str = QueueParams.dispatch, duration_source: str = QueueParams.duration_source,
                 overrun: str = QueueParams.overrun, min_estimate_s: float = QueueParams.min_estimate_s) -> None:
        super().__init__("spwf", workload_key, dispatch=dispatch,
                         duration_source=duration_source, overrun=overrun, min_estimate_s=min_estimate_s)
