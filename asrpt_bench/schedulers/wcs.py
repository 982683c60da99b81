"""Work-conserving baselines (paper-notes 8; Zheng et al. [46]): WCS-Duration, WCS-Workload, WCS-SubTime.

By default (dispatch "greedy") the queue is scanned in key order at every decision instant and
every job that fits starts, so GPUs never idle while a queued job fits. With dispatch "greedy",
SPJF is WCS-Duration, SPWF is WCS-Workload and FIFO is WCS-SubTime, schedule for schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..params import param
from ..rules import one_of
from .base import OrderedQueue, QueueParams, duration_key, register_scheduler, submission_key, workload_key
from .dispatch import DISPATCH_RULES


@dataclass(frozen=True)
class WorkConservingParams(QueueParams):
    """QueueParams with the work-conserving dispatch as the default."""

    dispatch: str = param("greedy", one_of(*DISPATCH_RULES),
                          "which queued jobs may start: greedy (every job that fits), strict, easy, conservative")


@register_scheduler("wcs_duration", WorkConservingParams)
class WCSDuration(OrderedQueue):
    """Work-conserving, ordered by predicted duration n~ * alpha~min."""

    NAME, KEY, PARAMS = "wcs_duration", staticmethod(duration_key), WorkConservingParams


@register_scheduler("wcs_workload", WorkConservingParams)
class WCSWorkload(OrderedQueue):
    """Work-conserving, ordered by predicted GPU-time g * n~ * alpha~min."""

    NAME, KEY, PARAMS = "wcs_workload", staticmethod(workload_key), WorkConservingParams


@dataclass(frozen=True)
class SubmissionWorkConservingParams(WorkConservingParams):
    """WorkConservingParams of an order by submission time: duration_source acts only on backfilling."""

    ORDER_READS_DURATIONS = False


@register_scheduler("wcs_subtime", SubmissionWorkConservingParams)
class WCSSubTime(OrderedQueue):
    """Work-conserving, ordered by submission time (FIFO with backfilling).

    `duration_source` orders nothing here; it sets the iterations the backfilling estimates use.
    """

    NAME, KEY, PARAMS = "wcs_subtime", staticmethod(submission_key), SubmissionWorkConservingParams
