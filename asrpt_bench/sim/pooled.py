"""The simulator's side of a cluster given as pools (cluster.py): every job's plan and empty-pool estimate
in each pool, proposals through the pool choice (placement/pools.py), and the pool and alpha of a placement.

A job runs inside one pool: its placement's servers all belong to that pool, and its alpha is the timing
model's on that pool alone (its links) for the job's plan on the pool's GPU type (Job.plan_on).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Sequence

from ..core import Cluster, ConfigError, Job, Placement, TrainingPlan, pool_plans_of
from ..placement.base import Placer
from ..placement.estimates import alpha_min_estimate, empty_cluster_placement
from ..placement.pools import FastestFit, Placed, PooledPlacer, PoolOption, PoolQuery
from ..schedulers.views import JobView, Proposal
from ..timing import AlphaByShape, TimingModel


@dataclass(frozen=True)
class EmptyClusterEstimate:
    """alpha~min (the estimate placer's alpha on the empty cluster), the servers it used, alpha_max; on a
    cluster of several pools, those of the job's fastest pool, and its estimate in every pool
    (`pool_alpha_min`, inf where the pool's type cannot run it or the pool cannot hold it)."""

    alpha_min: float
    min_servers: int
    alpha_max: float
    pool_alpha_min: tuple[float, ...] = ()


def empty_cluster_estimate(plan: TrainingPlan, cluster: Cluster, timing: TimingModel,
                           placer: Placer | None = None) -> EmptyClusterEstimate:
    """alpha~min and the servers of `placer`'s empty-cluster placement (Heavy-Edge when None), and
    alpha_max (paper-notes 2.4), on one pool's cluster; the placement and alpha are cached by
    placement.estimates."""
    placement = empty_cluster_placement(plan, cluster, timing, placer)
    placement.validate(plan, cluster.empty_free())
    alpha = alpha_min_estimate(plan, cluster, timing, placer)
    return EmptyClusterEstimate(alpha, placement.servers_used, timing.alpha_max(plan, cluster), (alpha,))


def pooled_estimate(plans: Sequence[TrainingPlan | None], cluster: Cluster, timing: TimingModel,
                    placer: Placer | None = None) -> EmptyClusterEstimate:
    """The estimate of a job with `plans[p]` its plan in pool p: its fastest pool's (ties: the first), with
    the estimate in every pool. The job must fit some pool that runs it (_check_jobs)."""
    estimates = [empty_cluster_estimate(plan, pool.cluster, timing, placer)
                 if plan is not None and plan.gpus <= pool.total_gpus else None
                 for plan, pool in zip(plans, cluster.pool_list)]
    fastest = min((e.alpha_min, p) for p, e in enumerate(estimates) if e is not None)[1]
    best = estimates[fastest]
    assert best is not None
    return EmptyClusterEstimate(best.alpha_min, best.min_servers, best.alpha_max,
                                tuple(math.inf if e is None else e.alpha_min for e in estimates))


def check_pools(jobs: Sequence[Job], cluster: Cluster) -> list[bool]:
    """Per job, whether some pool runs and holds it; a job whose type can run on none of the cluster's types
    is refused in one line (it is no size question). Judged once per distinct pool plans (pool_plans_of)."""
    fits = []
    judged: dict[int, bool] = {}
    for job, plans in zip(jobs, pool_plans_of(jobs, cluster)):
        fit = judged.get(id(plans))
        if fit is None:
            if all(plan is None for plan in plans):
                raise ConfigError(f"job {job.job_id!r} can run in no pool of the cluster: its alpha is empty on "
                                  f"every GPU type the cluster has ({', '.join(cluster.types)})")
            fit = judged[id(plans)] = any(plan is not None and plan.gpus <= pool.total_gpus
                                          for plan, pool in zip(plans, cluster.pool_list))
        fits.append(fit)
    return fits


class PoolPlacement:
    """Proposals and checks on a cluster given as pools, for the simulator (module doc)."""

    def __init__(self, cluster: Cluster, placer: Placer, timing: TimingModel, jobs: Sequence[Job]) -> None:
        self.cluster = cluster
        self.placer = placer if isinstance(placer, PooledPlacer) else PooledPlacer(placer, FastestFit())
        self.alphas = [AlphaByShape(timing, pool.cluster) for pool in cluster.pool_list]
        self.plans = pool_plans_of(jobs, cluster)
        self.pool_of_server = cluster.pool_of_server.tolist()
        self.names = [pool.name for pool in cluster.pool_list]
        self._planning: dict[int, tuple[tuple[int, str, str, float, Placed], ...]] = {}
        self._last_plan: dict[int, tuple[tuple[int, ...], int | None]] = {}  # order -> (rooms asked, answer)

    def _alpha(self, pool: int, plan: TrainingPlan, local: Placement) -> float:
        return self.alphas[pool].alpha(plan, local)

    def propose(self, i: int, view: JobView, free: Sequence[int], idle: Sequence[int] | None = None,
                only: int | None = None, exclude: int | None = None) -> Proposal | None:
        """The pool choice's proposal for job i (in pool `only`, or outside pool `exclude`, if given), or None;
        `idle`: the free GPUs per pool, when the caller keeps them."""
        found = self.placer.propose(view.job_id, self.plans[i], view.pool_alpha_min, free, self.cluster,
                                    self._alpha, only=only, exclude=exclude, idle=idle)
        if found is None:
            return None
        pool, placement, alpha = found
        return Proposal(view.job_id, placement, alpha, pool)

    def plan_pool(self, view: JobView, room: Sequence[int]) -> int | None:
        """The pool choice's pool for a job given `room[p]` GPUs to plan with in pool p, judging each pool by
        the job's empty-pool estimate there (no placement is made): for a scheduler that plans pools by GPU
        counts (fifo_replan), which asks again for the same jobs at every decision, so each job's pools of a
        finite estimate are listed once (`_planning`). A query is the job's pools that fit, with their room
        and estimates, so the answer to a job's last query is kept (`_last_plan`: the room of each of its
        pools, -1 where it does not fit) and given again while that is the same (a pool choice answers from
        its query alone, placement/pools.py)."""
        order = view.order
        planning = self._planning.get(order)
        if planning is None:
            planning = self._planning[order] = self._pools_to_plan(view)
        gpus = view.gpus
        rooms = tuple([free if (free := room[pool[0]]) >= gpus else -1 for pool in planning])
        last = self._last_plan.get(order)
        if last is not None and last[0] == rooms:
            return last[1]
        fitting = [pool for pool, free in zip(planning, rooms) if free >= gpus]
        chosen = None
        if fitting:
            options = tuple(PoolOption(index, name, type_, room[index], alpha)
                            for index, name, type_, alpha, _ in fitting)
            estimate = {pool[0]: pool[4] for pool in fitting}
            chosen = self.placer.choice.choose(PoolQuery(view.job_id, options, estimate.get))
        self._last_plan[order] = (rooms, chosen)
        return chosen

    def _pools_to_plan(self, view: JobView) -> tuple[tuple[int, str, str, float, Placed], ...]:
        """A job's pools of a finite empty-pool estimate, in pool order: (index, name, type, estimate, what the
        pool choice is told the placer would do there: no placement, the estimate's alpha)."""
        return tuple((pool.index, pool.name, pool.type, alpha, (Placement(()), alpha))
                     for pool, alpha in zip(self.cluster.pool_list, view.pool_alpha_min) if math.isfinite(alpha))

    def pool_and_alpha(self, i: int, job_id: Hashable, placement: Placement) -> tuple[int, float]:
        """The pool of a placement (every server in it) and job i's alpha there."""
        pools = {self.pool_of_server[h] for h in placement.servers}
        if len(pools) != 1:
            raise RuntimeError(f"job {job_id!r}: placement {placement.servers} spans pools "
                               f"{sorted(self.names[p] for p in pools)}; a gang runs inside one pool")
        pool = pools.pop()
        plan = self.plans[i][pool]
        if plan is None:
            raise RuntimeError(f"job {job_id!r} was placed in pool {self.names[pool]!r}, whose type cannot run it")
        local = Placement(self.cluster.pool_list[pool].to_local(placement.servers))
        return pool, self._alpha(pool, plan, local)

    def check(self, i: int, proposal: Proposal) -> None:
        """A proposal not made by propose() for this very state: its pool and alpha must be the placement's."""
        pool, alpha = self.pool_and_alpha(i, proposal.job_id, proposal.placement)
        if pool != proposal.pool or alpha != proposal.alpha:
            raise RuntimeError(f"proposal for job {proposal.job_id!r} carries a wrong pool or alpha")
