"""The prepared work of a run: the workload (loaded, model-assigned, split), the fitted predictor and
its predictions on the simulated jobs.

Trace workloads are split chronologically: the predictor learns from the history, the simulated
jobs come from the later part. Both the assigned table and the fitted predictor are cached on disk
under a content key (cache.py: every TableSpec field, the trace's bytes, the predictor's parameters),
and so are the predictions on the simulated jobs (also keyed by those jobs' content), all memoised
per process, so sweep points and parallel workers that share them do the work once.
The simulated jobs then get their releases scaled to `workload.target_load` (so points of a load
sweep share the fit) and the injected jobs of `workload.inject_jobs`; `workload_scalars` and
`prediction_scalars` are what every run reports about its job set (offered load, unseen share, the
predictor's error).
"""

from __future__ import annotations

import inspect
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, TypeVar

import numpy as np
import pandas as pd

from .adjustments import adjust
from .build import build_cluster, build_timing, predictor_params
from .cache import DiskCache, cache_key, content_hash, frame_hash, resolve_cache
from .config import RunConfig
from .core import Cluster, Job
from .prediction import PREDICTORS, accuracy_summary, chronological_split, make_predictor, prediction_errors
from .timing import TimingModel
from .params import Params
from .workloads.assign import assign_models
from .workloads.gavel import note_extrapolated, note_priority_slo_ignored
from .workloads.injection import injected_jobs
from .workloads.instances import get_instance
from .workloads.jobs import jobs_from_table
from .workloads.load import best_durations, offered_load, scale_to_load
from .workloads.schema import validate_job_table
from .workloads.slicing import resample_single_gpu_share, slice_jobs
from .workloads.tracecard import format_trace_card
from .workloads.sources import WORKLOADS, TraceParams


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
    """What a loaded, model-assigned job table depends on (hashable, so loads are memoised per process,
    and expanded field by field into the on-disk cache key): the workload source, the values of its
    parameters that decide the table (`TraceParams.table_key`: not the keys that only choose among the
    loaded jobs), the seed, the cluster and the timing model. `params` is what the loader receives.
    """

    name: str
    table_params: tuple[tuple[str, Any], ...]
    seed: int
    cluster: Cluster
    timing: TimingModel
    params: Params = field(compare=False, repr=False)

    @classmethod
    def of(cls, config: RunConfig) -> "TableSpec":
        params = config.workload.params
        assert isinstance(params, TraceParams)
        frozen = {key: tuple(value) if isinstance(value, list) else value for key, value in params.table_key().items()}
        return cls(config.workload.name, tuple(sorted(frozen.items())), config.seed, build_cluster(config),
                   build_timing(config), params)

    def cache_inputs(self) -> dict[str, Any]:
        """The spec as cache-key inputs (without the full `params`, whose table-deciding part is in it)."""
        return {"name": self.name, "table_params": dict(self.table_params), "seed": self.seed,
                "cluster": self.cluster, "timing": self.timing}


def is_trace(name: str) -> bool:
    """Whether workload `name` is a trace source (a loader of job tables), not a hand-made instance."""
    return WORKLOADS.entry(name).meta["kind"] == "trace"


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
    return resolve_cache(config.cache.dir, config.cache.enabled, config.cache.max_size_gb)


def _trace_hash(spec: TableSpec) -> str | None:
    """The bytes of the table's input file or directory, and of a plugin's loader (packaged traces and
    loaders are part of the code fingerprint)."""
    path = getattr(spec.params, "path", None)
    parts = [content_hash(path) if path and Path(path).exists() else None, _loader_hash(spec)]
    return None if parts == [None, None] else ":".join(str(part) for part in parts)


def _is_built_in(name: str) -> bool:
    return WORKLOADS.entry(name).module.startswith("asrpt_bench.")


def _loader_hash(spec: TableSpec) -> str | None:
    """A registered (plugin) loader's source file, which the package's code fingerprint does not cover."""
    if _is_built_in(spec.name):
        return None
    source = inspect.getsourcefile(WORKLOADS.entry(spec.name).factory)
    return content_hash(source) if source else None


def _load_and_assign(spec: TableSpec) -> pd.DataFrame:
    raw = WORKLOADS.make(spec.name, spec.params, seed=spec.seed)
    if not _is_built_in(spec.name):  # a plugin's table meets the same schema checks as a CSV file
        raw = validate_job_table(raw, f"workload {spec.name!r}")
    table = assign_models(raw, spec.cluster, spec.seed, timing=spec.timing, max_gpus=spec.params.max_gpus)
    table.attrs.update(raw.attrs)
    return table


def _assigned_table(spec: TableSpec, cache: DiskCache) -> tuple[pd.DataFrame, str]:
    """The loaded, model-assigned table: from this process's memory, the disk cache, or computed."""
    def compute() -> tuple[pd.DataFrame, str]:
        key = cache_key("table", spec=spec.cache_inputs(), trace=_trace_hash(spec)) if cache.root else ""
        return cache.get_or_compute("table", key, lambda: _load_and_assign(spec))

    return _memoised(("table", spec, _trace_hash(spec), cache), compute)


def _simulated_part(later: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    wl = config.workload.params
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
    if not is_trace(name):
        instance = get_instance(name)
        table = instance.table.copy()
        return _finished(config, Workload(jobs=instance.jobs(), table=table, history=table.iloc[:0], later=table,
                                          cluster=instance.cluster, source=f"instance {name!r}",
                                          recurrence_keys="none"))
    spec, cache = TableSpec.of(config), run_cache(config)
    cached, table_status = _assigned_table(spec, cache)
    full = cached.copy()
    full.attrs.update(cached.attrs)
    history, later = chronological_split(full, spec.params.train_fraction)
    table = _simulated_part(later, config)
    source = str(full.attrs.get("source", name))
    jobs, jobs_status = _simulated_jobs(spec, config, table, source, cache)
    workload = Workload(jobs=jobs, table=table, history=history, later=later, cluster=build_cluster(config),
                        source=source, recurrence_keys=str(full.attrs.get("recurrence_keys", "given")),
                        cache_status={"table": table_status, "jobs": jobs_status})
    if "recurrence" in full.attrs:
        workload.scalars["recurrence"] = dict(full.attrs["recurrence"])
    _report_log(full.attrs, workload)
    if "gavel_alpha_extrapolated" in full.attrs:
        workload.scalars["gavel_alpha_extrapolated"] = extrapolated = int(full.attrs["gavel_alpha_extrapolated"])
        if extrapolated:
            note_extrapolated(source, extrapolated)
    if "gavel_priority_slo_ignored" in full.attrs:
        workload.scalars["gavel_priority_slo_ignored"] = ignored = int(full.attrs["gavel_priority_slo_ignored"])
        if ignored:
            note_priority_slo_ignored(source, ignored)
    return _finished(config, workload)


def _report_log(attrs: dict[str, Any], workload: Workload) -> None:
    """A job log's trace card, printed and kept in the summary, and its notes, warned once per run (also
    when the table comes from a cache)."""
    if "trace_card" in attrs:
        workload.scalars["trace_card"] = attrs["trace_card"]
        logging.getLogger("asrpt_bench").info(format_trace_card(attrs["trace_card"]))
    for note in attrs.get("notes", ()):
        adjust(str(note["key"]), int(note["count"]), str(note["message"]), stacklevel=3)


def run_predictor(config: RunConfig, history: pd.DataFrame) -> tuple[str, dict[str, Any]]:
    """The predictor group's predictor and keywords, or the oracle when that predictor learns from a history
    (`needs_history`) and the workload has none (a CSV table simulates every row by default): said in one
    warning line and counted as `predictor_oracle_without_history`."""
    name, params = predictor_params(config)
    if history.empty and getattr(PREDICTORS.entry(name).factory, "needs_history", False):
        fraction = getattr(config.workload.params, "train_fraction", None)
        adjust("predictor_oracle_without_history", 1,
               f"predictor={name} learns from the jobs before workload.train_fraction, and workload "
               f"{config.workload.name!r} has none" + ("" if fraction is None else f" (train_fraction={fraction:g})")
               + "; the run predicts with predictor=oracle (true iterations) instead", stacklevel=3)
        return "oracle", {}
    return name, params


def _finished(config: RunConfig, workload: Workload) -> Workload:
    """Scale releases to workload.target_load, add the injected jobs, record the offered load (an
    instance has none of these keys: it is simulated as written); choose the run's predictor."""
    workload.scalars["predictor_used"] = run_predictor(config, workload.history)[0]
    wl = config.workload.params
    timing, G = build_timing(config), workload.cluster.total_gpus
    durations = best_durations(workload.jobs, workload.cluster, timing)
    factor = 1.0
    if getattr(wl, "target_load", None) is not None:
        workload.jobs, factor = scale_to_load(workload.jobs, durations, G, wl.target_load)
        workload.table = workload.table.assign(release=[job.release for job in workload.jobs])
    if getattr(wl, "inject_jobs", 0):
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
                            injected_jobs=getattr(wl, "inject_jobs", 0))
    return workload


def _simulated_jobs(spec: TableSpec, config: RunConfig, table: pd.DataFrame, source: str,
                    cache: DiskCache) -> tuple[list[Job], str]:
    """The simulated part as Jobs, their plans built from the profiles: keyed by the table's inputs and
    every workload key (slice, share, cap), so a sweep over scheduler or placement keys builds them once."""
    workload = json.dumps(config.workload.to_dict(), sort_keys=True)

    def compute() -> tuple[list[Job], str]:
        key = (cache_key("jobs", spec=spec.cache_inputs(), trace=_trace_hash(spec), workload=config.workload.params)
               if cache.root else "")
        return cache.get_or_compute("jobs", key, lambda: jobs_from_table(table, source))

    jobs, status = _memoised(("jobs", spec, _trace_hash(spec), workload, cache), compute)
    return list(jobs), status


def _fit_inputs(spec: TableSpec, train_fraction: float, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """What a predictor fit on a trace's history depends on (its cache key's inputs)."""
    return {"spec": spec.cache_inputs(), "trace": _trace_hash(spec), "train_fraction": train_fraction,
            "predictor": name, "params": params}


def _fitted_on_trace(spec: TableSpec, train_fraction: float, name: str, params: dict[str, Any],
                     cache: DiskCache) -> tuple[Any, str]:
    """A predictor fit on a trace's history: from memory, the disk cache, or fitted now."""
    def fit() -> Any:
        history, _ = chronological_split(_assigned_table(spec, cache)[0], train_fraction)
        return make_predictor(name, **params).fit(history)

    def compute() -> tuple[Any, str]:
        key = cache_key("predictor", **_fit_inputs(spec, train_fraction, name, params)) if cache.root else ""
        return cache.get_or_compute("predictor", key, fit)

    return _memoised(("predictor", spec, _trace_hash(spec), train_fraction, name, json.dumps(params, sort_keys=True),
                      cache), compute)


def fitted_predictor(config: RunConfig, workload: Workload) -> Any:
    """The run's predictor (`run_predictor`), fit on the workload's history."""
    name, params = run_predictor(config, workload.history)
    if is_trace(config.workload.name):
        predictor, status = _fitted_on_trace(TableSpec.of(config), config.workload.params.train_fraction, name, params,
                                             run_cache(config))
        workload.cache_status.setdefault("predictor", status)  # the run's first fit says where it came from
        return predictor
    return make_predictor(name, **params).fit(workload.history)


@dataclass(frozen=True)
class Predictions:
    """The fitted predictor's output on the simulated jobs, in the table's row order: predicted
    iterations (`predict`) and the rows it has no history for (`unseen_mask`)."""

    predicted: np.ndarray
    unseen: np.ndarray


def _predict_simulated(config: RunConfig, workload: Workload) -> Predictions:
    predictor = fitted_predictor(config, workload)
    return Predictions(predictor.predict(workload.table), predictor.unseen_mask(workload.table))


def simulated_predictions(config: RunConfig, workload: Workload) -> Predictions:
    """The predictor's output on the simulated jobs. For a trace workload it is cached on disk and
    memoised under the fitted predictor's key inputs plus the simulated jobs' content (cache.frame_hash:
    released, scaled and injected as simulated), so a warm run neither unpickles the predictor (a
    forest: tens of MB, and importing scikit-learn) nor predicts; summary's cache then says
    `"predictions": "hit"` and `"predictor": "unused"`."""
    if not is_trace(config.workload.name):
        return _predict_simulated(config, workload)
    name, params = run_predictor(config, workload.history)
    spec, cache = TableSpec.of(config), run_cache(config)
    train_fraction = config.workload.params.train_fraction
    jobs = frame_hash(workload.table)

    def compute() -> tuple[Predictions, str]:
        key = (cache_key("predictions", **_fit_inputs(spec, train_fraction, name, params), jobs=jobs)
               if cache.root else "")
        return cache.get_or_compute("predictions", key, lambda: _predict_simulated(config, workload))

    predictions, status = _memoised(("predictions", spec, _trace_hash(spec), train_fraction, name,
                                     json.dumps(params, sort_keys=True), jobs, cache), compute)
    workload.cache_status.setdefault("predictions", status)
    workload.cache_status.setdefault("predictor", "unused")  # set by fitted_predictor if it was needed
    return predictions


def fit_predictions(config: RunConfig, workload: Workload) -> dict[Hashable, float]:
    """job_id -> predicted iterations from the predictor fit on the workload's history."""
    predicted = simulated_predictions(config, workload).predicted
    return dict(zip(workload.table["job_id"].tolist(), predicted.tolist()))


def prediction_scalars(config: RunConfig, workload: Workload) -> dict[str, float]:
    """On the simulated jobs: the share whose group the predictor never saw (`unseen_share`; always 0
    for predictors that need no history, oracle and noisy), their share of the GPU time g_i d_i
    (`unseen_gpu_time_share`), and the median relative error |n~ - n| / n on the seen ones
    (`predictor_median_rel_error_seen`)."""
    predictions = simulated_predictions(config, workload)
    unseen = predictions.unseen
    errors = accuracy_summary(prediction_errors(workload.table, predictions.predicted, unseen))
    work = np.array([job.gpus for job in workload.jobs], dtype=float) * workload.durations
    fits = ~np.isnan(work)
    total = float(work[fits].sum())
    return {"unseen_share": errors["unseen_share"],
            "unseen_gpu_time_share": float(work[fits & unseen].sum()) / total if total > 0 else float("nan"),
            "predictor_median_rel_error_seen": errors["median_relative_error_seen"]}
