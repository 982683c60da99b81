"""Parallel configurations (p pipeline stages x d data-parallel replicas) and the per-GPU memory model.

Memory model (per GPU, bytes): a stage holds its weights, gradients and two Adam moments, i.e.
4 x its parameter bytes, plus the stashed activations of the mini-batches in flight. In an
asynchronous (PipeDream-style) pipeline, stage s (0-based) of p keeps p - s mini-batches; each of the
d replicas processes 1/d of a mini-batch, so stashed bytes = (p - s) * (stage output bytes) / d.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from typing import TypeVar

import numpy as np

from ..core import GB, ConfigError

ArrayOrFloat = TypeVar("ArrayOrFloat", float, np.ndarray)

OPTIMIZER_COPIES = 4
"""Weights + gradients + two Adam moments, each the size of the parameters."""

_NAME = re.compile(r"p(\d+)xd(\d+)")


@dataclass(frozen=True, order=True)
class ParallelConfig:
    """`stages` pipeline stages, each replicated `replicas` times (uniform data parallelism)."""

    stages: int
    replicas: int

    def __post_init__(self) -> None:
        for key in ("stages", "replicas"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"parallel config: {key} must be a positive integer, got {value!r}")

    @property
    def gpus(self) -> int:
        return self.stages * self.replicas

    @property
    def name(self) -> str:
        return f"p{self.stages}xd{self.replicas}"

    def __str__(self) -> str:
        return self.name

    @classmethod
    def parse(cls, name: "str | ParallelConfig") -> "ParallelConfig":
        """`'p2xd4'` -> ParallelConfig(2, 4); a ParallelConfig passes through."""
        if isinstance(name, ParallelConfig):
            return name
        match = _NAME.fullmatch(str(name).strip())
        if match is None:
            raise ConfigError(f"parallel config {name!r} is not of the form 'p<stages>xd<replicas>', "
                              f"e.g. 'p2xd4'")
        return cls(int(match.group(1)), int(match.group(2)))


def factorizations(gpus: int) -> list[ParallelConfig]:
    """Every (p, d) with p * d = gpus, fewest stages first."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise ConfigError(f"gpus must be a positive integer, got {gpus!r}")
    return [ParallelConfig(p, gpus // p) for p in range(1, gpus + 1) if gpus % p == 0]


def stage_memory_bytes(param_bytes: ArrayOrFloat, output_bytes: ArrayOrFloat, stage_index: int,
                       config: ParallelConfig) -> ArrayOrFloat:
    """Per-GPU memory of stage `stage_index` (0-based) under `config` (see the module docstring);
    works elementwise on numpy arrays of candidate stages."""
    in_flight = config.stages - stage_index
    return OPTIMIZER_COPIES * param_bytes + in_flight * output_bytes / config.replicas


def memory_capacity_bytes(gpu_memory_gb: float) -> float:
    """Bytes available per GPU (1 GB = 1e9 B, as everywhere in the package)."""
    is_number = isinstance(gpu_memory_gb, (int, float)) and not isinstance(gpu_memory_gb, bool)
    if not is_number or not gpu_memory_gb > 0:
        raise ConfigError(f"gpu_memory_gb must be a positive number, got {gpu_memory_gb!r}")
    return gpu_memory_gb * GB
