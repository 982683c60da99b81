"""Gang PSJF: preemptive shortest job first on the predicted (`psjf`) or true (`psjf_oracle`) total size,
the rank fixed at arrival; a preemptive reference for A-SRPT that stays robust to under-estimates.

Priority = total iterations x alpha~min (predicted, or true), never updated with progress, ties by
release then input order; the released unfinished jobs are admitted by the walk of
AdmissionScheduler. Scully, Grosof and Mitzenmacher ("Uniform bounds for scheduling with job size
estimates", ITCS 2022) show that SRPT on estimates can be arbitrarily worse than SRPT when jobs are
under-estimated (a job whose estimate has run out keeps priority 0 and blocks every other), while
PSJF on estimates stays within a bounded factor; with restart 0, single-GPU jobs on one GPU and true
sizes it is the M/G/1 PSJF of queueing theory (docs/queueing-theory.md).
"""

from __future__ import annotations

import numpy as np

from .base import register_scheduler
from .preemptive import AdmissionScheduler, PreemptRuleParams
from .views import JobView


@register_scheduler("psjf", PreemptRuleParams)
class PSJF(AdmissionScheduler):
    """Preemptive SJF by predicted total size; `preempt_rule` says when a running job gives way. The run's
    `preemption` group prices its suspensions (the simulator charges it)."""

    label = "psjf"
    oracle = False
    settles = True  # every job's rank is fixed at its arrival
    bounded = True  # a running job's priority never grows
    exact_bounds = True  # and the bound is the priority itself until then

    def __init__(self, preempt_rule: str = PreemptRuleParams.preempt_rule) -> None:
        super().__init__(self.label, preempt_rule)

    def priority(self, job: JobView, progress: float, run_seconds: float) -> float:
        return self.known_iterations(job) * job.alpha_min

    def priorities(self, orders: np.ndarray, progress: np.ndarray, run_seconds: np.ndarray) -> np.ndarray:
        return self.columns_["known"][orders] * self.columns_["alpha_min"][orders]


@register_scheduler("psjf_oracle", PreemptRuleParams)
class PSJFOracle(PSJF):
    """PSJF by true total size (perfect predictions)."""

    label = "psjf_oracle"
    oracle = True
