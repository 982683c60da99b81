"""What a scheduler sees and says: read-only job views, proposals, running jobs, the dispatch context
and the Scheduler protocol. Below every scheduler module (base.py, dispatch.py, the policies), so the
dispatch rules can name these types without importing the queue schedulers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import ContextManager, Hashable, Literal, NamedTuple, Protocol, Sequence, runtime_checkable

from ..core import Cluster, Placement, TrainingPlan, frozen_builder


class EventKind(IntEnum):
    """Event kinds in the order they are handled at one instant (lower first)."""

    COMPLETION = 0
    ARRIVAL = 1
    VIRTUAL_COMPLETION = 2
    DELAY_EXPIRY = 3


@dataclass(frozen=True, slots=True)
class JobView:
    """What a scheduler may know about a job.

    `order` is the job's position in the input (row order of a job table); it breaks ties where
    the paper says "by id". `iterations` is None unless the scheduler is an oracle.
    `alpha_min` is the empty-cluster estimate alpha~min and `min_servers` the servers its
    placement used; `comm_ratio` = alpha_max / alpha_min. On a cluster of several pools they are those
    of the job's fastest pool, and `pool_alpha_min` holds the empty-pool estimate in every pool (inf where
    the pool's type cannot run the job or the pool cannot hold it); on one pool it is (alpha_min,).
    """

    job_id: Hashable
    order: int
    release: float
    gpus: int
    plan: TrainingPlan
    user: str | None
    group: str | None
    predicted_iterations: float
    alpha_min: float
    alpha_max: float
    min_servers: int
    iterations: int | None = None
    pool_alpha_min: tuple[float, ...] = ()

    @property
    def comm_ratio(self) -> float:
        if self.alpha_min == 0:
            return math.inf if self.alpha_max > 0 else 1.0
        return self.alpha_max / self.alpha_min

    def iterations_for(self, source: "DurationSource") -> float:
        """Predicted or (oracle only) true iterations."""
        if source == "predicted":
            return self.predicted_iterations
        if self.iterations is None:
            raise RuntimeError(f"job {self.job_id!r}: true iterations are hidden from non-oracle schedulers")
        return self.iterations


new_view = frozen_builder(JobView)
DurationSource = Literal["predicted", "oracle"]
DURATION_SOURCES = ("predicted", "oracle")


@dataclass(frozen=True)
class Proposal:
    """A validated placement the simulator would apply now, with its per-iteration time and the index of
    the pool it is in (0 on a cluster of one pool)."""

    job_id: Hashable
    placement: Placement
    alpha: float
    pool: int = 0


class RunningJob(NamedTuple):
    """A job holding GPUs now, as its scheduler may see it: its view, start time and per-iteration time
    alpha of its placement (so an estimated end is start + iterations the scheduler knows x alpha)."""

    job: JobView
    start: float
    alpha: float


class DispatchContext(Protocol):
    """The simulator's side of a dispatch decision at one instant."""

    now: float

    @property
    def running(self) -> Sequence[RunningJob]:
        """The jobs holding GPUs now, in start order (a snapshot)."""
        ...

    @property
    def free(self) -> tuple[int, ...]:
        """Free GPUs per server (a snapshot)."""
        ...

    @property
    def idle_gpus(self) -> int:
        ...

    def propose(self, job: JobView) -> Proposal | None:
        """The placer's placement for `job` on the free GPUs now, or None if it does not fit."""
        ...

    def start(self, proposal: Proposal, eligible: float) -> None:
        """Start the proposed job now; `eligible` is when it became dispatchable."""
        ...

    @property
    def pool_idle(self) -> tuple[int, ...]:
        """Idle GPUs per pool (one entry on a cluster of one pool)."""
        ...

    def restricted(self, only: int | None = None, exclude: int | None = None) -> ContextManager[None]:
        """Within the block, `propose` places only in pool `only`, or anywhere but pool `exclude`
        (backfilling's reservations on a cluster of several pools); anywhere again after it."""
        ...

    @property
    def last_pool(self) -> int:
        """The pool of the job started last."""
        ...


@runtime_checkable
class Scheduler(Protocol):
    name: str
    oracle: bool

    def reset(self, cluster: Cluster) -> None:
        """Forget all state before a run."""
        ...

    def on_arrival(self, job: JobView, now: float) -> None:
        ...

    def dispatch(self, ctx: DispatchContext) -> None:
        """Start zero or more jobs at ctx.now through ctx.start."""
        ...

    def next_timer(self) -> tuple[float, EventKind] | None:
        """The next instant this scheduler needs a decision without any other event, if any."""
        ...
