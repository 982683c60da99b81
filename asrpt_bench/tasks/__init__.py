"""Tasks by name (config `task=<name>`); importing this package registers every built-in task."""

from . import compare, lemma2, placement, predictor, queueing, simulate, theory  # noqa: F401  (registration)
from .base import (A_SRPT_SCHEDULERS, REFERENCE_SCHEDULER, TASKS, Context, comm_heavy_threshold, needs_workload,
                   placer_name, register_task, run_task, scheduler_names)

__all__ = ["A_SRPT_SCHEDULERS", "REFERENCE_SCHEDULER", "TASKS", "Context", "comm_heavy_threshold", "needs_workload",
           "placer_name", "register_task", "run_task", "scheduler_names"]
