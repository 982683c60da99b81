"""The Placer protocol and the registry every placer joins by name.

A placer is a pure function of (plan, free GPUs per server, cluster): it returns a Placement that
puts every vertex of the job graph once within free capacity, or None when the job does not fit now.
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

from ..core import Cluster, Placement, TrainingPlan
from ..registry import Registry


@runtime_checkable
class Placer(Protocol):
    name: str

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        """A placement within `free` (GPUs per server), or None if the job does not fit now."""
        ...


# The solver keys of the placement ILP are the solver group's keys.
PLACERS: Registry[Placer] = Registry("placement", rule_keys={"solver": "solver.name", "time_limit_s": "solver.time_limit_s",
                                                             "mip_gap": "solver.mip_gap", "threads": "solver.threads"})
register_placer = PLACERS.register
make_placer = PLACERS.make
