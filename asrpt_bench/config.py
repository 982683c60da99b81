"""Typed run configuration: what `experiment.run_experiment` takes, so Python callers never need Hydra.

Groups that choose a component (workload, predictor, scheduler, placement, task) hold the chosen
component's own parameters, declared next to its code and parsed by its registry: a key that
component does not have is refused, naming it. The other groups are the value types the code uses as
they are (`cluster.Cluster`, `timing.TimingModel`, `solvers.SolverSettings`, `core.PreemptionPrice`,
`theory.settings.TheorySettings`, `cache.CacheSettings`): Params dataclasses whose fields carry each key's
one default and its rule.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import os
import sys
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator

from .cache import CacheSettings
from .core import Cluster, PreemptionPrice
from .errors import ConfigError
from .params import Params
from .placement.base import DEFAULT_POOL_CHOICE
from .registry import REGISTRIES, Registry
from .rules import Rule, flag, integer, optional_integer, shown
from .solvers import SolverSettings
from .theory.settings import TheorySettings
from .timing import TimingModel


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
            params = registry.parse(name, values, acts=False)
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

    def check(self, prefix: str | None = None, acts: bool = True) -> None:
        """Raise ConfigError naming the first refused parameter (`<prefix>.<key>`; prefix: the kind); `acts`
        as in Params.check (the scheduler group, which may configure several schedulers, checks it per
        scheduler: RunConfig)."""
        self.params.check(prefix or self.KIND, acts)

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
"""The packages whose import creates the component registries and declares the built-ins in them (a
built-in's module is imported when its name is first looked up; registry.py). Imported on first use, so
that this module stays below them in the layer order: they import it for RunConfig."""


def is_preemptive(registry: Registry, name: str) -> bool:
    """Whether scheduler `name` suspends jobs (its class says `preemptive = True`), so the run's preemption
    price acts on it."""
    return bool(getattr(registry.entry(name).factory, "preemptive", False))


def variant_rule(registry: Registry, name: str) -> str | None:
    """The dispatch rule a scheduler entry's name sets (`fifo+easy`), None for a plain name."""
    rule = getattr(registry, "variant_rule", None)
    return rule(name) if rule is not None else None


def component_registry(kind: str) -> Registry:
    """The registry of one component kind, with every built-in declared (registry.py)."""
    for module in BUILT_IN_COMPONENTS:
        importlib.import_module(module)
    return REGISTRIES[kind]


SEED = integer(0)
FLAG = flag()
WORKERS = optional_integer(1)
PLUGINS = Rule("a list of importable module names",
               lambda v: isinstance(v, list) and all(isinstance(m, str) and m for m in v))


@dataclass
class RunConfig:
    """Everything one run needs; `seed` derives every random stream of the run. `plugins` names
    modules imported before validation, so schedulers, placers, predictors and workloads they
    register are known by name (docs/extending.md). `tiny` shrinks the chosen components' sizes
    (TINY; the `debug=tiny` preset of tests and CI). `workers`: processes that simulate the schedulers of a
    `compare` side by side (forked.py; null: one per usable CPU, 1: one after another in this process); like
    `progress` it changes no result, so it is not hashed."""

    seed: int = 0
    progress: bool = True
    workers: int | None = None
    tiny: bool = False
    plugins: list[str] = field(default_factory=list)
    cluster: Cluster = field(default_factory=Cluster)
    timing: TimingModel = field(default_factory=TimingModel)
    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    predictor: PredictorConfig = field(default_factory=PredictorConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    placement: PlacementConfig = field(default_factory=PlacementConfig)
    solver: SolverSettings = field(default_factory=SolverSettings)
    task: TaskConfig = field(default_factory=TaskConfig)
    preemption: PreemptionPrice = field(default_factory=PreemptionPrice)
    theory: TheorySettings = field(default_factory=TheorySettings)
    cache: CacheSettings = field(default_factory=CacheSettings)

    @classmethod
    def group_types(cls) -> dict[str, type[Params] | type[ComponentConfig]]:
        """Every config group's name and type: a value type (Params) or a component group."""
        hints = typing.get_type_hints(cls)
        return {item.name: hints[item.name] for item in dataclasses.fields(cls)
                if isinstance(hints[item.name], type) and issubclass(hints[item.name], (Params, ComponentConfig))}

    def groups(self) -> Iterator[tuple[str, Params | ComponentConfig]]:
        """Every config group: (name, its value)."""
        for name in self.group_types():
            yield name, getattr(self, name)

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
            elif isinstance(default, Params) and isinstance(value, dict):
                extra = sorted(set(value) - set(default.names()))
                if extra:
                    raise ConfigError(f"{key}.{extra[0]}: unknown key; {key} has keys {sorted(default.names())}")
                kwargs[key] = type(default).parse(value, key, key)
            else:
                kwargs[key] = value
        return cls(**kwargs)

    def validate(self) -> "RunConfig":
        """Raise ConfigError naming the first out-of-range key; return self for chaining."""
        SEED.require("seed", self.seed)
        FLAG.require("progress", self.progress)
        WORKERS.require("workers", self.workers)
        FLAG.require("tiny", self.tiny)
        import_plugins(self.plugins)
        for name, kind in self.group_types().items():
            group = getattr(self, name)
            if not isinstance(group, kind):
                raise ConfigError(f"{name} must be a {kind.__name__}, got {type(group).__name__} {shown(group)}"[:300])
            group.check(name, acts=name != "scheduler")  # the scheduler group's keys act per scheduler (below)
        self._check_scheduler_group_acts()
        self._check_scheduler_group_listed()
        self._check_preemption_acts()
        self._check_pool_choice_acts()
        self._check_cluster_acts()
        return self

    def scheduler_names(self) -> list[str]:
        """The schedulers the run simulates: the task's `schedulers` when it has them, else the scheduler
        group's."""
        return list(getattr(self.task.params, "schedulers", [self.scheduler.name]))

    def takes_scheduler_group(self, name: str) -> bool:
        """Whether scheduler `name` is configured by the scheduler group: it has the same parameters'
        dataclass as the group's scheduler (asrpt and asrpt_oracle do, and `asrpt+easy`); others run with
        their defaults."""
        return component_registry("scheduler").params_type(name) is type(self.scheduler.params)

    def scheduler_params(self, name: str) -> Params:
        """The parameters scheduler `name` runs with. The scheduler group configures every listed scheduler
        that shares its parameters, with each key where it acts: a variant keeps its name's dispatch rule
        (`fifo+easy` is EASY whatever scheduler.dispatch says), and a key that acts only under other rules
        (overrun, min_estimate_s under strict dispatch) keeps its default there. Others: their defaults."""
        registry = component_registry("scheduler")
        if not self.takes_scheduler_group(name):
            return registry.parse(name)
        params = self.scheduler.params
        rule = variant_rule(registry, name)
        if rule is not None and getattr(params, "dispatch") != rule:
            params = dataclasses.replace(params, dispatch=rule)
        inert = params.inert_keys()
        if inert:
            default = type(params)()
            params = dataclasses.replace(params, **{key: getattr(default, key) for key in inert})
        return params

    def _check_scheduler_group_acts(self) -> None:
        """Refuse a changed key of the scheduler group that acts on none of the run's schedulers: they do not
        share its parameters, or each names its own dispatch rule (`scheduler.dispatch`), or none of them
        dispatches under a rule the key acts in (`scheduler.overrun` with strict dispatch)."""
        names = self.scheduler_names()
        registry = component_registry("scheduler")
        group = self.scheduler.params
        default = registry.parse(self.scheduler.name)
        changed = [key for key, value in group.values().items() if getattr(default, key) != value]
        configured = [name for name in names if self.takes_scheduler_group(name)]
        if changed and not configured:
            raise ConfigError(f"scheduler.{changed[0]} configures scheduler {self.scheduler.name!r}, which this task "
                              f"does not run (task.schedulers: {names}); it acts on the listed schedulers that share "
                              f"its parameters")
        rules = {name: variant_rule(registry, name) for name in configured}
        if "dispatch" in changed and all(rules.values()):
            raise ConfigError(f"scheduler.dispatch={getattr(group, 'dispatch')!r} conflicts with task.schedulers "
                              f"{configured}: each names its own dispatch rule, which is the one that runs; drop "
                              f"scheduler.dispatch, or list a scheduler without '+<rule>'")
        effective = {}
        for name, rule in rules.items():
            params = group if rule is None else dataclasses.replace(group, dispatch=rule)
            try:
                params.check("scheduler", acts=False)
            except ConfigError as error:
                raise ConfigError(f"{error} (task.schedulers entry {name!r} sets dispatch {rule!r})") from None
            effective[name] = params
        for key in changed:
            if effective and all(key in params.inert_keys() for params in effective.values()):
                if not any(rules.values()):
                    raise ConfigError(group.inert_message("scheduler", key))
                ran = ", ".join(f"{name} ({getattr(params, 'dispatch')})" for name, params in effective.items())
                raise ConfigError(f"scheduler.{key} changes nothing in any scheduler it configures, given their "
                                  f"dispatch rules: {ran}")

    def _check_scheduler_group_listed(self) -> None:
        """Refuse a chosen scheduler that a task with its own `schedulers` list would not run: the group's
        scheduler is the reference of that comparison, so choosing one must show in the result. The group's
        default (asrpt) is no choice: without it in the list, the first listed is the reference."""
        names = self.scheduler_names()
        chosen = self.scheduler.name
        if chosen in names or chosen == SchedulerConfig.DEFAULT:
            return
        listed = ",".join(names)
        raise ConfigError(f"scheduler={chosen} is not among task.schedulers [{listed}]: task {self.task.name} runs "
                          f"those, relative to the scheduler group's; add it ('task.schedulers=[{listed},{chosen}]') "
                          f"or run it alone (task=simulate scheduler={chosen})")

    def _check_preemption_acts(self) -> None:
        """Refuse a changed preemption price in a run whose schedulers never preempt."""
        default = PreemptionPrice()
        changed = [key for key, value in self.preemption.values().items() if getattr(default, key) != value]
        names = self.scheduler_names()
        registry = component_registry("scheduler")
        if changed and not any(is_preemptive(registry, name) for name in names):
            preemptive = ", ".join(n for n in registry.names() if is_preemptive(registry, n))
            raise ConfigError(f"preemption.{changed[0]} prices the suspensions of preemptive schedulers ({preemptive}); "
                              f"this run's schedulers never preempt: {names}")

    def _check_pool_choice_acts(self) -> None:
        """Refuse a pool choice on a cluster of one pool, where there is nothing to choose, and A-SRPT's
        virtual_gpus on a cluster of one GPU type, where both of its values are the GPU count."""
        pool = getattr(self.placement.params, "pool", DEFAULT_POOL_CHOICE)
        if pool != DEFAULT_POOL_CHOICE and len(self.cluster.pool_list) == 1:
            raise ConfigError(f"placement.pool={pool} chooses among a cluster's pools; this cluster has one "
                              f"({self.cluster.describe()}): give several with cluster.pools")
        virtual = getattr(self.scheduler.params, "virtual_gpus", None)
        if virtual not in (None, "speed_weighted") and len(self.cluster.types) == 1:
            raise ConfigError(f"scheduler.virtual_gpus={virtual} acts on a cluster of several GPU types; this cluster "
                              f"has one ({self.cluster.describe()})")
    def _check_cluster_acts(self) -> None:
        """Refuse a changed cluster key the run does not read: a task that builds its own cluster (theory,
        adversarial) reads only the keys it declares, and a hand-made instance (workload=lemma2_reviewer)
        brings its whole cluster."""
        default = Cluster()
        changed = [key for key, value in self.cluster.values().items() if getattr(default, key) != value]
        if not changed:
            return
        task = component_registry("task").entry(self.task.name).meta
        if task.get("own_cluster"):
            read = task.get("cluster_keys_read", ())
            ignored = [key for key in changed if key not in read]
            if ignored:
                raise ConfigError(f"cluster.{ignored[0]} changes nothing in task {self.task.name}, which builds its own "
                                  f"cluster ({task['own_cluster']}); the cluster keys it reads: "
                                  f"{list(read) or 'none'}")
            return
        workloads = component_registry("workload")
        if task["needs_workload"] and workloads.entry(self.workload.name).meta.get("kind") == "instance":
            own = workloads.make(self.workload.name).cluster
            raise ConfigError(f"cluster.{changed[0]} changes nothing with workload={self.workload.name}, a hand-made "
                              f"instance that brings its own cluster ({own.servers} x {own.gpus_per_server} GPUs); "
                              f"drop the cluster keys")

    def to_dict(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, (ComponentConfig, Params)):
                values[item.name] = value.to_dict()
            else:
                values[item.name] = copy.deepcopy(value)
        return values


TINY: dict[str, dict[str, Any]] = {
    "workload": {"job_cap": 30, "synthetic_jobs": 60, "arrivals": 60},
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
    PLUGINS.require("plugins", modules)
    if modules and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # any failure while importing a user's module is that module's fault
            raise ConfigError(f"plugins: cannot import {module!r}: {type(error).__name__}: {error}") from None
        except SystemExit as error:  # a module written as a script: exiting would end the run without a word
            raise ConfigError(f"plugins: importing {module!r} called sys.exit({error.code!r}); a plugin module "
                              "registers components and must not exit") from None
