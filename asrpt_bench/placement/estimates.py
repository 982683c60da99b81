"""alpha~min (paper-notes 2.4): alpha of the placer's choice on an empty cluster, and the
communication-heavy test of Algorithm 1 line 8 built on it."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

from ..core import Cluster, ConfigError, Placement, TrainingPlan
from ..rules import number
from ..timing import DEFAULT_TIMING, TimingModel
from .base import Placer
from .heavy_edge import HeavyEdgePlacer


@lru_cache(maxsize=64)
def _heavy_edge(timing: TimingModel) -> HeavyEdgePlacer:
    """The default placer for `timing`, built once: a workload's best durations ask for it per job, and a
    frozen placer equal to it keys the same cached estimates."""
    return HeavyEdgePlacer(timing=timing)


def _default_placer(timing: TimingModel, placer: Placer | None) -> Placer:
    return placer if placer is not None else _heavy_edge(timing)


@lru_cache(maxsize=4096)
def _empty_cluster_placement(plan: TrainingPlan, cluster: Cluster, placer: Placer) -> Placement:
    placement = placer.place(plan, cluster.empty_free(), cluster)
    if placement is None:
        raise ConfigError(f"job {plan.model}/{plan.config} needs {plan.gpus} GPUs but the cluster has only "
                          f"{cluster.total_gpus} ({cluster.servers} x {cluster.gpus_per_server})")
    return placement


def empty_cluster_placement(plan: TrainingPlan, cluster: Cluster, timing: TimingModel = DEFAULT_TIMING,
                            placer: Placer | None = None) -> Placement:
    """Where the placer (Heavy-Edge by default) puts `plan` on an empty cluster; cached.

    Raises ConfigError naming the model and configuration if the job is larger than the cluster.
    """
    return _empty_cluster_placement(plan, cluster, _default_placer(timing, placer))


@lru_cache(maxsize=4096)
def _alpha_min_estimate(plan: TrainingPlan, cluster: Cluster, timing: TimingModel, placer: Placer) -> float:
    return timing.alpha(plan, _empty_cluster_placement(plan, cluster, placer), cluster)


def alpha_min_estimate(plan: TrainingPlan, cluster: Cluster, timing: TimingModel = DEFAULT_TIMING,
                       placer: Placer | None = None) -> float:
    """alpha~min: per-iteration time of the placer's empty-cluster placement; cached per
    (plan, cluster, timing, placer). The placer must be hashable (the built-ins are frozen)."""
    return _alpha_min_estimate(plan, cluster, timing, _default_placer(timing, placer))


def fastest_pool_estimate(plans: Sequence[TrainingPlan | None], cluster: Cluster,
                          timing: TimingModel = DEFAULT_TIMING, placer: Placer | None = None) -> tuple[float, int] | None:
    """(alpha~min, pool index) of the pool where the job's empty-pool estimate is lowest (ties: the first),
    among the pools whose type runs it (`plans[p]` not None) and that hold its GPUs; None if none does.
    On a one-pool cluster: alpha~min on the empty cluster, as the paper defines it."""
    best: tuple[float, int] | None = None
    for pool, plan in zip(cluster.pool_list, plans):
        if plan is None or plan.gpus > pool.total_gpus:
            continue
        alpha = alpha_min_estimate(plan, pool.cluster, timing, placer)
        if best is None or alpha < best[0]:
            best = (alpha, pool.index)
    return best


def is_comm_heavy(plan: TrainingPlan, cluster: Cluster, threshold: float, timing: TimingModel = DEFAULT_TIMING,
                  placer: Placer | None = None) -> bool:
    """Algorithm 1 line 8: alpha_max / alpha~min >= threshold (COMM_HEAVY: A-SRPT's `comm_heavy`, whose
    default `ASRPTParams.comm_heavy` is the paper's 1.5; checked by the same rule).

    The ratio is formed exactly as the simulator's `JobView.comm_ratio`, so this helper and the
    scheduler agree on jobs whose ratio sits on the threshold (alpha_max >= threshold * alpha~min
    rounds differently)."""
    number(1).require("scheduler.comm_heavy", threshold)
    alpha_max, alpha_min = timing.alpha_max(plan, cluster), alpha_min_estimate(plan, cluster, timing, placer)
    if alpha_min == 0:
        ratio = math.inf if alpha_max > 0 else 1.0
    else:
        ratio = alpha_max / alpha_min
    return ratio >= threshold
