"""`scheduler=recorded`: the job log's own start times, replayed as a schedule (the "as it happened"
baseline). It decides nothing: the simulator replays every job at release + its recorded wait
(sim/replay.py), without checking the cluster's capacity, and counts the instants the replay exceeds it."""

from __future__ import annotations

from .base import register_scheduler


@register_scheduler("recorded")
class Recorded:
    """The log's own schedule; needs every simulated job's recorded wait (a job log, or a job table with a
    `recorded_wait` column)."""

    name = "recorded"
    replays_log = True
