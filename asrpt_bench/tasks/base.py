"""What a task is: a function of a Context (config, workload, provenance) returning a RunResult,
registered by name so `task=<name>` finds it without an if-chain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..config import RunConfig
from ..io import RunResult
from ..prepare import Workload

REFERENCE_SCHEDULER = "asrpt"
A_SRPT_SCHEDULERS = ("asrpt", "asrpt_oracle")


@dataclass
class Context:
    """What every task receives: the config, the workload (None for workload-free tasks) and provenance."""

    config: RunConfig
    workload: Workload | None
    provenance: dict[str, Any]


Task = Callable[[Context], RunResult]
TASKS: dict[str, Task] = {}
# Tasks that build their own instances: run_experiment does not load the workload group for them.
WORKLOAD_FREE_TASKS: set[str] = set()


def register_task(name: str, needs_workload: bool = True) -> Callable[[Task], Task]:
    def decorator(function: Task) -> Task:
        TASKS[name] = function
        if not needs_workload:
            WORKLOAD_FREE_TASKS.add(name)
        return function

    return decorator


def placer_name(config: RunConfig, scheduler: str) -> str:
    """The placer `scheduler` uses: task.baseline_placement for a baseline of `compare` when set, else
    the placement group's (A-SRPT and its oracle variant, with any dispatch rule `asrpt+easy`, always use
    the placement group's)."""
    order = scheduler.partition("+")[0]
    if config.task.name == "compare" and config.task.baseline_placement and order not in A_SRPT_SCHEDULERS:
        return config.task.baseline_placement
    return config.placement.name


def scheduler_names(config: RunConfig) -> list[str]:
    """The schedulers a run simulates: task.schedulers for `compare`, else the scheduler group's."""
    return list(config.task.schedulers) if config.task.name == "compare" else [config.scheduler.name]
