"""FIFO: first-come first-served by release time; by default strict (the head blocks while it does not fit)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import QueueParams, QueueScheduler, register_scheduler, submission_key


@dataclass(frozen=True)
class FIFOParams(QueueParams):
    """QueueParams of an order by submission time: duration_source acts only on backfilling estimates."""

    ORDER_READS_DURATIONS = False


@register_scheduler("fifo", FIFOParams)
class FIFO(QueueScheduler):
    """Release order, strict by default (no backfilling); dispatch "easy" is classic EASY backfilling.

    `duration_source` orders nothing here; it sets the iterations the backfilling estimates use.
    """

    def __init__(self, dispatch: str = FIFOParams.dispatch, duration_source: str = FIFOParams.duration_source,
                 overrun: str = FIFOParams.overrun, min_estimate_s: float = FIFOParams.min_estimate_s) -> None:
        super().__init__("fifo", submission_key, dispatch=dispatch,
                         duration_source=duration_source, overrun=overrun, min_estimate_s=min_estimate_s,
                         params_type=FIFOParams)
