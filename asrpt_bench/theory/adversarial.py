"""Seeded search for tiny instances on which A-SRPT's proof steps or its ratio look worst.

Instances are fixed-alpha job tables (alpha = alpha_max = 1 s/iteration, so rho = 1) with perfect
predictions; each evaluation simulates A-SRPT on one server of G GPUs (alpha is placement-free,
so the layout does not matter). Objectives, by name:
- "eq12": the largest relative violation of the paper's Eq. 12 step over the jobs (lemma2.py);
  the reviewer's instance scores 97000 / 4000 = 24.25 at G = 100.
- "ratio": (sum C_i / OPT) / Theorem 1 bound, OPT exact by CP-SAT (exact.py); above 1 would
  contradict Theorem 1.
`random_lemma2_check` replays paper-notes 7.5's randomised check through the real simulator: random
placement-sensitive instances, noisy predictions and tau > 0, counting violations per inequality.
The search: random restarts, each followed by hill climbing (accepting non-worsening moves) over
iterations, GPU counts, release times and the number of jobs. The best instance is a job table in
the schema of workloads/schema.py that anyone can rerun (`evaluate`, or `workload=csv`).
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..core import Cluster, ConfigError, Job, Stage, TrainingPlan
from ..placement import first_fit, heavy_edge  # noqa: F401  (registers the placers used below)
from ..placement.base import make_placer
from ..schedulers import make_scheduler
from ..schedulers.asrpt import ASRPTParams
from ..sim import simulate
from ..sim.records import comm_heavy_labels
from ..workloads.schema import validate_job_table
from ..workloads.seeding import component_rng
from .bound import theorem1_bound
from .exact import durations_from_table, exact_optimum
from .lemma2 import INEQUALITIES, check_lemma2

TABLE_COLUMNS = ("job_id", "release", "gpus", "iterations", "alpha", "alpha_max")
VIOLATION_TOLERANCE = 1e-9


def _fixed_alpha_jobs(table: pd.DataFrame) -> list[Job]:
    """Jobs of a validated fixed-alpha table (the search's own tables skip re-validation)."""
    return [Job(str(row.job_id), float(row.release), TrainingPlan.fixed(int(row.gpus), float(row.alpha),
                                                                        float(row.alpha_max)), int(row.iterations))
            for row in table.itertuples(index=False)]


def simulate_asrpt(table: pd.DataFrame, G: int, tau: float) -> pd.DataFrame:
    """Per-job frame of A-SRPT (perfect predictions, first-fit placement) on one server of G GPUs."""
    jobs = _fixed_alpha_jobs(table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        placer = make_placer("first_fit")
        result = simulate(jobs, Cluster(servers=1, gpus_per_server=G), make_scheduler("asrpt", tau=tau), placer,
                          estimate_placer=placer)
    return result.frame()


def _eq12_violation(table: pd.DataFrame, G: int, tau: float) -> float:
    per_job = check_lemma2(simulate_asrpt(table, G, tau), G, tau)
    return float(per_job["eq12_violation_rel"].max())


def fixed_alpha_bound(table: pd.DataFrame, G: int, tau: float) -> float:
    """Theorem 1 bound of a fixed-alpha table with perfect predictions: rho = max alpha_max / alpha and
    eps_bar = 0 (so rho_bar does not matter)."""
    rho = float((table["alpha_max"] / table["alpha"]).max())
    return theorem1_bound(rho, 1.0, 0.0, tau, G, int(table["gpus"].max()))


def _ratio_over_bound(table: pd.DataFrame, G: int, tau: float) -> float:
    schedule = simulate_asrpt(table, G, tau)
    optimum = exact_optimum(table["release"], table["gpus"], durations_from_table(table), G).objective
    return float(schedule["end"].sum() / optimum / fixed_alpha_bound(table, G, tau))


OBJECTIVES: dict[str, Callable[[pd.DataFrame, int, float], float]] = {
    "eq12": _eq12_violation,
    "ratio": _ratio_over_bound,
}


def evaluate(objective: str, table: pd.DataFrame, G: int, tau: float = 0.0) -> float:
    """The named objective on one job table (fixed alpha, perfect predictions)."""
    if objective not in OBJECTIVES:
        raise ConfigError(f"unknown adversarial objective {objective!r}; known: {sorted(OBJECTIVES)}")
    table = validate_job_table(table, "adversarial instance")
    if table["alpha"].isna().any():
        raise ConfigError("adversarial instance: every job needs a fixed alpha")
    if int(table["gpus"].max()) >= G:
        raise ConfigError(f"adversarial instance: needs g_max < G={G}, got {int(table['gpus'].max())}")
    table["alpha_max"] = table["alpha_max"].fillna(table["alpha"])
    return OBJECTIVES[objective](table, G, tau)


@dataclass(frozen=True)
class SearchSpace:
    """Ranges of the searched instances: job count, iterations (log-uniform) and integral releases."""

    G: int = 100
    min_jobs: int = 2
    max_jobs: int = 4
    max_iterations: int = 100_000
    max_release: int = 1_000

    def __post_init__(self) -> None:
        if not self.G >= 2:
            raise ConfigError(f"search space: G must be >= 2, got {self.G}")
        if not 1 <= self.min_jobs <= self.max_jobs:
            raise ConfigError(f"search space: need 1 <= min_jobs <= max_jobs, got {self.min_jobs}, {self.max_jobs}")
        if self.max_iterations < 1 or self.max_release < 0:
            raise ConfigError("search space: max_iterations must be >= 1 and max_release >= 0")


@dataclass
class _Instance:
    release: np.ndarray
    gpus: np.ndarray
    iterations: np.ndarray

    def table(self) -> pd.DataFrame:
        n = len(self.release)
        return pd.DataFrame({"job_id": [f"j{k}" for k in range(n)], "release": self.release.astype(float),
                             "gpus": self.gpus.astype(int), "iterations": self.iterations.astype(int),
                             "alpha": np.ones(n), "alpha_max": np.ones(n)})


def _random_job(rng: np.random.Generator, space: SearchSpace) -> tuple[int, int, int]:
    release = 0 if rng.random() < 0.5 else int(rng.integers(0, space.max_release + 1))
    return release, _log_uniform_int(rng, 1, space.G - 1), _log_uniform_int(rng, 1, space.max_iterations)


def _log_uniform_int(rng: np.random.Generator, low: int, high: int) -> int:
    """An integer in [low, high], log-uniform so that small values (1 GPU, short jobs) are common."""
    return int(np.clip(np.round(np.exp(rng.uniform(np.log(low), np.log(high + 0.5)))), low, high))


def _random_instance(rng: np.random.Generator, space: SearchSpace) -> _Instance:
    jobs = [_random_job(rng, space) for _ in range(int(rng.integers(space.min_jobs, space.max_jobs + 1)))]
    release, gpus, iterations = (np.array(column) for column in zip(*jobs))
    return _Instance(release, gpus, iterations)


def _mutate(instance: _Instance, rng: np.random.Generator, space: SearchSpace) -> _Instance:
    """One local move: rescale a job's iterations, change its GPUs or release, or add/remove a job."""
    release, gpus, iterations = instance.release.copy(), instance.gpus.copy(), instance.iterations.copy()
    n = len(release)
    move = int(rng.integers(0, 4))
    k = int(rng.integers(0, n))
    if move == 0:
        scaled = iterations[k] * np.exp(rng.normal(0.0, 1.0))
        iterations[k] = int(np.clip(np.round(scaled), 1, space.max_iterations))
    elif move == 1:
        gpus[k] = int(np.clip(np.round(gpus[k] * np.exp(rng.normal(0.0, 0.7))), 1, space.G - 1))
    elif move == 2:
        release[k] = 0 if rng.random() < 0.3 else int(rng.integers(0, space.max_release + 1))
    elif n < space.max_jobs and (n <= space.min_jobs or rng.random() < 0.5):
        job = _random_job(rng, space)
        release, gpus, iterations = (np.append(a, v) for a, v in zip((release, gpus, iterations), job))
    elif n > space.min_jobs:
        keep = np.arange(n) != k
        release, gpus, iterations = release[keep], gpus[keep], iterations[keep]
    return _Instance(release, gpus, iterations)


@dataclass(frozen=True)
class SearchResult:
    """The best instance found (a job table), its objective value and one history row per evaluation."""

    objective: str
    best_table: pd.DataFrame
    best_value: float
    history: pd.DataFrame
    G: int
    tau: float
    seed: int

    def write_table(self, path: str | Path) -> Path:
        """Save the best instance as a CSV job table (rerun with `evaluate` or `workload=csv`)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.best_table.loc[:, list(TABLE_COLUMNS)].to_csv(path, index=False)
        return path


def _score(objective: str, instance: _Instance, G: int, tau: float) -> float:
    """The objective of a generated instance; a simulator failure is re-raised with the instance attached."""
    table = instance.table()
    try:
        return OBJECTIVES[objective](table, G, tau)
    except RuntimeError as error:
        raise RuntimeError(f"{error}\nwhile evaluating {objective!r} (G={G}, tau={tau}) on the instance:\n"
                           f"{table.to_csv(index=False)}") from error


def search(objective: str, seed: int, budget: int, space: SearchSpace = SearchSpace(), tau: float = 0.0,
           restarts: int | None = None) -> SearchResult:
    """Maximise `objective` with `budget` evaluations: `restarts` random starts (default budget // 50,
    at least 1), each improved by hill climbing on its share of the budget. Deterministic in `seed`."""
    if objective not in OBJECTIVES:
        raise ConfigError(f"unknown adversarial objective {objective!r}; known: {sorted(OBJECTIVES)}")
    if budget < 1:
        raise ConfigError(f"adversarial search: budget must be >= 1 evaluation, got {budget}")
    restarts = max(1, budget // 50) if restarts is None else restarts
    if not 1 <= restarts <= budget:
        raise ConfigError(f"adversarial search: restarts must be in [1, budget={budget}], got {restarts}")
    rng = component_rng(seed, f"theory.adversarial.{objective}")
    rows: list[dict[str, float | int | bool]] = []
    best_instance, best_value = None, -np.inf
    shares = np.diff(np.linspace(0, budget, restarts + 1).round().astype(int))
    for restart, share in enumerate(shares):
        current = _random_instance(rng, space)
        current_value = _score(objective, current, space.G, tau)
        for step in range(share):
            candidate = current if step == 0 else _mutate(current, rng, space)
            value = current_value if step == 0 else _score(objective, candidate, space.G, tau)
            accepted = value >= current_value
            if accepted:
                current, current_value = candidate, value
            if value > best_value:
                best_instance, best_value = candidate, value
            rows.append({"evaluation": len(rows), "restart": restart, "value": value,
                         "best_value": best_value, "accepted": accepted})
    assert best_instance is not None
    return SearchResult(objective, best_instance.table(), float(best_value), pd.DataFrame(rows), space.G,
                        float(tau), seed)


def _communicating_plan(gpus: int) -> TrainingPlan:
    """A synthetic plan whose alpha depends on placement: two stages when g is even, else one, with
    all-reduce and boundary traffic large enough that spreading over servers costs > 1.5x."""
    if gpus % 2 == 0:
        half = gpus // 2
        return TrainingPlan("synthetic-comm", f"p2xd{half}", (Stage(0.4, 4e8, 1e8, half), Stage(0.4, 4e8, 0.0, half)))
    return TrainingPlan("synthetic-comm", f"p1xd{gpus}", (Stage(0.4, 4e8, 0.0, gpus),))


def random_lemma2_check(seed: int, num_instances: int, taus: tuple[float, ...] = (0.0, 0.5, 2.0),
                        cluster: Cluster = Cluster(servers=4, gpus_per_server=4, b_intra=100.0, b_inter=2.0),
                        max_jobs: int = 8, prediction_noise: float = 0.5) -> pd.DataFrame:
    """Run A-SRPT (Heavy-Edge placement) on random placement-sensitive instances with noisy predictions
    (n~ = n * U(1 - noise, 1 + noise)) and count, per instance, the jobs violating each Lemma 2
    inequality and the comm-heavy jobs that started after becoming eligible (blocked or delayed).
    Cycles through `taus`. One row per instance."""
    if num_instances < 1 or max_jobs < 2 or not 0 <= prediction_noise <= 1:
        raise ConfigError("random_lemma2_check: need num_instances >= 1, max_jobs >= 2, 0 <= prediction_noise <= 1")
    rng = component_rng(seed, "theory.random_lemma2_check")
    G = cluster.total_gpus
    rows = []
    for k in range(num_instances):
        tau = taus[k % len(taus)]
        jobs = [Job(f"j{i}", float(rng.integers(0, 50)), _communicating_plan(int(rng.integers(1, min(G, 9)))),
                    int(rng.integers(1, 200))) for i in range(int(rng.integers(2, max_jobs + 1)))]
        predictions = {job.job_id: float(np.round(job.iterations * rng.uniform(1 - prediction_noise,
                                                                                1 + prediction_noise)))
                       for job in jobs}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = simulate(jobs, cluster, make_scheduler("asrpt", tau=tau), make_placer("heavy_edge"),
                             predictions=predictions).frame()
        per_job = check_lemma2(frame, G, tau)
        row: dict[str, float | int] = {"instance": k, "tau": tau, "jobs": len(jobs)}
        for name in INEQUALITIES:
            row[f"{name}_violated_jobs"] = int((per_job[f"{name}_violation"] > VIOLATION_TOLERANCE).sum())
        heavy = comm_heavy_labels(frame, ASRPTParams.comm_heavy)
        row["heavy_jobs_waited"] = int((heavy & (frame["start"] > frame["eligible"])).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Stress A-SRPT's Lemma 2 / Theorem 1 on tiny instances.")
    commands = parser.add_subparsers(dest="command", required=True)
    find = commands.add_parser("search", help="seeded search for a worst instance")
    find.add_argument("--objective", choices=sorted(OBJECTIVES), default="eq12")
    find.add_argument("--seed", type=int, default=0)
    find.add_argument("--budget", type=int, default=400)
    find.add_argument("--gpus", type=int, default=100, help="G, the cluster's GPUs")
    find.add_argument("--max-jobs", type=int, default=4)
    find.add_argument("--tau", type=float, default=0.0)
    find.add_argument("--out", type=Path, help="write the best instance here as a CSV job table")
    check = commands.add_parser("check", help="count Lemma 2 violations on random simulated runs")
    check.add_argument("--seed", type=int, default=0)
    check.add_argument("--instances", type=int, default=300)
    args = parser.parse_args(argv)
    if args.command == "check":
        counts = random_lemma2_check(args.seed, args.instances)
        print(counts.groupby("tau").sum(numeric_only=True).drop(columns="instance")
              .assign(instances=counts.groupby("tau").size()).to_string())
        return
    result = search(args.objective, args.seed, args.budget, SearchSpace(G=args.gpus, max_jobs=args.max_jobs),
                    tau=args.tau)
    print(f"objective={result.objective} best_value={result.best_value:.6g} G={result.G} tau={result.tau} "
          f"seed={result.seed} evaluations={len(result.history)}")
    print(result.best_table.to_string(index=False))
    if args.out:
        print(f"wrote {result.write_table(args.out)}")


if __name__ == "__main__":
    main()
