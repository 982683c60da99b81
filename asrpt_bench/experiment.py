"""run_experiment(RunConfig) -> RunResult: build the typed components and run one task.

Knows nothing of Hydra (design.md 2). The steps: the cluster and timing model; the workload
(a trace or table, models and configurations assigned from the real profiles, split
chronologically into the predictor's history and the simulated jobs); the predictor, fit on the
history; then the task, looked up by name in TASKS. Schedulers and placers are built before any
data is read, so a bad parameter fails before any work.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import time
import warnings
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Hashable

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .config import PlacementConfig, RunConfig, SchedulerConfig, group_params
from .core import Cluster, ConfigError, Job
from .io import RunResult
from .placement import PLACERS, Placer, make_placer
from .prediction import (FIG4_BUCKETS, PREDICTORS, RELATIVE_BUCKETS, accuracy_summary, accuracy_table,
                         chronological_split, make_predictor, prediction_errors)
from .registry import constructor_parameters
from .schedulers import SCHEDULERS, Scheduler, make_scheduler
from .sim import simulate
from .solvers import resolve_solver
from .theory.bound import theory_symbols
from .theory.lower_bounds import alpha_min_for_jobs, lower_bound
from .timing import TimingModel
from .workloads.assign import assign_models
from .workloads.csv_table import load_csv
from .workloads.instances import INSTANCES, get_instance
from .workloads.jobs import jobs_from_table
from .workloads.pai2020 import load_pai2020
from .workloads.philly import load_philly
from .workloads.seeding import component_rng
from .workloads.slicing import resample_single_gpu_share, slice_jobs
from .workloads.synthetic import synthetic_workload

REFERENCE_SCHEDULER = "asrpt"


# ---------------------------------------------------------------- provenance

def config_hash(config: RunConfig) -> str:
    """12 hex digits identifying everything that changes results (not `progress`)."""
    payload = {k: v for k, v in config.to_dict().items() if k != "progress"}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:12]


@lru_cache(maxsize=1)
def git_revision() -> str | None:
    """The checkout's commit (with `-dirty` if modified), or None outside a git checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        revision = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], check=True,
                                  capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               check=True, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{revision}-dirty" if dirty else revision


def versions() -> dict[str, str]:
    """Versions of Python, this package and the libraries that shape results."""
    found = {"python": platform.python_version()}
    for package in ("asrpt_bench", "numpy", "pandas", "scipy", "scikit-learn", "networkx", "highspy", "pulp",
                    "ortools"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


# ---------------------------------------------------------------- components

def build_timing(config: RunConfig) -> TimingModel:
    return TimingModel(**group_params(config.timing, constructor_parameters(TimingModel)))


def build_cluster(config: RunConfig) -> Cluster:
    return Cluster(**group_params(config.cluster, constructor_parameters(Cluster)))


def build_scheduler(name: str, config: SchedulerConfig) -> Scheduler:
    """Scheduler `name` with the keys of the scheduler group its constructor accepts."""
    return make_scheduler(name, **group_params(config, SCHEDULERS.parameters(name)))


def build_placer(config: RunConfig, name: str | None = None) -> Placer:
    """Placer `name` (default: the placement group's) with the placement, solver and timing keys it
    accepts; a random placer's seed comes from (seed, "placement")."""
    name = name or config.placement.name
    accepted = PLACERS.parameters(name)
    available: dict[str, Any] = group_params(config.placement, [f for f in vars(PlacementConfig())])
    available.update(solver=config.solver.name, time_limit_s=config.solver.time_limit_s,
                     mip_gap=config.solver.mip_gap, threads=config.solver.threads, timing=build_timing(config),
                     seed=int(component_rng(config.seed, "placement").integers(2**31)))
    return make_placer(name, **{key: value for key, value in available.items() if key in accepted})


def predictor_params(config: RunConfig) -> tuple[str, dict[str, Any]]:
    """The predictor group's name and constructor parameters; random_state from (seed, "predictor")."""
    name = config.predictor.name
    known = set(PREDICTORS.parameters(name))
    params = group_params(config.predictor, known)
    if "features" in params:
        params["features"] = tuple(params["features"])
    if "random_state" in known:
        params["random_state"] = int(component_rng(config.seed, "predictor").integers(2**31))
    return name, params


def build_predictor(config: RunConfig) -> Any:
    name, params = predictor_params(config)
    return make_predictor(name, **params)


# ---------------------------------------------------------------- workload

@dataclass
class Workload:
    """The jobs a run simulates, the history its predictor learns from, and where they came from."""

    jobs: list[Job]
    table: pd.DataFrame
    history: pd.DataFrame
    later: pd.DataFrame
    cluster: Cluster
    source: str
    recurrence_keys: str


@dataclass(frozen=True)
class TableSpec:
    """The inputs of a loaded, model-assigned job table (hashable, so loads are cached per process)."""

    name: str
    path: str | None
    seed: int
    time_compression: float
    recurrence: str
    synthetic_jobs: int
    arrival_rate: float
    single_gpu_share: float | None
    max_gpus: int | None
    cluster: Cluster
    timing: TimingModel

    @classmethod
    def of(cls, config: RunConfig) -> "TableSpec":
        wl = config.workload
        return cls(wl.name, wl.path, config.seed, wl.time_compression, wl.recurrence, wl.synthetic_jobs,
                   wl.arrival_rate, wl.single_gpu_share, wl.max_gpus, build_cluster(config), build_timing(config))

    def require_path(self) -> str:
        if not self.path:
            raise ConfigError(f"workload.path is required for workload {self.name!r}")
        return self.path


def _philly(spec: TableSpec) -> pd.DataFrame:
    return load_philly(spec.path, time_compression=spec.time_compression, recurrence=spec.recurrence, seed=spec.seed)


def _synthetic(spec: TableSpec) -> pd.DataFrame:
    share = 0.8 if spec.single_gpu_share is None else spec.single_gpu_share
    return synthetic_workload(spec.synthetic_jobs, spec.seed, arrival_rate=spec.arrival_rate, single_gpu_share=share)


TABLE_SOURCES: dict[str, Callable[[TableSpec], pd.DataFrame]] = {
    "philly": _philly,
    "pai2020": lambda spec: load_pai2020(spec.require_path()),
    "csv": lambda spec: load_csv(spec.require_path()),
    "synthetic": _synthetic,
}


@lru_cache(maxsize=4)
def _assigned_table(spec: TableSpec) -> pd.DataFrame:
    """Load the table and assign models once per process for the same inputs (sweeps reuse it)."""
    raw = TABLE_SOURCES[spec.name](spec)
    table = assign_models(raw, spec.cluster, spec.seed, timing=spec.timing, max_gpus=spec.max_gpus)
    table.attrs.update(raw.attrs)
    return table


def _simulated_part(later: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    wl = config.workload
    if wl.single_gpu_share is not None:
        chosen = resample_single_gpu_share(later, wl.single_gpu_share, num_jobs=wl.num_jobs or len(later),
                                           seed=config.seed, replace=wl.resample_replace,
                                           releases=wl.resample_releases)
    else:
        chosen = slice_jobs(later, num_jobs=wl.num_jobs, offset=wl.offset, shift=True)
    if wl.job_cap is not None:
        chosen = chosen.iloc[: wl.job_cap].reset_index(drop=True)
    return chosen


def load_workload(config: RunConfig) -> Workload:
    """Jobs to simulate and the predictor's history, per the workload group."""
    name = config.workload.name
    if name in INSTANCES:
        instance = get_instance(name)
        table = instance.table.copy()
        return Workload(jobs=instance.jobs(), table=table, history=table.iloc[:0], later=table,
                        cluster=instance.cluster, source=f"instance {name!r}", recurrence_keys="none")
    if name not in TABLE_SOURCES:
        raise ConfigError(f"unknown workload {name!r}; known: {sorted(TABLE_SOURCES) + sorted(INSTANCES)}")
    cached = _assigned_table(TableSpec.of(config))
    full = cached.copy()
    full.attrs.update(cached.attrs)
    history, later = chronological_split(full, config.workload.train_fraction)
    table = _simulated_part(later, config)
    source = str(full.attrs.get("source", name))
    return Workload(jobs=jobs_from_table(table, source), table=table, history=history, later=later,
                    cluster=build_cluster(config), source=source,
                    recurrence_keys=str(full.attrs.get("recurrence_keys", "given")))


@lru_cache(maxsize=4)
def _fitted_on_trace(spec: TableSpec, train_fraction: float, name: str, params_json: str) -> Any:
    """A predictor fit on a trace's history, reused by sweep points that share both (same process)."""
    history, _ = chronological_split(_assigned_table(spec), train_fraction)
    return make_predictor(name, **{k: tuple(v) if isinstance(v, list) else v
                                   for k, v in json.loads(params_json).items()}).fit(history)


def fitted_predictor(config: RunConfig, workload: Workload) -> Any:
    """The predictor group's predictor, fit on the workload's history."""
    name, params = predictor_params(config)
    if config.workload.name in TABLE_SOURCES:
        return _fitted_on_trace(TableSpec.of(config), config.workload.train_fraction, name,
                                json.dumps(params, sort_keys=True))
    return make_predictor(name, **params).fit(workload.history)


def fit_predictions(config: RunConfig, workload: Workload) -> dict[Hashable, float]:
    """job_id -> predicted iterations from the predictor fit on the workload's history."""
    return fitted_predictor(config, workload).predictions(workload.table)


# ---------------------------------------------------------------- metrics

def safe_alpha_min(config: RunConfig, jobs: list[Job], cluster: Cluster,
                   cache: dict[Hashable, float] | None = None) -> np.ndarray:
    """Per job, a value <= its true alpha_min from `theory.alpha_min_source` (never the scheduler's
    Heavy-Edge estimate, which can exceed it). `cache` (job_id -> value) is filled and reused, so the
    schedulers of one `compare` run share the computation."""
    cache = {} if cache is None else cache
    missing = [job for job in jobs if job.job_id not in cache]
    if missing:
        values = alpha_min_for_jobs(missing, cluster, build_timing(config), config.theory.alpha_min_source,
                                    config.solver.name)
        cache.update(zip((job.job_id for job in missing), values.tolist()))
    return np.array([cache[job.job_id] for job in jobs], dtype=float)


def _undefined_theorem1(reason: str) -> dict[str, Any]:
    nan = float("nan")
    return {"rho": nan, "rho_bar": nan, "epsilon_bar": nan, "g_max": nan, "theorem1_bound": nan, "theory_note": reason}


def theorem1_scalars(config: RunConfig, frame: pd.DataFrame, alpha_min: pd.Series | np.ndarray, G: int,
                     scheduler: Scheduler, alpha_min_source: str) -> dict[str, Any]:
    """Theorem 1 symbols of one schedule (paper-notes 7.2, 7.4) with the given valid alpha_min per row of
    `frame`; an oracle scheduler used the true iterations, so its epsilon-bar is 0. NaN (and the reason
    in `theory_note`) where the bound is undefined, e.g. g_max = G."""
    exact = frame[["gpus", "iterations", "predicted_iterations", "alpha_max"]].assign(
        alpha_min=np.asarray(alpha_min, dtype=float))
    if getattr(scheduler, "oracle", False):
        exact["predicted_iterations"] = exact["iterations"]
    tau = float(getattr(scheduler, "tau", config.scheduler.tau))
    try:
        symbols = theory_symbols(exact, G, tau, config.theory.rho_bar_definition, config.theory.eps_bar_definition,
                                 alpha_min_source=alpha_min_source)
    except ConfigError as error:
        return _undefined_theorem1(str(error))
    return {"rho": symbols["rho"], "rho_bar": symbols["rho_bar"], "epsilon_bar": symbols["eps_bar"],
            "g_max": symbols["g_max"], "theorem1_bound": symbols["theorem1_bound"],
            "theory_note": f"{symbols['note']}; alpha_min: {alpha_min_source}"}


@dataclass
class SchedulerRun:
    scalars: dict[str, Any]
    jobs: pd.DataFrame


def run_scheduler(config: RunConfig, workload: Workload, predictions: dict[Hashable, float],
                  scheduler: Scheduler, progress: bool,
                  alpha_min_cache: dict[Hashable, float] | None = None) -> SchedulerRun:
    """Simulate one scheduler on the workload; scalars of design.md 4 and the per-job table.

    `lower_bound` and the Theorem 1 symbols use the same valid alpha_min (`safe_alpha_min`);
    jobs.parquet keeps the scheduler's own estimate in `alpha_min`."""
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = simulate(workload.jobs, workload.cluster, scheduler, build_placer(config), predictions=predictions,
                          timing=build_timing(config), drop_oversize=config.workload.drop_oversize,
                          progress=progress)
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    frame = result.frame()
    metrics = dict(result.metrics)
    source = config.theory.alpha_min_source
    by_id = {job.job_id: job for job in workload.jobs}
    kept = [by_id[job_id] for job_id in frame["job_id"]] if len(frame) else []  # frame row order
    alpha_min = safe_alpha_min(config, kept, workload.cluster, alpha_min_cache)
    lower = float("nan")
    if kept:
        lower = lower_bound(release=[job.release for job in kept], gpus=[job.gpus for job in kept],
                            iterations=[job.iterations for job in kept], alpha_min=alpha_min,
                            G=workload.cluster.total_gpus, alpha_min_source=source).value
    scalars = {
        "scheduler": result.scheduler,
        "placer": result.placer,
        **metrics,
        "lower_bound": lower,
        "ratio_to_lower_bound": metrics["sum_completion"] / lower if lower > 0 else float("nan"),
        **(theorem1_scalars(config, frame, alpha_min, workload.cluster.total_gpus, scheduler, source) if kept
           else _undefined_theorem1("no job was simulated")),
        "sim_wall_time_s": time.perf_counter() - started,
        "warnings": " | ".join(str(w.message) for w in caught),
    }
    columns = ["job_id", "release", "start", "end", "gpus", "model", "config", "servers_used", "alpha", "alpha_min",
               "alpha_max", "iterations", "predicted_iterations", "comm_heavy", "eligible", "queueing_delay", "jct",
               "placement"]
    jobs = frame[[c for c in columns if c in frame.columns]].copy()
    jobs["job_id"] = jobs["job_id"].astype(str)
    return SchedulerRun(scalars, jobs)


# ---------------------------------------------------------------- tasks

@dataclass
class Context:
    """What every task receives: the config, the workload and the run's provenance."""

    config: RunConfig
    workload: Workload
    provenance: dict[str, Any]


TASKS: dict[str, Callable[[Context], RunResult]] = {}
# Tasks that build their own instances: run_experiment does not load the workload group for them.
WORKLOAD_FREE_TASKS: set[str] = set()


def register_task(name: str, needs_workload: bool = True
                  ) -> Callable[[Callable[[Context], RunResult]], Callable[[Context], RunResult]]:
    def decorator(function: Callable[[Context], RunResult]) -> Callable[[Context], RunResult]:
        TASKS[name] = function
        if not needs_workload:
            WORKLOAD_FREE_TASKS.add(name)
        return function

    return decorator


def _scheduler_names(config: RunConfig) -> list[str]:
    return list(config.task.schedulers) if config.task.name == "compare" else [config.scheduler.name]


@register_task("compare")
def compare(context: Context) -> RunResult:
    """Every scheduler of task.schedulers on the same jobs and predictions; reductions vs A-SRPT."""
    config, workload = context.config, context.workload
    predictions = fit_predictions(config, workload)
    names = _scheduler_names(config)
    runs = {}
    alpha_min_cache: dict[Hashable, float] = {}
    for name in tqdm(names, desc="schedulers", disable=not config.progress, unit="scheduler"):
        runs[name] = run_scheduler(config, workload, predictions, build_scheduler(name, config.scheduler), False,
                                   alpha_min_cache)
    comparison = pd.DataFrame([run.scalars for run in runs.values()])
    reference = runs.get(REFERENCE_SCHEDULER, next(iter(runs.values()))).scalars["total_jct"]
    comparison["asrpt_reduction"] = 1.0 - reference / comparison["total_jct"]
    jobs = pd.concat([run.jobs.assign(scheduler=name) for name, run in runs.items()], ignore_index=True)
    primary = runs.get(REFERENCE_SCHEDULER, next(iter(runs.values())))
    summary = {**context.provenance, **primary.scalars,
               "per_scheduler": {name: run.scalars for name, run in runs.items()}}
    return RunResult(task="compare", summary=summary, jobs=jobs, comparison=comparison)


@register_task("simulate")
def simulate_one(context: Context) -> RunResult:
    """The scheduler group's scheduler on the workload."""
    config, workload = context.config, context.workload
    predictions = fit_predictions(config, workload)
    scheduler = build_scheduler(config.scheduler.name, config.scheduler)
    run = run_scheduler(config, workload, predictions, scheduler, config.progress)
    return RunResult(task="simulate", summary={**context.provenance, **run.scalars}, jobs=run.jobs)


def _bucket_key(prefix: str, lower: float, upper: float) -> str:
    return f"share_{prefix}_{lower:g}_{upper:g}"


@register_task("predictor")
def predictor_report(context: Context) -> RunResult:
    """Fig 4: errors of the predictor fit on the history, on the whole held-out part of the trace."""
    config, workload = context.config, context.workload
    predictor = fitted_predictor(config, workload)
    held_out = workload.later
    errors = prediction_errors(held_out, predictor.predict(held_out), predictor.unseen_mask(held_out))
    absolute = accuracy_table(errors, FIG4_BUCKETS, "abs_error")
    relative = accuracy_table(errors, RELATIVE_BUCKETS, "rel_error")
    summary: dict[str, Any] = {**context.provenance, **accuracy_summary(errors),
                               "history_jobs": len(workload.history), "held_out_jobs": len(held_out)}
    for prefix, table in (("abs", absolute), ("rel", relative)):
        summary.update({_bucket_key(prefix, row.lower, row.upper): row.share for row in table.itertuples()})
    return RunResult(task="predictor", summary=summary,
                     tables={"accuracy_abs": absolute, "accuracy_rel": relative,
                             "prediction_errors": errors.assign(job_id=errors["job_id"].astype(str))})


@register_task("placement", needs_workload=False)
def placement_study(context: Context) -> RunResult:
    """Heavy-Edge vs the ILP optimum on every zoo plan and fragmentation pattern of free GPUs."""
    from .placement.study import run_placement_study

    config = context.config
    task = config.task
    table = run_placement_study(models=task.study_models, gpu_counts=tuple(task.study_gpu_counts),
                                cluster=build_cluster(config), patterns=task.study_patterns,
                                solver=config.solver.name, time_limit_s=config.solver.time_limit_s,
                                seed=config.seed, timing=build_timing(config), heavy_edge_mode=config.placement.mode)
    optimal = table["ilp_status"] == "optimal"
    summary = {**context.provenance, "placements": len(table), "ilp_optimal_share": float(optimal.mean()),
               "alpha_penalty_mean": float(table["gap"].mean()), "alpha_penalty_max": float(table["gap"].max()),
               "alpha_penalty_mean_proven": float(table.loc[optimal, "gap"].mean()),
               "heavy_edge_time_median_s": float(table["he_wall_s"].median()),
               "heavy_edge_time_max_s": float(table["he_wall_s"].max()),
               "ilp_time_median_s": float(table["ilp_wall_s"].median()),
               "ilp_time_max_s": float(table["ilp_wall_s"].max())}
    return RunResult(task="placement", summary=summary, tables={"placement_study": table})


# ---------------------------------------------------------------- entry point

def _check_components(config: RunConfig) -> None:
    """Build every named component once so bad names and parameters fail before data is read."""
    if config.task.name not in TASKS:
        raise ConfigError(f"unknown task {config.task.name!r}; known: {sorted(TASKS)}")
    for name in _scheduler_names(config):
        build_scheduler(name, config.scheduler)
    build_placer(config)
    build_predictor(config)
    build_timing(config)
    build_cluster(config)


def _uses_solver(config: RunConfig) -> bool:
    """Whether the run solves MILPs through the solver layer (so a fallback can happen)."""
    return (config.placement.name == "ilp" or config.task.name == "placement"
            or config.theory.alpha_min_source == "exact")


def run_experiment(config: RunConfig) -> RunResult:
    """Validate, build, load, run the task named by config.task.name; summary gains provenance."""
    config.validate()
    _check_components(config)
    started = time.perf_counter()
    needs_workload = config.task.name not in WORKLOAD_FREE_TASKS
    workload = load_workload(config) if needs_workload else None
    provenance: dict[str, Any] = {
        "config_hash": config_hash(config),
        "package_version": versions()["asrpt_bench"],
        "git_revision": git_revision(),
        "versions": versions(),
        "seed": config.seed,
    }
    if _uses_solver(config):
        used = resolve_solver(config.solver.name)
        provenance.update(solver=config.solver.name, solver_used=used,
                          solver_fallback=int(used != config.solver.name))
    if workload is not None:
        provenance.update(workload_source=workload.source, recurrence_keys=workload.recurrence_keys,
                          workload_jobs=len(workload.jobs), history_jobs=len(workload.history),
                          cluster_gpus=workload.cluster.total_gpus)
    result = TASKS[config.task.name](Context(config, workload, provenance))  # type: ignore[arg-type]
    result.summary["wall_time_s"] = time.perf_counter() - started
    return result


from . import theory_task  # noqa: E402,F401  (registers the theory and adversarial tasks)
