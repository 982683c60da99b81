"""Typed run configuration: what `experiment.run_experiment` takes, so Python callers never need Hydra.

Groups that choose a component (workload, predictor, scheduler, placement, task) hold the chosen
component's own parameters, declared next to its code and parsed by its registry: a key that
component does not have is refused, naming it. The other groups (cluster, timing, solver, theory,
cache) are plain dataclasses checked with the shared rules (rules.py).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterator, Optional

from .errors import ConfigError
from .params import Params
from .registry import REGISTRIES, Registry
from .rules import RULES, check, shown
from .schedulers.preemptive import PreemptionParams
from .solvers import BACKENDS, DEFAULT_SOLVER
from .theory.bound import EPS_BAR_DEFINITIONS, RHO_BAR_DEFINITIONS
from .theory.lower_bounds import ALPHA_MIN_SOURCES


def _check(condition: bool, key: str, requirement: str, value: object) -> None:
    if not condition:
        raise ConfigError(f"{key} must be {requirement}, got {shown(value)}")


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


class ComponentConfig:
    """A config group that chooses a component by name and holds that component's own parameters.

    In the Hydra tree the parameters sit beside the name (`scheduler=asrpt scheduler.tau=2`); here
    they are the component's Params dataclass (`.params`), parsed by its registry, so a key the chosen
    component does not have is refused in one line that names the key, the component and the keys it
    has. Attribute access reads a parameter (`config.scheduler.tau`).
    """

    KIND: ClassVar[str] = ""
    DEFAULT: ClassVar[str] = ""

    def __init__(self, name: str | None = None, params: Params | None = None, **values: Any) -> None:
        name = self.DEFAULT if name is None else name
        if not (isinstance(name, str) and name):
            raise ConfigError(f"{self.KIND}.name must be a {self.KIND} name, got {shown(name)}")
        registry = component_registry(self.KIND)
        if params is None:
            params = registry.parse(name, values)
        elif values or not isinstance(params, registry.params_type(name)):
            raise ConfigError(f"{self.KIND} {name!r}: give either its {registry.params_type(name).__name__} or "
                              f"its parameters as keywords")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "params", params)

    name: str
    params: Params

    def __getattr__(self, key: str) -> Any:
        if key.startswith("__"):
            raise AttributeError(key)
        try:
            return getattr(self.__dict__["params"], key)
        except AttributeError:
            raise AttributeError(f"{self.KIND} {self.__dict__.get('name')!r} has no parameter {key!r}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{self.KIND} config is immutable; make a new one")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (self.name, self.params) == (other.name, other.params)  # type: ignore

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.params!r})"

    def __deepcopy__(self, memo: dict) -> "ComponentConfig":
        return self  # immutable

    def validate(self, prefix: str | None = None) -> None:
        self.params.check(prefix or self.KIND)

    def replace(self, name: str | None = None, **values: Any) -> "ComponentConfig":
        """A copy with some parameters changed (checked like the config keys); another `name` starts from
        that component's defaults."""
        if name is not None and name != self.name:
            return type(self)(name, **values)
        return type(self)(self.name, **{**self.params.values(), **values})

    def to_dict(self) -> dict[str, Any]:
        """The group as in the Hydra tree: the name beside the parameters."""
        return {"name": self.name, **self.params.to_dict()}


class WorkloadConfig(ComponentConfig):
    """Which jobs are simulated and which earlier jobs train the predictor (workloads/sources.py)."""

    KIND, DEFAULT = "workload", "philly"


class PredictorConfig(ComponentConfig):
    """Iteration predictor: `forest`, `oracle`, `noisy` (prediction/)."""

    KIND, DEFAULT = "predictor", "forest"


class SchedulerConfig(ComponentConfig):
    """Scheduler and its parameters (schedulers/)."""

    KIND, DEFAULT = "scheduler", "asrpt"


class PlacementConfig(ComponentConfig):
    """Placer and its parameters (placement/); the random placer's seed derives from the run seed."""

    KIND, DEFAULT = "placement", "heavy_edge"


class TaskConfig(ComponentConfig):
    """What a run does (tasks/): compare, simulate, placement, predictor, theory, adversarial."""

    KIND, DEFAULT = "task", "compare"


COMPONENT_GROUPS: dict[str, type[ComponentConfig]] = {
    cls.KIND: cls for cls in (WorkloadConfig, PredictorConfig, SchedulerConfig, PlacementConfig, TaskConfig)}

BUILT_IN_COMPONENTS = ("asrpt_bench.schedulers", "asrpt_bench.placement", "asrpt_bench.prediction",
                       "asrpt_bench.workloads", "asrpt_bench.tasks")
"""The packages whose import registers the built-in components (imported on first use, so that this
module stays below them in the layer order: they import it for RunConfig)."""


def component_registry(kind: str) -> Registry:
    """The registry of one component kind, with every built-in registered."""
    for module in BUILT_IN_COMPONENTS:
        importlib.import_module(module)
    return REGISTRIES[kind]


@dataclass
class SolverConfig:
    """MILP/CP backend of the ILP placer and exact bounds (default: solvers.DEFAULT_SOLVER, CP-SAT)."""

    name: str = DEFAULT_SOLVER
    time_limit_s: float = 600.0
    mip_gap: float = 1e-4
    threads: int = 1

    def validate(self, prefix: str = "solver") -> None:
        if self.name not in BACKENDS:
            raise ConfigError(f"{prefix}.name: unknown solver {shown(self.name)}; known: {BACKENDS.names()}")
        _check_rules(self, "solver", prefix)


@dataclass
class PreemptionConfig:
    """The price of preemption for every preemptive scheduler of the run (srtf, srtf_oracle, psjf, las2d; their
    PreemptionParams): seconds a resumed job restores its checkpoint, and the least seconds of progress
    before a suspension. Refused when changed in a run without a preemptive scheduler."""

    restart_s: float = PreemptionParams.restart_s
    min_run_s: float = PreemptionParams.min_run_s

    def price(self) -> PreemptionParams:
        return PreemptionParams(restart_s=self.restart_s, min_run_s=self.min_run_s)

    def validate(self, prefix: str = "preemption") -> None:
        self.price().check(prefix)


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
    everything in every run. `max_size_gb` caps the entries' total size: past it, the least recently
    used entries are removed (null: no cap). None changes results, so none enters the config hash.
    """

    dir: Optional[str] = None
    enabled: bool = True
    max_size_gb: Optional[float] = 4.0

    def validate(self, prefix: str = "cache") -> None:
        _check(self.dir is None or (isinstance(self.dir, str) and bool(self.dir.strip())), f"{prefix}.dir",
               "null (the default directory) or a directory path", self.dir)
        if self.dir is not None:
            path = Path(self.dir).expanduser()
            _check(not path.exists() or path.is_dir(), f"{prefix}.dir", "a directory (it names a file)", self.dir)
        _check(isinstance(self.enabled, bool), f"{prefix}.enabled", "true or false", self.enabled)
        _check(self.max_size_gb is None or (isinstance(self.max_size_gb, (int, float))
                                            and not isinstance(self.max_size_gb, bool) and self.max_size_gb > 0),
               f"{prefix}.max_size_gb", "null (no cap) or a size > 0 in GB", self.max_size_gb)


@dataclass
class RunConfig:
    """Everything one run needs; `seed` derives every random stream of the run. `plugins` names
    modules imported before validation, so schedulers, placers, predictors and workloads they
    register are known by name (docs/extending.md). `tiny` shrinks the chosen components' sizes
    (TINY; the `debug=tiny` preset of tests and CI)."""

    seed: int = 0
    progress: bool = True
    tiny: bool = False
    plugins: list[str] = field(default_factory=list)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    timing: TimingConfig = field(default_factory=TimingConfig)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    predictor: PredictorConfig = field(default_factory=PredictorConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    placement: PlacementConfig = field(default_factory=PlacementConfig)
    solver: SolverConfig = field(default_factory=SolverConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    preemption: PreemptionConfig = field(default_factory=PreemptionConfig)
    theory: TheoryConfig = field(default_factory=TheoryConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)

    def groups(self) -> Iterator[tuple[str, Any]]:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if dataclasses.is_dataclass(value) or isinstance(value, ComponentConfig):
                yield item.name, value

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "RunConfig":
        """A RunConfig from a plain nested dict (the composed Hydra tree, or config.json): component groups
        are parsed by their registries; unknown keys anywhere are refused naming the key."""
        values = dict(values)
        fields = {item.name: item for item in dataclasses.fields(cls)}
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise ConfigError(f"{unknown[0]}: unknown key; the root has keys {sorted(fields)}")
        if "plugins" in values:
            import_plugins(values["plugins"])
        if values.get("tiny") is True:
            values = tiny_values(values)
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            default = fields[key].default_factory() if fields[key].default_factory is not dataclasses.MISSING else None
            if isinstance(default, ComponentConfig) and isinstance(value, dict):
                group = dict(value)
                kwargs[key] = type(default)(group.pop("name", None), **group)
            elif dataclasses.is_dataclass(default) and isinstance(value, dict):
                known = {item.name for item in dataclasses.fields(default)}
                extra = sorted(set(value) - known)
                if extra:
                    raise ConfigError(f"{key}.{extra[0]}: unknown key; {key} has keys {sorted(known)}")
                kwargs[key] = type(default)(**value)
            else:
                kwargs[key] = value
        return cls(**kwargs)

    def validate(self) -> "RunConfig":
        """Raise ConfigError naming the first out-of-range key; return self for chaining."""
        check("seed", self.seed)
        import_plugins(self.plugins)
        for name, group in self.groups():
            group.validate(name)
        self._check_scheduler_group_acts()
        self._check_scheduler_group_listed()
        self._check_preemption_acts()
        return self

    def scheduler_names(self) -> list[str]:
        """The schedulers the run simulates: the task's `schedulers` when it has them, else the scheduler
        group's."""
        return list(getattr(self.task.params, "schedulers", [self.scheduler.name]))

    def takes_scheduler_group(self, name: str) -> bool:
        """Whether scheduler `name` is configured by the scheduler group: it has the same parameters'
        dataclass as the group's scheduler (asrpt and asrpt_oracle do); others run with their defaults."""
        return component_registry("scheduler").params_type(name) is type(self.scheduler.params)

    def _check_scheduler_group_acts(self) -> None:
        """Refuse a scheduler group whose parameters were changed but configure none of the run's schedulers."""
        names = self.scheduler_names()
        if any(self.takes_scheduler_group(name) for name in names):
            return
        default = component_registry("scheduler").parse(self.scheduler.name)
        changed = [key for key, value in self.scheduler.params.values().items() if getattr(default, key) != value]
        if changed:
            raise ConfigError(f"scheduler.{changed[0]} configures scheduler {self.scheduler.name!r}, which this task "
                              f"does not run (task.schedulers: {names}); it acts on the listed schedulers that share "
                              f"its parameters")

    def _check_scheduler_group_listed(self) -> None:
        """Refuse a chosen scheduler that a task with its own `schedulers` list would not run: the group's
        scheduler is the reference of that comparison, so choosing one must show in the result. The group's
        default (asrpt) is no choice: without it in the list, the first listed is the reference."""
        names = self.scheduler_names()
        chosen = self.scheduler.name
        if chosen in names or chosen == SchedulerConfig.DEFAULT:
            return
        listed = ",".join(names)
        raise ConfigError(f"scheduler={chosen} is not among task.schedulers [{listed}]: task {self.task.name} runs those, "
                          f"relative to the scheduler group's; add it ('task.schedulers=[{listed},{chosen}]') or run it "
                          f"alone (task=simulate scheduler={chosen})")

    def _check_preemption_acts(self) -> None:
        """Refuse a changed preemption price in a run whose schedulers never preempt."""
        changed = [key for key, value in dataclasses.asdict(self.preemption).items()
                   if getattr(PreemptionConfig, key) != value]
        names = self.scheduler_names()
        registry = component_registry("scheduler")
        if changed and not any("preemption" in registry.entry(name).needs for name in names):
            preemptive = ", ".join(n for n in registry.names() if "preemption" in registry.entry(n).needs)
            raise ConfigError(f"preemption.{changed[0]} prices the suspensions of preemptive schedulers ({preemptive}); "
                              f"this run's schedulers never preempt: {names}")

    def to_dict(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, ComponentConfig):
                values[item.name] = value.to_dict()
            elif dataclasses.is_dataclass(value):
                values[item.name] = dataclasses.asdict(value)
            else:
                values[item.name] = copy.deepcopy(value)
        return values


TINY: dict[str, dict[str, Any]] = {
    "workload": {"job_cap": 30, "synthetic_jobs": 60},
    "predictor": {"n_estimators": 8},
    "task": {"study_gpu_counts": [2, 4], "study_models": ["vgg19", "bert24"], "theory_instances": 4,
             "adversarial_budget": 20},
}
"""`tiny: true` (debug=tiny): these values replace the chosen components' defaults, for each key the
chosen component has; a value the user set is kept."""


def tiny_values(values: dict[str, Any]) -> dict[str, Any]:
    """The composed values with TINY applied to the component groups (see TINY)."""
    values = dict(values)
    for kind, small in TINY.items():
        group = dict(values.get(kind) or {})
        name = group.get("name", COMPONENT_GROUPS[kind].DEFAULT)
        default = component_registry(kind).parse(name)
        for key, value in small.items():
            if key in default.names() and group.get(key, getattr(default, key)) == getattr(default, key):
                group[key] = value
        values[kind] = group
    return values


def import_plugins(modules: list[str]) -> None:
    """Import every module of the `plugins` key (their decorators register components by name), from the
    working directory too, as `python -m` would."""
    _check(isinstance(modules, list) and all(isinstance(m, str) and m for m in modules), "plugins",
           "a list of importable module names", modules)
    if modules and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # any failure while importing a user's module is that module's fault
            raise ConfigError(f"plugins: cannot import {module!r}: {type(error).__name__}: {error}") from None
