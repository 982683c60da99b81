"""Gang SRTF: preemptive shortest remaining time first (`srtf` on predictions, `srtf_oracle` on true
iterations), a preemptive reference for A-SRPT.

At every decision instant the released unfinished jobs are ordered by remaining time = remaining
iterations x alpha~min (predicted iterations minus progress, floored at 0, or true iterations minus
progress), ties by release then input order, and admitted by the walk of AdmissionScheduler.
"""

from __future__ import annotations

import numpy as np

from .base import register_scheduler
from .views import JobView
from .preemptive import AdmissionScheduler


@register_scheduler("srtf")
class SRTF(AdmissionScheduler):
    """Preemptive SRTF by predicted remaining time. It has no parameters of its own; the run's
    `preemption` group prices its suspensions (the simulator charges it)."""

    label = "srtf"
    oracle = False
    settles = True  # a running job's remaining time only shrinks; a waiting job's stays

    def __init__(self) -> None:
        super().__init__(self.label)

    def column_defaults(self) -> dict[str, float]:
        return {"known": 0.0, "alpha_min": 0.0}

    def job_columns(self, job: JobView) -> dict[str, float]:
        return {"known": self._known(job), "alpha_min": job.alpha_min}

    def _known(self, job: JobView) -> float:
        return job.iterations if self.oracle else job.predicted_iterations  # type: ignore[return-value]

    def priority(self, job: JobView, progress: float, run_seconds: float) -> float:
        remaining = self._known(job) - progress
        return remaining * job.alpha_min if remaining > 0 else 0.0

    def priorities(self, orders: np.ndarray, progress: np.ndarray, run_seconds: np.ndarray) -> np.ndarray:
        remaining = self.columns_["known"][orders] - progress
        return np.where(remaining > 0, remaining * self.columns_["alpha_min"][orders], 0.0)


@register_scheduler("srtf_oracle")
class SRTFOracle(SRTF):
    """SRTF by true remaining time (perfect predictions)."""

    label = "srtf_oracle"
    oracle = True
