"""Tasks `theory` and `adversarial`: Theorem 1 measured in the loop, and the seeded worst-case search.

`theory` draws a seeded batch of tiny instances, runs A-SRPT and the baselines through the real
simulator with the predictor group's predictions (oracle, or the noisy oracle with error epsilon),
computes the optimum with CP-SAT (theory/exact.py) and each instance's Theorem 1 bound, and reports
the measured ratio sum C_i / OPT against the bound. With `task.theory_alpha=fixed` every job runs at
alpha = 1 s/iteration on any placement, so the optimum is the true OPT and a ratio above the bound
would contradict Theorem 1. With `placement`, jobs are synthetic communicating plans whose alpha
depends on the placement (so COMM_HEAVY and tau change the schedule); CP-SAT with the true alpha_min
then gives a lower bound on OPT and the reported ratio an upper bound on the true one.

`adversarial` runs `theory.adversarial.search` and writes the best instance as a CSV job table that
reruns through `workload=csv`, the search history, and the instance's A-SRPT schedule with its
per-job Lemma 2 check.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Optional

import numpy as np
import pandas as pd

from ..build import build_placer, build_scheduler, predictor_params
from ..config import RunConfig, TaskConfig
from ..params import Params, param
from ..rules import MAX_SECONDS, Rule, integer, number, one_of, seconds
from ..core import Cluster, ConfigError, Job, Stage, TrainingPlan
from ..io import RunResult
from ..prediction import PREDICTORS, make_predictor
from ..schedulers import Scheduler
from ..sim import simulate
from ..sim.records import comm_heavy_labels
from ..theory.adversarial import TABLE_COLUMNS, SearchSpace, fixed_alpha_bound, search, simulate_asrpt
from ..theory.exact import ExactSchedule, durations_from_table, exact_optimum
from ..theory.lemma2 import check_lemma2
from ..timing import TimingModel
from ..workloads.seeding import component_rng
from .compare import ALL_SCHEDULERS, scheduler_list
from .base import Context, comm_heavy_threshold, reference_scheduler, register_task
from .scoring import theorem1_scalars

BOUND_TOLERANCE = 1e-9
# Placement mode: OPT durations n_i * alpha_min_i are rounded DOWN to this grid (so CP-SAT works on a
# coarse integer grid and its result stays a lower bound on OPT).
LOWER_BOUND_RESOLUTION_S = 1e-3
# Synthetic communicating plans (placement mode): compute per stage, activation bytes at the stage
# boundary, and the log-uniform range of parameter bytes that sets how much spreading costs.
STAGE_COMPUTE_S = 0.4
BOUNDARY_BYTES = 1e8
PARAM_BYTES_RANGE = (1e8, 1e10)


# ---------------------------------------------------------------- parameters

def _int_range(low: int) -> Rule:
    """Two integers [low, high]; at most 1e12, where times (a release in seconds, iterations of 1 s) stay exact."""
    return Rule(f"[low, high] integers with {low} <= low <= high <= {MAX_SECONDS:.0e}", lambda v: (
        isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
        and low <= v[0] <= v[1] <= MAX_SECONDS))


@dataclass(frozen=True)
class TinyClusterParams(Params):
    """G and the exact solver's time limit, shared by the theory and adversarial tasks."""

    theory_gpus: int = param(8, integer(2), "G, the cluster's GPUs")
    theory_time_limit_s: float = param(10.0, seconds(strict=True),
                                       "CP-SAT's time limit for OPT")


@dataclass(frozen=True)
class TheoryParams(TinyClusterParams):
    """Tiny instances: `theory_instances` of `theory_jobs` jobs on G GPUs (servers of
    `theory_gpus_per_server`, null: one), GPUs, iterations and integral releases uniform in the
    inclusive ranges. `theory_alpha=fixed`: alpha 1 s on every placement, alpha_max = alpha U[1,
    theory_rho_max] (OPT exact); `placement`: communicating plans (OPT lower bound)."""

    schedulers: list[str] = param(list(ALL_SCHEDULERS), scheduler_list(), "the schedulers compared with OPT")
    theory_instances: int = param(20, integer(1), "instances drawn")
    theory_jobs: int = param(5, integer(1), "jobs per instance")
    theory_gpus_per_server: Optional[int] = param(None, Rule("null or an integer >= 1", lambda v: v is None or (
        isinstance(v, int) and not isinstance(v, bool) and v >= 1)), "GPUs per server (null: one server)")
    theory_job_gpus: list[int] = param([1, 6], _int_range(1), "range of a job's GPUs")
    theory_iterations: list[int] = param([1, 100], _int_range(1), "range of a job's iterations")
    theory_releases: list[int] = param([0, 50], _int_range(0), "range of a job's release")
    theory_alpha: str = param("fixed", one_of("fixed", "placement"), "fixed alpha, or placement-dependent alpha")
    theory_rho_max: float = param(1.0, number(1), "declared alpha_max / alpha drawn from U[1, it]")

    def check_together(self, prefix: str) -> None:
        per_server = self.theory_gpus_per_server
        if per_server is not None and self.theory_gpus % per_server:
            raise ConfigError(f"{prefix}.theory_gpus_per_server must be null or an integer >= 1 dividing "
                              f"theory_gpus={self.theory_gpus}, got {per_server}")
        if self.theory_job_gpus[1] >= self.theory_gpus:
            raise ConfigError(f"{prefix}.theory_job_gpus must be below theory_gpus={self.theory_gpus} (Theorem 1 "
                              f"needs g_max < G), got {self.theory_job_gpus}")
        if self.theory_alpha == "placement" and (per_server is None or self.theory_job_gpus[1] > per_server):
            raise ConfigError(f"{prefix}.theory_job_gpus must be at most theory_gpus_per_server (set it) with "
                              f"theory_alpha=placement, so that the consolidated alpha is the true alpha_min, "
                              f"got {self.theory_job_gpus}")


@dataclass(frozen=True)
class AdversarialParams(TinyClusterParams):
    """The seeded search's objective, budget and instance space (tau is A-SRPT's, from the scheduler group)."""

    theory_gpus: int = param(100, integer(2), "G, the cluster's GPUs")
    adversarial_objective: str = param("eq12", one_of("eq12", "ratio"),
                                       "maximise the Eq. 12 violation, or ratio to OPT over the Theorem 1 bound")
    adversarial_budget: int = param(200, integer(1), "instances evaluated")
    adversarial_max_jobs: int = param(4, integer(1), "jobs per instance at most")
    adversarial_max_iterations: int = param(100_000, integer(1, int(MAX_SECONDS)), "a job's iterations at most")
    adversarial_max_release: int = param(1_000, integer(0, int(MAX_SECONDS)), "a job's release at most (s)")


# ---------------------------------------------------------------- instances

@dataclass(frozen=True)
class TinyInstance:
    """One drawn instance: its jobs, its job table (job_id, release, gpus, iterations, alpha_min) and
    the true alpha_min of each job (the OPT durations are iterations * alpha_min)."""

    index: int
    jobs: list[Job]
    table: pd.DataFrame

    def durations(self) -> np.ndarray:
        return self.table["iterations"].to_numpy(dtype=float) * self.table["alpha_min"].to_numpy(dtype=float)


@dataclass(frozen=True)
class Reference:
    """The OPT a ratio is measured against and what it is: `exact` (proven optimum of fixed-alpha jobs),
    `upper_bound` (a feasible schedule: a ratio above the bound still proves a violation) or
    `lower_bound` (placement mode: the ratio is an upper bound on the true one)."""

    value: float
    kind: str
    status: str
    wall_time_s: float


@lru_cache(maxsize=512)
def _solve(release: tuple[float, ...], gpus: tuple[int, ...], durations: tuple[float, ...], G: int,
           time_limit_s: float) -> ExactSchedule:
    """CP-SAT optimum, cached: a sweep's points share their instances (OPT ignores tau, COMM_HEAVY, epsilon)."""
    return exact_optimum(release, gpus, durations, G, time_limit_s=time_limit_s)


def reference_optimum(instance: TinyInstance, task: TaskConfig, G: int) -> Reference:
    """OPT of a fixed-alpha instance (exact when proven), or a lower bound on OPT in placement mode
    (durations rounded down to LOWER_BOUND_RESOLUTION_S; the solver's proven bound if not optimal)."""
    table = instance.table
    durations = instance.durations()
    if task.theory_alpha == "placement":
        durations = np.floor(durations / LOWER_BOUND_RESOLUTION_S) * LOWER_BOUND_RESOLUTION_S
    solved = _solve(tuple(table["release"].astype(float)), tuple(int(g) for g in table["gpus"]),
                    tuple(float(d) for d in durations), G, float(task.theory_time_limit_s))
    if task.theory_alpha == "placement":
        value = solved.objective if solved.status == "OPTIMAL" else solved.best_bound
        return Reference(value, "lower_bound", solved.status, solved.wall_time_s)
    kind = "exact" if solved.proven_optimal else "upper_bound"
    return Reference(solved.objective, kind, solved.status, solved.wall_time_s)


def theory_cluster(task: TaskConfig, config: RunConfig) -> Cluster:
    """G = task.theory_gpus GPUs in servers of theory_gpus_per_server (null: one server); bandwidths
    from the cluster group."""
    per_server = task.theory_gpus_per_server or task.theory_gpus
    return Cluster(servers=task.theory_gpus // per_server, gpus_per_server=per_server,
                   b_intra=config.cluster.b_intra, b_inter=config.cluster.b_inter)


def communicating_plan(gpus: int, param_bytes: float) -> TrainingPlan:
    """Two pipeline stages of g/2 replicas when g is even, else one data-parallel stage of g replicas;
    all-reduce of `param_bytes` and boundary activations make spreading over servers expensive."""
    if gpus % 2 == 0:
        half = gpus // 2
        stages = (Stage(STAGE_COMPUTE_S, param_bytes, BOUNDARY_BYTES, half), Stage(STAGE_COMPUTE_S, param_bytes, 0.0, half))
        return TrainingPlan("synthetic-comm", f"p2xd{half}", stages)
    return TrainingPlan("synthetic-comm", f"p1xd{gpus}", (Stage(2 * STAGE_COMPUTE_S, param_bytes, 0.0, gpus),))


def draw_instance(task: TaskConfig, cluster: Cluster, timing: TimingModel, seed: int, index: int) -> TinyInstance:
    """Instance `index` of the batch: uniform GPUs, iterations and integral releases in the task's
    ranges; its own random stream from (seed, "theory.instance.<index>")."""
    rng = component_rng(seed, f"theory.instance.{index}")
    n = task.theory_jobs
    gpus = rng.integers(task.theory_job_gpus[0], task.theory_job_gpus[1] + 1, n)
    iterations = rng.integers(task.theory_iterations[0], task.theory_iterations[1] + 1, n)
    release = rng.integers(task.theory_releases[0], task.theory_releases[1] + 1, n).astype(float)
    if task.theory_alpha == "fixed":
        alpha_max = rng.uniform(1.0, task.theory_rho_max, n)
        plans = [TrainingPlan.fixed(int(g), 1.0, float(a)) for g, a in zip(gpus, alpha_max)]
    else:
        params = np.exp(rng.uniform(*np.log(PARAM_BYTES_RANGE), n))
        plans = [communicating_plan(int(g), float(p)) for g, p in zip(gpus, params)]
    ids = [f"i{index}j{k}" for k in range(n)]
    jobs = [Job(job_id, float(r), plan, int(it)) for job_id, r, plan, it in zip(ids, release, plans, iterations)]
    table = pd.DataFrame({"job_id": ids, "release": release, "gpus": gpus, "iterations": iterations,
                          "alpha_min": [timing.alpha_consolidated(plan, cluster) for plan in plans],
                          "alpha_max": [timing.alpha_max(plan, cluster) for plan in plans],
                          "config": [plan.config for plan in plans]})
    return TinyInstance(index, jobs, table)


# ---------------------------------------------------------------- theory task

def _instance_predictions(config: RunConfig, instance: TinyInstance) -> dict[Any, float]:
    """The predictor group's predictions for one instance, from its own stream (seed, instance)."""
    name, params = predictor_params(config)
    if "random_state" in params:
        params["random_state"] = int(component_rng(config.seed, f"theory.instance.{instance.index}.predictor")
                                     .integers(2**31))
    return make_predictor(name, **params).fit(instance.table.iloc[:0]).predictions(instance.table)


THEOREM1_COLUMNS = ("rho", "rho_bar", "epsilon_bar", "g_max", "theorem1_bound")


def _bound(config: RunConfig, frame: pd.DataFrame, instance: TinyInstance, scheduler: Scheduler,
           G: int) -> dict[str, float]:
    """Theorem 1 symbols of one schedule with the true alpha_min (and true iterations for an oracle)."""
    alpha_min = frame["job_id"].map(instance.table.set_index("job_id")["alpha_min"])
    symbols = theorem1_scalars(config, frame, alpha_min, G, scheduler, "true alpha_min of the instance")
    if not np.isfinite(symbols["theorem1_bound"]):  # an undefined bound must not pass as "not exceeded"
        raise ConfigError(f"task=theory, instance {instance.index}: {symbols['theory_note']}")
    return {key: symbols[key] for key in THEOREM1_COLUMNS}


def _run_instance(config: RunConfig, instance: TinyInstance, cluster: Cluster,
                  schedulers: dict[str, Scheduler]) -> tuple[list[dict[str, Any]], list[pd.DataFrame]]:
    """Every scheduler and the CP-SAT optimum on one instance: one row per scheduler, per-job frames."""
    task = config.task
    optimum = reference_optimum(instance, task, cluster.total_gpus)
    predictions = _instance_predictions(config, instance)
    rows, frames = [], []
    for name, scheduler in schedulers.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = simulate(instance.jobs, cluster, scheduler, build_placer(config), predictions=predictions,
                              timing=config.timing, preemption=config.preemption)
        frame = result.frame()
        frame["comm_heavy"] = comm_heavy_labels(frame, comm_heavy_threshold(config))
        sum_completion = float(frame["end"].sum())
        bound = _bound(config, frame, instance, scheduler, cluster.total_gpus)
        ratio = sum_completion / optimum.value
        rows.append({"instance": instance.index, "scheduler": name, "jobs": len(frame),
                     "G": cluster.total_gpus, "sum_completion": sum_completion,
                     "total_jct": float((frame["end"] - frame["release"]).sum()), "opt": optimum.value,
                     "opt_kind": optimum.kind, "opt_status": optimum.status, "opt_exact": optimum.kind == "exact",
                     "opt_wall_time_s": optimum.wall_time_s, "ratio_to_opt": ratio, **bound,
                     "ratio_over_bound": ratio / bound["theorem1_bound"],
                     "comm_heavy_jobs": int(frame["comm_heavy"].sum())})
        frames.append(frame.assign(instance=instance.index, scheduler=name))
    return rows, frames


def scheduler_summary(per_instance: pd.DataFrame) -> pd.DataFrame:
    """One row per scheduler: mean and worst ratio to OPT, worst ratio / bound, and the number of
    instances where the bound is provably violated (OPT exact or a feasible schedule's value;
    `bound_exceeded_inconclusive`: exceeded against a lower bound on OPT, which proves nothing)."""
    rows = []
    for name, part in per_instance.groupby("scheduler", sort=False):
        exceeded = part["ratio_over_bound"] > 1 + BOUND_TOLERANCE
        conclusive = part["opt_kind"] != "lower_bound"
        rows.append({"scheduler": name, "instances": len(part),
                     "ratio_to_opt_mean": float(part["ratio_to_opt"].mean()),
                     "ratio_to_opt_max": float(part["ratio_to_opt"].max()),
                     "ratio_to_opt_min": float(part["ratio_to_opt"].min()),
                     "theorem1_bound_mean": float(part["theorem1_bound"].mean()),
                     "theorem1_bound_min": float(part["theorem1_bound"].min()),
                     "ratio_over_bound_max": float(part["ratio_over_bound"].max()),
                     "bound_violations": int((exceeded & conclusive).sum()),
                     "bound_exceeded_inconclusive": int((exceeded & ~conclusive).sum()),
                     "epsilon_bar_mean": float(part["epsilon_bar"].mean()),
                     "rho_max": float(part["rho"].max()),
                     "total_jct_mean": float(part["total_jct"].mean()),
                     "comm_heavy_jobs": int(part["comm_heavy_jobs"].sum())})
    return pd.DataFrame(rows)


@register_task("theory", TheoryParams, needs_workload=False, own_cluster="task.theory_gpus, task.theory_gpus_per_server",
               cluster_keys_read=("b_intra", "b_inter"))
def theory_ratio(context: Context) -> RunResult:
    """Measured ratio to OPT vs the Theorem 1 bound on a seeded batch of tiny instances."""
    config = context.config
    task = config.task
    if not getattr(PREDICTORS.entry(config.predictor.name).factory, "oracle", False):
        raise ConfigError(f"task=theory: predictor {config.predictor.name!r} needs a history the tiny instances "
                          f"lack; use predictor=oracle or predictor=noisy (predictor.epsilon)")
    cluster = theory_cluster(task, config)
    timing = config.timing
    schedulers = {name: build_scheduler(config, name) for name in task.schedulers}
    rows: list[dict[str, Any]] = []
    frames: list[pd.DataFrame] = []
    for index in range(task.theory_instances):
        instance = draw_instance(task, cluster, timing, config.seed, index)
        instance_rows, instance_frames = _run_instance(config, instance, cluster, schedulers)
        rows.extend(instance_rows)
        frames.extend(instance_frames)
    per_instance = pd.DataFrame(rows)
    by_scheduler = scheduler_summary(per_instance)
    records = {row["scheduler"]: row for row in by_scheduler.to_dict(orient="records")}
    reference = reference_scheduler(config, list(task.schedulers))
    summary = {**context.provenance, **records[reference],
               "schedulers": {name: {**{k: v for k, v in row.items() if k != "scheduler"},
                                     "scheduler_params": config.scheduler_params(name).to_dict()}
                              for name, row in records.items()},
               "G": cluster.total_gpus,
               "theory_alpha": task.theory_alpha,
               "opt_exact_share": float(per_instance.drop_duplicates("instance")["opt_exact"].mean()),
               "opt_wall_time_max_s": float(per_instance["opt_wall_time_s"].max()),
               "workload_source": f"theory: {task.theory_instances} random instances ({task.theory_alpha} alpha)",
               "workload_jobs": int(task.theory_instances * task.theory_jobs)}
    jobs = pd.concat(frames, ignore_index=True)
    jobs["job_id"] = jobs["job_id"].astype(str)
    keep = [c for c in ("instance", "scheduler", "job_id", "release", "start", "end", "gpus", "iterations",
                        "predicted_iterations", "alpha", "alpha_min", "alpha_max", "comm_ratio", "comm_heavy", "eligible")
            if c in jobs.columns]
    return RunResult(task="theory", summary=summary, jobs=jobs[keep],
                     tables={"theory_instances": per_instance, "theory_schedulers": by_scheduler})


# ---------------------------------------------------------------- adversarial task

def rerun_command(G: int, tau: float, path: str = "best_instance.csv") -> str:
    """The asrpt-bench command that replays a saved instance: same cluster, scheduler, placer and
    perfect predictions; the csv workload simulates every row (no predictor history)."""
    return (f"asrpt-bench task=simulate scheduler=asrpt scheduler.tau={tau:g} predictor=oracle placement=first_fit "
            f"cluster.servers=1 cluster.gpus_per_server={G} workload=csv workload.path={path}")


@register_task("adversarial", AdversarialParams, needs_workload=False, own_cluster="task.theory_gpus, fixed alpha")
def adversarial_search(context: Context) -> RunResult:
    """Seeded search for the instance maximising the Eq. 12 violation or ratio / bound (theory/adversarial)."""
    config = context.config
    task = config.task
    if config.scheduler.name != "asrpt":
        raise ConfigError(f"task=adversarial searches A-SRPT's worst instances: scheduler must be asrpt (its "
                          f"scheduler.tau is the tau searched), got {config.scheduler.name!r}")
    G, tau = task.theory_gpus, float(config.scheduler.tau)
    space = SearchSpace(G=G, max_jobs=task.adversarial_max_jobs, max_iterations=task.adversarial_max_iterations,
                        max_release=task.adversarial_max_release)
    started = time.perf_counter()
    found = search(task.adversarial_objective, config.seed, task.adversarial_budget, space, tau=tau)
    search_wall = time.perf_counter() - started
    best = found.best_table.loc[:, list(TABLE_COLUMNS)]
    schedule = simulate_asrpt(best, G, tau)
    lemma2 = check_lemma2(schedule, G, tau)
    optimum = exact_optimum(best["release"], best["gpus"], durations_from_table(best), G,
                            time_limit_s=task.theory_time_limit_s)
    ratio_to_opt = float(schedule["end"].sum()) / optimum.objective
    summary = {**context.provenance, "objective": found.objective, "best_value": found.best_value,
               "evaluations": len(found.history), "search_wall_time_s": search_wall, "G": G, "tau": tau,
               "best_jobs": len(best), "eq12_violation_rel": float(lemma2["eq12_violation_rel"].max()),
               "eq12_violation_s": float(lemma2["eq12_violation"].max()),
               "repaired_start_violation_rel": float(lemma2["repaired_start_violation_rel"].max()),
               "lemma2_final_violation_rel": float(lemma2["lemma2_final_violation_rel"].max()),
               "sum_completion": float(schedule["end"].sum()), "opt": optimum.objective,
               "opt_proven": optimum.proven_optimal, "ratio_to_opt": ratio_to_opt,
               "ratio_over_bound": ratio_to_opt / fixed_alpha_bound(best, G, tau), "rerun": rerun_command(G, tau),
               "workload_source": f"adversarial search ({found.objective})", "workload_jobs": len(best)}
    jobs = schedule.copy()
    jobs["job_id"] = jobs["job_id"].astype(str)
    return RunResult(task="adversarial", summary=summary, jobs=jobs,
                     tables={"best_instance": best, "history": found.history,
                             "lemma2_check": lemma2.assign(job_id=lemma2["job_id"].astype(str))})
