"""Tasks by name (config `task=<name>`). A built-in task's module is imported when its name is first looked up
(its registry's `declare` below), not by importing this package."""

from __future__ import annotations

from ..exports import lazy_exports
from .base import (A_SRPT_SCHEDULERS, REFERENCE_SCHEDULER, TASKS, Context, comm_heavy_threshold, needs_workload,
                   placer_name, register_task, run_task, scheduler_names)

TASKS.declare({  # the built-ins: each module is imported when one of its names is first looked up
    "compare": "asrpt_bench.tasks.compare",
    "lemma2": "asrpt_bench.tasks.lemma2",
    "placement": "asrpt_bench.tasks.placement",
    "predictor": "asrpt_bench.tasks.predictor",
    "queueing": "asrpt_bench.tasks.queueing",
    "simulate": "asrpt_bench.tasks.simulate",
    "theory": "asrpt_bench.tasks.theory",
    "adversarial": "asrpt_bench.tasks.theory",
})

__getattr__, __dir__ = lazy_exports(__name__, {}, submodules=(
    "compare", "lemma2", "placement", "predictor", "queueing", "simulate", "theory"))

__all__ = ["A_SRPT_SCHEDULERS", "REFERENCE_SCHEDULER", "TASKS", "Context", "comm_heavy_threshold", "needs_workload",
           "placer_name", "register_task", "run_task", "scheduler_names"]
