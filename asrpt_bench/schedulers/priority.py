"""Strict-priority baselines (paper-notes 8): SPJF and SPWF.

Non-preemptive; by default the job with the smallest key is the head and blocks everything behind
it while it does not fit (dispatch "strict"; any dispatch rule of dispatch.py may replace it).
"""

from __future__ import annotations

from .base import OrderedQueue, QueueParams, duration_key, register_scheduler, workload_key


@register_scheduler("spjf", QueueParams)
class SPJF(OrderedQueue):
    """Shortest Predicted Job First: key n~ * alpha~min."""

    NAME, KEY = "spjf", staticmethod(duration_key)


@register_scheduler("spwf", QueueParams)
class SPWF(OrderedQueue):
    """Shortest Predicted Workload First: key g * n~ * alpha~min."""

    NAME, KEY = "spwf", staticmethod(workload_key)
