"""The Placer protocol and the registry every placer joins by name.

A placer is a pure function of (plan, free GPUs per server, cluster): it returns a Placement that
puts every vertex of the job graph once within free capacity, or None when the job does not fit now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from ..core import Cluster, Placement, TrainingPlan
from ..params import NoParams, Params, param
from ..registry import Registry
from ..rules import one_of


@runtime_checkable
class Placer(Protocol):
    name: str

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        """A placement within `free` (GPUs per server), or None if the job does not fit now."""
        ...


PLACERS: Registry[Placer] = Registry("placement")


def register_placer(name: str, params: type[Params] = NoParams, *, needs: tuple[str, ...] = (),
                    replace: bool = False) -> Callable:
    """Decorator: the placer is `placement=<name>` with the keys of `params`; `needs` are what the run
    supplies (`timing`: the timing model; `seed`: an int from the run seed; the ILP's solver settings)."""
    return PLACERS.register(name, params, needs=needs, replace=replace)


def make_placer(name: str, **keywords: Any) -> Placer:
    """Placer `name` from its parameters and the dependencies it needs, given as keywords."""
    return PLACERS.make_from_keywords(name, **keywords)


@dataclass(frozen=True)
class GraphParams(Params):
    """The job graph a graph-based placer cuts."""

    allreduce_edges: str = param("ring", one_of("ring", "clique"),
                                 "a stage's replicas exchange gradients along a ring or between every pair")
