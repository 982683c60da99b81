"""Typed run configuration: one dataclass per config group, with range checks that name the key.

These dataclasses are the schema of the Hydra config tree in `asrpt_bench/conf` (the CLI merges the
composed config into them, which rejects unknown keys and wrong types), and they are what
`experiment.run_experiment` takes, so Python callers never need Hydra. Each group holds the union of
the keys its options use; a component receives only the keys its constructor accepts.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from .core import ConfigError
from .schedulers.las2d import QUEUE_THRESHOLDS
from .schedulers.preemptive import RESTART_S
from .rules import RULES, check, shown
from .solvers import DEFAULT_SOLVER
from .theory.bound import EPS_BAR_DEFINITIONS, RHO_BAR_DEFINITIONS
from .theory.lower_bounds import ALPHA_MIN_SOURCES
from .workloads.recurrence import RecurrenceSpec

BASELINES = ("spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime", "fifo")
COMPARE_SCHEDULERS = ("asrpt", "asrpt_oracle") + BASELINES


def _check(condition: bool, key: str, requirement: str, value: object) -> None:
    if not condition:
        raise ConfigError(f"{key} must be {requirement}, got {shown(value)}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_rules(group: Any, rule_prefix: str, prefix: str) -> None:
    """Every key of the group that has a shared rule (rules.py), named `<prefix>.<key>` in messages."""
    for item in dataclasses.fields(group):
        if f"{rule_prefix}.{item.name}" in RULES:
            check(f"{rule_prefix}.{item.name}", getattr(group, item.name), f"{prefix}.{item.name}")


@dataclass
class ClusterConfig:
    """Cluster shape and the two bandwidth classes (GB/s)."""

    servers: int = 8
    gpus_per_server: int = 8
    b_intra: float = 300.0
    b_inter: float = 12.5

    def validate(self, prefix: str = "cluster") -> None:
        _check_rules(self, "cluster", prefix)


@dataclass
class TimingConfig:
    """Open choices of the per-iteration time model (paper-notes 2.3); passed to TimingModel."""

    pipeline_mode: str = "async"
    allreduce: str = "ring"
    tree_latency_s: float = 0.0
    fold_p2p_into_stage: bool = False
    microbatches: int = 8

    def validate(self, prefix: str = "timing") -> None:
        _check_rules(self, "timing", prefix)


@dataclass
class RecurrenceConfig:
    """Recurrence keys (workloads/recurrence.py): `source` synthetic | virtual_cluster | trace; `sigma`
    (log-duration noise of the template order; null = keys carry no duration), `new_group_share` of the
    jobs after the history cut in groups never seen before, chosen at random (`new_group_selection`:
    random, or the labelled biased `gpu_time`), template size, templates per user, popularity."""

    source: str = "synthetic"
    sigma: Optional[float] = 1.0
    new_group_share: float = 0.1
    new_group_selection: str = "random"
    jobs_per_template: float = 20.0
    templates_per_user: float = 4.0
    concentration: float = 1.0

    def spec(self) -> RecurrenceSpec:
        return RecurrenceSpec(**dataclasses.asdict(self))

    def validate(self, prefix: str = "workload.recurrence") -> None:
        self.spec().validate(prefix)


@dataclass
class WorkloadConfig:
    """Which jobs are simulated and which earlier jobs train the predictor.

    Trace workloads are split chronologically: the first `train_fraction` of the jobs is the
    history the predictor learns from; the simulated jobs are `num_jobs` consecutive jobs of the
    later part, starting `offset` jobs in. `single_gpu_share` (Fig 7) instead draws `num_jobs` jobs
    from the later part with that share of single-GPU jobs (`resample_replace`: with replacement
    when a pool is too small; `resample_releases=slots`: the draw takes the arrival times of the
    default slice, so only the mix changes); for `synthetic` it is also the generator's share. `max_gpus` caps a
    trace job's GPU demand before a configuration is assigned (null: jobs larger than the cluster
    are dropped with a warning and counted when `drop_oversize`). `job_cap` is a
    hard cap on the simulated jobs. `recurrence` is the recurrence-key model (RecurrenceConfig).

    `target_load` (null: as in the trace) scales the simulated jobs' releases so that their offered
    load sum(g_i d_i) / (G x release span) equals it (after `job_cap`). `inject_jobs` adds that many
    jobs of never-seen groups, `inject_gpus` GPUs and `inject_duration` s each, released uniformly at
    random over the simulated span (after the load scaling: the injection study). `gavel_alpha_max`:
    a Gavel job's declared alpha_max is its alpha (`alpha`, as Gavel's simulator) or the measured
    throughput of a spread placement (`unconsolidated`, so COMM_HEAVY acts).
    """

    name: str = "philly"
    path: Optional[str] = None
    num_jobs: Optional[int] = 2000
    offset: int = 0
    train_fraction: float = 0.8
    single_gpu_share: Optional[float] = None
    resample_replace: bool = False
    resample_releases: str = "slots"
    time_compression: float = 1.0
    recurrence: RecurrenceConfig = field(default_factory=RecurrenceConfig)
    target_load: Optional[float] = None
    inject_jobs: int = 0
    inject_gpus: int = 16
    inject_duration: float = 200_000.0
    gavel_alpha_max: str = "alpha"
    drop_oversize: bool = True
    job_cap: Optional[int] = None
    max_gpus: Optional[int] = None
    synthetic_jobs: int = 2500
    arrival_rate: float = 1.0 / 60.0

    NEEDS_PATH = ("csv", "pai2020")
    """Workloads read from a file or directory the user names (checked here: a yaml `path: ???` would
    not override the schema's null). Philly and Gavel default to packaged traces."""

    def validate(self, prefix: str = "workload") -> None:
        _check(isinstance(self.name, str) and bool(self.name), f"{prefix}.name", "a workload name", self.name)
        if self.name in self.NEEDS_PATH and not self.path:
            raise ConfigError(f"{prefix}.path is required for workload {self.name!r}: set it on the command line "
                              f"({prefix}.path=...)")
        _check_rules(self, "workload", prefix)
        for key in ("job_cap", "max_gpus"):
            value = getattr(self, key)
            _check(value is None or (_is_int(value) and value >= 1), f"{prefix}.{key}", "null or an integer >= 1",
                   value)
        _check(self.single_gpu_share is None or (_is_number(self.single_gpu_share) and 0 <= self.single_gpu_share <= 1),
               f"{prefix}.single_gpu_share", "null or a number in [0, 1]", self.single_gpu_share)
        _check(self.resample_releases in ("slots", "original"), f"{prefix}.resample_releases",
               "'slots' or 'original'", self.resample_releases)
        _check(_is_number(self.time_compression) and self.time_compression > 0, f"{prefix}.time_compression",
               "a number > 0", self.time_compression)
        self.recurrence.validate(f"{prefix}.recurrence")
        _check(not (self.name == "philly" and self.recurrence.source == "trace"), f"{prefix}.recurrence.source",
               "synthetic or virtual_cluster for philly (the trace has no job groups)", self.recurrence.source)
        _check(self.target_load is None or (_is_number(self.target_load) and self.target_load > 0),
               f"{prefix}.target_load", "null (as in the trace) or a number > 0", self.target_load)
        _check(_is_int(self.inject_jobs) and self.inject_jobs >= 0, f"{prefix}.inject_jobs", "an integer >= 0",
               self.inject_jobs)
        _check(_is_int(self.inject_gpus) and self.inject_gpus >= 1, f"{prefix}.inject_gpus", "an integer >= 1",
               self.inject_gpus)
        _check(_is_number(self.inject_duration) and self.inject_duration > 0, f"{prefix}.inject_duration",
               "a duration > 0 in seconds", self.inject_duration)
        _check(self.gavel_alpha_max in ("alpha", "unconsolidated"), f"{prefix}.gavel_alpha_max",
               "'alpha' or 'unconsolidated'", self.gavel_alpha_max)
        _check(_is_int(self.synthetic_jobs) and self.synthetic_jobs >= 1, f"{prefix}.synthetic_jobs",
               "an integer >= 1", self.synthetic_jobs)
        _check(_is_number(self.arrival_rate) and self.arrival_rate > 0, f"{prefix}.arrival_rate",
               "a number > 0 (jobs per second)", self.arrival_rate)


@dataclass
class PredictorConfig:
    """Iteration predictor: `forest` (random forest on recurrence keys), `oracle`, `noisy` (epsilon).

    `unseen` is the forest's rule for groups absent from the history (the paper: zero); `mode` and
    `distribution` shape the noisy oracle's error of mean relative size `epsilon`.
    """

    name: str = "forest"
    epsilon: float = 0.0
    n_estimators: int = 100
    features: list[str] = field(default_factory=lambda: ["group", "user"])
    log_target: bool = False
    unseen: str = "zero"
    n_jobs: int = 1
    mode: str = "both"
    distribution: str = "uniform"

    def validate(self, prefix: str = "predictor") -> None:
        _check(isinstance(self.name, str) and bool(self.name), f"{prefix}.name", "a predictor name", self.name)
        _check(len(self.features) >= 1, f"{prefix}.features", "a non-empty list", self.features)
        _check_rules(self, "predictor", prefix)


@dataclass
class SchedulerConfig:
    """Scheduler choice and parameters; each scheduler receives the keys its constructor accepts.
    restart_s / min_run_s price preemption (srtf, srtf_oracle, las2d); queue_thresholds / promote_knob
    are las2d's (each checked by its scheduler's Params when built)."""

    name: str = "asrpt"
    comm_heavy: float = 1.5
    tau: float = 1.0
    backfill: bool = False
    consolidation_test: str = "alpha"
    delay_origin: str = "enqueue"
    srpt_tiebreak: str = "release_id"
    duration_source: str = "predicted"
    restart_s: float = RESTART_S
    min_run_s: float = 0.0
    queue_thresholds: list[float] = field(default_factory=lambda: list(QUEUE_THRESHOLDS))
    promote_knob: Optional[float] = None

    def validate(self, prefix: str = "scheduler") -> None:
        _check(isinstance(self.name, str) and bool(self.name), f"{prefix}.name", "a scheduler name", self.name)
        _check_rules(self, "scheduler", prefix)


@dataclass
class PlacementConfig:
    """Placer choice; `allreduce_edges` shapes the job graph the graph-based placers cut, `mode` is
    Heavy-Edge's variant. The random placer's seed derives from the run seed."""

    name: str = "heavy_edge"
    mode: str = "refined"
    objective: str = "alpha"
    allreduce_edges: str = "ring"

    def validate(self, prefix: str = "placement") -> None:
        _check(isinstance(self.name, str) and bool(self.name), f"{prefix}.name", "a placement name", self.name)
        _check_rules(self, "placement", prefix)


@dataclass
class SolverConfig:
    """MILP/CP backend of the ILP placer and exact bounds (default: solvers.DEFAULT_SOLVER, CP-SAT)."""

    name: str = DEFAULT_SOLVER
    time_limit_s: float = 600.0
    mip_gap: float = 1e-4
    threads: int = 1

    def validate(self, prefix: str = "solver") -> None:
        _check_rules(self, "solver", prefix)


@dataclass
class TaskConfig:
    """What a run does: `compare`, `simulate`, `placement` (study), `predictor` (accuracy report), `theory`
    (ratio to OPT vs Theorem 1 on tiny instances) or `adversarial` (worst-instance search).

    `schedulers` are compared by `compare`; `baseline_placement` (null: the placement group's placer,
    as A-SRPT's) names the placer the baselines use there, so a comparison can separate scheduling
    gains from placement gains (the paper does not say which placer its baselines used). The placement
    study runs Heavy-Edge and the ILP on every zoo plan of `study_models` (null: all) with a GPU count in `study_gpu_counts`, on each free-GPU
    fragmentation pattern of `study_patterns` (null: all) of the cluster group's cluster.

    `theory` (tasks/theory.py) draws `theory_instances` tiny instances of `theory_jobs` jobs on G =
    `theory_gpus` GPUs (servers of `theory_gpus_per_server`, null: one server), job GPUs, iterations and
    integral releases uniform in the inclusive `[low, high]` ranges. `theory_alpha=fixed`: alpha = 1 s per
    iteration on every placement, declared alpha_max = alpha * U[1, theory_rho_max], so CP-SAT's optimum
    (time limit `theory_time_limit_s`) is the true OPT; `placement`: synthetic communicating plans whose
    alpha depends on the placement, and CP-SAT with the true alpha_min gives a lower bound on OPT.
    `adversarial` runs the seeded search for `adversarial_budget` evaluations of objective
    `adversarial_objective` (eq12 | ratio) on instances of up to `adversarial_max_jobs` jobs on G =
    `theory_gpus`, with iterations up to `adversarial_max_iterations` and releases up to
    `adversarial_max_release`.
    """

    name: str = "compare"
    schedulers: list[str] = field(default_factory=lambda: list(COMPARE_SCHEDULERS))
    baseline_placement: Optional[str] = None
    study_models: Optional[list[str]] = None
    study_gpu_counts: list[int] = field(default_factory=lambda: [2, 4, 8, 16, 32])
    study_patterns: Optional[list[str]] = None
    theory_instances: int = 20
    theory_jobs: int = 5
    theory_gpus: int = 8
    theory_gpus_per_server: Optional[int] = None
    theory_job_gpus: list[int] = field(default_factory=lambda: [1, 6])
    theory_iterations: list[int] = field(default_factory=lambda: [1, 100])
    theory_releases: list[int] = field(default_factory=lambda: [0, 50])
    theory_alpha: str = "fixed"
    theory_rho_max: float = 1.0
    theory_time_limit_s: float = 10.0
    adversarial_objective: str = "eq12"
    adversarial_budget: int = 200
    adversarial_max_jobs: int = 4
    adversarial_max_iterations: int = 100_000
    adversarial_max_release: int = 1_000

    def validate(self, prefix: str = "task") -> None:
        _check(isinstance(self.name, str) and bool(self.name), f"{prefix}.name", "a task name", self.name)
        _check(len(self.schedulers) >= 1 and len(set(self.schedulers)) == len(self.schedulers),
               f"{prefix}.schedulers", "a non-empty list without repeats", self.schedulers)
        _check(self.baseline_placement is None or (isinstance(self.baseline_placement, str) and
                                                   bool(self.baseline_placement)),
               f"{prefix}.baseline_placement", "null or a placement name", self.baseline_placement)
        _check(len(self.study_gpu_counts) >= 1 and all(_is_int(g) and g >= 1 for g in self.study_gpu_counts),
               f"{prefix}.study_gpu_counts", "a non-empty list of integers >= 1", self.study_gpu_counts)
        self._validate_theory(prefix)

    def _validate_theory(self, prefix: str) -> None:
        for key in ("theory_instances", "theory_jobs", "adversarial_budget", "adversarial_max_jobs",
                    "adversarial_max_iterations"):
            value = getattr(self, key)
            _check(_is_int(value) and value >= 1, f"{prefix}.{key}", "an integer >= 1", value)
        _check(_is_int(self.theory_gpus) and self.theory_gpus >= 2, f"{prefix}.theory_gpus", "an integer >= 2 (G)",
               self.theory_gpus)
        per_server = self.theory_gpus_per_server
        _check(per_server is None or (_is_int(per_server) and per_server >= 1 and self.theory_gpus % per_server == 0),
               f"{prefix}.theory_gpus_per_server", f"null or an integer >= 1 dividing theory_gpus={self.theory_gpus}",
               per_server)
        _check(_is_int(self.adversarial_max_release) and self.adversarial_max_release >= 0,
               f"{prefix}.adversarial_max_release", "an integer >= 0", self.adversarial_max_release)
        for key, low in (("theory_job_gpus", 1), ("theory_iterations", 1), ("theory_releases", 0)):
            value = getattr(self, key)
            _check(len(value) == 2 and all(_is_int(v) for v in value) and low <= value[0] <= value[1],
                   f"{prefix}.{key}", f"[low, high] integers with {low} <= low <= high", value)
        _check(self.theory_job_gpus[1] < self.theory_gpus, f"{prefix}.theory_job_gpus",
               f"below theory_gpus={self.theory_gpus} (Theorem 1 needs g_max < G)", self.theory_job_gpus)
        _check(self.theory_alpha in ("fixed", "placement"), f"{prefix}.theory_alpha", "'fixed' or 'placement'",
               self.theory_alpha)
        if self.theory_alpha == "placement":
            _check(per_server is not None and self.theory_job_gpus[1] <= per_server, f"{prefix}.theory_job_gpus",
                   "at most theory_gpus_per_server (set it) with theory_alpha=placement, so that the consolidated "
                   "alpha is the true alpha_min", self.theory_job_gpus)
        _check(_is_number(self.theory_rho_max) and self.theory_rho_max >= 1, f"{prefix}.theory_rho_max", ">= 1",
               self.theory_rho_max)
        _check(_is_number(self.theory_time_limit_s) and self.theory_time_limit_s > 0, f"{prefix}.theory_time_limit_s",
               "> 0 seconds", self.theory_time_limit_s)
        _check(self.adversarial_objective in ("eq12", "ratio"), f"{prefix}.adversarial_objective",
               "'eq12' or 'ratio'", self.adversarial_objective)


@dataclass
class TheoryConfig:
    """Which reconstruction of the Theorem 1 symbols and of alpha_min the reported bounds use."""

    rho_bar_definition: str = "alpha_min_spread"
    eps_bar_definition: str = "per_smallest_job"
    alpha_min_source: str = "consolidated"

    def validate(self, prefix: str = "theory") -> None:
        # Checked here, not where they are used: a run reports NaN symbols when the bound is undefined
        # (g_max = G), which must not also swallow a misspelt definition.
        for key, known in (("rho_bar_definition", RHO_BAR_DEFINITIONS), ("eps_bar_definition", EPS_BAR_DEFINITIONS),
                           ("alpha_min_source", ALPHA_MIN_SOURCES)):
            value = getattr(self, key)
            _check(value in known, f"{prefix}.{key}", f"one of {sorted(known)}", value)


@dataclass
class CacheConfig:
    """The on-disk cache of prepared workloads and fitted predictors (asrpt_bench/cache.py).

    `dir` null: `$XDG_CACHE_HOME/asrpt_bench`, else `~/.cache/asrpt_bench`. `enabled: false` computes
    everything in every run. Neither changes results, so neither enters the config hash.
    """

    dir: Optional[str] = None
    enabled: bool = True

    def validate(self, prefix: str = "cache") -> None:
        _check(self.dir is None or (isinstance(self.dir, str) and bool(self.dir.strip())), f"{prefix}.dir",
               "null (the default directory) or a directory path", self.dir)
        if self.dir is not None:
            path = Path(self.dir).expanduser()
            _check(not path.exists() or path.is_dir(), f"{prefix}.dir", "a directory (it names a file)", self.dir)
        _check(isinstance(self.enabled, bool), f"{prefix}.enabled", "true or false", self.enabled)


@dataclass
class RunConfig:
    """Everything one run needs; `seed` derives every random stream of the run. `plugins` names
    modules imported before validation, so schedulers, placers, predictors and workloads they
    register are known by name (docs/extending.md)."""

    seed: int = 0
    progress: bool = True
    plugins: list[str] = field(default_factory=list)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    timing: TimingConfig = field(default_factory=TimingConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    predictor: PredictorConfig = field(default_factory=PredictorConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    placement: PlacementConfig = field(default_factory=PlacementConfig)
    solver: SolverConfig = field(default_factory=SolverConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    theory: TheoryConfig = field(default_factory=TheoryConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)

    def groups(self) -> Iterator[tuple[str, Any]]:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if dataclasses.is_dataclass(value):
                yield item.name, value

    def validate(self) -> "RunConfig":
        """Raise ConfigError naming the first out-of-range key; return self for chaining."""
        check("seed", self.seed)
        import_plugins(self.plugins)
        for name, group in self.groups():
            group.validate(name)
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def import_plugins(modules: list[str]) -> None:
    """Import every module of the `plugins` key (their decorators register components by name)."""
    _check(isinstance(modules, list) and all(isinstance(m, str) and m for m in modules), "plugins",
           "a list of importable module names", modules)
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # any failure while importing a user's module is that module's fault
            raise ConfigError(f"plugins: cannot import {module!r}: {type(error).__name__}: {error}") from None


def group_params(group: Any, accepted: Iterator[str] | list[str]) -> dict[str, Any]:
    """The keys of a config group (except `name`) that a component's constructor accepts."""
    accepted = set(accepted)
    return {item.name: getattr(group, item.name) for item in dataclasses.fields(group)
            if item.name != "name" and item.name in accepted}
