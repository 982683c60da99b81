"""Per-iteration time alpha(plan, placement, cluster): paper Eqs 4-7 as reconstructed (docs/paper.md, section 3).

One pure function serves Heavy-Edge, the ILP and the simulator, so their alphas can never disagree.
Only which communicating replicas share a server matters; the per-stage bandwidth choice is:
- all-reduce of stage s uses b_intra iff all replicas of s sit on one server (ring bottleneck);
- the s|s+1 boundary uses b_intra iff all replicas of s and s+1 sit on one common server.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .core import CLUSTER, GB, PLACEMENT, PLAN, SERVER_INDICES, Cluster, ConfigError, Placement, TrainingPlan
from .params import Params, param
from .rules import flag, integer, one_of, seconds


@dataclass(frozen=True)
class TimingModel(Params):
    """The open choices of the per-iteration time model (docs/paper.md, section 3), with the paper-faithful
    defaults; the config group `timing`.

    pipeline_mode "async" is Eq 7 (max over stations); "sync" is a GPipe/DAPPLE-style flush with
    `microbatches` micro-batches. allreduce "tree" adds `tree_latency_s * ceil(log2 m)` to the ring
    bandwidth term (nccl-tests: both need 2(m-1)/m * P / b). fold_p2p_into_stage adds the outgoing
    boundary transfer to the stage's own time instead of treating the link as its own station.
    """

    pipeline_mode: str = param("async", one_of("async", "sync"),
                               "async: Eq 7, the slowest station; sync: a flush every iteration (GPipe/DAPPLE)")
    allreduce: str = param("ring", one_of("ring", "tree"), "ring: 2(m-1)/m P/b; tree: plus a latency per level")
    tree_latency_s: float = param(0.0, seconds(),
                                  "seconds per level of the tree all-reduce (allreduce=tree)")
    fold_p2p_into_stage: bool = param(False, flag(), "a boundary transfer adds to its stage instead of being a "
                                                      "station of its own")
    microbatches: int = param(8, integer(1), "micro-batches per iteration (pipeline_mode=sync)")

    def __post_init__(self) -> None:
        self.check("timing")

    def allreduce_time(self, param_bytes: float, replicas: int, bandwidth_gbps: float) -> float:
        """Eqs 5/6: 2(m-1)/m * P / b, plus the tree latency term when selected; 0 for one replica."""
        if replicas <= 1 or param_bytes == 0:
            return 0.0
        t = 2.0 * (replicas - 1) / replicas * param_bytes / (bandwidth_gbps * GB)
        if self.allreduce == "tree":
            t += self.tree_latency_s * math.ceil(math.log2(replicas))
        return t

    @staticmethod
    def p2p_time(activation_bytes: float, bandwidth_gbps: float) -> float:
        """Eq 4: forward activations plus backward gradients across one stage boundary."""
        return 2.0 * activation_bytes / (bandwidth_gbps * GB)

    def alpha_from_links(self, plan: TrainingPlan, cluster: Cluster,
                         stage_spread: Sequence[bool], boundary_spread: Sequence[bool]) -> float:
        """alpha given, per stage, whether its replicas span >1 server and, per boundary, whether
        the two adjacent stages span >1 server. The ILP uses the same decomposition.
        A fixed-alpha plan (`TrainingPlan.fixed`) returns its declared alpha, or its declared spread alpha
        when it has one and its replicas span more than one server."""
        if plan.declared_alpha is not None:
            if plan.declared_alpha_spread is not None and stage_spread[0]:
                return plan.declared_alpha_spread
            return plan.declared_alpha
        stages = plan.stages
        stage_times = []
        for s, stage in enumerate(stages):
            bw = cluster.b_inter if stage_spread[s] else cluster.b_intra
            stage_times.append((stage.compute_s / stage.replicas,
                                self.allreduce_time(stage.param_bytes, stage.replicas, bw)))
        p2p = [self.p2p_time(stages[s].activation_bytes,
                             cluster.b_inter if boundary_spread[s] else cluster.b_intra)
               for s in range(len(stages) - 1)]
        if self.pipeline_mode == "sync":
            micro = self.microbatches
            per_micro = max(comp / micro + (p2p[s] / micro if s < len(p2p) else 0.0)
                            for s, (comp, _) in enumerate(stage_times))
            return (micro + len(stages) - 1) * per_micro + max(ar for _, ar in stage_times)
        tau = [comp + ar for comp, ar in stage_times]
        if self.fold_p2p_into_stage:
            return max(tau[s] + (p2p[s] if s < len(p2p) else 0.0) for s in range(len(stages)))
        return max(max(tau), max(p2p, default=0.0))

    def alpha(self, plan: TrainingPlan, placement: Placement, cluster: Cluster) -> float:
        """Per-iteration time of `plan` under `placement` on `cluster` (seconds)."""
        PLAN.require("plan", plan)
        PLACEMENT.require("placement", placement)
        CLUSTER.require("cluster", cluster)
        servers = placement.servers
        SERVER_INDICES.require("placement.servers", servers)
        outside = [h for h in servers if isinstance(h, bool) or not isinstance(h, (int, np.integer))
                   or not 0 <= h < cluster.servers]
        if outside:
            raise ConfigError(f"placement.servers: server index {outside[0]!r} is outside the cluster's "
                              f"{cluster.servers} servers (0..{cluster.servers - 1})")
        if len(servers) != plan.gpus:
            raise ValueError(f"placement has {len(servers)} vertices, plan {plan.model}/{plan.config} "
                             f"needs {plan.gpus}")
        stage_sets: list[set[int]] = []
        start = 0
        for stage in plan.stages:
            stage_sets.append(set(servers[start:start + stage.replicas]))
            start += stage.replicas
        stage_spread = [len(hosts) > 1 for hosts in stage_sets]
        boundary_spread = [len(stage_sets[s] | stage_sets[s + 1]) > 1 for s in range(len(stage_sets) - 1)]
        return self.alpha_from_links(plan, cluster, stage_spread, boundary_spread)

    def alpha_consolidated(self, plan: TrainingPlan, cluster: Cluster) -> float:
        """alpha with every link intra-server (the whole job on one server). When b_inter <= b_intra this
        equals `alpha_lower_bound` and is attained when g <= M; with faster inter-server links it is the
        worst case instead (see `alpha_max`)."""
        n = len(plan.stages)
        return self.alpha_from_links(plan, cluster, [False] * n, [False] * (n - 1))

    def alpha_at_bandwidth(self, plan: TrainingPlan, cluster: Cluster, bandwidth_gbps: float) -> float:
        """alpha with every link at `bandwidth_gbps`, whichever servers the replicas sit on."""
        n = len(plan.stages)
        uniform = replace(cluster, b_intra=bandwidth_gbps, b_inter=bandwidth_gbps)
        return self.alpha_from_links(plan, uniform, [False] * n, [False] * (n - 1))

    def alpha_lower_bound(self, plan: TrainingPlan, cluster: Cluster) -> float:
        """alpha with every link at the faster of b_intra and b_inter: no placement does better, because
        every term of alpha is non-increasing in each link's bandwidth. It is alpha_min when g <= M and
        b_inter <= b_intra (one server), and when b_inter > b_intra on >= 2 servers (all links spread)."""
        return self.alpha_at_bandwidth(plan, cluster, max(cluster.b_intra, cluster.b_inter))

    def alpha_max(self, plan: TrainingPlan, cluster: Cluster) -> float:
        """Worst-case alpha: every link at the slower bandwidth (docs/paper.md, section 3). When b_inter <= b_intra
        that is every replica on a distinct server; with faster inter-server links it is the whole job on
        one server. A plan's declared alpha_max takes precedence (theory instances)."""
        if plan.declared_alpha_max is not None:
            return plan.declared_alpha_max
        return self.alpha_at_bandwidth(plan, cluster, min(cluster.b_intra, cluster.b_inter))


DEFAULT_TIMING = TimingModel()


def placement_shape(servers: Sequence[int]) -> tuple[int, ...]:
    """`servers` relabelled in order of first use, e.g. (5, 5, 2) -> (0, 0, 1). alpha depends only on
    which vertices share a server, so placements of one plan with the same shape have the same alpha."""
    first: dict[int, int] = {}
    return tuple([first.setdefault(h, len(first)) for h in servers])


class AlphaByShape:
    """`timing.alpha` on one cluster, memoised per (plan, placement shape).

    A simulation asks for alpha at every start and the audit again for every record, but a trace
    has few plans and few shapes per plan. Plans are keyed by identity (hashing a plan walks all its
    stages) and kept referenced, so an id is never reused while its entry lives.
    """

    def __init__(self, timing: TimingModel, cluster: Cluster) -> None:
        self.timing = timing
        self.cluster = cluster
        self._memo: dict[tuple[int, int | tuple[int, ...]], tuple[TrainingPlan, float]] = {}

    def alpha(self, plan: TrainingPlan, placement: Placement) -> float:
        servers = placement.servers
        # one server (most placements): the shape is just the GPU count
        shape = len(servers) if servers.count(servers[0]) == len(servers) else placement_shape(servers)
        key = (id(plan), shape)
        entry = self._memo.get(key)
        if entry is None or entry[0] is not plan:
            entry = (plan, self.timing.alpha(plan, placement, self.cluster))
            self._memo[key] = entry
        return entry[1]
