"""Conformance checks for plugin authors (as scikit-learn's check_estimator): does a registered
scheduler, placer, predictor or workload source behave as the toolkit assumes?

    from asrpt_bench.testing import check_scheduler
    check_scheduler("lifo")            # raises AssertionError saying what is wrong

Each check runs the component on small seeded instances: it must be deterministic, never oversubscribe
a GPU (the simulator's audit), refuse a bad value of each of its parameters and an unknown parameter
in one line naming the key, and work in a `compare` run beside a built-in. The test suite runs every
check on every built-in component.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from .config import PlacementConfig, PredictorConfig, RunConfig, TaskConfig, WorkloadConfig, component_registry
from .core import Cluster, Job, TrainingPlan
from .errors import ConfigError
from .experiment import run_experiment
from .placement import PLACERS
from .prediction import PREDICTORS
from .schedulers import SCHEDULERS
from .sim import simulate
from .solvers import SolverSettings
from .timing import DEFAULT_TIMING
from .workloads.pipeline import load_table
from .workloads.schema import validate_job_table
from .workloads.seeding import component_rng

CANDIDATE_BAD_VALUES: tuple[Any, ...] = (None, -1, -1.5, 0, "no-such-choice", [], True, float("nan"))
"""Values tried on each parameter; the first its rule refuses must be refused through the registry."""

SMALL_CLUSTER = Cluster(servers=2, gpus_per_server=4, b_intra=300.0, b_inter=12.5)


def _fail(message: str) -> None:
    raise AssertionError(message)


def check_parameter_refusals(kind: str, name: str, make: Callable[[dict[str, Any]], Any],
                             direct: Callable[[dict[str, Any]], Any] | None = None) -> None:
    """An unknown key (through the registry, `make`) and a refused value of every parameter with a rule
    (through the registry, and constructed directly as Python callers do, `direct`) fail in one line
    naming the key."""
    params = component_registry(kind).params_type(name)
    attempts = [(make, "no_such_parameter", 1)]
    for field in dataclasses.fields(params):
        for bad in _refused_value(field):
            attempts += [(make, field.name, bad)] + ([(direct, field.name, bad)] if direct else [])
    for call, key, value in attempts:
        how = "constructed directly" if call is direct else "made by name"
        try:
            call({key: value})
        except ConfigError as error:
            text = str(error)
            if "\n" in text or f"{kind}.{key}" not in text:
                _fail(f"{kind} {name!r} ({how}): the refusal of {key}={value!r} must be one line naming "
                      f"{kind}.{key}, got {text!r}")
        else:
            _fail(f"{kind} {name!r} ({how}): {key}={value!r} was accepted, but its rule refuses it")


def _refused_value(field: dataclasses.Field) -> list[Any]:
    rule = field.metadata.get("rule")
    if rule is None:
        return []
    return [value for value in CANDIDATE_BAD_VALUES if not rule.accepts(value)][:1]


def small_jobs(seed: int = 0, count: int = 12, max_gpus: int = 4) -> list[Job]:
    """Seeded fixed-alpha jobs of 1..max_gpus GPUs with staggered releases (placement-free timing)."""
    rng = component_rng(seed, "conformance")
    return [Job(f"j{i}", float(rng.integers(0, 40)), TrainingPlan.fixed(int(rng.integers(1, max_gpus + 1)),
                                                                        float(rng.uniform(0.5, 2.0))),
                int(rng.integers(5, 60))) for i in range(count)]


def _records(name: str, params: dict[str, Any], jobs: Sequence[Job]) -> pd.DataFrame:
    predictions = {job.job_id: float(job.iterations) for job in jobs}
    scheduler = SCHEDULERS.make(name, params)
    return simulate(list(jobs), SMALL_CLUSTER, scheduler, PLACERS.make("first_fit"), predictions=predictions,
                    progress=False).frame()


def _tiny_run(**groups: Any) -> RunConfig:
    defaults: dict[str, Any] = dict(cluster=Cluster(servers=2, gpus_per_server=4),
                                    workload=WorkloadConfig("synthetic", synthetic_jobs=60, job_cap=12),
                                    predictor=PredictorConfig("oracle"), progress=False)
    return RunConfig(**{**defaults, **groups})


def check_scheduler(name: str, params: dict[str, Any] | None = None) -> None:
    """Deterministic, audited (no GPU held twice, no start before release), one-line refusals, and a
    compare run beside a built-in."""
    params = dict(params or {})
    jobs = small_jobs()
    first, second = _records(name, params, jobs), _records(name, params, jobs)
    if not first.equals(second):
        _fail(f"scheduler {name!r}: two runs on the same jobs gave different schedules")
    if len(first) != len(jobs):
        _fail(f"scheduler {name!r}: {len(jobs) - len(first)} of {len(jobs)} jobs never started")
    check_parameter_refusals("scheduler", name, lambda values: SCHEDULERS.make(name, {**params, **values}),
                             lambda values: SCHEDULERS.entry(name).factory(**{**params, **values}))
    from .config import SchedulerConfig

    beside = "fifo" if name != "fifo" else "wcs_subtime"
    result = run_experiment(_tiny_run(scheduler=SchedulerConfig(name, **params),
                                      task=TaskConfig("compare", schedulers=[name, beside])))
    if sorted(result.comparison["scheduler"]) != sorted([name, beside]):
        _fail(f"scheduler {name!r}: a compare run did not report it beside {beside}")


def check_placer(name: str, params: dict[str, Any] | None = None) -> None:
    """Returns None when the job does not fit, else a valid placement within the free GPUs; deterministic;
    one-line refusals; a compare run with it as the placement group's placer."""
    params = dict(params or {})
    entry = PLACERS.entry(name)
    available = {"timing": DEFAULT_TIMING, "seed": 0, "solver": SolverSettings(time_limit_s=10.0)}
    needs = {key: available[key] for key in entry.needs}

    def make(values: dict[str, Any]) -> Any:
        return PLACERS.make(name, {**params, **values}, **needs)

    def direct(values: dict[str, Any]) -> Any:
        return entry.factory(**{**params, **values}, **needs)

    placer = make({})
    rng = np.random.default_rng(0)
    for job in small_jobs(count=20):
        free = tuple(int(f) for f in rng.integers(0, SMALL_CLUSTER.gpus_per_server + 1, SMALL_CLUSTER.servers))
        placement = placer.place(job.plan, free, SMALL_CLUSTER)
        if sum(free) < job.gpus:
            if placement is not None:
                _fail(f"placer {name!r} placed a {job.gpus}-GPU job on {sum(free)} free GPUs")
            continue
        if placement is None:
            continue
        try:
            placement.validate(job.plan, free)
        except ValueError as error:
            _fail(f"placer {name!r}: invalid placement for free GPUs {free}: {error}")
        if placer.place(job.plan, free, SMALL_CLUSTER) != placement:
            _fail(f"placer {name!r}: the same call gave two placements")
    check_parameter_refusals("placement", name, make, direct)
    run_experiment(_tiny_run(placement=PlacementConfig(name, **params),
                             task=TaskConfig("compare", schedulers=["asrpt", "fifo"])))


def check_predictor(name: str, params: dict[str, Any] | None = None) -> None:
    """fit returns self; one non-negative prediction per row, the same for the same random_state;
    one-line refusals; a compare run with it."""
    params = dict(params or {})
    needs = {"random_state": 0} if "random_state" in PREDICTORS.entry(name).needs else {}
    table = jobs_table(small_jobs(count=40))
    history, test = table.iloc[:30], table.iloc[30:]

    def make(values: dict[str, Any]) -> Any:
        predictor = PREDICTORS.make(name, {**params, **values}, **needs)
        return predictor.fit(history) is predictor and predictor

    def direct(values: dict[str, Any]) -> Any:
        return PREDICTORS.entry(name).factory(**{**params, **values}, **needs).fit(history)

    predictor = make({})
    if predictor is False:
        _fail(f"predictor {name!r}: fit must return self")
    predicted = np.asarray(predictor.predict(test), dtype=float)
    if predicted.shape != (len(test),) or not np.all(np.isfinite(predicted)) or np.any(predicted < 0):
        _fail(f"predictor {name!r}: predict must give one finite, non-negative value per row")
    if not np.array_equal(predicted, make({}).predict(test)):
        _fail(f"predictor {name!r}: two fits with the same random_state predicted differently")
    check_parameter_refusals("predictor", name, make, direct)
    run_experiment(_tiny_run(predictor=PredictorConfig(name, **params),
                             workload=WorkloadConfig("synthetic", synthetic_jobs=60, job_cap=12, train_fraction=0.5),
                             task=TaskConfig("compare", schedulers=["asrpt", "fifo"])))


def check_workload(name: str, params: dict[str, Any] | None = None) -> None:
    """A trace source's table passes the job-table schema, is the same for the same seed, and runs in a
    compare run; bad parameters are refused in one line."""
    params = dict(params or {})
    registry = component_registry("workload")
    if registry.entry(name).meta["kind"] != "trace":
        _fail(f"workload {name!r} is an instance, not a trace source: run it with asrpt-bench workload={name}")

    def load(values: dict[str, Any]) -> pd.DataFrame:
        return load_table(name, registry.parse(name, {**params, **values}), 0)

    table = validate_job_table(load({}), f"workload {name!r}")
    if not table.equals(validate_job_table(load({}), f"workload {name!r}")):
        _fail(f"workload {name!r}: two loads with seed 0 gave different tables")
    check_parameter_refusals("workload", name, load)
    run_experiment(_tiny_run(workload=WorkloadConfig(name, **{"job_cap": 12, "num_jobs": None, **params}),
                             task=TaskConfig("compare", schedulers=["asrpt", "fifo"])))


def jobs_table(jobs: Sequence[Job]) -> pd.DataFrame:
    """A job table (workloads/schema.py) of fixed-alpha jobs, with recurring groups for predictors."""
    return pd.DataFrame({"job_id": [job.job_id for job in jobs], "release": [job.release for job in jobs],
                         "gpus": [job.gpus for job in jobs], "iterations": [job.iterations for job in jobs],
                         "alpha": [job.plan.declared_alpha for job in jobs],
                         "group": [f"g{job.gpus}" for job in jobs], "user": ["u"] * len(jobs)})


__all__ = ["check_parameter_refusals", "check_placer", "check_predictor", "check_scheduler", "check_workload",
           "jobs_table", "small_jobs"]
