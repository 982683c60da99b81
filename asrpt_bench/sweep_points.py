"""What a sweep point says about itself, shared by the app (cli_app.py) and the sweeper and Ray launcher in
hydra_plugins/: its place in the sweep ("point 3 of 12") and its outcome.

The sweeper (`hydra/sweeper=asrpt`, the default) counts the points before launching any and passes the
count to every point in the environment variable POINTS_ENV, whatever the launcher; a point's task
function returns its outcome (COMPLETE, or SKIPPED when an earlier run already completed it), which
every launcher hands back to the sweeper in the point's JobReturn, so the sweeper can count them.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Iterable, Mapping

POINTS_ENV = "ASRPT_SWEEP_POINTS"
COMPLETE = "complete"
SKIPPED = "skipped (complete)"
FAILED = "failed"
OUTCOMES = (COMPLETE, SKIPPED, FAILED)


def point_label(index: int, environment: Mapping[str, str] = os.environ) -> str:
    """'point 3 of 12' for the sweep's point of 0-based `index` ('point 3' when the count is unknown)."""
    points = environment.get(POINTS_ENV, "")
    return f"point {index + 1} of {points}" if points.isdigit() else f"point {index + 1}"


def tally(outcomes: Iterable[str], points: int) -> str:
    """'sweep: 4 of 4 points done: 1 complete, 3 skipped (complete), 0 failed'."""
    counts = Counter(outcomes)
    done = sum(counts.values())
    return (f"sweep: {done} of {points} points done: "
            + ", ".join(f"{counts.get(outcome, 0)} {outcome}" for outcome in OUTCOMES))
