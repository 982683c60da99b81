"""Task `compare`: every scheduler of task.schedulers on the same jobs and predictions, and, on a job log
with start times, the log's own schedule (`recorded`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Hashable, Optional

import pandas as pd
from tqdm.autonotebook import tqdm

from ..build import build_placer, build_scheduler
from ..config import RunConfig
from ..forked import ordered_map, usable_cpus
from ..io import RunResult
from ..params import Params, param
from ..rules import Rule
from ..prepare import Workload, fit_predictions, prediction_scalars, simulated_predictions
from .base import Context, placer_name, reference_scheduler, register_task, scheduler_names
from .scoring import RECORDED, VOLATILE, SchedulerRun, SharedScoring, replay_refusal, run_scheduler
from .users import USER_COLUMNS


NO_JOB_WAITED = "no job waited: the schedulers cannot differ"
"""The warning of a compare run in which no job of any scheduler waited (each started at release and ran
uninterrupted, so every scheduler gave the same start times)."""

BASELINES = ("spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime", "fifo")
ALL_SCHEDULERS = ["asrpt", "asrpt_oracle", *BASELINES]


def scheduler_list() -> Rule:
    """A non-empty list of distinct scheduler names (that each name is registered is checked when built)."""
    return Rule("a non-empty list of scheduler names without repeats", lambda v: (
        isinstance(v, (list, tuple)) and len(v) >= 1 and all(isinstance(n, str) and n for n in v)
        and len(set(v)) == len(v)))


@dataclass(frozen=True)
class CompareParams(Params):
    """Which schedulers run side by side, and the placer of the baselines."""

    schedulers: list[str] = param(list(ALL_SCHEDULERS), scheduler_list(),
                                  "simulated on the same jobs and predictions; the scheduler group's "
                                  "parameters configure those that share its scheduler's parameters")
    baseline_placement: Optional[str] = param(None, Rule("null or a placement name", lambda v: v is None or (
        isinstance(v, str) and bool(v))), "the placer of every scheduler but A-SRPT (null: the placement group's)")


def with_recorded(config: RunConfig, workload: Workload, names: list[str]) -> tuple[list[str], dict[str, str]]:
    """The schedulers to compare, with the log's own schedule (`recorded`) added at the end when every
    simulated job has a recorded start; and, for a workload with recorded starts, `recorded_schedule` in the
    summary: "listed", "added" or why it is not replayed."""
    has_starts = "recorded_wait" in workload.table.columns and workload.table["recorded_wait"].notna().any()
    if RECORDED in names:
        return names, {"recorded_schedule": "listed"}
    refusal = replay_refusal(config, workload)
    if refusal is None:
        return [*names, RECORDED], {"recorded_schedule": "added"}
    return names, ({"recorded_schedule": f"not replayed: {refusal}"} if has_starts else {})


class SchedulerBar:
    """The bar of the schedulers done, started at the first one done: a tqdm started before the workers are
    forked would leave its monitor thread alive, and forked.ordered_map does not fork beside a thread."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.bar: tqdm | None = None

    def update(self, count: int) -> None:
        if self.bar is None:
            self.bar = tqdm(total=self.total, desc="schedulers", unit="scheduler")
        self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def compare_workers(config: RunConfig, schedulers: int) -> int:
    """How many processes simulate the `schedulers` of a compare run: the root key `workers`, or for null
    one per usable CPU; never more than there are schedulers."""
    wanted = usable_cpus() if config.workers is None else config.workers
    return max(1, min(wanted, schedulers))


def run_schedulers(config: RunConfig, workload: Workload, predictions: dict[Hashable, float],
                   names: list[str]) -> dict[str, SchedulerRun]:
    """Each scheduler of `names` simulated on the same jobs and predictions, in that order. With more than one
    worker (`compare_workers`) they run side by side in forked processes (forked.ordered_map: the same
    runs, warnings and first error as one after another); the scores' shared parts (SharedScoring) are then
    computed once per process."""
    shared = SharedScoring()

    def one(name: str) -> SchedulerRun:
        return run_scheduler(config, workload, predictions, build_scheduler(config, name), False, shared,
                             build_placer(config, placer_name(config, name)))

    bar = SchedulerBar(len(names)) if config.progress else None
    try:
        return dict(zip(names, ordered_map(one, names, compare_workers(config, len(names)),
                                           bar.update if bar is not None else None)))
    finally:
        if bar is not None:
            bar.close()


@register_task("compare", CompareParams)
def compare(context: Context) -> RunResult:
    """Every scheduler of task.schedulers on the same jobs and predictions (baselines placed by
    task.baseline_placement when set); reductions of the reference (the scheduler group's scheduler, or for
    the default, A-SRPT when listed, else the first listed; tasks.base.reference_scheduler) against each,
    whose scalars the summary holds. The comparison column keeps the
    name `asrpt_reduction` that every collected table has."""
    config, workload = context.config, context.workload
    assert workload is not None
    predicted = simulated_predictions(config, workload)  # once: a trace workload's are keyed by a hash of its table
    predictions = fit_predictions(config, workload, predicted)
    names, recorded = with_recorded(config, workload, scheduler_names(config))
    runs = run_schedulers(config, workload, predictions, names)
    # Wall times differ run to run: they stay in summary.json (per_scheduler), so comparison.csv is the
    # same bytes for a cache hit and a miss.
    comparison = pd.DataFrame([run.scalars for run in runs.values()]).drop(columns=list(VOLATILE))
    reference = reference_scheduler(config, list(runs))
    primary = runs[reference]
    comparison["asrpt_reduction"] = 1.0 - primary.scalars["total_jct"] / comparison["total_jct"]
    workload_scalars = {"offered_load": context.provenance["offered_load"], **prediction_scalars(config, workload, predicted)}
    comparison = comparison.assign(**workload_scalars)
    jobs = pd.concat([run.jobs.assign(scheduler=name) for name, run in runs.items()], ignore_index=True)
    preempted = [run.segments.assign(scheduler=name) for name, run in runs.items() if run.segments is not None]
    segments = pd.concat(preempted, ignore_index=True) if preempted else None
    no_job_waited = all(run.scalars["waited_share"] == 0 for run in runs.values())
    if no_job_waited:
        warnings.warn(NO_JOB_WAITED, UserWarning, stacklevel=2)
    summary = {**context.provenance, **workload_scalars, **primary.scalars, "reference_scheduler": reference,
               "no_job_waited": no_job_waited,
               "per_scheduler": {name: {**run.scalars, "scheduler_params": config.scheduler_params(name).to_dict()}
                                 for name, run in runs.items()}, **recorded}
    users = pd.concat([run.users.assign(scheduler=name) for name, run in runs.items()], ignore_index=True)
    users = users[["scheduler", *USER_COLUMNS]]
    return RunResult(task="compare", summary=summary, jobs=jobs, comparison=comparison, segments=segments,
                     tables={"users": users})
