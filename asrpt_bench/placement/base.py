"""The Placer protocol and the registry every placer joins by name.

A placer is a pure function of (plan, free GPUs per server, cluster): it returns a Placement that
puts every vertex of the job graph once within free capacity, or None when the job does not fit now.
"""

from __future__ import annotations

from dataclasses import dataclass, make_dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

from ..core import Cluster, Placement, TrainingPlan
from ..params import NoParams, Params, param
from ..registry import Registry
from ..rules import Rule, one_of
from .pools import POOL_CHOICES, PooledPlacer, make_pool_choice


@runtime_checkable
class Placer(Protocol):
    name: str

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        """A placement within `free` (GPUs per server), or None if the job does not fit now."""
        ...


DEFAULT_POOL_CHOICE = "fastest_fit"
POOL = Rule(lambda: f"one of {POOL_CHOICES.names()}", lambda v: isinstance(v, str) and v in POOL_CHOICES)


@lru_cache(maxsize=None)
def with_pool(params: type[Params]) -> type[Params]:
    """`params` plus the key `pool` (pools.py): every placer's config group chooses the pool too."""
    pool = param(DEFAULT_POOL_CHOICE, POOL, "in which pool of a typed cluster a job runs: fastest_fit, first_fit, "
                                            "type_agnostic, or a registered pool choice (docs/placement.md)")
    return make_dataclass(params.__name__, [("pool", str, pool)], bases=(params,), frozen=True,
                          namespace={"__module__": params.__module__, "__doc__": params.__doc__})


class PlacerRegistry(Registry):
    """The placer registry: a placer's parameters are its own plus `pool`, and a placer is made behind its
    pool choice (`PooledPlacer`), so every placer, a plugin's too, places inside the pool the choice picks."""

    def params_type(self, name: str) -> type[Params]:
        return with_pool(super().params_type(name))

    def make(self, name: str, params: Params | Mapping[str, Any] | None = None, /, *, pool_seed: int = 0,
             **dependencies: Any) -> PooledPlacer:
        """The placer `name` behind its pool choice; `pool_seed` seeds a random pool choice."""
        if not isinstance(params, Params):
            params = self.parse(name, params)
        entry = self.entry(name)
        own = entry.params(**{key: getattr(params, key) for key in entry.params.names()}) \
            if isinstance(params, self.params_type(name)) else params
        placer = super().make(name, own, **dependencies)
        return PooledPlacer(placer, make_pool_choice(getattr(params, "pool", DEFAULT_POOL_CHOICE), pool_seed))

    def make_from_keywords(self, name: str, **keywords: Any) -> PooledPlacer:
        pool_seed = keywords.pop("pool_seed", 0)
        entry = self.entry(name)
        dependencies = {key: keywords.pop(key) for key in list(keywords) if key in entry.needs}
        return self.make(name, keywords, pool_seed=pool_seed, **dependencies)


PLACERS: Registry[Placer] = PlacerRegistry("placement")


def register_placer(name: str, params: type[Params] = NoParams, *, needs: tuple[str, ...] = (),
                    replace: bool = False) -> Callable:
    """Decorator: the placer is `placement=<name>` with the keys of `params` (and `pool`); `needs` are what the
    run supplies (`timing`: the timing model; `seed`: an int from the run seed; the ILP's solver settings)."""
    return PLACERS.register(name, params, needs=needs, replace=replace)


def make_placer(name: str, **keywords: Any) -> Placer:
    """Placer `name` from its parameters (and `pool`) and the dependencies it needs, given as keywords."""
    return PLACERS.make_from_keywords(name, **keywords)


@dataclass(frozen=True)
class GraphParams(Params):
    """The job graph a graph-based placer cuts."""

    allreduce_edges: str = param("ring", one_of("ring", "clique"),
                                 "a stage's replicas exchange gradients along a ring or between every pair")
