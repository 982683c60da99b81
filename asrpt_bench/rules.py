"""What a value must be: the rule constructors every parameter declaration and every value type uses.

Every config group's type (a component's parameters, the cluster, the timing model, the solver
settings, ...) carries its rules in its own dataclass (params.py), and the value types of the model
(core.py: stage, plan, job) check their fields with the same rules, so the CLI and the API refuse a
value with the same one-line message: `scheduler.comm_heavy must be a number >= 1, got 0.5`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from .errors import ConfigError


def plain(value: Any) -> Any:
    """A value as the user wrote it: numpy scalars become Python numbers (so messages never show
    `np.float64(-4.0)`), containers element-wise."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():
        return value.item()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(item) for item in value)
    return value


def shown(value: Any) -> str:
    """repr of the plain value, for messages."""
    return repr(plain(value))


@dataclass(frozen=True)
class Rule:
    """What a value must be (`requirement`, completing "KEY must be ...") and the test it must pass."""

    requirement: str | Callable[[], str]
    accepts: Callable[[Any], bool]
    refusal: Callable[[str, Any], str] | None = None
    """The message for a refused value, if not '<key> must be <requirement>, got <value>'."""

    def describe(self) -> str:
        return self.requirement() if callable(self.requirement) else self.requirement

    def refuse(self, key: str, value: Any) -> str:
        if self.refusal is not None:
            return self.refusal(key, value)
        return f"{key} must be {self.describe()}, got {shown(value)}"

    def require(self, key: str, value: Any) -> None:
        """Raise ConfigError naming `key` unless the rule accepts `value`."""
        if not self.accepts(value):
            raise ConfigError(self.refuse(key, value))


def _finite(value: Any) -> float | int | None:
    """The plain number `value` is (an int or a float, not a bool; numpy scalars become Python numbers),
    if it is finite; else None. Job fields are checked for every job, so plain ints and floats go first."""
    if type(value) is not float and type(value) is not int:
        value = plain(value)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
    return value if isinstance(value, int) or math.isfinite(value) else None


def _is_number(value: Any) -> bool:
    return _finite(value) is not None


def _is_int(value: Any) -> bool:
    value = plain(value)
    return isinstance(value, int) and not isinstance(value, bool)


def integer(low: int, high: int | None = None) -> Rule:
    if high is not None:
        shown_high = f"{high:.0e}" if high >= 10**6 else str(high)
        return Rule(f"an integer in [{low}, {shown_high}]", lambda v: _is_int(v) and low <= plain(v) <= high)
    return Rule("a positive integer" if low == 1 else f"an integer >= {low}",
                lambda v: _is_int(v) and plain(v) >= low)


def optional_integer(low: int) -> Rule:
    return Rule(f"null or an integer >= {low}", lambda v: v is None or (_is_int(v) and plain(v) >= low))


MAX_JOBS = 2**31 - 1
"""Most jobs a run may hold: a job's row index fits a signed 32-bit column. (A run that large would need
terabytes anyway; whether a smaller one fits in memory is not predicted.)"""


def job_count(*, optional: bool = False, low: int = 1) -> Rule:
    """A number of jobs: an integer in [low, MAX_JOBS] (or null if optional)."""
    requirement = (f"{'null or ' if optional else ''}an integer in [{low}, 2**31 - 1] (a job's index fits a 32-bit "
                   "column)")
    return Rule(requirement, lambda v: (optional and v is None) or (_is_int(v) and low <= plain(v) <= MAX_JOBS))


def number(low: float, *, strict: bool = False, below: float | None = None, what: str = "a number") -> Rule:
    """A finite number >= low (> low if strict), and < below if given."""
    if below is not None:
        requirement = f"{what} in {'(' if strict else '['}{low:g}, {below:g})"
    elif strict and low == 0:
        requirement = f"a positive {what.removeprefix('a ')}"
    else:
        requirement = f"{what} {'>' if strict else '>='} {low:g}"

    def accepts(value: Any) -> bool:
        value = _finite(value)
        return value is not None and (value > low if strict else value >= low) and (below is None or value < below)

    return Rule(requirement, accepts)


MAX_SECONDS = 1e12
"""Largest time (s) anything may last or happen at: float64 keeps such times to about 1e-4 s, so
event-time sums and differences stay exact to well below a second (about 31,700 years). A job table's
times and every time-valued key are capped here (`seconds`)."""


def seconds(*, strict: bool = False, what: str = "a number of seconds") -> Rule:
    """A number of seconds in [0, MAX_SECONDS] ((0, MAX_SECONDS] if strict): every time-valued key's rule,
    so no key can hold a time the simulator's float64 event arithmetic would not keep exact."""
    requirement = f"{what} in {'(' if strict else '['}0, {MAX_SECONDS:.0e}]"

    def accepts(value: Any) -> bool:
        value = _finite(value)
        return value is not None and (value > 0 if strict else value >= 0) and value <= MAX_SECONDS

    return Rule(requirement, accepts)


def one_of(*choices: str) -> Rule:
    return Rule(f"one of {list(choices)}", lambda v: isinstance(v, str) and v in choices)


def flag() -> Rule:
    return Rule("true or false", lambda v: isinstance(plain(v), bool))


def instance_of(kind: type | tuple[type, ...], what: str) -> Rule:
    """An instance of `kind`; the refusal names the value's type (`got str 'x'`), cut to 300 characters."""
    return Rule(what, lambda v: isinstance(v, kind),
                lambda key, v: f"{key} must be {what}, got {type(v).__name__} {v!r}"[:300])
