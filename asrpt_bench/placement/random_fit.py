"""Random placement: the topology-blind lower baseline, as a pure function of its inputs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core import Cluster, Placement, TrainingPlan
from .base import register_placer


def _call_seed(seed: int, plan: TrainingPlan, free: Sequence[int]) -> list[int]:
    """Seed words from (seed, model, config, gpus, free): the same call always draws the same GPUs."""
    key = repr((plan.model, plan.config, plan.gpus, tuple(int(f) for f in free))).encode()
    digest = hashlib.sha256(key).digest()
    return [int(seed), *(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))]


@register_placer("random", needs=("seed",))
@dataclass(frozen=True)
class RandomPlacer:
    """Uniformly random free GPUs: every set of `g` free GPUs is equally likely, and the vertices
    take them in a uniformly random order, so each vertex -> server map has the probability of the
    GPU choices that realise it."""

    seed: int = 0
    name: str = "random"

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        if sum(free) < plan.gpus:
            return None
        rng = np.random.default_rng(_call_seed(self.seed, plan, free))
        slots = np.repeat(np.arange(len(free)), np.asarray(free, dtype=np.int64))
        chosen = rng.choice(slots, size=plan.gpus, replace=False)
        return Placement(tuple(int(h) for h in chosen))
