"""FIFO: first-come first-served by release time; by default strict (the head blocks while it does not fit)."""

from __future__ import annotations

from .base import QueueParams, QueueScheduler, register_scheduler, submission_key


@register_scheduler("fifo")
class FIFO(QueueScheduler):
    """Release order, strict by default (no backfilling); dispatch "easy" is classic EASY backfilling.

    `duration_source` orders nothing here; it sets the iterations the backfilling estimates use.
    """

    def __init__(self, dispatch: str | None = QueueParams.dispatch, duration_source: str = QueueParams.duration_source,
                 overrun: str = QueueParams.overrun, min_estimate_s: float = QueueParams.min_estimate_s) -> None:
        super().__init__("fifo", submission_key, strict=True, dispatch=dispatch,
                         duration_source=duration_source, overrun=overrun, min_estimate_s=min_estimate_s)
