"""FIFO: strict first-come first-served by release time; the head blocks while it does not fit."""

from __future__ import annotations

from .base import QueueScheduler, register_scheduler, submission_key


@register_scheduler("fifo")
class FIFO(QueueScheduler):
    """Strict release order, no backfilling; it reads no durations, so it has no duration_source."""

    def __init__(self) -> None:
        super().__init__("fifo", submission_key, strict=True)
