"""Work-conserving baselines (paper-notes 8; Zheng et al. [46]): WCS-Duration, WCS-Workload, WCS-SubTime.

At every decision instant the queue is scanned in key order and every job that fits starts,
so GPUs never idle while a queued job fits.
"""

from __future__ import annotations

from .base import (DurationParams, DurationSource, QueueScheduler, duration_key, register_scheduler,
                   submission_key, workload_key)


@register_scheduler("wcs_duration", DurationParams)
class WCSDuration(QueueScheduler):
    """Work-conserving, ordered by predicted duration n~ * alpha~min."""

    def __init__(self, duration_source: DurationSource = DurationParams.duration_source) -> None:
        super().__init__("wcs_duration", duration_key, strict=False, duration_source=duration_source)


@register_scheduler("wcs_workload", DurationParams)
class WCSWorkload(QueueScheduler):
    """Work-conserving, ordered by predicted GPU-time g * n~ * alpha~min."""

    def __init__(self, duration_source: DurationSource = DurationParams.duration_source) -> None:
        super().__init__("wcs_workload", workload_key, strict=False, duration_source=duration_source)


@register_scheduler("wcs_subtime")
class WCSSubTime(QueueScheduler):
    """Work-conserving, ordered by submission time (FIFO with backfilling); it reads no durations, so it
    has no duration_source."""

    def __init__(self) -> None:
        super().__init__("wcs_subtime", submission_key, strict=False)
