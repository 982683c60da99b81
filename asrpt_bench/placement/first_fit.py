"""First-fit placement: vertices in stage-major order fill servers in index order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..core import Cluster, Placement, TrainingPlan
from .base import register_placer


@register_placer("first_fit")
@dataclass(frozen=True)
class FirstFitPlacer:
    """The topology-blind baseline: fill the lowest-numbered server with free GPUs first."""

    name: str = "first_fit"

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        if sum(free) < plan.gpus:
            return None
        servers: list[int] = []
        for h, capacity in enumerate(free):
            take = min(capacity, plan.gpus - len(servers))
            servers.extend([h] * take)
            if len(servers) == plan.gpus:
                break
        return Placement(tuple(servers))
