"""Component groups -> components: scheduler, placer, predictor.

Each component is made by its registry from the parameters its config group holds (already parsed
and checked by that registry), plus the dependencies it declared (`needs`: the timing model, a seed,
the solver settings, which the run config holds as they are); every random stream derives from
(seed, component).
"""

from __future__ import annotations

from typing import Any

from .config import RunConfig
from .placement import PLACERS, Placer
from .prediction import PREDICTORS
from .schedulers import SCHEDULERS, Scheduler
from .workloads.seeding import component_rng


def build_scheduler(config: RunConfig, name: str | None = None) -> Scheduler:
    """Scheduler `name` (default: the scheduler group's) with the parameters it runs with
    (`RunConfig.scheduler_params`); a randomised one gets a seed from (seed, "scheduler")."""
    name = name or config.scheduler.name
    available = {"seed": int(component_rng(config.seed, "scheduler").integers(2**31))}
    return SCHEDULERS.make(name, config.scheduler_params(name), **{key: available[key]
                                                                    for key in SCHEDULERS.entry(name).needs
                                                                    if key in available})


def placer_dependencies(config: RunConfig) -> dict[str, Any]:
    """What a placer may declare it needs: the timing model, a seed from (seed, "placement"), the solver."""
    return {"timing": config.timing, "seed": int(component_rng(config.seed, "placement").integers(2**31)),
            "solver": config.solver}


def build_placer(config: RunConfig, name: str | None = None) -> Placer:
    """Placer `name` (default: the placement group's): the group's parameters for the group's placer, the
    placer's defaults for another (a baseline's `task.baseline_placement`)."""
    name = name or config.placement.name
    entry = PLACERS.entry(name)
    params = config.placement.params if name == config.placement.name else None
    available = placer_dependencies(config)
    return PLACERS.make(name, params, **{key: available[key] for key in entry.needs})


def predictor_params(config: RunConfig) -> tuple[str, dict[str, Any]]:
    """The predictor group's name and constructor keywords; random_state from (seed, "predictor")."""
    name = config.predictor.name
    params = config.predictor.params.to_dict()
    if "features" in params:
        params["features"] = tuple(params["features"])
    if "random_state" in PREDICTORS.entry(name).needs:
        params["random_state"] = int(component_rng(config.seed, "predictor").integers(2**31))
    return name, params


def build_predictor(config: RunConfig) -> Any:
    name, params = predictor_params(config)
    return PREDICTORS.make_from_keywords(name, **params)
