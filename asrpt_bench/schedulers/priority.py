"""Strict-priority baselines (paper-notes 8): SPJF and SPWF.

Non-preemptive; the job with the smallest key is the head and blocks everything behind it
while it does not fit (no backfilling).
"""

from __future__ import annotations

from .base import DurationParams, DurationSource, QueueScheduler, duration_key, register_scheduler, workload_key


@register_scheduler("spjf", DurationParams)
class SPJF(QueueScheduler):
    """Shortest Predicted Job First: key n~ * alpha~min."""

    def __init__(self, duration_source: DurationSource = DurationParams.duration_source) -> None:
        super().__init__("spjf", duration_key, strict=True, duration_source=duration_source)


@register_scheduler("spwf", DurationParams)
class SPWF(QueueScheduler):
    """Shortest Predicted Workload First: key g * n~ * alpha~min."""

    def __init__(self, duration_source: DurationSource = DurationParams.duration_source) -> None:
        super().__init__("spwf", workload_key, strict=True, duration_source=duration_source)
