"""FIFO: first-come first-served by release time; by default strict (the head blocks while it does not fit)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import OrderedQueue, QueueParams, register_scheduler, submission_key


@dataclass(frozen=True)
class FIFOParams(QueueParams):
    """QueueParams of an order by submission time: duration_source acts only on backfilling estimates."""

    ORDER_READS_DURATIONS = False


@register_scheduler("fifo", FIFOParams)
class FIFO(OrderedQueue):
    """Release order, strict by default (no backfilling); dispatch "easy" is classic EASY backfilling.

    `duration_source` orders nothing here; it sets the iterations the backfilling estimates use.
    """

    NAME, KEY, PARAMS = "fifo", staticmethod(submission_key), FIFOParams
