"""Config groups -> typed components: cluster, timing model, scheduler, placer, predictor.

Each component receives only the keys of its group that its constructor accepts (the registry
rejects anything else, naming the key), and every random stream derives from (seed, component).
"""

from __future__ import annotations

from typing import Any

from .config import PlacementConfig, RunConfig, SchedulerConfig, group_params
from .core import Cluster
from .placement import PLACERS, Placer, make_placer
from .prediction import PREDICTORS, make_predictor
from .registry import constructor_parameters
from .schedulers import SCHEDULERS, Scheduler, make_scheduler
from .timing import TimingModel
from .workloads.seeding import component_rng


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
