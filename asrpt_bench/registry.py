"""Named components of one kind (placers, schedulers, predictors, workload loaders).

Config option names map to factories through a Registry, never through if-chains, and every
registry rejects unknown names and unknown parameters the same way, naming the key. Parameters are
checked with the same rules as the config keys they come from (rules.py), so `make_scheduler("asrpt",
comm_heavy=0.5)` fails exactly like `asrpt-bench scheduler.comm_heavy=0.5`.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Generic, Mapping, TypeVar

from .core import ConfigError
from .rules import RULES, check

T = TypeVar("T")


def constructor_parameters(factory: Callable[..., Any]) -> list[str]:
    """Keyword names a factory (function or class) accepts, without `self` and the fixed `name`."""
    return [p for p in inspect.signature(factory).parameters if p not in ("self", "name")]


class Registry(dict, Generic[T]):
    """name -> factory for one kind of component; a dict, so `name in registry` and `sorted(registry)` work."""

    def __init__(self, kind: str, entries: dict[str, Callable[..., T]] | None = None,
                 rule_keys: Mapping[str, str] | None = None) -> None:
        """`rule_keys` maps a parameter to the config key whose rule checks it (default `<kind>.<param>`)."""
        super().__init__(entries or {})
        self.kind = kind
        self.rule_keys = dict(rule_keys or {})

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

    def check_params(self, params: Mapping[str, Any]) -> None:
        """Check each parameter that has a rule with that rule (the config key's message)."""
        for param, value in params.items():
            key = self.rule_keys.get(param, f"{self.kind}.{param}")
            if key in RULES:
                check(key, value)

    def make(self, name: str, **params: Any) -> T:
        """Construct `name` with `params`; unknown names or parameters, and values the config would
        refuse, fail with the same message as the CLI."""
        accepted = self.parameters(name)
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise ConfigError(f"{self.kind} {name!r}: unknown parameter(s) {unknown}; known: {accepted}")
        self.check_params(params)
        return self[name](**params)
