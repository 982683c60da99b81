"""The workload pipeline: from a workload source's name and parameters to the jobs a run simulates.

One typed path, the same for every trace source: load the table (workloads.sources), assign models
on the cluster, split history from later jobs (the predictor learns from the history), select the
simulated jobs (a slice, or a single-GPU-share draw), cap them, build their plans, scale releases to
`target_load`, add the injected jobs, record the offered load. The cluster and the timing model enter
once, in `load_workload`, and travel in the `TableSpec` that keys the cached table. A hand-made
instance (workloads.instances) is simulated as written, on its own cluster.

The assigned table and the simulated jobs are cached on disk under a content key (cache.py: every
TableSpec field, the trace's bytes, a plugin loader's source) and memoised per process, so sweep points
and parallel workers that share them do the work once.
"""

from __future__ import annotations

import inspect
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..adjustments import adjust
from ..cache import DiskCache, cache_key, content_hash, memoised
from ..core import Cluster, Job
from ..params import Params
from ..timing import TimingModel
from .assign import assign_models
from .gavel import note_extrapolated, note_priority_slo_ignored
from .injection import injected_jobs
from .instances import get_instance
from .jobs import jobs_from_table
from .load import best_durations, offered_load, scale_to_load
from .schema import check_given_table
from .typed_columns import for_cluster
from .slicing import chronological_split, resample_single_gpu_share, slice_jobs
from .sources import WORKLOADS, TraceParams
from .tracecard import format_trace_card


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
    params: TraceParams = field(compare=False, repr=False)

    @classmethod
    def of(cls, name: str, params: TraceParams, seed: int, cluster: Cluster, timing: TimingModel) -> "TableSpec":
        frozen = {key: tuple(value) if isinstance(value, list) else value for key, value in params.table_key().items()}
        return cls(name, tuple(sorted(frozen.items())), seed, cluster, timing, params)

    def cache_inputs(self) -> dict[str, Any]:
        """The spec as cache-key inputs (without the full `params`, whose table-deciding part is in it)."""
        return {"name": self.name, "table_params": dict(self.table_params), "seed": self.seed,
                "cluster": self.cluster, "timing": self.timing}

    def input_hash(self) -> str | None:
        """The bytes of the table's input file or directory, and of a plugin's loader (packaged traces and
        loaders are part of the code fingerprint)."""
        path = self.params.input_path()
        parts = [content_hash(path) if path and Path(path).exists() else None, self._loader_hash()]
        return None if parts == [None, None] else ":".join(str(part) for part in parts)

    def _loader_hash(self) -> str | None:
        """A registered (plugin) loader's source file, which the package's code fingerprint does not cover."""
        if is_built_in(self.name):
            return None
        source = inspect.getsourcefile(WORKLOADS.entry(self.name).factory)
        return content_hash(source) if source else None


@dataclass
class Workload:
    """The jobs a run simulates, the history its predictor learns from, and where they came from.

    `spec` is the assigned table's identity (None for a hand-made instance); `train_fraction` and
    `drop_oversize` are the source's, so every later step reads them here."""

    jobs: list[Job]
    table: pd.DataFrame
    history: pd.DataFrame
    later: pd.DataFrame
    cluster: Cluster
    timing: TimingModel
    source: str
    recurrence_keys: str
    spec: TableSpec | None = None
    train_fraction: float = 0.0
    drop_oversize: bool = False
    durations: np.ndarray = field(default_factory=lambda: np.empty(0))
    scalars: dict[str, Any] = field(default_factory=dict)
    cache_status: dict[str, str] = field(default_factory=dict)


def is_trace(name: str) -> bool:
    """Whether workload `name` is a trace source (a loader of job tables), not a hand-made instance."""
    return WORKLOADS.entry(name).meta["kind"] == "trace"


def is_built_in(name: str) -> bool:
    return WORKLOADS.entry(name).module.startswith("asrpt_bench.")


def load_workload(name: str, params: Params, *, seed: int, cluster: Cluster, timing: TimingModel,
                  cache: DiskCache) -> Workload:
    """The workload `name` with its parameters (a TraceParams for a trace source; an instance has none),
    on `cluster` under `timing` (an instance brings its own cluster)."""
    if not is_trace(name):
        instance = get_instance(name)
        table = instance.table.copy()
        workload = Workload(jobs=instance.jobs(), table=table, history=table.iloc[:0], later=table,
                            cluster=instance.cluster, timing=timing, source=f"instance {name!r}",
                            recurrence_keys="none")
        return _with_offered_load(workload, best_durations(workload.jobs, workload.cluster, timing), 1.0, 0)
    assert isinstance(params, TraceParams), f"trace source {name!r} has parameters {type(params).__name__}"
    spec = TableSpec.of(name, params, seed, cluster, timing)
    cached, table_status = _assigned_table(spec, cache)
    full = cached.copy(deep=not copies_on_write())
    full.attrs.update(cached.attrs)
    history, later = chronological_split(full, params.train_fraction)
    table = select_jobs(later, params, seed)
    source = str(full.attrs.get("source", name))
    jobs, jobs_status = _simulated_jobs(spec, table, source, cache)
    workload = Workload(jobs=jobs, table=table, history=history, later=later, cluster=cluster, timing=timing,
                        source=source, recurrence_keys=str(full.attrs.get("recurrence_keys", "given")), spec=spec,
                        train_fraction=params.train_fraction, drop_oversize=params.drop_oversize,
                        cache_status={"table": table_status, "jobs": jobs_status})
    _note_trace_facts(workload, full.attrs)
    workload = _scaled_and_injected(workload, params, seed)
    _return_freed_arrow_memory()
    return workload


def copies_on_write() -> bool:
    """Whether pandas copies a column shared by two frames when one of them writes it (copy-on-write: always
    from pandas 3, the `mode.copy_on_write` option before). Then the run's table is a shallow copy of the
    memoised one, so a replay of millions of jobs holds its numeric and object columns once, not twice, and a
    write into the run's table still never reaches the memo."""
    return int(pd.__version__.split(".")[0]) >= 3 or pd.get_option("mode.copy_on_write") is True


def _return_freed_arrow_memory() -> None:
    """Hand the memory that pyarrow's pool (mimalloc or jemalloc, behind pandas' string columns) still holds
    from the table steps' temporaries back to the system: it keeps freed pages for reuse, about 270 bytes a
    job of the synthetic workload, which the simulation after it would never reuse."""
    import pyarrow

    pyarrow.default_memory_pool().release_unused()


def load_table(name: str, params: TraceParams, seed: int) -> pd.DataFrame:
    """The job table trace source `name` loads; a plugin's meets the checks of a CSV file
    (schema.check_given_table), a built-in source checks its own."""
    raw = WORKLOADS.make(name, params, seed=seed)
    return raw if is_built_in(name) else check_given_table(raw, f"workload {name!r}")


def _load_and_assign(spec: TableSpec) -> pd.DataFrame:
    raw = load_table(spec.name, spec.params, spec.seed)
    table = assign_models(raw, spec.cluster, spec.seed, timing=spec.timing, max_gpus=spec.params.max_gpus)
    table.attrs.update(raw.attrs)
    return table


def _assigned_table(spec: TableSpec, cache: DiskCache) -> tuple[pd.DataFrame, str]:
    """The loaded, model-assigned table: from this process's memory, the disk cache, or computed."""
    def compute() -> tuple[pd.DataFrame, str]:
        key = cache_key("table", spec=spec.cache_inputs(), trace=spec.input_hash()) if cache.root else ""
        return cache.get_or_compute("table", key, lambda: _load_and_assign(spec))

    return memoised(("table", spec, spec.input_hash(), cache), compute)


def assigned_table(spec: TableSpec, cache: DiskCache) -> pd.DataFrame:
    """The whole loaded, model-assigned table of `spec` (a predictor's history is cut from it)."""
    return _assigned_table(spec, cache)[0]


def select_jobs(later: pd.DataFrame, params: TraceParams, seed: int) -> pd.DataFrame:
    """The simulated part of the later jobs: `num_jobs` from `offset`, or a draw with `single_gpu_share`
    single-GPU jobs; then at most `job_cap` of them."""
    if params.single_gpu_share is not None:
        chosen = resample_single_gpu_share(later, params.single_gpu_share, num_jobs=params.num_jobs or len(later),
                                           seed=seed, replace=params.resample_replace,
                                           releases=params.resample_releases)
    else:
        chosen = slice_jobs(later, num_jobs=params.num_jobs, offset=params.offset, shift=True)
    if params.job_cap is not None:
        chosen = chosen.iloc[: params.job_cap].reset_index(drop=True)
    return chosen


def _simulated_jobs(spec: TableSpec, table: pd.DataFrame, source: str, cache: DiskCache) -> tuple[list[Job], str]:
    """The simulated part as Jobs, their plans built from the profiles: keyed by the table's inputs and
    every workload key (slice, share, cap), so a sweep over scheduler or placement keys builds them once."""
    def compute() -> tuple[list[Job], str]:
        key = (cache_key("jobs", spec=spec.cache_inputs(), trace=spec.input_hash(), workload=spec.params)
               if cache.root else "")
        return cache.get_or_compute("jobs", key, lambda: jobs_from_table(for_cluster(table, spec.cluster, source),
                                                                          source))

    workload = json.dumps({"name": spec.name, **spec.params.to_dict()}, sort_keys=True)
    jobs, status = memoised(("jobs", spec, spec.input_hash(), workload, cache), compute)
    return list(jobs), status


def _note_trace_facts(workload: Workload, attrs: dict[str, Any]) -> None:
    """The table's own facts (recurrence keys, Gavel's extrapolated alphas and ignored priorities, a job
    log's trace card and notes) into the run's scalars, said once per run even when the table comes from a
    cache: the card is printed, the notes are warned (joblog.py)."""
    if "recurrence" in attrs:
        workload.scalars["recurrence"] = dict(attrs["recurrence"])
    if "trace_card" in attrs:
        workload.scalars["trace_card"] = attrs["trace_card"]
        logging.getLogger("asrpt_bench").info(format_trace_card(attrs["trace_card"]))
    for note in attrs.get("notes", ()):
        adjust(str(note["key"]), int(note["count"]), str(note["message"]), stacklevel=3)
    if "gavel_alpha_extrapolated" in attrs:
        workload.scalars["gavel_alpha_extrapolated"] = extrapolated = int(attrs["gavel_alpha_extrapolated"])
        if extrapolated:
            note_extrapolated(workload.source, extrapolated)
    if "gavel_priority_slo_ignored" in attrs:
        workload.scalars["gavel_priority_slo_ignored"] = ignored = int(attrs["gavel_priority_slo_ignored"])
        if ignored:
            note_priority_slo_ignored(workload.source, ignored)


def _scaled_and_injected(workload: Workload, params: TraceParams, seed: int) -> Workload:
    """Releases scaled to `target_load`, then the `inject_jobs` unseen gang jobs added over the span."""
    durations = best_durations(workload.jobs, workload.cluster, workload.timing)
    factor = 1.0
    if params.target_load is not None:
        workload.jobs, factor = scale_to_load(workload.jobs, durations, workload.cluster.speed_weighted_gpus,
                                              params.target_load)
        workload.table = workload.table.assign(release=[job.release for job in workload.jobs])
    if params.inject_jobs:
        releases = [job.release for job in workload.jobs]
        extra = injected_jobs(params.inject_jobs, gpus=params.inject_gpus, duration=params.inject_duration,
                              span=max(releases) - min(releases), seed=seed, cluster=workload.cluster,
                              timing=workload.timing, max_gpus=params.max_gpus)
        extra_jobs = jobs_from_table(extra, "workload.inject_jobs")
        workload.table = pd.concat([workload.table, extra], ignore_index=True)
        workload.jobs = workload.jobs + extra_jobs
        durations = np.concatenate([durations, best_durations(extra_jobs, workload.cluster, workload.timing)])
    return _with_offered_load(workload, durations, factor, params.inject_jobs)


def _with_offered_load(workload: Workload, durations: np.ndarray, factor: float, injected: int) -> Workload:
    workload.durations = durations
    workload.scalars.update(offered_load=offered_load(workload.jobs, durations, workload.cluster.speed_weighted_gpus),
                            release_scale=factor, injected_jobs=injected)
    return workload
