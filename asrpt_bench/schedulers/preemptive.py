"""What a preemptive scheduler is: the context it decides in, and the admission walk that srtf and
las2d share (the price of a suspension is the simulator's: core.PreemptionPrice).

A scheduler with `preemptive = True` is run by sim/preemptive.py. At every decision instant it sees
every released unfinished job, may suspend running jobs (`ctx.suspend`) and start waiting ones
(`ctx.propose` / `ctx.start`); the simulator alone changes cluster state and keeps each job's progress.
"""

from __future__ import annotations

import bisect
import heapq
from typing import Protocol

from ..core import Cluster
from .views import JobView, Proposal

class PreemptiveContext(Protocol):
    """The simulator's side of one preemptive decision at `now`."""

    now: float
    total_gpus: int
    restart_s: float
    """Seconds a resumed job holds its GPUs before it progresses again (the run's preemption price)."""

    def progress(self, job: JobView) -> float:
        """Iterations done so far (fluid: fractions count)."""
        ...

    def run_seconds(self, job: JobView) -> float:
        """Seconds the job has run making progress so far (restarts excluded)."""
        ...

    def running_states(self, jobs: list[JobView]) -> list[tuple[bool, float, float]]:
        """(suspendable, progress, run_seconds) of each of these running jobs, in one pass; suspendable
        means past its protected window (restart, then min_run_s of progress)."""
        ...

    def suspend(self, job: JobView) -> None:
        ...

    def propose(self, job: JobView) -> Proposal | None:
        """The placer's placement on the free GPUs now, or None."""
        ...

    def start(self, proposal: Proposal) -> None:
        ...


class PreemptiveScheduler(Protocol):
    name: str
    oracle: bool
    preemptive: bool

    def reset(self, cluster: Cluster) -> None:
        ...

    def on_arrival(self, job: JobView, now: float) -> None:
        ...

    def on_completion(self, job: JobView, now: float) -> None:
        ...

    def decide(self, ctx: PreemptiveContext) -> None:
        """Suspend and start jobs at ctx.now."""
        ...

    def next_timer(self) -> float | None:
        """The next instant this scheduler needs a decision without any other event, if any."""
        ...


Entry = tuple[float, float, int, JobView]
"""(priority, release, input order, job): lower first; input order is unique, so jobs never compare."""


class AdmissionScheduler:
    """Gang admission by priority: at each decision, walk the released unfinished jobs in (priority,
    release, input order) with all G GPUs as the budget and admit each job whose GPU count fits in what
    is left (skip, do not block). Running jobs inside their protected window are admitted first and
    consume budget whatever their priority. Running jobs not admitted are suspended; admitted running
    jobs keep their GPUs; admitted waiting jobs are then placed in walk order (one the placer cannot
    place waits for the next decision).

    Subclasses give `priority(job, progress, run_seconds)`. Waiting jobs sit in one sorted list per
    GPU count with the priority they had when they stopped, so a walk visits only waiting jobs that
    fit; running jobs are re-ranked at every decision.
    """

    oracle = False
    preemptive = True

    def __init__(self, name: str) -> None:
        self.name = name
        self._clear(0)

    def _clear(self, total_gpus: int) -> None:
        self.total_gpus_ = total_gpus
        self.waiting_: dict[int, list[Entry]] = {}
        self.running_: dict[int, JobView] = {}
        self.entries_: dict[int, Entry] = {}

    def reset(self, cluster: Cluster) -> None:
        self._clear(cluster.total_gpus)

    def priority(self, job: JobView, progress: float, run_seconds: float) -> float:
        raise NotImplementedError

    def on_arrival(self, job: JobView, now: float) -> None:
        self._enqueue(job, self.priority(job, 0.0, 0.0))

    def on_completion(self, job: JobView, now: float) -> None:
        del self.running_[job.order]

    def next_timer(self) -> float | None:
        return None

    def _enqueue(self, job: JobView, priority: float) -> None:
        entry = (priority, job.release, job.order, job)
        self.entries_[job.order] = entry
        bisect.insort(self.waiting_.setdefault(job.gpus, []), entry)

    def _dequeue(self, job: JobView) -> None:
        queue = self.waiting_[job.gpus]
        del queue[bisect.bisect_left(queue, self.entries_.pop(job.order))]

    def decide(self, ctx: PreemptiveContext) -> None:
        budget = ctx.total_gpus
        candidates: list[Entry] = []
        running, priority = list(self.running_.values()), self.priority
        for job, (suspendable, progress, run_seconds) in zip(running, ctx.running_states(running)):
            if suspendable:
                candidates.append((priority(job, progress, run_seconds), job.release, job.order, job))
            else:
                budget -= job.gpus
        heads = [(queue[0], gpus, 0) for gpus, queue in self.waiting_.items() if queue and gpus <= budget]
        if not heads:
            return  # no waiting job fits even in the whole budget; the running jobs, which do, all stay
        candidates.sort()
        kept: set[int] = set()
        admitted: list[JobView] = []
        heapq.heapify(heads)
        r = 0
        while budget > 0:
            while heads and heads[0][1] > budget:
                heapq.heappop(heads)
            if r < len(candidates) and (not heads or candidates[r] < heads[0][0]):
                job = candidates[r][3]
                r += 1
                if job.gpus <= budget:
                    kept.add(job.order)
                    budget -= job.gpus
            elif heads:
                entry, gpus, position = heapq.heappop(heads)
                admitted.append(entry[3])
                budget -= gpus
                queue = self.waiting_[gpus]
                if position + 1 < len(queue):
                    heapq.heappush(heads, (queue[position + 1], gpus, position + 1))
            else:
                break
        for entry in candidates:
            job = entry[3]
            if job.order not in kept:
                ctx.suspend(job)
                del self.running_[job.order]
                self.on_suspend(job, ctx)
        for job in admitted:
            proposal = ctx.propose(job)
            if proposal is not None:
                ctx.start(proposal)
                self._dequeue(job)
                self.running_[job.order] = job
                self.on_start(job, ctx)

    def on_suspend(self, job: JobView, ctx: PreemptiveContext) -> None:
        """Back to the waiting lists with the priority it stopped at (subclasses may also book it)."""
        self._enqueue(job, self.priority(job, ctx.progress(job), ctx.run_seconds(job)))

    def on_start(self, job: JobView, ctx: PreemptiveContext) -> None:
        """Hook for subclasses that book when a job runs again."""
