"""The Placer protocol and the registry every placer joins by name.

A placer is a pure function of (plan, free GPUs per server, cluster): it returns a Placement that
puts every vertex of the job graph once within free capacity, or None when the job does not fit now.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, runtime_checkable

from ..core import Cluster, ConfigError, Placement, TrainingPlan


@runtime_checkable
class Placer(Protocol):
    name: str

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        """A placement within `free` (GPUs per server), or None if the job does not fit now."""
        ...


PLACERS: dict[str, Callable[..., Placer]] = {}


def register_placer(name: str) -> Callable[[Callable[..., Placer]], Callable[..., Placer]]:
    """Class decorator: make a placer constructible by name (config `placement=<name>`)."""

    def decorator(factory: Callable[..., Placer]) -> Callable[..., Placer]:
        PLACERS[name] = factory
        return factory

    return decorator


def make_placer(name: str, **params: object) -> Placer:
    """Construct a registered placer; unknown names fail with the list of known ones."""
    if name not in PLACERS:
        raise ConfigError(f"unknown placement {name!r}; known: {sorted(PLACERS)}")
    return PLACERS[name](**params)
