"""The text of `asrpt-bench --help`: what the app does, its config groups and every key of the composed
configuration, each described from where it is declared (a component's `param(...)` docs and rules, a
plain group's rules), so the help cannot drift from the code. cli_app.py puts it into Hydra's help template.

    asrpt-bench --help                    the default configuration
    asrpt-bench scheduler=fifo --help     FIFO's keys instead of A-SRPT's
"""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Any, Iterator, Mapping

from .config import COMPONENT_GROUPS, PLUGINS, SEED, WORKERS, RunConfig, component_registry
from .params import Params
from .report.open_choices import yaml_value
from .rules import Rule, flag

WIDTH = 100
KEY_COLUMN = 36
"""Where a key's description starts (a longer `key=value` puts it on the next line)."""

ROOT_KEYS: dict[str, tuple[str, Rule]] = {
    "seed": ("the seed every random stream of the run derives from", SEED),
    "progress": ("progress bars and notes of long phases on stderr", flag()),
    "workers": ("processes simulating compare's schedulers side by side (null: one per CPU; 1: one by one); "
                "no result changes", WORKERS),
    "tiny": ("shrink the chosen components' sizes (the debug=tiny preset of tests and CI)", flag()),
    "plugins": ("modules imported first, registering your schedulers, placers, predictors, workloads or tasks",
                PLUGINS),
}
"""The root's own keys (RunConfig's fields that are no group): what each does, and its rule."""

USAGE = """\
asrpt-bench: A-SRPT (Luo et al., arXiv 2501.05563), its baselines and a simulator of a GPU cluster,
on real job traces. With no arguments it compares A-SRPT with every baseline on 2,000 Philly jobs.

Usage:
  asrpt-bench [GROUP=OPTION] [KEY=VALUE] ...      one run; its directory is printed at the end
  asrpt-bench -m KEY=A,B [KEY=C,D] ...            a sweep, one run per combination (a rerun skips the
                                                  points that completed)
  asrpt-bench -m experiment=NAME                  a named experiment of the paper (experiments/README.md)
  asrpt-bench GROUP=OPTION --help                 this text for that choice: its keys and defaults
  asrpt-bench --cfg job [GROUP=OPTION] ...        the composed configuration, as YAML"""

FOOTER = """\
Exit status: 0 done; 2 bad input, said in one line naming the key or file (no run directory is left);
1 the run, or a sweep point, failed (traceback in its FAILED file); 130/143 interrupted.
More: README.md; docs/experiments.md (runs, sweeps, every key); docs/extending.md (your own
components); docs/paper.md (the model and the paper's open choices); --hydra-help (Hydra's options)."""


def help_text(values: Mapping[str, Any], choices: Mapping[str, str], groups: Mapping[str, list[str]]) -> str:
    """The help for a composed configuration: `values`, its keys (without `hydra`); `choices`, each
    group's chosen option (hydra.runtime.choices); `groups`, each config group's options."""
    sections = [USAGE, _groups(choices, groups), _keys(values), FOOTER]
    return "\n\n".join(sections) + "\n"


def _groups(choices: Mapping[str, str], groups: Mapping[str, list[str]]) -> str:
    lines = ["Groups (GROUP=OPTION; [x] marks this configuration's choice):"]
    width = max(len(group) for group in groups) + 2
    for group, options in sorted(groups.items()):
        chosen = choices.get(group)
        shown = " ".join(f"[{option}]" if option == chosen else option for option in options)
        lines.extend(_wrapped(f"  {group}", shown, width + 2))
    return "\n".join(lines)


def _keys(values: Mapping[str, Any]) -> str:
    lines = ["Keys (KEY=VALUE, as this configuration sets them; what each does, and what it accepts):"]
    groups = RunConfig.group_types()
    for name, value in values.items():
        kind = groups.get(name)
        if name in COMPONENT_GROUPS and isinstance(value, Mapping):
            lines.extend(_component(name, value))
        elif isinstance(kind, type) and issubclass(kind, Params) and isinstance(value, Mapping):
            lines.extend(_wrapped("", f"{name}: {_first_line(kind.__doc__)}"))
            lines.extend(_params(name, kind, value))
        else:
            doc, rule = ROOT_KEYS.get(name, ("", None))
            lines.extend(_key(name, value, _join(doc, rule.describe() if rule is not None else "")))
    return "\n".join(lines)


def _component(kind: str, values: Mapping[str, Any]) -> Iterator[str]:
    """The group's chosen component, its own one-line description, then each parameter from its docs."""
    name = str(values.get("name", COMPONENT_GROUPS[kind].DEFAULT))
    registry = component_registry(kind)
    entry = registry.entry(name)
    yield from _wrapped("", f"{kind}={name}: {_first_line(entry.factory.__doc__) or _first_line(entry.params.__doc__)}")
    yield from _params(kind, registry.params_type(name), {k: v for k, v in values.items() if k != "name"})


def _params(prefix: str, params: type[Params], values: Mapping[str, Any]) -> Iterator[str]:
    for item in dataclasses.fields(params):
        key = f"{prefix}.{item.name}"
        value = values.get(item.name)
        nested = params.nested().get(item.name)
        if nested is not None and isinstance(value, Mapping):
            yield from _wrapped(f"    {key}:", item.metadata.get("doc", ""))
            yield from _params(key, nested, value)
            continue
        rule = item.metadata.get("rule")
        requirement = rule.describe() if rule is not None else ""
        yield from _key(key, value, _join(item.metadata.get("doc", ""), requirement), indent="  ")


def _join(doc: str, requirement: str) -> str:
    doc = doc.strip().rstrip(".")
    if requirement and doc:
        return f"{doc}; {requirement}"
    return doc or requirement


def _key(key: str, value: Any, description: str, indent: str = "") -> list[str]:
    return _wrapped(f"  {indent}{key}={yaml_value(value)}", description)


def _wrapped(head: str, text: str, column: int = KEY_COLUMN) -> list[str]:
    """`head` and `text` wrapped at WIDTH: the text from `column` (on the next line when the head reaches
    it), or, without a head, from the start with continuation lines indented."""
    if not head:
        return textwrap.wrap(text, WIDTH, subsequent_indent="    ")
    if not text:
        return [head]
    body = textwrap.wrap(text, WIDTH - column)
    lines = [head.ljust(column) + body[0]] if len(head) < column else [head, " " * column + body[0]]
    return lines + [" " * column + line for line in body[1:]]


def _first_line(text: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join((text or "").strip().split("\n\n")[0].split())
