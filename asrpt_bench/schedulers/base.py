"""The Scheduler protocol, the read-only views a scheduler sees, and the registry of schedulers.

Schedulers decide *when and in which order* jobs start; placers decide *where*; the simulator
applies both and is the only code that mutates cluster state. A scheduler sees `JobView`s, which
carry true iterations only when the scheduler declares `oracle = True`, and asks the simulator
for placements through a `DispatchContext`.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Callable, Hashable, Literal, Protocol, runtime_checkable

from ..core import Cluster, Placement, TrainingPlan
from ..registry import Registry
from ..rules import check


class EventKind(IntEnum):
    """Event kinds in the order they are handled at one instant (lower first)."""

    COMPLETION = 0
    ARRIVAL = 1
    VIRTUAL_COMPLETION = 2
    DELAY_EXPIRY = 3


@dataclass(frozen=True)
class JobView:
    """What a scheduler may know about a job.

    `order` is the job's position in the input (row order of a job table); it breaks ties where
    the paper says "by id". `iterations` is None unless the scheduler is an oracle.
    `alpha_min` is the empty-cluster estimate alpha~min and `min_servers` the servers its
    placement used; `comm_ratio` = alpha_max / alpha_min.
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


DurationSource = Literal["predicted", "oracle"]
DURATION_SOURCES = ("predicted", "oracle")


@dataclass(frozen=True)
class Proposal:
    """A validated placement the simulator would apply now, with its per-iteration time."""

    job_id: Hashable
    placement: Placement
    alpha: float


class DispatchContext(Protocol):
    """The simulator's side of a dispatch decision at one instant."""

    now: float

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


SCHEDULERS: Registry[Scheduler] = Registry("scheduler")
register_scheduler = SCHEDULERS.register
make_scheduler = SCHEDULERS.make


def predicted_duration(job: JobView, source: DurationSource) -> float:
    """Iterations (predicted or true) times the empty-cluster per-iteration time estimate."""
    return job.iterations_for(source) * job.alpha_min


JobKey = Callable[[JobView, DurationSource], float]


class QueueScheduler:
    """Non-preemptive dispatch from one queue ordered by (key, release, input order).

    `strict=True`: only the head may start; if it does not fit, everything behind it waits.
    `strict=False` (work-conserving): scan the whole queue in key order and start every job that
    fits. Jobs are eligible at release.
    """

    oracle = False

    def __init__(self, name: str, key: JobKey, strict: bool, duration_source: DurationSource) -> None:
        check("scheduler.duration_source", duration_source)
        self.name = name
        self.key = key
        self.strict = strict
        self.duration_source = duration_source
        self.oracle = duration_source == "oracle"
        self.queue_: list[tuple[float, float, int, JobView]] = []

    def reset(self, cluster: Cluster) -> None:
        self.queue_ = []

    def on_arrival(self, job: JobView, now: float) -> None:
        entry = (self.key(job, self.duration_source), job.release, job.order, job)
        bisect.insort(self.queue_, entry, key=lambda e: e[:3])

    def dispatch(self, ctx: DispatchContext) -> None:
        if not self.queue_:
            return
        if self.strict:
            while self.queue_:
                job = self.queue_[0][3]
                proposal = ctx.propose(job) if job.gpus <= ctx.idle_gpus else None
                if proposal is None:
                    return
                ctx.start(proposal, eligible=job.release)
                del self.queue_[0]
            return
        waiting = []
        for position, entry in enumerate(self.queue_):
            job = entry[3]
            idle = ctx.idle_gpus
            if idle == 0:
                waiting.extend(self.queue_[position:])
                break
            proposal = ctx.propose(job) if job.gpus <= idle else None
            if proposal is None:
                waiting.append(entry)
            else:
                ctx.start(proposal, eligible=job.release)
        self.queue_ = waiting

    def next_timer(self) -> tuple[float, EventKind] | None:
        return None


def duration_key(job: JobView, source: DurationSource) -> float:
    """Predicted duration n~ * alpha~min (SPJF, WCS-Duration)."""
    return predicted_duration(job, source)


def workload_key(job: JobView, source: DurationSource) -> float:
    """Predicted GPU-time g * n~ * alpha~min (SPWF, WCS-Workload)."""
    return job.gpus * predicted_duration(job, source)


def submission_key(job: JobView, source: DurationSource) -> float:
    """Submission (release) time (WCS-SubTime, FIFO)."""
    return job.release
