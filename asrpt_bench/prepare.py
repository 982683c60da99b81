"""The prepared work of a run: the workload (loaded, model-assigned, split) and the fitted predictor.

Trace workloads are split chronologically: the predictor learns from the history, the simulated
jobs come from the later part. Both the assigned table and the fitted predictor are cached on disk
under a content key (cache.py: every TableSpec field, the trace's bytes, the predictor's parameters)
and memoised per process, so sweep points and parallel workers that share them do the work once.
The simulated jobs then get their releases scaled to `workload.target_load` (so points of a load
sweep share the fit) and the injected jobs of `workload.inject_jobs`; `workload_scalars` and
`prediction_scalars` are what every run reports about its job set (offered load, unseen share, the
predictor's error).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, TypeVar

import numpy as np
import pandas as pd

from .build import build_cluster, build_timing, predictor_params
from .cache import DiskCache, cache_key, content_hash, resolve_cache
from .config import RunConfig
from .core import Cluster, ConfigError, Job
from .prediction import accuracy_summary, chronological_split, make_predictor, prediction_errors
from .timing import TimingModel
from .workloads.assign import assign_models
from .workloads.csv_table import load_csv
from .workloads.gavel import load_gavel, note_extrapolated
from .workloads.injection import injected_jobs
from .workloads.instances import INSTANCES, get_instance
from .workloads.jobs import jobs_from_table
from .workloads.load import best_durations, offered_load, scale_to_load
from .workloads.pai2020 import load_pai2020
from .workloads.philly import load_philly
from .workloads.recurrence import RecurrenceSpec
from .workloads.schema import validate_job_table
from .workloads.slicing import resample_single_gpu_share, slice_jobs
from .workloads.synthetic import synthetic_workload


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
    durations: np.ndarray = field(default_factory=lambda: np.empty(0))
    scalars: dict[str, Any] = field(default_factory=dict)
    cache_status: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TableSpec:
    """The inputs of a loaded, model-assigned job table (hashable, so loads are cached per process).

    `train_fraction` is an input because "new group" (recurrence.py) refers to the history cut. Every
    field enters the on-disk cache key (cache.cache_key expands the dataclass), so a new field here is
    all a new workload knob needs to be cached correctly.
    """

    name: str
    path: str | None
    seed: int
    time_compression: float
    recurrence: RecurrenceSpec
    train_fraction: float
    gavel_alpha_max: str
    synthetic_jobs: int
    arrival_rate: float
    single_gpu_share: float | None
    max_gpus: int | None
    cluster: Cluster
    timing: TimingModel

    @classmethod
    def of(cls, config: RunConfig) -> "TableSpec":
        wl = config.workload
        return cls(wl.name, wl.path, config.seed, wl.time_compression, wl.recurrence.spec(), wl.train_fraction,
                   wl.gavel_alpha_max, wl.synthetic_jobs, wl.arrival_rate, wl.single_gpu_share, wl.max_gpus,
                   build_cluster(config), build_timing(config))

    def require_path(self) -> str:
        if not self.path:
            raise ConfigError(f"workload.path is required for workload {self.name!r}")
        return self.path


def _philly(spec: TableSpec) -> pd.DataFrame:
    return load_philly(spec.path, time_compression=spec.time_compression, recurrence=spec.recurrence, seed=spec.seed,
                       train_fraction=spec.train_fraction)


def _gavel(spec: TableSpec) -> pd.DataFrame:
    return load_gavel(spec.path, recurrence=spec.recurrence, seed=spec.seed, train_fraction=spec.train_fraction,
                      alpha_max=spec.gavel_alpha_max)


def _synthetic(spec: TableSpec) -> pd.DataFrame:
    share = 0.8 if spec.single_gpu_share is None else spec.single_gpu_share
    return synthetic_workload(spec.synthetic_jobs, spec.seed, arrival_rate=spec.arrival_rate, single_gpu_share=share)


TABLE_SOURCES: dict[str, Callable[[TableSpec], pd.DataFrame]] = {
    "philly": _philly,
    "gavel": _gavel,
    "pai2020": lambda spec: load_pai2020(spec.require_path()),
    "csv": lambda spec: load_csv(spec.require_path()),
    "synthetic": _synthetic,
}
BUILT_IN_SOURCES = frozenset(TABLE_SOURCES)


TableLoader = Callable[[TableSpec], pd.DataFrame]


def register_workload(name: str) -> Callable[[TableLoader], TableLoader]:
    """Decorator: `workload.name=<name>` loads its job table with the decorated function (TableSpec ->
    a table of the job-table schema, workloads/schema.py), then assigns models, splits and predicts
    like any trace."""
    def decorator(loader: TableLoader) -> TableLoader:
        TABLE_SOURCES[name] = loader
        return loader

    return decorator


T = TypeVar("T")
MEMORY_ENTRIES = 6
_memory: dict[tuple, Any] = {}


def _memoised(key: tuple, compute: Callable[[], tuple[T, str]]) -> tuple[T, str]:
    """compute() once per process for `key` (the last few keys are kept); a repeat reports 'memory'."""
    if key in _memory:
        return _memory[key], "memory"
    value, status = compute()
    if len(_memory) >= MEMORY_ENTRIES:
        del _memory[next(iter(_memory))]
    _memory[key] = value
    return value, status


def run_cache(config: RunConfig) -> DiskCache:
    return resolve_cache(config.cache.dir, config.cache.enabled)


def _trace_hash(spec: TableSpec) -> str | None:
    """The bytes of the table's input file or directory, and of a plugin's loader (packaged traces and
    loaders are part of the code fingerprint)."""
    parts = [content_hash(spec.path) if spec.path and Path(spec.path).exists() else None, _loader_hash(spec)]
    return None if parts == [None, None] else ":".join(str(part) for part in parts)


def _loader_hash(spec: TableSpec) -> str | None:
    """A registered (plugin) loader's source file, which the package's code fingerprint does not cover."""
    if spec.name in BUILT_IN_SOURCES:
        return None
    source = inspect.getsourcefile(TABLE_SOURCES[spec.name])
    return content_hash(source) if source else None


def _load_and_assign(spec: TableSpec) -> pd.DataFrame:
    raw = TABLE_SOURCES[spec.name](spec)
    if spec.name not in BUILT_IN_SOURCES:  # a plugin's table meets the same schema checks as a CSV file
        raw = validate_job_table(raw, f"workload {spec.name!r}")
    table = assign_models(raw, spec.cluster, spec.seed, timing=spec.timing, max_gpus=spec.max_gpus)
    table.attrs.update(raw.attrs)
    return table


def _assigned_table(spec: TableSpec, cache: DiskCache) -> tuple[pd.DataFrame, str]:
    """The loaded, model-assigned table: from this process's memory, the disk cache, or computed."""
    def compute() -> tuple[pd.DataFrame, str]:
        key = cache_key("table", spec=spec, trace=_trace_hash(spec)) if cache.root else ""
        return cache.get_or_compute("table", key, lambda: _load_and_assign(spec))

    return _memoised(("table", spec, _trace_hash(spec), cache), compute)


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
        return _finished(config, Workload(jobs=instance.jobs(), table=table, history=table.iloc[:0], later=table,
                                          cluster=instance.cluster, source=f"instance {name!r}",
                                          recurrence_keys="none"))
    if name not in TABLE_SOURCES:
        raise ConfigError(f"unknown workload {name!r}; known: {sorted(TABLE_SOURCES) + sorted(INSTANCES)}")
    spec, cache = TableSpec.of(config), run_cache(config)
    cached, table_status = _assigned_table(spec, cache)
    full = cached.copy()
    full.attrs.update(cached.attrs)
    history, later = chronological_split(full, config.workload.train_fraction)
    table = _simulated_part(later, config)
    source = str(full.attrs.get("source", name))
    jobs, jobs_status = _simulated_jobs(spec, config, table, source, cache)
    workload = Workload(jobs=jobs, table=table, history=history, later=later, cluster=build_cluster(config),
                        source=source, recurrence_keys=str(full.attrs.get("recurrence_keys", "given")),
                        cache_status={"table": table_status, "jobs": jobs_status})
    if "recurrence" in full.attrs:
        workload.scalars["recurrence"] = dict(full.attrs["recurrence"])
    if "gavel_alpha_extrapolated" in full.attrs:
        workload.scalars["gavel_alpha_extrapolated"] = extrapolated = int(full.attrs["gavel_alpha_extrapolated"])
        if extrapolated:
            note_extrapolated(source, extrapolated)
    return _finished(config, workload)


def _finished(config: RunConfig, workload: Workload) -> Workload:
    """Scale releases to workload.target_load, add the injected jobs, record the offered load."""
    wl = config.workload
    timing, G = build_timing(config), workload.cluster.total_gpus
    durations = best_durations(workload.jobs, workload.cluster, timing)
    factor = 1.0
    if wl.target_load is not None:
        workload.jobs, factor = scale_to_load(workload.jobs, durations, G, wl.target_load)
        workload.table = workload.table.assign(release=[job.release for job in workload.jobs])
    if wl.inject_jobs:
        releases = [job.release for job in workload.jobs]
        extra = injected_jobs(wl.inject_jobs, gpus=wl.inject_gpus, duration=wl.inject_duration,
                              span=max(releases) - min(releases), seed=config.seed, cluster=workload.cluster,
                              timing=timing, max_gpus=wl.max_gpus)
        extra_jobs = jobs_from_table(extra, "workload.inject_jobs")
        workload.table = pd.concat([workload.table, extra], ignore_index=True)
        workload.jobs = workload.jobs + extra_jobs
        durations = np.concatenate([durations, best_durations(extra_jobs, workload.cluster, timing)])
    workload.durations = durations
    workload.scalars.update(offered_load=offered_load(workload.jobs, durations, G), release_scale=factor,
                            injected_jobs=wl.inject_jobs)
    return workload


def _simulated_jobs(spec: TableSpec, config: RunConfig, table: pd.DataFrame, source: str,
                    cache: DiskCache) -> tuple[list[Job], str]:
    """The simulated part as Jobs, their plans built from the profiles: keyed by the table's inputs and
    every workload key (slice, share, cap), so a sweep over scheduler or placement keys builds them once."""
    workload = json.dumps(dataclasses.asdict(config.workload), sort_keys=True)

    def compute() -> tuple[list[Job], str]:
        key = (cache_key("jobs", spec=spec, trace=_trace_hash(spec), workload=config.workload) if cache.root
               else "")
        return cache.get_or_compute("jobs", key, lambda: jobs_from_table(table, source))

    jobs, status = _memoised(("jobs", spec, _trace_hash(spec), workload, cache), compute)
    return list(jobs), status


def _fitted_on_trace(spec: TableSpec, train_fraction: float, name: str, params: dict[str, Any],
                     cache: DiskCache) -> tuple[Any, str]:
    """A predictor fit on a trace's history: from memory, the disk cache, or fitted now."""
    def fit() -> Any:
        history, _ = chronological_split(_assigned_table(spec, cache)[0], train_fraction)
        return make_predictor(name, **params).fit(history)

    def compute() -> tuple[Any, str]:
        key = (cache_key("predictor", spec=spec, trace=_trace_hash(spec), train_fraction=train_fraction,
                         predictor=name, params=params) if cache.root else "")
        return cache.get_or_compute("predictor", key, fit)

    return _memoised(("predictor", spec, _trace_hash(spec), train_fraction, name, json.dumps(params, sort_keys=True),
                      cache), compute)


def fitted_predictor(config: RunConfig, workload: Workload) -> Any:
    """The predictor group's predictor, fit on the workload's history."""
    name, params = predictor_params(config)
    if config.workload.name in TABLE_SOURCES:
        predictor, status = _fitted_on_trace(TableSpec.of(config), config.workload.train_fraction, name, params,
                                             run_cache(config))
        workload.cache_status.setdefault("predictor", status)  # the run's first fit says where it came from
        return predictor
    return make_predictor(name, **params).fit(workload.history)


def fit_predictions(config: RunConfig, workload: Workload) -> dict[Hashable, float]:
    """job_id -> predicted iterations from the predictor fit on the workload's history."""
    return fitted_predictor(config, workload).predictions(workload.table)


def prediction_scalars(config: RunConfig, workload: Workload) -> dict[str, float]:
    """On the simulated jobs: the share whose group the predictor never saw (`unseen_share`; always 0
    for predictors that need no history, oracle and noisy), their share of the GPU time g_i d_i
    (`unseen_gpu_time_share`), and the median relative error |n~ - n| / n on the seen ones
    (`predictor_median_rel_error_seen`)."""
    predictor = fitted_predictor(config, workload)
    unseen = predictor.unseen_mask(workload.table)
    errors = accuracy_summary(prediction_errors(workload.table, predictor.predict(workload.table), unseen))
    work = np.array([job.gpus for job in workload.jobs], dtype=float) * workload.durations
    fits = ~np.isnan(work)
    total = float(work[fits].sum())
    return {"unseen_share": errors["unseen_share"],
            "unseen_gpu_time_share": float(work[fits & unseen].sum()) / total if total > 0 else float("nan"),
            "predictor_median_rel_error_seen": errors["median_relative_error_seen"]}
