"""Gang SRTF: preemptive shortest remaining time first (`srtf` on predictions, `srtf_oracle` on true
iterations), a preemptive reference for A-SRPT.

At every decision instant the released unfinished jobs are ordered by remaining time = remaining
iterations x alpha~min (predicted iterations minus progress, floored at 0, or true iterations minus
progress), ties by release then input order, and admitted by the walk of AdmissionScheduler (with
`preempt_rule="net_gain"`, a running job gives way only where that gains: AdmissionScheduler._walk).
"""

from __future__ import annotations

import numpy as np

from .base import register_scheduler
from .views import JobView
from .preemptive import AdmissionScheduler, PreemptRuleParams


@register_scheduler("srtf", PreemptRuleParams)
class SRTF(AdmissionScheduler):
    """Preemptive SRTF by predicted remaining time; `preempt_rule` says when a running job gives way. The
    run's `preemption` group prices its suspensions (the simulator charges it)."""

    label = "srtf"
    oracle = False
    settles = True  # a running job's remaining time only shrinks; a waiting job's stays
    bounded = True  # a running job's priority never grows

    def __init__(self, preempt_rule: str = PreemptRuleParams.preempt_rule) -> None:
        super().__init__(self.label, preempt_rule)

    def priority(self, job: JobView, progress: float, run_seconds: float) -> float:
        remaining = self.known_iterations(job) - progress
        return remaining * job.alpha_min if remaining > 0 else 0.0

    def priorities(self, orders: np.ndarray, progress: np.ndarray, run_seconds: np.ndarray) -> np.ndarray:
        remaining = self.columns_["known"][orders] - progress
        return np.where(remaining > 0, remaining * self.columns_["alpha_min"][orders], 0.0)


@register_scheduler("srtf_oracle", PreemptRuleParams)
class SRTFOracle(SRTF):
    """SRTF by true remaining time (perfect predictions)."""

    label = "srtf_oracle"
    oracle = True
