"""Workload sources by name (config `workload=<name>`), each with its own parameters.

A trace source is a function `load(params, seed) -> job table` registered with the dataclass of its
parameters; the run assigns models, splits history from simulated jobs and predicts the same way for
every source (pipeline.py). Every trace source's parameters extend `TraceParams`, the keys that say
which jobs are simulated and which earlier jobs train the predictor; a source adds the keys its
loader reads (a path, the recurrence-key model, ...), so a key a source does not read is refused.
Hand-made instances (instances.py) register here too, without parameters.

    @register_workload("my_trace", MyTraceParams)
    def my_trace(params: MyTraceParams, seed: int) -> pd.DataFrame: ...
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional

import pandas as pd

from ..errors import ConfigError
from ..params import NoParams, Params, param
from ..registry import Registry
from ..rules import Rule, flag, integer, job_count, number, one_of, optional_integer, seconds
from .csv_table import load_csv
from .gavel import ALPHA_MAX_SOURCES, PLACEMENT_MODELS, load_gavel
from . import helios as helios_format
from . import slurm as slurm_format
from . import swf as swf_format
from .instants import TIME_ZONE
from .joblog import check_states
from .pai2020 import load_pai2020
from .philly import load_philly
from .queueing import SizeDistribution, mg1_workload, size_distribution
from .recurrence import RecurrenceSpec
from .synthetic import synthetic_workload

WORKLOADS: Registry[Any] = Registry("workload")


def register_workload(name: str, params: type[Params] = NoParams, *, replace: bool = False,
                      kind: str = "trace") -> Callable:
    """Decorator: `workload=<name>` loads its job table with `load(params, seed)` (kind "trace"), or is a
    hand-made instance made by a function of no arguments (kind "instance")."""
    return WORKLOADS.register(name, params, needs=("seed",) if kind == "trace" else (), replace=replace, kind=kind)


def _optional_number(low: float, high: float | None, what: str) -> Rule:
    def accepts(value: Any) -> bool:
        if value is None:
            return True
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return ok and (value > low if high is None else low <= value <= high)

    return Rule(what, accepts)


@dataclass(frozen=True)
class TraceParams(Params):
    """Which jobs of a trace are simulated and which earlier jobs train the predictor.

    The trace is split chronologically: the first `train_fraction` is the predictor's history; the
    simulated jobs are `num_jobs` consecutive later jobs from `offset`, or, with `single_gpu_share`
    (Fig 7), a draw with that share of single-GPU jobs. Then `job_cap`, releases scaled to
    `target_load`, and `inject_jobs` unseen gang jobs.
    """

    num_jobs: Optional[int] = param(2000, job_count(optional=True), "simulated jobs (null: every later job)")
    offset: int = param(0, integer(0), "first simulated job, counted in the later part")
    train_fraction: float = param(0.8, number(0, below=1), "share of the trace the predictor learns from")
    single_gpu_share: Optional[float] = param(None, _optional_number(0, 1, "null or a number in [0, 1]"),
                                              "draw the simulated jobs with this share of single-GPU jobs")
    resample_replace: bool = param(False, flag(), "the single_gpu_share draw is with replacement")
    resample_releases: str = param("slots", one_of("slots", "original"),
                                   "slots: the draw keeps the default slice's arrival times")
    target_load: Optional[float] = param(None, _optional_number(0, None, "null (as in the trace) or a number > 0"),
                                         "scale releases to this offered load sum g_i d_i / (G x span)")
    inject_jobs: int = param(0, job_count(low=0), "unseen gang jobs added over the simulated span")
    inject_gpus: int = param(16, integer(1), "GPUs of each injected job")
    inject_duration: float = param(200_000.0, seconds(strict=True),
                                   "seconds of each injected job")
    drop_oversize: bool = param(True, flag(), "drop jobs larger than the cluster (counted) instead of failing")
    job_cap: Optional[int] = param(None, job_count(optional=True), "hard cap on the simulated jobs")
    max_gpus: Optional[int] = param(None, optional_integer(1), "cap a job's GPU demand before assignment")

    SELECTION_ONLY = ("num_jobs", "offset", "resample_replace", "resample_releases", "target_load", "inject_jobs",
                      "inject_gpus", "inject_duration", "drop_oversize", "job_cap")
    """Keys that choose among the loaded jobs: the loaded, model-assigned table does not depend on them."""

    def table_key(self) -> dict[str, Any]:
        """The values the loaded, model-assigned table depends on (its cache key)."""
        return {key: value for key, value in self.values().items() if key not in self.SELECTION_ONLY}

    def input_path(self) -> str | None:
        """The file or directory the source reads (its `path` key, for a source that has one; None: the
        packaged data, or no file), whose bytes join the table's identity."""
        return self.values().get("path")


def _path(required: bool) -> Any:
    what = "a file or directory path" if required else "null (the packaged trace) or a file path"
    rule = Rule(what, lambda v: (isinstance(v, str) and bool(v.strip())) or (v is None and not required),
                lambda key, v: (f"{key} is required for this workload: set it on the command line ({key}=...)"
                                if v is None else f"{key} must be {what}, got {v!r}"))
    return param(None, rule, "the trace file" + ("" if required else " (null: the packaged one)"))


@dataclass(frozen=True)
class PhillyParams(TraceParams):
    path: Optional[str] = _path(required=False)
    time_compression: float = param(1.0, number(0, strict=True, what="a number"),
                                    "releases are divided by it (> 1 packs arrivals closer)")
    recurrence: RecurrenceSpec = param(RecurrenceSpec(), None, "the synthetic recurrence-key model")

    def check_together(self, prefix: str) -> None:
        if self.recurrence.source == "trace":
            raise ConfigError(f"{prefix}.recurrence.source must be synthetic or virtual_cluster for philly (the trace "
                         "has no job groups), got 'trace'")


@dataclass(frozen=True)
class GavelParams(TraceParams):
    num_jobs: Optional[int] = param(None, job_count(optional=True), "simulated jobs (null: every later job)")
    path: Optional[str] = _path(required=False)
    recurrence: RecurrenceSpec = param(RecurrenceSpec(source="trace", new_group_share=0.0), None,
                                       "the recurrence keys (default: the job type, as in the trace)")
    gavel_alpha_max: str = param("alpha", one_of(*ALPHA_MAX_SOURCES),
                                 "declared alpha_max: alpha, or Gavel's spread-placement measurement")
    gavel_placement: str = param("consolidated", one_of(*PLACEMENT_MODELS),
                                 "alpha on every placement (Gavel's simulator), or measured: unconsolidated "
                                 "when the job spans several servers")


@dataclass(frozen=True)
class FileParams(TraceParams):
    path: Optional[str] = _path(required=True)


@dataclass(frozen=True)
class HandMadeParams(TraceParams):
    """A hand-made table: every row is simulated unless the user asks for a history."""

    num_jobs: Optional[int] = param(None, job_count(optional=True), "simulated jobs (null: every later row)")
    train_fraction: float = param(0.0, number(0, below=1), "share of the rows the predictor learns from")
    drop_oversize: bool = param(False, flag(), "drop jobs larger than the cluster (counted) instead of failing")


@dataclass(frozen=True)
class CsvParams(HandMadeParams):
    path: Optional[str] = _path(required=True)
    delimiter: str = param(",", Rule("one character other than a quote, a space or a line break", lambda v: (
        isinstance(v, str) and len(v) == 1 and v not in "\"' \r\n")), "the character between fields, e.g. ';' or '|'")


def _states() -> Any:
    return param(None, Rule("null or a list of state names", lambda v: v is None or (
        isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v))),
        "the final states kept (null: every state a job ends in, with its observed run time)")


@dataclass(frozen=True)
class LogParams(TraceParams):
    """A cluster's job log (joblog.py): every job after the history cut is simulated by default."""

    FINISHED_STATES: ClassVar[tuple[str, ...]] = ()

    num_jobs: Optional[int] = param(None, job_count(optional=True), "simulated jobs (null: every later job)")
    path: Optional[str] = _path(required=True)
    states: Optional[list[str]] = _states()

    def check_together(self, prefix: str) -> None:
        check_states(self.states, self.FINISHED_STATES, f"{prefix}.states")


def _timezone() -> Any:
    return param("UTC", TIME_ZONE, "the time zone of time stamps without a UTC offset")


@dataclass(frozen=True)
class SlurmParams(LogParams):
    FINISHED_STATES: ClassVar[tuple[str, ...]] = slurm_format.FINISHED_STATES

    timezone: str = _timezone()


@dataclass(frozen=True)
class SwfParams(LogParams):
    FINISHED_STATES: ClassVar[tuple[str, ...]] = swf_format.FINISHED_STATES

    gpus_per_processor: float = param(1.0, number(0, strict=True, what="a number"),
                                      "GPUs per processor of the log (a job's GPUs: ceil(processors x this))")


@dataclass(frozen=True)
class DatacenterLogParams(LogParams):
    FINISHED_STATES: ClassVar[tuple[str, ...]] = helios_format.FINISHED_STATES

    timezone: str = _timezone()


@dataclass(frozen=True)
class SyntheticParams(TraceParams):
    num_jobs: Optional[int] = param(None, job_count(optional=True), "simulated jobs (null: every job after the history)")
    synthetic_jobs: int = param(2500, job_count(), "jobs the generator draws (history and simulated)")
    arrival_rate: float = param(1.0 / 60.0, number(0, strict=True, what="a number"), "jobs per second")

    def check_together(self, prefix: str) -> None:
        later = self.synthetic_jobs - int(self.synthetic_jobs * self.train_fraction)
        if self.num_jobs is not None and self.single_gpu_share is None and self.num_jobs > later:
            raise ConfigError(f"{prefix}.num_jobs={self.num_jobs} exceeds the {later} jobs after the history cut of "
                         f"{prefix}.synthetic_jobs={self.synthetic_jobs}; raise synthetic_jobs or lower num_jobs")


@register_workload("philly", PhillyParams)
def philly(params: PhillyParams, seed: int) -> pd.DataFrame:
    """The real Philly trace (packaged), with synthetic recurrence keys."""
    return load_philly(params.path, time_compression=params.time_compression, recurrence=params.recurrence,
                       seed=seed, train_fraction=params.train_fraction)


@register_workload("gavel", GavelParams)
def gavel(params: GavelParams, seed: int) -> pd.DataFrame:
    """A Gavel trace (default: the packaged trace of Gavel's generator), alpha from its measured throughputs."""
    return load_gavel(params.path, recurrence=params.recurrence, seed=seed, train_fraction=params.train_fraction,
                      alpha_max=params.gavel_alpha_max, placement=params.gavel_placement)


@register_workload("pai2020", FileParams)
def pai2020(params: FileParams, seed: int) -> pd.DataFrame:
    """The Alibaba PAI 2020 trace from a directory or archive the user names."""
    return load_pai2020(params.path)


@register_workload("csv", CsvParams)
def csv(params: CsvParams, seed: int) -> pd.DataFrame:
    """A job table in a CSV file (the job-table schema, workloads/schema.py)."""
    return load_csv(params.path, delimiter=params.delimiter)


@register_workload("slurm", SlurmParams)
def slurm(params: SlurmParams, seed: int) -> pd.DataFrame:
    """A Slurm accounting export (`sacct --parsable2` with a header line)."""
    return slurm_format.load_slurm(params.path, timezone=params.timezone, states=params.states)


@register_workload("swf", SwfParams)
def swf(params: SwfParams, seed: int) -> pd.DataFrame:
    """A log in the Standard Workload Format of the Parallel Workloads Archive."""
    return swf_format.load_swf(params.path, gpus_per_processor=params.gpus_per_processor, states=params.states)


@register_workload("helios", DatacenterLogParams)
def helios(params: DatacenterLogParams, seed: int) -> pd.DataFrame:
    """A Helios cluster_log.csv (SenseTime, SC'21)."""
    return helios_format.load_helios(params.path, timezone=params.timezone, states=params.states)


@register_workload("acme", DatacenterLogParams)
def acme(params: DatacenterLogParams, seed: int) -> pd.DataFrame:
    """An Acme trace_seren.csv or trace_kalos.csv (Shanghai AI Lab, NSDI'24)."""
    return helios_format.load_acme(params.path, timezone=params.timezone, states=params.states)


@register_workload("synthetic", SyntheticParams)
def synthetic(params: SyntheticParams, seed: int) -> pd.DataFrame:
    """The seeded synthetic generator; single_gpu_share (default 0.8) is also the generator's share."""
    share = 0.8 if params.single_gpu_share is None else params.single_gpu_share
    return synthetic_workload(params.synthetic_jobs, seed, arrival_rate=params.arrival_rate, single_gpu_share=share)


@dataclass(frozen=True)
class MG1Params(HandMadeParams):
    """The M/G/1 queue on one GPU (workloads/queueing.py): Poisson arrivals of 1-GPU jobs, i.i.d. sizes."""

    arrivals: int = param(20_000, integer(1), "jobs the Poisson process releases")
    load: float = param(0.8, number(0, strict=True, below=1),
                        "arrival rate x mean size (the M/G/1 load rho)")
    size_scv: float = param(1.0, number(1), "squared coefficient of variation of the sizes: 1 exponential, "
                                            "above 1 the balanced two-phase hyperexponential")
    mean_size_s: float = param(3600.0, seconds(strict=True), "mean job size")

    def distribution(self) -> SizeDistribution:
        return size_distribution(self.mean_size_s, self.size_scv)


@register_workload("mg1", MG1Params)
def mg1(params: MG1Params, seed: int) -> pd.DataFrame:
    """The M/G/1 queue: `arrivals` 1-GPU jobs at rate load / mean size, hyperexponential sizes of C^2 size_scv."""
    return mg1_workload(params.arrivals, seed, params.load, params.distribution())


IN_MEMORY_TABLES: dict[str, pd.DataFrame] = {}
"""Tables handed over in Python (asrpt_bench.api), by the SHA-256 of their CSV form."""


@dataclass(frozen=True)
class MemoryParams(HandMadeParams):
    table_id: str = param("", Rule("the id of a table handed over in Python", lambda v: isinstance(v, str) and bool(v),
                                   lambda key, v: f"{key} is required: workload=memory runs a table given in Python "
                                                  "(asrpt_bench.api.compare), not from the command line"),
                          "the SHA-256 of the table's CSV form (asrpt_bench.api.remember_table)")


@register_workload("memory", MemoryParams)
def memory(params: MemoryParams, seed: int) -> pd.DataFrame:
    """A job table handed over in Python; its id is the hash of its content, so caches key on the content."""
    if params.table_id not in IN_MEMORY_TABLES:
        raise ConfigError(f"workload.table_id={params.table_id!r}: no such table in this process; hand it over with "
                          "asrpt_bench.api.compare(table, ...)")
    return IN_MEMORY_TABLES[params.table_id].copy()
