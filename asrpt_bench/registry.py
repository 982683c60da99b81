"""Named components of one kind (placers, schedulers, predictors, workload loaders).

Config option names map to factories through a Registry, never through if-chains, and every
registry rejects unknown names and unknown parameters the same way, naming the key.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Generic, TypeVar

from .core import ConfigError

T = TypeVar("T")


def constructor_parameters(factory: Callable[..., Any]) -> list[str]:
    """Keyword names a factory (function or class) accepts, without `self` and the fixed `name`."""
    return [p for p in inspect.signature(factory).parameters if p not in ("self", "name")]


class Registry(dict, Generic[T]):
    """name -> factory for one kind of component; a dict, so `name in registry` and `sorted(registry)` work."""

    def __init__(self, kind: str, entries: dict[str, Callable[..., T]] | None = None) -> None:
        super().__init__(entries or {})
        self.kind = kind

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator: make the factory constructible by name (config `<kind>=<name>`)."""

        def decorator(factory: Callable[..., T]) -> Callable[..., T]:
            self[name] = factory
            return factory

        return decorator

    def factory(self, name: str) -> Callable[..., T]:
        if name not in self:
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {sorted(self)}")
        return self[name]

    def parameters(self, name: str) -> list[str]:
        """The parameters `make(name, ...)` accepts."""
        return constructor_parameters(self.factory(name))

    def make(self, name: str, **params: Any) -> T:
        """Construct `name` with `params`; unknown names or parameters fail with what is known."""
        accepted = self.parameters(name)
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise ConfigError(f"{self.kind} {name!r}: unknown parameter(s) {unknown}; known: {accepted}")
        return self[name](**params)
