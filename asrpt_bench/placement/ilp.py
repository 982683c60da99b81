"""Exact placement by integer programming (paper-notes 4): data -> model -> solve -> decode.

Two objectives on a free-GPU vector:

* ``"alpha"`` (default): minimise the per-iteration time alpha. Because alpha depends only on which
  stages and stage boundaries span more than one server, the model uses per-stage replica *counts*
  ``n[s,h]`` (integer) instead of per-vertex binaries ``x[v,h]``. Replicas of a stage are
  interchangeable, so this removes that symmetry entirely and shrinks the model by a factor m_s.
  ``e[s,h]`` = 1 iff all of stage s sits on h; ``q[s,h]`` = 1 iff stages s and s+1 both sit entirely on h;
  ``y[s] = 1 - sum_h e[s,h]`` (stage spans >1 server) and ``z[s] = 1 - sum_h q[s,h]`` (boundary spans
  >1 server) are exact indicators, so the model stays exact whichever bandwidth is larger.
  Time rows are built from the TimingModel's own pieces (``allreduce_time``, ``p2p_time``) for every
  timing mode: async (Eq 7), ``fold_p2p_into_stage`` and ``pipeline_mode="sync"`` (two max variables).
* ``"cut"``: minimise the bytes per iteration crossing servers, sum w_uv d_uv over the edges of
  ``build_omega`` with ``d_uv >= x[u,h] - x[v,h]``. This one needs per-vertex binaries (ring
  all-reduce edges make replicas distinguishable), so it is meant for small jobs.

Server symmetry: servers with equal free capacity (capped at g) are interchangeable; their loads are
ordered (non-increasing), and only the first `useful_servers` of each class are kept: merging two
servers' replicas never raises alpha (when b_inter <= b_intra) nor the cut, so an optimum exists in
which every used server but one per class is more than half full. Decoding validates the placement
against the free vector and checks that the model's objective equals ``timing.alpha`` (resp.
``cut_weight``) of the decoded placement.
"""

from __future__ import annotations

import functools
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal, Sequence

import networkx as nx

from ..core import Cluster, ConfigError, Placement, TrainingPlan
from ..graph import AllReduceTopology, build_omega, cut_weight
from ..solvers import LinearModel, SolveResult, SolverError, SolverSettings, solve
from ..timing import DEFAULT_TIMING, TimingModel
from ..params import param
from ..rules import instance_of, one_of
from .base import GraphParams, register_placer

Objective = Literal["alpha", "cut"]
OBJECTIVES: tuple[str, ...] = ("alpha", "cut")

NANOSECONDS = 1e9
"""integer_scale of the alpha model: CP-SAT sees times as integer nanoseconds."""

ALPHA_TOLERANCE_S = 1e-5
"""Largest accepted difference between the model's T and timing.alpha of the decoded placement
(MILP feasibility/integrality tolerances ~1e-6 times second-scale coefficients; CP-SAT rounds to ns)."""


# ---------------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class ServerSet:
    """The servers a model may use (original ids) with their usable capacity min(free, g)."""

    ids: tuple[int, ...]
    capacity: tuple[int, ...]

    def symmetric_pairs(self) -> list[tuple[int, int]]:
        """Consecutive positions whose servers are interchangeable (equal capacity)."""
        return [(k, k + 1) for k in range(len(self.ids) - 1) if self.capacity[k] == self.capacity[k + 1]]


def useful_servers(capacity: int, gpus: int) -> int:
    """How many servers of one capacity class an optimal placement needs at most, when merging two
    servers' replicas never hurts (alpha with b_inter <= b_intra, and the cut): two used servers whose
    loads fit together could be merged, so all used servers but one hold more than capacity // 2."""
    return 1 + (gpus - 1) // (capacity // 2 + 1)


def candidate_servers(free: Sequence[int], gpus: int, merging_helps: bool = True) -> ServerSet:
    """Servers with free GPUs, capacity capped at `gpus`, and per capacity class (interchangeable
    servers) at most `gpus` of them, or `useful_servers(...)` when `merging_helps`. Ordered by capacity
    class (largest first), then id."""
    by_capacity: dict[int, list[int]] = defaultdict(list)
    for h, f in enumerate(free):
        if f > 0:
            by_capacity[min(int(f), gpus)].append(h)
    ids: list[int] = []
    capacity: list[int] = []
    for cap in sorted(by_capacity, reverse=True):
        keep = useful_servers(cap, gpus) if merging_helps else gpus
        kept = by_capacity[cap][:keep]
        ids.extend(kept)
        capacity.extend([cap] * len(kept))
    return ServerSet(tuple(ids), tuple(capacity))


@dataclass(frozen=True)
class TimePieces:
    """Per stage and boundary, the intra- and inter-server values of every alpha term (seconds)."""

    compute: tuple[float, ...]
    allreduce_intra: tuple[float, ...]
    allreduce_inter: tuple[float, ...]
    p2p_intra: tuple[float, ...]
    p2p_inter: tuple[float, ...]


def time_pieces(plan: TrainingPlan, cluster: Cluster, timing: TimingModel) -> TimePieces:
    """The same pieces `TimingModel.alpha_from_links` combines, for both bandwidth classes."""
    stages = plan.stages
    return TimePieces(
        compute=tuple(st.compute_s / st.replicas for st in stages),
        allreduce_intra=tuple(timing.allreduce_time(st.param_bytes, st.replicas, cluster.b_intra) for st in stages),
        allreduce_inter=tuple(timing.allreduce_time(st.param_bytes, st.replicas, cluster.b_inter) for st in stages),
        p2p_intra=tuple(timing.p2p_time(st.activation_bytes, cluster.b_intra) for st in stages[:-1]),
        p2p_inter=tuple(timing.p2p_time(st.activation_bytes, cluster.b_inter) for st in stages[:-1]),
    )


# ---------------------------------------------------------------------------------------------------
# Models


@dataclass
class AlphaModel:
    """The min-alpha model and the variable indices decoding needs."""

    model: LinearModel
    servers: ServerSet
    counts: list[dict[int, int]] = field(default_factory=list)  # counts[s][k] -> var index of n[s,k]
    time_var: int = -1


def _spread_indicator(model: LinearModel, name: str, whole: list[int]) -> int:
    """A binary that is 1 iff none of the `whole` indicators is set (at most one can be)."""
    spread = model.add_binary(name)
    model.add_constraint([(spread, 1.0)] + [(w, 1.0) for w in whole], 1.0, 1.0, f"{name}_def")
    return spread


def build_alpha_model(plan: TrainingPlan, free: Sequence[int], cluster: Cluster,
                      timing: TimingModel = DEFAULT_TIMING) -> AlphaModel:
    """The min-alpha MILP of paper-notes 4 in count form (see module docstring)."""
    servers = candidate_servers(free, plan.gpus, merging_helps=cluster.b_inter <= cluster.b_intra)
    pieces = time_pieces(plan, cluster, timing)
    stages = plan.stages
    model = LinearModel(f"alpha_{plan.model}_{plan.config}", integer_scale=NANOSECONDS)
    built = AlphaModel(model, servers)
    positions = range(len(servers.ids))
    for s, stage in enumerate(stages):
        built.counts.append({k: model.add_var(f"n[{s},{k}]", 0, min(stage.replicas, servers.capacity[k]), True)
                             for k in positions})
        model.add_constraint([(n, 1.0) for n in built.counts[s].values()], stage.replicas, stage.replicas,
                             f"assign[{s}]")
    for k in positions:
        model.add_constraint([(built.counts[s][k], 1.0) for s in range(len(stages))],
                             ub=servers.capacity[k], name=f"cap[{k}]")
    for k, k_next in servers.symmetric_pairs():
        model.add_constraint([(built.counts[s][k], 1.0) for s in range(len(stages))]
                             + [(built.counts[s][k_next], -1.0) for s in range(len(stages))],
                             lb=0.0, name=f"order[{k}]")

    whole: dict[tuple[int, int], int] = {}

    def stage_whole_on(s: int) -> dict[int, int]:
        """e[s,k] for every server position k that can hold stage s, created on first use."""
        m = stages[s].replicas
        for k in positions:
            if servers.capacity[k] >= m and (s, k) not in whole:
                n = built.counts[s][k]
                if m == 1:  # a single replica: n[s,k] is already the indicator
                    whole[(s, k)] = n
                    continue
                e = model.add_binary(f"e[{s},{k}]")
                model.add_constraint([(n, 1.0), (e, -float(m))], lb=0.0, name=f"e_le[{s},{k}]")
                model.add_constraint([(e, 1.0), (n, -1.0)], lb=-(m - 1.0), name=f"e_ge[{s},{k}]")
                whole[(s, k)] = e
        return {k: whole[(s, k)] for k in positions if (s, k) in whole}

    def boundary_whole_on(s: int) -> list[int]:
        """q[s,k] = e[s,k] AND e[s+1,k] for every server position that can hold both stages."""
        e_this, e_next = stage_whole_on(s), stage_whole_on(s + 1)
        out = []
        for k in positions:
            if servers.capacity[k] < stages[s].replicas + stages[s + 1].replicas:
                continue
            q = model.add_binary(f"q[{s},{k}]")
            model.add_constraint([(q, 1.0), (e_this[k], -1.0)], ub=0.0, name=f"q_le_s[{s},{k}]")
            model.add_constraint([(q, 1.0), (e_next[k], -1.0)], ub=0.0, name=f"q_le_t[{s},{k}]")
            model.add_constraint([(q, 1.0), (e_this[k], -1.0), (e_next[k], -1.0)], lb=-1.0, name=f"q_ge[{s},{k}]")
            out.append(q)
        return out

    def allreduce_term(s: int) -> tuple[float, list[tuple[int, float]]]:
        base, delta = pieces.allreduce_intra[s], pieces.allreduce_inter[s] - pieces.allreduce_intra[s]
        if delta == 0.0:
            return base, []
        return base, [(_spread_indicator(model, f"y[{s}]", list(stage_whole_on(s).values())), delta)]

    def p2p_term(s: int) -> tuple[float, list[tuple[int, float]]]:
        base, delta = pieces.p2p_intra[s], pieces.p2p_inter[s] - pieces.p2p_intra[s]
        if delta == 0.0:
            return base, []
        return base, [(_spread_indicator(model, f"z[{s}]", boundary_whole_on(s)), delta)]

    allreduce = [allreduce_term(s) for s in range(len(stages))]
    p2p = [p2p_term(s) for s in range(len(stages) - 1)]
    worst_ar = [max(pieces.allreduce_intra[s], pieces.allreduce_inter[s]) for s in range(len(stages))]
    worst_p2p = [max(pieces.p2p_intra[s], pieces.p2p_inter[s]) for s in range(len(stages) - 1)]
    if timing.pipeline_mode == "sync":
        micro = timing.microbatches
        per_micro_ub = max(pieces.compute[s] / micro + (worst_p2p[s] / micro if s < len(p2p) else 0.0)
                           for s in range(len(stages)))
        per_micro = model.add_var("P", 0.0, _with_margin(per_micro_ub))
        ar_max = model.add_var("A", 0.0, _with_margin(max(worst_ar)))
        flush = float(micro + len(stages) - 1)
        built.time_var = model.add_var("T", 0.0, _with_margin(flush * per_micro_ub + max(worst_ar)))
        model.add_constraint([(built.time_var, 1.0), (per_micro, -flush), (ar_max, -1.0)], 0.0, 0.0, "T_def")
        for s in range(len(stages)):
            base, terms = (p2p[s] if s < len(p2p) else (0.0, []))
            _time_row(model, per_micro, (pieces.compute[s] + base) / micro,
                      [(v, d / micro) for v, d in terms], f"micro[{s}]")
            _time_row(model, ar_max, allreduce[s][0], allreduce[s][1], f"allreduce[{s}]")
    else:
        stage_ub = [pieces.compute[s] + worst_ar[s]
                    + (worst_p2p[s] if timing.fold_p2p_into_stage and s < len(p2p) else 0.0)
                    for s in range(len(stages))]
        built.time_var = model.add_var("T", 0.0, _with_margin(max(stage_ub + worst_p2p)))
        for s in range(len(stages)):
            base, terms = pieces.compute[s] + allreduce[s][0], list(allreduce[s][1])
            if timing.fold_p2p_into_stage and s < len(p2p):
                base, terms = base + p2p[s][0], terms + p2p[s][1]
            _time_row(model, built.time_var, base, terms, f"stage[{s}]")
        if not timing.fold_p2p_into_stage:
            for s, (base, terms) in enumerate(p2p):
                _time_row(model, built.time_var, base, terms, f"p2p[{s}]")
    model.minimize([(built.time_var, 1.0)])
    return built


def _with_margin(upper: float) -> float:
    """An upper bound loosened by 1 ppm + 1 us, so rounding to integer units never makes it bind."""
    return upper * (1.0 + 1e-6) + 1e-6


def _time_row(model: LinearModel, bound_var: int, base: float, terms: list[tuple[int, float]], name: str) -> None:
    """bound_var >= base + sum(delta * indicator)."""
    model.add_constraint([(bound_var, 1.0)] + [(v, -d) for v, d in terms], lb=base, name=name)


@dataclass
class CutModel:
    """The min-cut model and the variable indices decoding needs."""

    model: LinearModel
    servers: ServerSet
    graph: nx.Graph
    assign: list[dict[int, int]] = field(default_factory=list)  # assign[v][k] -> var index of x[v,k]


def build_cut_model(plan: TrainingPlan, free: Sequence[int],
                    allreduce_edges: AllReduceTopology = "ring") -> CutModel:
    """The min-cut ILP of paper-notes 4: minimise sum w_uv d_uv over the edges of Omega."""
    servers = candidate_servers(free, plan.gpus)
    graph = build_omega(plan, allreduce_edges)
    model = LinearModel(f"cut_{plan.model}_{plan.config}", integer_scale=1.0)
    built = CutModel(model, servers, graph)
    positions = range(len(servers.ids))
    for v in range(plan.gpus):
        built.assign.append({k: model.add_binary(f"x[{v},{k}]") for k in positions})
        model.add_constraint([(x, 1.0) for x in built.assign[v].values()], 1.0, 1.0, f"assign[{v}]")
    for k in positions:
        model.add_constraint([(built.assign[v][k], 1.0) for v in range(plan.gpus)],
                             ub=servers.capacity[k], name=f"cap[{k}]")
    for k, k_next in servers.symmetric_pairs():
        model.add_constraint([(built.assign[v][k], 1.0) for v in range(plan.gpus)]
                             + [(built.assign[v][k_next], -1.0) for v in range(plan.gpus)],
                             lb=0.0, name=f"order[{k}]")
    objective = []
    for u, v, weight in sorted(graph.edges(data="weight")):
        if weight <= 0:
            continue
        d = model.add_var(f"d[{u},{v}]", 0.0, 1.0)
        for k in positions:
            model.add_constraint([(d, 1.0), (built.assign[u][k], -1.0), (built.assign[v][k], 1.0)],
                                 lb=0.0, name=f"cut[{u},{v},{k}]")
        objective.append((d, weight))
    model.minimize(objective)
    return built


# ---------------------------------------------------------------------------------------------------
# Decode


def decode_counts(plan: TrainingPlan, servers: ServerSet, counts: list[list[int]]) -> Placement:
    """Stage-major vertex -> server map from per-stage counts (positions in `servers`); each stage's
    replicas fill its servers in order, so a ring all-reduce crosses as few servers as possible."""
    mapping: list[int] = []
    for s, stage in enumerate(plan.stages):
        for k, count in enumerate(counts[s]):
            mapping.extend([servers.ids[k]] * count)
        if len(mapping) != plan.stage_vertices(s).stop:
            raise SolverError(f"decoded counts of stage {s} sum to {sum(counts[s])}, expected {stage.replicas}")
    return Placement(tuple(mapping))


def _rounded(value: float) -> int:
    return int(math.floor(value + 0.5))


def decode_alpha(built: AlphaModel, plan: TrainingPlan, free: Sequence[int], cluster: Cluster,
                 timing: TimingModel, result: SolveResult) -> tuple[Placement, float]:
    """Placement from a solution; checks capacity and that the model's T equals timing.alpha."""
    assert result.values is not None
    counts = [[_rounded(result.values[built.counts[s][k]]) for k in range(len(built.servers.ids))]
              for s in range(len(plan.stages))]
    placement = decode_counts(plan, built.servers, counts)
    placement.validate(plan, free)
    alpha = timing.alpha(plan, placement, cluster)
    model_time = float(result.values[built.time_var])
    if alpha > model_time + ALPHA_TOLERANCE_S or (result.status == "optimal" and result.gap == 0.0
                                                  and abs(alpha - model_time) > ALPHA_TOLERANCE_S):
        raise AssertionError(f"ILP time {model_time!r} disagrees with timing.alpha {alpha!r} of the decoded "
                             f"placement for {plan.model}/{plan.config}")
    return placement, alpha


def decode_cut(built: CutModel, plan: TrainingPlan, free: Sequence[int], result: SolveResult) -> Placement:
    """Placement from a min-cut solution; checks capacity and that the objective is its cut weight."""
    assert result.values is not None
    mapping = []
    for v in range(plan.gpus):
        chosen = [k for k, x in built.assign[v].items() if result.values[x] > 0.5]
        if len(chosen) != 1:
            raise SolverError(f"vertex {v} decoded onto {len(chosen)} servers")
        mapping.append(built.servers.ids[chosen[0]])
    placement = Placement(tuple(mapping))
    placement.validate(plan, free)
    weight = cut_weight(built.graph, placement.servers)
    if result.objective is not None and abs(weight - result.objective) > 0.5 + 1e-6 * max(1.0, weight):
        raise AssertionError(f"ILP cut {result.objective!r} disagrees with cut_weight {weight!r}")
    return placement


# ---------------------------------------------------------------------------------------------------
# Solve


def _no_fit(start: float, solver: str) -> SolveResult:
    return SolveResult("infeasible", None, None, None, time.perf_counter() - start, solver)


def optimal_placement_ilp(plan: TrainingPlan, free: Sequence[int], cluster: Cluster,
                          settings: SolverSettings, objective: Objective = "alpha",
                          timing: TimingModel = DEFAULT_TIMING,
                          allreduce_edges: AllReduceTopology = "ring") -> tuple[Placement | None, SolveResult]:
    """Best placement for `objective` within `free`, and the solve record. The placement is None when
    the job does not fit (status "infeasible") or the solver found no solution in time."""
    if objective not in OBJECTIVES:
        raise ConfigError(f"placement.objective must be one of {list(OBJECTIVES)}, got {objective!r}")
    start = time.perf_counter()
    if len(free) != cluster.servers:
        raise ValueError(f"free vector has {len(free)} servers, cluster has {cluster.servers}")
    if sum(free) < plan.gpus:
        return None, _no_fit(start, settings.name)
    if objective == "alpha":
        built_alpha = build_alpha_model(plan, free, cluster, timing)
        result = solve(built_alpha.model, settings)
        if not result.has_solution:
            return None, result
        return decode_alpha(built_alpha, plan, free, cluster, timing, result)[0], result
    built_cut = build_cut_model(plan, free, allreduce_edges)
    result = solve(built_cut.model, settings)
    if not result.has_solution:
        return None, result
    return decode_cut(built_cut, plan, free, result), result


def alpha_min_exact(plan: TrainingPlan, cluster: Cluster, timing: TimingModel = DEFAULT_TIMING,
                    solver: SolverSettings = SolverSettings()) -> tuple[float, SolveResult]:
    """alpha_min (paper-notes 2.4): the best alpha on an empty cluster, and the solve record.

    Fast paths (status "optimal", solver "closed_form", no solve) where a placement attains the lower
    bound `timing.alpha_lower_bound`: g <= gpus_per_server and b_inter <= b_intra (the whole job on one
    server); b_inter > b_intra on two or more servers (an empty cluster always lets every link span
    servers, see placement/spread.py). Otherwise the min-alpha ILP; if it stops at the time limit the
    best alpha found is returned and the record says "feasible" with its bound. Raises SolverError if no
    placement was found at all. Results are cached per (plan, cluster, timing, solver settings): a
    repeated call returns the first call's record, wall time included.
    """
    return _alpha_min_cached(plan, cluster, timing, solver)


@functools.lru_cache(maxsize=4096)
def _alpha_min_cached(plan: TrainingPlan, cluster: Cluster, timing: TimingModel,
                      settings: SolverSettings) -> tuple[float, SolveResult]:
    if plan.gpus > cluster.total_gpus:
        raise ConfigError(f"{plan.model}/{plan.config} needs {plan.gpus} GPUs; the cluster has {cluster.total_gpus}")
    consolidated = plan.gpus <= cluster.gpus_per_server and cluster.b_inter <= cluster.b_intra
    if consolidated or (cluster.b_inter > cluster.b_intra and cluster.servers >= 2):
        start = time.perf_counter()
        alpha = timing.alpha_lower_bound(plan, cluster)
        return alpha, SolveResult("optimal", alpha, alpha, 0.0, time.perf_counter() - start, "closed_form")
    free = cluster.empty_free()
    built = build_alpha_model(plan, free, cluster, timing)
    result = solve(built.model, settings)
    if not result.has_solution:
        hint = "raise the time limit" if result.status == "time_limit_no_solution" else "a formulation error"
        raise SolverError(f"no placement of {plan.model}/{plan.config} on the empty cluster from "
                          f"{result.solver} (status {result.status}): {hint}")
    return decode_alpha(built, plan, free, cluster, timing, result)[1], result


SOLVER_SETTINGS = instance_of(SolverSettings, "a SolverSettings (the solver group)")


@dataclass(frozen=True)
class ILPParams(GraphParams):
    """What the exact placement minimises, and the graph it cuts (the solver group supplies the solver)."""

    objective: str = param("alpha", one_of(*OBJECTIVES), "alpha: per-iteration time; cut: bytes crossing servers")


@register_placer("ilp", ILPParams, needs=("timing", "solver"))
@dataclass(frozen=True)
class ILPPlacer:
    """Exact placement by ILP. `objective` "alpha" minimises the per-iteration time, "cut" the bytes
    crossing servers; `solver` is the run's solver group. `place` raises SolverError if the solver finds
    no solution within the limit."""

    objective: Objective = "alpha"
    solver: SolverSettings = SolverSettings()
    timing: TimingModel = DEFAULT_TIMING
    allreduce_edges: AllReduceTopology = "ring"
    name: str = "ilp"

    def __post_init__(self) -> None:
        ILPParams(self.allreduce_edges, self.objective).check("placement")
        SOLVER_SETTINGS.require("solver", self.solver)

    def place_with_result(self, plan: TrainingPlan, free: Sequence[int],
                          cluster: Cluster) -> tuple[Placement | None, SolveResult]:
        """The placement (None if the job does not fit or no solution was found) and the solve record."""
        return optimal_placement_ilp(plan, free, cluster, self.solver, self.objective, self.timing,
                                     self.allreduce_edges)

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        placement, result = self.place_with_result(plan, free, cluster)
        if placement is None and result.status != "infeasible":
            raise SolverError(f"ILP placement of {plan.model}/{plan.config} found no solution with "
                              f"{result.solver} in {self.solver.time_limit_s} s (status {result.status})")
        return placement
