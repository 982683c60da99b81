"""Named hand-made instances, written as job tables, with the cluster each one needs.

Each instance uses fixed-alpha jobs (alpha the same on every placement) and perfect predictions
unless stated otherwise, so its schedule can be worked out by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable

import pandas as pd

from ..core import Cluster, ConfigError, Job
from .jobs import jobs_from_table
from .sources import WORKLOADS, register_workload


@dataclass(frozen=True)
class Instance:
    name: str
    description: str
    table: pd.DataFrame
    cluster: Cluster

    def jobs(self) -> list[Job]:
        return jobs_from_table(self.table, f"instance {self.name!r}")

    def perfect_predictions(self) -> dict[Hashable, float]:
        return {job_id: float(n) for job_id, n in zip(self.table["job_id"], self.table["iterations"])}


def register_instance(name: str) -> Callable[[Callable[[], Instance]], Callable[[], Instance]]:
    """Decorator: `workload=<name>` simulates the instance the decorated function makes."""
    return register_workload(name, kind="instance")


def list_instances() -> list[str]:
    """Names of every registered instance, sorted."""
    return sorted(name for name in WORKLOADS if WORKLOADS.entry(name).meta["kind"] == "instance")


def get_instance(name: str) -> Instance:
    if name not in list_instances():
        raise ConfigError(f"unknown instance {name!r}; known: {list_instances()}")
    return WORKLOADS.make(name)


@register_instance("lemma2_reviewer")
def lemma2_reviewer() -> Instance:
    """The reviewer's Lemma-2 counterexample (docs/paper.md, section 8).

    G = 100 GPUs on one server (alpha is fixed, so the layout does not matter). A: g=1, n=100000,
    alpha=1 (p_A = 1000); B: g=50, n=2000, alpha=1 (p_B = 1000); both released at 0. Under A-SRPT
    with tau=0 and perfect predictions: C_A = 101000, C_B = 4000, sum C = 105000; OPT = 102000.
    """
    table = pd.DataFrame({"job_id": ["A", "B"], "release": [0.0, 0.0], "gpus": [1, 50],
                          "iterations": [100000, 2000], "alpha": [1.0, 1.0]})
    return Instance("lemma2_reviewer", lemma2_reviewer.__doc__ or "", table, Cluster(servers=1, gpus_per_server=100))


@register_instance("head_of_line")
def head_of_line() -> Instance:
    """Head-of-line blocking on 6 GPUs (2 servers x 3), all alpha = 1.

    L (g=5, n=10, r=0) runs 0-10. W (g=5, n=1, r=1) cannot fit until 10. S (g=1, n=2, r=2) fits on
    the idle GPU at 2. A strict scheduler that orders W before S (FIFO, SPJF) makes S wait for W's start
    (W 10-11, S 10-12); a work-conserving one starts S at 2 (S 2-4, W 10-11).
    """
    table = pd.DataFrame({"job_id": ["L", "W", "S"], "release": [0.0, 1.0, 2.0], "gpus": [5, 5, 1],
                          "iterations": [10, 1, 2], "alpha": [1.0, 1.0, 1.0]})
    return Instance("head_of_line", head_of_line.__doc__ or "", table, Cluster(servers=2, gpus_per_server=3))
