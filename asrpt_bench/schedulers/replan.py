"""fifo_replan: the migrating FIFO reference for typed clusters.

At every decision instant (with `round_s` > 0, only at the multiples of round_s, as Gavel's simulator
re-plans every 360 s) it rebuilds the allocation from scratch: the released unfinished jobs, in arrival
order (release, then input order), each take the pool the run's pool choice picks among the pools with
enough GPUs left after the jobs before them, judging each pool by the job's empty-pool estimate there
(placement.pool: fastest_fit, the default, takes the fastest type, ties by pool order; type_agnostic a
random pool); the first job no pool can take blocks every later one, as in strict FIFO. A running job whose planned pool is
not its own is suspended and, when its planned pool is another, resumed there at once: it moves. A waiting
job with a planned pool starts in it. Progress is kept in iterations, so a job resumed on another type
goes on at that type's alpha; every resumption pays the run's preemption price (core.PreemptionPrice). A
job inside its protected window (its restart, then preemption.min_run_s) keeps its pool and its GPUs.

So a running job moves to a faster type when one frees up. Beside the non-preemptive schedulers it
measures the price of non-migration, as srtf measures the price of non-preemption. On a cluster of one
pool the plan never takes a running job's GPUs away: it is strict FIFO.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from ..core import Cluster
from ..params import Params, param
from ..rules import seconds
from .base import register_scheduler
from .preemptive import PreemptiveContext
from .views import JobView


@dataclass(frozen=True)
class ReplanParams(Params):
    """fifo_replan's parameters."""

    round_s: float = param(0.0, seconds(),
                           "re-plan only every round_s seconds (0: at every decision instant; Gavel: 360)")


@register_scheduler("fifo_replan", ReplanParams)
class FIFOReplan:
    """The migrating FIFO reference (module doc)."""

    oracle = False
    preemptive = True

    def __init__(self, round_s: float = ReplanParams.round_s) -> None:
        ReplanParams(round_s).check("scheduler")
        self.name = "fifo_replan"
        self.round_s = float(round_s)
        self._clear(())

    def _clear(self, pools: tuple[int, ...]) -> None:
        self.pool_gpus_ = pools
        self.queue_: list[tuple[float, int, JobView]] = []  # released unfinished jobs, in arrival order
        self.jobs_: dict[int, JobView] = {}
        self.pool_of_: dict[int, int] = {}                  # input order -> pool of a running job
        self.next_round_ = 0.0
        self.now_ = 0.0
        self.stale_ = True  # something the plan reads changed since the last plan (`decide`)

    def reset(self, cluster: Cluster) -> None:
        self._clear(tuple(pool.total_gpus for pool in cluster.pool_list))

    def on_arrival(self, job: JobView, now: float) -> None:
        bisect.insort(self.queue_, (job.release, job.order, job))
        self.jobs_[job.order] = job
        self.stale_ = True

    def on_completion(self, job: JobView, now: float) -> None:
        del self.queue_[bisect.bisect_left(self.queue_, (job.release, job.order, job))]
        del self.pool_of_[job.order], self.jobs_[job.order]
        self.stale_ = True

    def next_timer(self) -> float | None:
        if self.round_s == 0 or not self.queue_:
            return None
        return self.next_round_ if self.next_round_ > self.now_ else None

    def decide(self, ctx: PreemptiveContext) -> None:
        """Plan and apply the plan. The plan reads the queue and the protected running jobs and their pools;
        when none of these changed since a plan that started no job (no arrival, completion or end of a
        protected window since; a suspension only takes an unprotected job off its GPUs), planning again would
        give the same plan and do nothing again (a start the placer refused is refused again on the same
        state), so it is skipped."""
        now = self.now_ = ctx.now
        if ctx.protection_ended():
            self.stale_ = True
        if self.round_s > 0:
            if now < self.next_round_:
                return
            self.next_round_ = (math.floor(now / self.round_s) + 1) * self.round_s
        if not self.stale_:
            return
        planned, to_start = self.plan(ctx)
        jobs = self.jobs_
        for order in sorted(self.pool_of_, key=lambda order: (jobs[order].release, order)):
            if planned.get(order) != self.pool_of_[order]:
                ctx.suspend(jobs[order])
                del self.pool_of_[order]
        started = False
        for order in to_start:
            if order in self.pool_of_:
                continue
            pool = planned[order]
            proposal = ctx.propose_in(jobs[order], pool)
            if proposal is not None:
                ctx.start(proposal)
                self.pool_of_[order] = pool
                started = True
        self.stale_ = started

    def plan(self, ctx: PreemptiveContext) -> tuple[dict[int, int], list[int]]:
        """Input order -> planned pool of every job the plan runs (module doc), and the unprotected ones among
        them in arrival order: the jobs a decision may start. Only the running jobs and the queue up to the
        first job no pool takes are walked, not the whole queue."""
        free = list(self.pool_gpus_)
        orders, suspendable, _, _ = ctx.running_arrays()
        protected = {order: self.pool_of_[order] for order in orders[~suspendable].tolist()}
        planned = dict(protected)
        for order, pool in protected.items():
            free[pool] -= self.jobs_[order].gpus
        to_start = []
        for _, order, job in self.queue_:
            if order in protected:
                continue
            pool = ctx.choose_pool(job, free)
            if pool is None:
                break
            free[pool] -= job.gpus
            planned[order] = pool
            to_start.append(order)
        return planned, to_start
