"""simulate(): one run of a scheduler and a placer on jobs, by the event loop the scheduler needs (the
non-preemptive engine, sim/preemptive.py for a scheduler that declares `preemptive = True`, or the
replay of a log's own start times, sim/replay.py, for one that declares `replays_log = True`). On a
cluster given as pools the placer places through its pool choice (sim/pooled.py); on the one-pool
shorthand each job runs its plan on the cluster's GPU type."""

from __future__ import annotations

from dataclasses import replace
from typing import Hashable, Mapping, Sequence

from ..cluster import REFERENCE_TYPE
from ..core import Cluster, ConfigError, Job, PreemptionPrice
from ..placement.base import DEFAULT_POOL_CHOICE, Placer
from ..placement.pools import PooledPlacer
from ..rules import instance_of
from ..schedulers.views import Scheduler
from ..timing import DEFAULT_TIMING, TimingModel
from .engine import SimulationResult, prepare_run, simulate_nonpreemptive
from .preemptive import simulate_preemptive
from .replay import simulate_replay

POOLED_REPLAY = "a log does not say which GPU type a job ran on, and this cluster is given as pools"
PRICE = instance_of(PreemptionPrice, "a PreemptionPrice (the preemption group)")


def on_cluster_type(jobs: Sequence[Job], cluster: Cluster) -> Sequence[Job]:
    """The jobs with their plans on a one-pool cluster's GPU type (Job.plan_on); a job that cannot run on
    that type is refused in one line."""
    if not isinstance(cluster, Cluster) or not isinstance(jobs, (list, tuple)):
        return jobs
    resolved = list(jobs)
    for k, job in enumerate(resolved):
        if not isinstance(job, Job) or (not job.type_plans and cluster.type == REFERENCE_TYPE):
            continue
        plan = job.plan_on(cluster.type)
        if plan is None:
            raise ConfigError(f"job {job.job_id!r} cannot run on the cluster's GPU type {cluster.type} (its alpha there "
                              "is empty: no measured time)")
        if plan is not job.plan:
            resolved[k] = replace(job, plan=plan, type_plans=())
    return resolved


def simulate(jobs: Sequence[Job], cluster: Cluster, scheduler: Scheduler, placer: Placer,
             predictions: Mapping[Hashable, float] | None = None, timing: TimingModel = DEFAULT_TIMING,
             drop_oversize: bool = False, progress: bool = False,
             estimate_placer: Placer | None = None,
             preemption: PreemptionPrice = PreemptionPrice()) -> SimulationResult:
    """Simulate `jobs` on `cluster`; the schedule is audited before it is returned.

    predictions: job_id -> predicted iterations, computed before the run (None = perfect).
    estimate_placer: the placer whose empty-cluster placement gives alpha~min (default: Heavy-Edge
    with `timing`, as in the paper); estimates are cached per plan.
    preemption: what each resumption of a suspended job costs (the run's `preemption` group); only a
    preemptive scheduler suspends jobs, so only its schedule depends on it.
    """
    PRICE.require("preemption", preemption)
    if isinstance(cluster, Cluster):
        if getattr(scheduler, "replays_log", False) and cluster.pooled:
            raise ConfigError(f"scheduler={scheduler.name} cannot replay the log: {POOLED_REPLAY} "
                              f"({cluster.describe()})")
        if isinstance(placer, PooledPlacer) and placer.choice.name != DEFAULT_POOL_CHOICE and \
                len(cluster.pool_list) == 1:
            raise ConfigError(f"placement.pool={placer.choice.name} chooses among a cluster's pools; this cluster has "
                              f"one ({cluster.describe()}): give several with cluster.pools")
        if not cluster.pooled:
            jobs = on_cluster_type(jobs, cluster)
            placer = placer.placer if isinstance(placer, PooledPlacer) else placer  # one pool: the placer itself
    prepared = prepare_run(jobs, cluster, scheduler, placer, predictions, timing, drop_oversize, estimate_placer)
    if getattr(scheduler, "replays_log", False):
        return simulate_replay(prepared, cluster, scheduler, placer)
    if getattr(scheduler, "preemptive", False):
        return simulate_preemptive(prepared, cluster, scheduler, placer, timing, progress, preemption)
    return simulate_nonpreemptive(prepared, cluster, scheduler, placer, timing, progress)
