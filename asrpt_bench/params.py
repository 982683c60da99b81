"""Component parameters: each component declares its knobs as a frozen dataclass next to its code.

Every field carries its default and its rule (rules.py), so the component is the only place that
says what a knob means, what it defaults to and what values it takes (scikit-learn's estimators and
benchopt's solver files are the models). The registry (registry.py) parses a config group into the
chosen component's parameters, so a key that component does not have is refused in one line naming
the key, the component and the keys it does have, instead of being recorded and ignored.

    @dataclass(frozen=True)
    class LIFOParams(Params):
        depth: int = param(1, integer(1), "how many jobs the head may look past")
"""

from __future__ import annotations

import copy
import dataclasses
import typing
from dataclasses import dataclass
from typing import Any, Mapping, TypeVar

from .errors import ConfigError
from .rules import Rule, plain, shown

P = TypeVar("P", bound="Params")


def param(default: Any, rule: Rule | None = None, doc: str = "") -> Any:
    """A parameter field: its default, the rule its values must pass and one line saying what it does."""
    metadata = {"rule": rule, "doc": doc}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    if isinstance(default, Params):
        return dataclasses.field(default_factory=lambda: default, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True)
class Params:
    """Base of every component's parameters. Subclasses add fields made with `param(...)`; a subclass
    with rules between fields overrides `check_together` (called after every field passed its own)."""

    @classmethod
    def names(cls) -> list[str]:
        return [item.name for item in dataclasses.fields(cls)]

    @classmethod
    def nested(cls) -> dict[str, type["Params"]]:
        """Fields whose value is itself a Params (e.g. a trace's `recurrence`), by name."""
        hints = typing.get_type_hints(cls)
        return {item.name: hints[item.name] for item in dataclasses.fields(cls)
                if isinstance(hints[item.name], type) and issubclass(hints[item.name], Params)}

    @classmethod
    def parse(cls: type[P], values: Mapping[str, Any], prefix: str, owner: str, acts: bool = True) -> P:
        """The parameters from a mapping of config values; `prefix` names the config group in messages
        (`scheduler`), `owner` the component (`scheduler 'fifo'`). Unknown keys are refused; `acts` as
        in `check`."""
        known = cls.names()
        for key in values:
            if key not in known:
                raise ConfigError(f"{prefix}.{key}: {owner} has no parameter {key!r}; its parameters: "
                                  f"{known or 'none'}")
        nested = cls.nested()
        tuples = {item.name for item in dataclasses.fields(cls) if isinstance(item.default, tuple)}
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            if key in tuples and isinstance(value, list):  # a config list for a tuple-valued parameter
                value = tuple(value)
            if key in nested and isinstance(value, Mapping):
                value = nested[key].parse(value, f"{prefix}.{key}", owner)
            elif key in nested and not isinstance(value, Params):
                raise ConfigError(f"{prefix}.{key} must be a group of keys ({nested[key].names()}), got {shown(value)}")
            kwargs[key] = plain(value)
        params = cls(**kwargs)
        params.check(prefix, acts)
        return params

    def check(self, prefix: str, acts: bool = True) -> None:
        """Raise ConfigError '<prefix>.<field> must be ..., got ...' for the first value its rule refuses, then
        for rules between fields (`check_together`), then, with `acts`, for a changed value that would change
        nothing given the others (`inert_keys`). A config group that configures several components checks
        `acts` per component instead (config.RunConfig)."""
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, Params):
                value.check(f"{prefix}.{item.name}")
                continue
            rule: Rule | None = item.metadata.get("rule")
            if rule is not None and not rule.accepts(value):
                raise ConfigError(rule.refuse(f"{prefix}.{item.name}", value))
        self.check_together(prefix)
        if acts:
            for key in self.inert_keys():
                raise ConfigError(self.inert_message(prefix, key))

    def check_together(self, prefix: str) -> None:
        """Rules that involve several fields (none by default)."""

    def inert_keys(self) -> list[str]:
        """Keys changed from their defaults that change nothing given the other values (none by default)."""
        return []

    def inert_message(self, prefix: str, key: str) -> str:
        """Why `key` (one of `inert_keys`) changes nothing, completing '<prefix>.<key> ...'."""
        return f"{prefix}.{key} changes nothing with the other values of {prefix}"

    def values(self) -> dict[str, Any]:
        """Field -> value, one level deep (nested Params stay objects): a component's keyword arguments."""
        return {item.name: getattr(self, item.name) for item in dataclasses.fields(self)}

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict, as recorded in config.json."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class NoParams(Params):
    """A component without parameters."""
