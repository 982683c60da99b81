"""What a task is: a function of a Context (config, workload, provenance) returning a RunResult,
registered by name with its own parameters, so `task=<name> task.<key>=...` finds it and a key the
task does not read is refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..config import RunConfig
from ..io import RunResult
from ..params import NoParams, Params
from ..registry import Registry
from ..schedulers.asrpt import ASRPTParams
from ..workloads.pipeline import Workload

REFERENCE_SCHEDULER = "asrpt"
A_SRPT_SCHEDULERS = ("asrpt", "asrpt_oracle")


@dataclass
class Context:
    """What every task receives: the config, the workload (None for workload-free tasks) and provenance."""

    config: RunConfig
    workload: Workload | None
    provenance: dict[str, Any]


Task = Callable[[Context], RunResult]
TASKS: Registry[RunResult] = Registry("task")


def register_task(name: str, params: type[Params] = NoParams, *, needs_workload: bool = True,
                  own_cluster: str = "", cluster_keys_read: tuple[str, ...] = (),
                  replace: bool = False) -> Callable[[Task], Task]:
    """Decorator: `task=<name>` runs the function with the keys of `params` (read as config.task.<key>);
    `needs_workload=False`: the task builds its own instances, so the workload group is not loaded.
    `own_cluster`: the task keys that size the cluster the task builds itself (empty: it runs on the
    cluster group's); it then reads only `cluster_keys_read` of the cluster group, and another changed
    cluster key is refused (RunConfig.validate)."""

    def decorator(function: Task) -> Task:
        def run(params: Params, context: Context) -> RunResult:
            return function(context)

        run.__module__ = function.__module__
        TASKS.register(name, params, needs=("context",), replace=replace, needs_workload=needs_workload,
                       own_cluster=own_cluster, cluster_keys_read=tuple(cluster_keys_read))(run)
        return function

    return decorator


def run_task(context: Context) -> RunResult:
    """The task of the config's task group on this context."""
    task = context.config.task
    return TASKS.make(task.name, task.params, context=context)


def needs_workload(name: str) -> bool:
    return bool(TASKS.entry(name).meta["needs_workload"])


def placer_name(config: RunConfig, scheduler: str) -> str:
    """The placer `scheduler` uses: task.baseline_placement for a baseline of `compare` when set, else
    the placement group's (A-SRPT and its oracle variant, with any dispatch rule `asrpt+easy`, always use
    the placement group's)."""
    baseline = getattr(config.task.params, "baseline_placement", None)
    if baseline and scheduler.partition("+")[0] not in A_SRPT_SCHEDULERS:
        return baseline
    return config.placement.name


def scheduler_names(config: RunConfig) -> list[str]:
    """The schedulers a run simulates: the task's `schedulers` when it has them, else the scheduler group's."""
    return config.scheduler_names()


def reference_scheduler(config: RunConfig, names: list[str]) -> str:
    """The scheduler a comparison of `names` is relative to: the scheduler group's (RunConfig refuses one
    that is not listed, but for the default), else A-SRPT when listed, else the first listed."""
    if config.scheduler.name in names:
        return config.scheduler.name
    return REFERENCE_SCHEDULER if REFERENCE_SCHEDULER in names else names[0]


def asrpt_parameter(config: RunConfig, key: str) -> object:
    """An A-SRPT parameter of the run (tau, comm_heavy): the scheduler group's when its scheduler has it,
    else A-SRPT's default (the Theorem 1 bound of a baseline run is A-SRPT's at that value)."""
    return getattr(config.scheduler.params, key, getattr(ASRPTParams, key))


def comm_heavy_threshold(config: RunConfig) -> float:
    """The run's COMM_HEAVY threshold, which labels every scheduler's jobs alike."""
    return float(asrpt_parameter(config, "comm_heavy"))  # type: ignore[arg-type]
