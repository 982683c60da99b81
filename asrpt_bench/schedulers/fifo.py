"""FIFO: strict first-come first-served by release time; the head blocks while it does not fit."""

from __future__ import annotations

from .base import DurationSource, QueueScheduler, register_scheduler, submission_key


@register_scheduler("fifo")
class FIFO(QueueScheduler):
    """Strict release order, no backfilling.

    `duration_source` is accepted for a uniform interface; the order does not use durations.
    """

    def __init__(self, duration_source: DurationSource = "predicted") -> None:
        super().__init__("fifo", submission_key, strict=True, duration_source=duration_source)
