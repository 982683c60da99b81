"""One registry type for every kind of named component: schedulers, placers, predictors, workload
sources, tasks and solver backends.

A component registers under a name with the dataclass of its parameters (params.py) and the
dependencies its caller supplies (`needs`, e.g. a placer's timing model): `register(name,
params=...)`. Its factory takes the parameters as keywords (scikit-learn's style: the constructor's
arguments are the parameters), or, if it has an argument named `params`, the dataclass itself. `parse(name, values)` turns a config group into those parameters, refusing any key the
component does not have; `make(name, params, **dependencies)` constructs it. Registering a taken name
is refused unless the registrant says `replace=True`, which is said once as a warning and counted in
the run's summary (`adjustments.replaced_components`).

A registry also knows the built-in names of its kind before their modules are imported (`declare`, which
each component package's `__init__` calls): looking a name up imports its module, so a run imports the
components it names and not the others (a warm default run would otherwise import some eighty modules it
never uses); listing the registry (iterating it, `names()`, the "known: ..." of an unknown name) imports
them all first, so a list is always complete. Plugins register by being imported, as before.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from dataclasses import dataclass, field
from collections.abc import MutableMapping
from typing import Any, Callable, Generic, Iterator, Mapping, TypeVar

from .errors import ConfigError
from .params import NoParams, Params

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A registered component: its factory, its parameters' dataclass, what its caller must supply,
    the module that registered it, and kind-specific facts (`meta`, e.g. a task's `needs_workload`)."""

    name: str
    factory: Callable[..., T]
    params: type[Params]
    needs: tuple[str, ...]
    module: str
    meta: dict[str, Any] = field(default_factory=dict)


REGISTRIES: dict[str, "Registry[Any]"] = {}
"""kind -> its registry; the config layer finds a group's registry here (config.component_registry)."""

REPLACED: list[str] = []
"""One message per registration that replaced a taken name (this process); runs record them."""


def _accepted(factory: Callable[..., Any]) -> set[str] | None:
    """Keyword names the factory accepts; None if it takes **kwargs."""
    parameters = inspect.signature(factory).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


class Registry(MutableMapping[str, Entry[T]], Generic[T]):
    """name -> Entry for one kind of component (a mapping: `name in registry`, `sorted(registry)`)."""

    def __init__(self, kind: str) -> None:
        if kind in REGISTRIES:
            raise ConfigError(f"a registry of kind {kind!r} exists already")
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}
        self._declared: dict[str, str] = {}
        """Built-in name -> the module whose import registers it (`declare`)."""
        self._pending: dict[str, str] = {}
        """The declared names whose module has not been imported by a lookup yet."""
        REGISTRIES[kind] = self

    def register(self, name: str, params: type[Params] = NoParams, *, needs: tuple[str, ...] = (),
                 replace: bool = False, **meta: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator: make the factory constructible by name (config `<kind>=<name>`) with `params`."""
        if not (isinstance(name, str) and name.isidentifier()):
            raise ConfigError(f"{self.kind} names must be identifiers, got {name!r}")
        if not (isinstance(params, type) and issubclass(params, Params)):
            raise ConfigError(f"{self.kind} {name!r}: params must be a Params dataclass, got {params!r}")

        def decorator(factory: Callable[..., T]) -> Callable[..., T]:
            accepted = _accepted(factory)
            wanted = [*(["params"] if accepted and "params" in accepted else params.names()), *needs]
            missing = [key for key in wanted if accepted is not None and key not in accepted]
            if missing:
                raise ConfigError(f"{self.kind} {name!r}: {getattr(factory, '__qualname__', factory)} does not "
                                  f"accept parameter(s) {missing} of {params.__name__}")
            module = getattr(factory, "__module__", "?")
            self._load(name)  # a built-in of this name registers first, so `replace` replaces it as before
            if name in self._entries:
                taken = self._entries[name].module
                if not replace:
                    raise ConfigError(f"{self.kind} {name!r} is already registered by {taken}; register it under "
                                      f"another name, or pass replace=True to replace it")
                message = f"{self.kind} {name!r} of {taken} replaced by the one of {module}"
                REPLACED.append(message)
                warnings.warn(message, stacklevel=2)
            self._entries[name] = Entry(name, factory, params, tuple(needs), module, dict(meta))
            return factory

        return decorator

    def __contains__(self, name: object) -> bool:
        try:
            self[name]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return iter(self._entries)

    def __len__(self) -> int:
        self._load_all()
        return len(self._entries)

    def __getitem__(self, name: str) -> Entry[T]:
        self._load(name)
        return self._entries[name]

    def declare(self, modules: Mapping[str, str]) -> None:
        """Built-in names and the module whose import registers each (absolute dotted names), imported when
        the name is first looked up (module doc)."""
        self._declared.update(modules)
        self._pending.update((name, module) for name, module in modules.items() if name not in self._entries)

    @property
    def declared(self) -> dict[str, str]:
        """Every declared built-in name -> its module (a copy)."""
        return dict(self._declared)

    def _load(self, name: object) -> None:
        """Import the module of a declared built-in `name` that no lookup has imported yet (once; the module
        now being imported, the one registering the name, is not imported again)."""
        module = self._pending.pop(name, None) if isinstance(name, str) else None
        if module is not None:
            importlib.import_module(module)

    def _load_all(self) -> None:
        for name in list(self._pending):
            self._load(name)

    def known(self) -> list[str]:
        """Every name, registered or declared, without importing a declared one's module (registered names
        first, in registration order, then the declared ones not imported yet)."""
        return [*self._entries, *(name for name in self._pending if name not in self._entries)]

    def is_known(self, name: str) -> bool:
        """Whether `name` is registered or declared, without importing its module."""
        return name in self._entries or name in self._pending

    def __setitem__(self, name: str, entry: Entry[T]) -> None:
        """Swap an entry in as it is, without the checks of `register` (for tests: monkeypatch.setitem)."""
        if not isinstance(entry, Entry):
            raise TypeError(f"a {self.kind} registry holds Entry objects, got {type(entry).__name__}")
        self._load(name)
        self._entries[name] = entry

    def __delitem__(self, name: str) -> None:
        self._load(name)
        del self._entries[name]

    def names(self) -> list[str]:
        """Every registered name, sorted (the declared built-ins' modules imported first)."""
        return sorted(self)

    def entry(self, name: str) -> Entry[T]:
        try:
            return self[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {self.names()}{self.unknown_hint()}") from None

    def unknown_hint(self) -> str:
        """More to say when a name is unknown (a registry of derived names says how to spell them)."""
        return ""

    def params_type(self, name: str) -> type[Params]:
        return self.entry(name).params

    def parse(self, name: str, values: Mapping[str, Any] | None = None, prefix: str | None = None,
              acts: bool = True) -> Params:
        """`name`'s parameters from config values (defaults for the rest); unknown keys and refused values
        fail in one line naming `<prefix>.<key>` (prefix: the kind); `acts` as in Params.check."""
        return self.params_type(name).parse(dict(values or {}), prefix or self.kind, f"{self.kind} {name!r}", acts)

    def make(self, name: str, params: Params | Mapping[str, Any] | None = None, /, **dependencies: Any) -> T:
        """Construct `name` from its parameters (a Params, or a mapping parsed like a config group) and the
        dependencies it declared (`needs`); anything else is refused naming it."""
        entry = self.entry(name)
        if not isinstance(params, Params):
            params = self.parse(name, params)
        elif not isinstance(params, entry.params):
            raise ConfigError(f"{self.kind} {name!r} takes {entry.params.__name__}, got {type(params).__name__}")
        unknown = sorted(set(dependencies) - set(entry.needs))
        if unknown:
            raise ConfigError(f"{self.kind} {name!r}: unknown argument(s) {unknown}; parameters: "
                              f"{entry.params.names()}, supplied by the caller: {list(entry.needs)}")
        if "params" in (_accepted(entry.factory) or ()):
            return entry.factory(params=params, **dependencies)
        return entry.factory(**params.values(), **dependencies)

    def make_from_keywords(self, name: str, **keywords: Any) -> T:
        """`make` with parameters and dependencies mixed as keywords (the Python API's convenience:
        `make_placer("ilp", solver="cbc", timing=model)`)."""
        entry = self.entry(name)
        dependencies = {key: keywords.pop(key) for key in list(keywords) if key in entry.needs}
        return self.make(name, keywords, **dependencies)
