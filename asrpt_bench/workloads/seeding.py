"""Seeded random generators derived from (seed, component), never from global state.

Two components with the same seed draw independent streams, and adding a new component never
changes the draws of an existing one: the component name is hashed (CRC-32, stable across runs
and platforms) into the generator's seed sequence.
"""

from __future__ import annotations

import zlib

import numpy as np

from ..core import ConfigError


def component_rng(seed: int, component: str) -> np.random.Generator:
    """The generator for `component` under `seed` (a non-negative integer)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng([int(seed), zlib.crc32(component.encode("utf-8"))])
