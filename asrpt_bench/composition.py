"""Hydra composition: the config tree in `asrpt_bench/conf`, typed from the component registries.

Every registered component gets a structured schema built from its parameters' dataclass (stored in
Hydra's ConfigStore as `schema/<kind>/<name>`; an option file `conf/<kind>/<name>.yaml` takes it with
`defaults: [/schema/<kind>/<name>@_here_]`, a plugin's component is stored as the option itself), so
the defaults are written once, next to the component, and Hydra refuses a key the chosen component
does not have. Composition errors become one line naming the key, the component and its keys.
This module and cli_app.py are the only ones that import hydra or omegaconf.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import field, make_dataclass
from pathlib import Path
from typing import Any, List, Optional

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigNode, ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException, MissingConfigException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from .config import COMPONENT_GROUPS, ComponentConfig, RunConfig, component_registry, import_plugins
from .errors import ConfigError
from .params import Params

CONFIG_DIR = Path(__file__).resolve().parent / "conf"
SCHEMA_GROUP = "schema"

# Sweep subdirectories are named from the overrides; a point without overrides gets "defaults".
OmegaConf.register_new_resolver("run_dirname", lambda dirname: dirname or "defaults", replace=True)


def root_schema() -> type:
    """RunConfig as a structured config: each value-type group typed by its Params' generated schema (its
    defaults written once, in its dataclass), each component group `Any` (its chosen option's generated
    schema types it)."""
    hints = typing.get_type_hints(RunConfig)
    groups = RunConfig.group_types()
    fields: list[tuple[str, Any, Any]] = []
    for item in dataclasses.fields(RunConfig):
        kind = groups.get(item.name)
        if kind is not None and issubclass(kind, ComponentConfig):
            fields.append((item.name, Any, field(default=None)))
        elif kind is not None:
            node = schema_node(kind, f"{item.name}_group", None, None)
            values = item.default_factory().to_dict()  # type: ignore[misc]
            fields.append((item.name, node, field(default_factory=lambda n=node, v=values: n(**v))))
        elif item.default_factory is not dataclasses.MISSING:
            fields.append((item.name, _field_type(hints[item.name]), field(default_factory=item.default_factory)))
        else:
            fields.append((item.name, _field_type(hints[item.name]), field(default=item.default)))
    return make_dataclass("RootSchema", fields)


_SCHEMA_OWNERS: dict[str, tuple[str, str]] = {}
"""Generated schema class name -> (kind, component name), to name the component in messages."""

_OMEGACONF_TYPES = (int, float, str)


def _field_type(hint: Any) -> Any:
    """A type OmegaConf converts to before the parameter's own rule checks the value: ints and floats (so
    `8` and `8.0` give one value, and one config hash), strings and lists of them, each Optional, so that
    null reaches the rule and is refused with its one-line message as in Python; Any otherwise, bools
    included (OmegaConf would read 3 or 'yes' as true, which the rule refuses)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        return _field_type(next(a for a in args if a is not type(None)))
    if hint in _OMEGACONF_TYPES:
        return Optional[hint]
    if origin in (list, List) and args and args[0] in _OMEGACONF_TYPES:
        return Optional[List[args[0]]]  # type: ignore[valid-type]
    return Any


def schema_node(params: type[Params], class_name: str, name: str | None, owner: tuple[str, str] | None) -> type:
    """A structured-config dataclass with `params`' fields and defaults (and `name` first, if given);
    `owner` (kind, component name) is remembered for messages, for nested groups too (None: a value-type
    group of the root, whose unknown keys are named with the group's keys)."""
    if owner is not None:
        _SCHEMA_OWNERS[class_name] = owner
    hints = typing.get_type_hints(params)
    fields: list[tuple[str, Any, Any]] = [] if name is None else [("name", str, field(default=name))]
    for item in dataclasses.fields(params):
        hint = hints[item.name]
        default = item.default if item.default is not dataclasses.MISSING else item.default_factory()
        if isinstance(hint, type) and issubclass(hint, Params):
            nested = schema_node(hint, f"{class_name}_{item.name}", None, owner)
            values = default.to_dict()
            fields.append((item.name, nested, field(default_factory=lambda n=nested, v=values: n(**v))))
        elif isinstance(default, (list, dict)):
            fields.append((item.name, _field_type(hint), field(default_factory=lambda v=default: list(v))))
        else:
            fields.append((item.name, _field_type(hint), field(default=default)))
    return make_dataclass(class_name, fields)


_STORED: dict[str, tuple] = {}
"""What the ConfigStore holds: the registered components and the config directory they were stored for."""


def _registered(config_dir: Path) -> tuple:
    """The config directory and every component name, registered or declared (registry.py), without
    importing a declared one's module: a schema's parameters are read when Hydra first loads it."""
    return (str(config_dir), tuple((kind, tuple(component_registry(kind).known())) for kind in COMPONENT_GROUPS))


def store_schemas(config_dir: Path = CONFIG_DIR) -> None:
    """Store the root schema and every component's schema (again after plugins register a new name; not
    again when no name was added since the last time, which costs a run a tenth of a second)."""
    registered = _registered(config_dir)
    if _STORED.get("last") == registered:
        return
    _store_schemas(config_dir)
    _STORED["last"] = registered


def _store_schemas(config_dir: Path) -> None:
    store = ConfigStore.instance()
    store.store(name="run_config_schema", node=root_schema())
    for kind in COMPONENT_GROUPS:
        for name in component_registry(kind).known():
            _store_lazily(store, f"{SCHEMA_GROUP}/{kind}", name, (kind, name))
            if not (config_dir / kind / f"{name}.yaml").exists():
                _store_lazily(store, kind, name, (kind, name))


@functools.cache
def _structured(params: type[Params], class_name: str, name: str, owner: tuple[str, str]) -> DictConfig:
    """A component's schema as the DictConfig that ConfigStore.store would hold (built once per Params)."""
    return OmegaConf.structured(schema_node(params, class_name, name, owner))


class _LazySchema(ConfigNode):
    """A ConfigStore entry whose schema is built when Hydra first loads it: a run composes one option of
    each group, and building all ~90 schemas up front (then deep-copying them, as each composition copies
    the store) cost a default run a tenth of its CPU time; nor is a built-in's module imported before its
    schema is loaded (registry.py). The schema is that of the component registered under the name when it
    is loaded, so a plugin that replaces a built-in (`replace=True`) needs no new entry. A deep copy stays
    lazy (the schema is built from immutable parts, and ConfigStore.load deep-copies what it returns); a
    shallow copy (which ConfigStore.load makes of the entry) or a pickle (launchers ship the store to
    workers) is the plain ConfigNode that ConfigStore.store would have made."""

    def __init__(self, name: str, group: str, component: tuple[str, str]) -> None:
        self.name, self.group, self.package, self.provider = name, group, None, None
        self._component = component

    @property  # type: ignore[override]
    def node(self) -> DictConfig:
        kind, name = self._component
        return _structured(component_registry(kind).params_type(name), f"{name}_{kind}", name, (kind, name))

    def __copy__(self) -> ConfigNode:
        return ConfigNode(self.name, self.node, self.group, self.package, self.provider)

    def __deepcopy__(self, memo: dict) -> "_LazySchema":
        return _LazySchema(self.name, self.group, self._component)

    def __reduce__(self) -> tuple:
        return ConfigNode, (self.name, self.node, self.group, self.package, self.provider)


def _store_lazily(store: ConfigStore, group: str, name: str, component: tuple[str, str]) -> None:
    """What `store.store(group=group, name=name, node=<the schema of component (kind, name)>)` does, the
    schema built on load."""
    folder = store.repo
    for part in group.split("/"):
        folder = folder.setdefault(part, {})
    folder[f"{name}.yaml"] = _LazySchema(f"{name}.yaml", group, component)


def plugins_in(overrides: list[str]) -> list[str]:
    """The modules named by a `plugins=[...]` override (they must register before the tree is composed)."""
    modules: list[str] = []
    for override in overrides:
        if override.lstrip("+~").split("=", 1)[0] != "plugins" or "=" not in override:
            continue
        try:
            parsed = OverridesParser.create().parse_overrides([override.lstrip("+")])[0]
        except HydraException as error:
            raise ConfigError(hydra_error_message(error)) from None
        value = parsed.value()
        modules = [str(m) for m in value] if isinstance(value, list) else [str(value)]
    return modules


def prepare(overrides: list[str], config_dir: Path = CONFIG_DIR) -> None:
    """Import the plugins the overrides name, then store every schema: call before composing."""
    import_plugins(plugins_in(overrides))
    store_schemas(config_dir)


store_schemas()  # the built-ins' schemas, so Hydra's own compose API finds them too


# --------------------------------------------------------------------------------------------------
# Errors in one line


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0].strip() if text else type(error).__name__


def _owner(cause: BaseException) -> tuple[str, str] | None:
    """(kind, name) of the component whose schema refused a key, from OmegaConf's object_type."""
    object_type = getattr(cause, "object_type", None)
    return _SCHEMA_OWNERS.get(getattr(object_type, "__name__", ""))


def _known_keys(full_key: str) -> str:
    """'<group> has keys [...]' for the parent of `full_key` among the plain groups of the root."""
    schema: Any = RunConfig
    parent = full_key.rsplit(".", 1)[0] if "." in full_key else ""
    for part in [p for p in parent.split(".") if p]:
        fields = {item.name: item for item in dataclasses.fields(schema)}
        if part not in fields or fields[part].default_factory is dataclasses.MISSING:
            return ""
        schema = type(fields[part].default_factory())
    return f"{parent or 'the root'} has keys {sorted(item.name for item in dataclasses.fields(schema))}"


def hydra_error_message(error: BaseException) -> str:
    """One line for a Hydra or OmegaConf error: the key or option, what is wrong, what is known."""
    if isinstance(error, MissingConfigException):
        message = _first_line(error).removeprefix("In 'config': ")
        options = [o for o in (error.options or []) if not o.startswith(SCHEMA_GROUP)]
        return f"{message}; available: {', '.join(options)}" if options else message
    cause = error.__cause__ if error.__cause__ is not None else error
    full_key = getattr(cause, "full_key", None)
    if isinstance(cause, (ConfigKeyError, ConfigAttributeError)) and full_key:
        owner = _owner(cause)
        if owner is not None:
            kind, name = owner
            key = str(full_key)
            registry = component_registry(kind)
            parent = key.rsplit(".", 1)[0]
            params = registry.params_type(name)
            for part in parent.split(".")[1:]:
                params = params.nested().get(part, params)
            return (f"{key}: {kind} {name!r} has no parameter {key.rsplit('.', 1)[1]!r}; its parameters: "
                    f"{params.names() or 'none'}")
        known = _known_keys(str(full_key))
        return f"{full_key}: unknown key" + (f"; {known}" if known else "")
    if full_key:
        return f"{full_key}: {_first_line(cause)}"
    if cause is not error:
        return f"{_first_line(error).rstrip('.')}: {_first_line(cause)}"
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return "; ".join(lines) if 1 < len(lines) <= 4 else _first_line(error)


# --------------------------------------------------------------------------------------------------
# Compose and convert


def to_run_config(cfg: DictConfig) -> RunConfig:
    """The composed config as a validated RunConfig; errors name the offending key."""
    container = OmegaConf.masked_copy(cfg, [key for key in cfg.keys() if key != "hydra"])
    try:
        missing = sorted(OmegaConf.missing_keys(container))
        if missing:
            raise ConfigError(f"{missing[0]} is required: set it on the command line ({missing[0]}=...)")
        # Interpolations are resolved before the typed merge so that `${...}` values are type-checked too.
        resolved = OmegaConf.to_container(container, resolve=True)
    except OmegaConfBaseException as error:
        raise ConfigError(hydra_error_message(error)) from None
    assert isinstance(resolved, dict)
    return RunConfig.from_dict(resolved).validate()


def _compose(overrides: list[str], hydra_config: bool = False) -> DictConfig:
    try:
        return compose(config_name="config", overrides=overrides, return_hydra_config=hydra_config)
    except (HydraException, OmegaConfBaseException) as error:
        raise ConfigError(hydra_error_message(error)) from None


def compose_run_config(overrides: list[str] | None = None, config_dir: Path = CONFIG_DIR) -> RunConfig:
    """Compose the config tree with `overrides` (as on the command line) and validate it."""
    overrides = list(overrides or [])
    prepare(overrides, config_dir)
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        return to_run_config(_compose(overrides))


def sweep_axes(overrides: list[str], sweeper_params: dict[str, str]) -> list[list[str]]:
    """The sweep as Hydra's basic sweeper builds it: one axis per key, its `key=value` choices (the
    config's hydra.sweeper.params first, command-line overrides of the same key replacing them)."""
    parser = OverridesParser.create()
    try:
        parsed = parser.parse_overrides([f"{key}={value}" for key, value in sweeper_params.items()] + overrides)
    except HydraException as error:
        raise ConfigError(hydra_error_message(error)) from None
    axes: dict[str, list[str]] = {}
    for override in parsed:
        key = override.get_key_element()
        if not override.is_sweep_override():
            axes[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            axes[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            raise ConfigError(f"{key}: the basic sweeper supports lists and ranges, not {override.value_type.name}")
    return list(axes.values())


def validate_sweep(overrides: list[str], config_dir: Path = CONFIG_DIR) -> int:
    """Validate a sweep before any point runs: every value of every swept key appears in at least one
    composed and validated point (max axis length compositions, not the whole product; a failure
    that needs two values together is caught when that point runs). Returns the sweep's point count."""
    prepare(overrides, config_dir)
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        first = sweep_axes(overrides, {})
        base = _compose([axis[0] for axis in first], hydra_config=True)
        params = base.hydra.sweeper.get("params")
        params = OmegaConf.to_container(params, resolve=False) if params else {}
        axes = sweep_axes(overrides, {str(k): str(v) for k, v in params.items()})
        for index in range(max((len(axis) for axis in axes), default=1)):
            to_run_config(_compose([axis[index % len(axis)] for axis in axes]))
    count = 1
    for axis in axes:
        count *= len(axis)
    return count
