"""Frozen value types shared by every layer: cluster, preemption price, training plan, job, placement.

Units: seconds for time, bytes for data, GB/s (1 GB = 1e9 B) for bandwidth.
Nothing here mutates; the simulator keeps the only mutable cluster state.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Callable, Hashable, Sequence, TypeVar

from .cluster import CLUSTER, GPU_TYPES, Cluster, Pool  # noqa: F401  (re-exported: the historical import path)
from .errors import ConfigError  # noqa: F401  (re-exported: the historical import path)
from .params import Params, param
from .rules import MAX_SECONDS, Rule, instance_of, integer, number, plain, seconds

GB = 1e9
MAX_COUNT = 10**12
"""Largest iteration count of a job (exact integers in float64 and int64 alike)."""
MIN_ALPHA = 1e-6
"""Shortest per-iteration time (s) a job may declare: no training iteration is shorter than one GPU kernel
launch (microseconds), and a ratio of two alphas (rho_bar, the Theorem 1 bound) stays finite above it (alpha
1e-320 once ran with an overflow warning)."""
T = TypeVar("T")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


COUNT = integer(1)
NON_NEGATIVE = number(0)
SECONDS = seconds()


def frozen_builder(cls: type[T]) -> Callable[..., T]:
    """A constructor of the frozen, slotted dataclass `cls` taking its fields by name (all of them), which sets
    each slot through its descriptor instead of the generated __init__'s object.__setattr__ (about twice as
    slow); the simulator builds two such objects per job. For classes without __post_init__."""
    names = [item.name for item in fields(cls)]  # type: ignore[arg-type]
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    scope.update({f"set_{name}": cls.__dict__[name].__set__ for name in names})
    body = "".join(f"    set_{name}(instance, {name})\n" for name in names)
    exec(f"def build(*, {', '.join(names)}):\n    instance = new(cls)\n{body}    return instance\n", scope)
    build = scope["build"]
    build.__qualname__ = build.__name__ = f"build_{cls.__name__}"
    return build


RESTART_S = 30.0
"""Default checkpoint-restore price per resumption: the 30 s re-allocation delay of the Pollux
simulator (petuum/adaptdl, simulator/simulator.py, Job.reallocate: `rescale_time = 30`), during which
a job holds its GPUs without progress (docs/simulator.md, "Preemption")."""


def _seconds(default: float, doc: str) -> Any:
    return param(default, seconds(), doc)


@dataclass(frozen=True)
class PreemptionPrice(Params):
    """What a suspension costs, for every preemptive scheduler of a run: the config group `preemption`,
    handed to the simulator (sim.simulate(..., preemption=...)), which charges it."""

    restart_s: float = _seconds(RESTART_S, "seconds a resumed job holds its GPUs restoring its checkpoint, "
                                           "without progress")
    min_run_s: float = _seconds(0.0, "least seconds of progress after a (re)start before a job may be suspended")

    def __post_init__(self) -> None:
        self.check("preemption")


@dataclass(frozen=True)
class Stage:
    """One pipeline stage of a configured job (paper-notes 2.1).

    compute_s: forward+backward time of the stage for one whole iteration's mini-batch on one GPU;
    each of the `replicas` data-parallel replicas computes compute_s / replicas.
    param_bytes: parameter (= gradient) bytes, all-reduced among the replicas.
    activation_bytes: activation bytes leaving this stage per iteration (0 for the last stage);
    the backward gradient across the same boundary has the same size.
    """

    compute_s: float
    param_bytes: float
    activation_bytes: float
    replicas: int

    def __post_init__(self) -> None:
        COUNT.require("Stage.replicas", self.replicas)
        SECONDS.require("Stage.compute_s", self.compute_s)
        for name in ("param_bytes", "activation_bytes"):
            NON_NEGATIVE.require(f"Stage.{name}", getattr(self, name))


@dataclass(frozen=True)
class TrainingPlan:
    """A model under one parallel configuration: the stages the timing model and job graph need.

    Vertices of the job graph are numbered stage-major: stage 0 replicas 0..m0-1, then stage 1, ...
    `declared_alpha` fixes the per-iteration time on every placement and `declared_alpha_max`
    overrides the computed worst-case time (hand-made theory instances, see `fixed`);
    `declared_alpha_spread`, if given, is the per-iteration time on placements that span several
    servers (a measured unconsolidated throughput, e.g. Gavel's).
    """

    model: str
    config: str
    stages: tuple[Stage, ...]
    declared_alpha_max: float | None = None
    declared_alpha: float | None = None
    declared_alpha_spread: float | None = None

    def __post_init__(self) -> None:
        for key in ("model", "config"):
            NAME.require(f"TrainingPlan.{key}", getattr(self, key))
        STAGES.require("TrainingPlan.stages", self.stages)
        _require(len(self.stages) >= 1, f"training plan {self.model}/{self.config} has no stages")
        for stage in self.stages:
            STAGE.require("TrainingPlan.stages", stage)
        for key in ("declared_alpha_max", "declared_alpha", "declared_alpha_spread"):
            DECLARED.require(f"TrainingPlan.{key}", getattr(self, key))

    @cached_property
    def gpus(self) -> int:
        """Vertices of the job graph; computed once per plan (the simulator asks for it at every decision)."""
        return sum(stage.replicas for stage in self.stages)

    @property
    def is_fixed(self) -> bool:
        """True for a fixed-alpha plan (a single stage with no communication)."""
        return self.declared_alpha is not None

    def vertex_stage(self) -> tuple[int, ...]:
        """Stage index of every vertex, stage-major."""
        return tuple(s for s, stage in enumerate(self.stages) for _ in range(stage.replicas))

    def stage_vertices(self, s: int) -> range:
        start = sum(stage.replicas for stage in self.stages[:s])
        return range(start, start + self.stages[s].replicas)

    @classmethod
    def fixed(cls, gpus: int, alpha: float, alpha_max: float | None = None,
              alpha_spread: float | None = None) -> "TrainingPlan":
        """A plan whose per-iteration time is exactly `alpha` on every placement (theory instances), or,
        with `alpha_spread`, `alpha` on one server and `alpha_spread` on placements spanning several.

        The stage's compute is alpha * gpus split over gpus replicas, which is alpha only up to float
        rounding (0.7 * 3 / 3 != 0.7), so the timing model returns the declared `alpha` itself.
        """
        COUNT.require("gpus", gpus)
        PER_ITERATION.require("alpha", alpha)
        if alpha_max is not None:
            PER_ITERATION.require("alpha_max", alpha_max)
            _require(alpha_max >= alpha, f"alpha_max ({alpha_max}) must be >= alpha ({alpha})")
        if alpha_spread is not None:
            PER_ITERATION.require("alpha_spread", alpha_spread)
            _require(alpha_spread >= alpha, f"alpha_spread ({alpha_spread}) must be >= alpha ({alpha})")
        stage = Stage(compute_s=alpha * gpus, param_bytes=0.0, activation_bytes=0.0, replicas=gpus)
        return cls(model=FIXED_MODEL, config=f"fixed{gpus}", stages=(stage,), declared_alpha_max=alpha_max,
                   declared_alpha=alpha, declared_alpha_spread=alpha_spread)


FIXED_MODEL = "fixed-alpha"
_SCALED: dict[tuple[int, str], tuple[TrainingPlan, TrainingPlan]] = {}
"""(id of a zoo plan, GPU type) -> (that plan, kept referenced so its id stays its own; its scaled copy)."""


def plan_on_type(plan: TrainingPlan, gpu_type: str) -> TrainingPlan:
    """`plan` on GPUs of `gpu_type` when nothing was measured there: a zoo plan's stage compute times over
    the type's compute speed (cluster.GPU_TYPES; communication keeps the pool's bandwidths), a fixed-alpha
    plan as it is (its alpha was given for every type without a column of its own). The plan itself on
    the reference type."""
    speed = GPU_TYPES[gpu_type].compute_speed
    if speed == 1.0 or plan.is_fixed:
        return plan
    key = (id(plan), gpu_type)
    entry = _SCALED.get(key)
    if entry is None or entry[0] is not plan:
        stages = tuple(Stage(stage.compute_s / speed, stage.param_bytes, stage.activation_bytes, stage.replicas)
                       for stage in plan.stages)
        entry = _SCALED[key] = (plan, TrainingPlan(plan.model, plan.config, stages, plan.declared_alpha_max))
    return entry[1]


STAGE = instance_of(Stage, "a tuple of Stage")
NAME = Rule("a non-empty string", lambda v: isinstance(v, str) and bool(v))
PER_ITERATION = Rule(f"a per-iteration time in [{MIN_ALPHA:g}, {MAX_SECONDS:.0e}] s (no training iteration is "
                     "shorter than a microsecond)",
                     lambda v: seconds(strict=True).accepts(v) and float(plain(v)) >= MIN_ALPHA)
DECLARED = Rule(f"None or {PER_ITERATION.describe()}", lambda v: v is None or PER_ITERATION.accepts(v))
PLAN = instance_of(TrainingPlan, "a TrainingPlan")
JOB_ID = Rule("a job id (a string or an integer)", lambda v: isinstance(plain(v), (str, int)) and not isinstance(v, bool),
              lambda key, v: f"{key} must be a job id (a string or an integer), got {type(v).__name__} {v!r}"[:300])
RELEASE = seconds(what="a finite number of seconds")
ITERATIONS = integer(0, MAX_COUNT)
KEY = Rule("None or a string", lambda v: v is None or isinstance(v, str))
JOB_FIELDS = (("release", RELEASE), ("iterations", ITERATIONS), ("plan", PLAN), ("user", KEY), ("group", KEY),
              ("duration", Rule(f"None or {RELEASE.describe()}", lambda v: v is None or RELEASE.accepts(v))),
              ("features", Rule("a tuple of (name, value) pairs", lambda v: isinstance(v, tuple) and all(
                  isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in v))),
              ("recorded_wait", Rule(f"None or {RELEASE.describe()}", lambda v: v is None or RELEASE.accepts(v))))
"""Job's fields after its id, each with its rule (checked in this order when a Job is made)."""
STAGES = instance_of((tuple, list), "a tuple of Stage")


@dataclass(frozen=True, slots=True)
class Job:
    """A training job as the simulator sees it.

    iterations is the true n_i; schedulers never read it unless they declare themselves oracles.
    `user` and `group` are recurrence features for the predictor (may be synthetic, see workloads).
    `recorded_wait` is a job log's own queueing delay (start - submit), which `scheduler=recorded` replays
    (sim/replay.py); None where the log has no start time.
    """

    job_id: Hashable
    release: float
    plan: TrainingPlan
    iterations: int
    user: str | None = None
    group: str | None = None
    duration: float | None = None
    features: tuple[tuple[str, object], ...] = field(default_factory=tuple)
    type_plans: tuple[tuple[str, TrainingPlan | None], ...] = ()
    """Plans measured per GPU type (Gavel's throughputs, a job table's alpha_<type> columns), each on `gpus`
    GPUs; None: the job cannot run on that type. A type not listed runs `plan_on_type(plan, type)`."""
    recorded_wait: float | None = None

    def __post_init__(self) -> None:
        JOB_ID.require("job_id", self.job_id)
        for key, rule in JOB_FIELDS:
            value = getattr(self, key)
            if not rule.accepts(value):
                raise ConfigError(rule.refuse(f"job {self.job_id!r}: {key}", value))
        if self.type_plans:
            self._check_type_plans()

    def _check_type_plans(self) -> None:
        TYPE_PLANS.require(f"job {self.job_id!r}: type_plans", self.type_plans)
        for gpu_type, plan in self.type_plans:
            _require(gpu_type in GPU_TYPES, f"job {self.job_id!r}: type_plans names GPU type {gpu_type!r}; known: "
                                            f"{list(GPU_TYPES)}")
            if plan is not None:
                PLAN.require(f"job {self.job_id!r}: type_plans[{gpu_type!r}]", plan)
                _require(plan.gpus == self.plan.gpus, f"job {self.job_id!r}: its plan on {gpu_type} uses {plan.gpus} "
                                                      f"GPUs, its plan {self.plan.gpus}")

    def plan_on(self, gpu_type: str) -> TrainingPlan | None:
        """The job's plan on GPUs of `gpu_type`, or None if it cannot run there (Job.type_plans)."""
        for listed, plan in self.type_plans:
            if listed == gpu_type:
                return plan
        return plan_on_type(self.plan, gpu_type)

    @property
    def gpus(self) -> int:
        return self.plan.gpus

    @property
    def model(self) -> str:
        return self.plan.model

    @property
    def config(self) -> str:
        return self.plan.config


def pool_plans(job: Job, cluster: Cluster) -> tuple[TrainingPlan | None, ...]:
    """The job's plan in every pool of the cluster (None where its type cannot run the job)."""
    return tuple(job.plan_on(pool.type) for pool in cluster.pool_list)


def pool_plans_of(jobs: Sequence[Job], cluster: Cluster) -> list[tuple[TrainingPlan | None, ...]]:
    """pool_plans of every job, computed once per distinct (plan, type_plans) pair of objects (the jobs of
    one table share them) and shared by the jobs that have it."""
    shared: dict[tuple[int, int], tuple[TrainingPlan | None, ...]] = {}
    per_job = []
    for job in jobs:
        key = (id(job.plan), id(job.type_plans))
        plans = shared.get(key)
        if plans is None:
            plans = shared[key] = pool_plans(job, cluster)
        per_job.append(plans)
    return per_job


@dataclass(frozen=True)
class Placement:
    """Server of every job-graph vertex (stage-major order). GPU ids inside a server do not matter."""

    servers: tuple[int, ...]

    def counts(self, num_servers: int) -> list[int]:
        """GPUs used on each server."""
        used = [0] * num_servers
        for h in self.servers:
            used[h] += 1
        return used

    @property
    def servers_used(self) -> int:
        return len(set(self.servers))

    def validate(self, plan: TrainingPlan, free: Sequence[int]) -> None:
        """Raise if the placement does not put every vertex exactly once within free capacity."""
        if len(self.servers) != plan.gpus:
            raise ValueError(f"placement has {len(self.servers)} vertices, job needs {plan.gpus}")
        first = self.servers[0] if self.servers else 0
        if self.servers.count(first) == len(self.servers) and 0 <= first < len(free):  # one server: most jobs
            if len(self.servers) > free[first]:
                raise ValueError(f"placement puts {len(self.servers)} replicas on server {first} with {free[first]} "
                                 "free GPUs")
            return
        used: dict[int, int] = {}
        for h in self.servers:
            used[h] = used.get(h, 0) + 1
        for h in used:
            if not 0 <= h < len(free):
                raise ValueError(f"placement uses unknown server {h}")
        for h in sorted(used):
            if used[h] > free[h]:
                raise ValueError(f"placement puts {used[h]} replicas on server {h} with {free[h]} free GPUs")


PLACEMENT = instance_of(Placement, "a Placement")
TYPE_PLANS = instance_of(tuple, "a tuple of (GPU type, TrainingPlan or None) pairs")
SERVER_INDICES = instance_of((tuple, list), "a tuple of server indices")
