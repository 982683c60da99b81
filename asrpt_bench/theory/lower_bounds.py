"""Lower bounds on OPT_A, the optimal sum of completion times sum_i C_i of the cluster problem.

- Lemma 1 (paper-notes 7.2): the single-machine preemptive relaxation A1 with p_i = (g_i/G) n_i alpha_min_i
  and releases r_i. Preemptive SRPT is optimal for 1|r_j,pmtn|sum C_j, so its sum of completion times is
  OPT_A1 <= OPT_A, computed exactly here.
- Trivial: no job can finish before r_i + n_i alpha_min_i.

Both are valid only with the TRUE alpha_min (best placement on an empty cluster). A scheduler's estimate
(Heavy-Edge) can exceed it; `alpha_min_for_jobs` gives values that are safe: 'consolidated' (every link at
the faster bandwidth, always <= alpha_min) or 'exact' (the ILP optimum).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..core import Cluster, ConfigError, Job, TrainingPlan
from ..solvers import SolverSettings
from ..timing import DEFAULT_TIMING, TimingModel

ArrayLike = Sequence[float] | np.ndarray


def _as_arrays(caller: str, **columns: ArrayLike) -> dict[str, np.ndarray]:
    arrays = {name: np.asarray(values, dtype=float) for name, values in columns.items()}
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ConfigError(f"{caller}: input arrays differ in length: {lengths}")
    for name, values in arrays.items():
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            row = int(np.flatnonzero(~np.isfinite(values) | (values < 0))[0])
            raise ConfigError(f"{caller}: {name}[{row}] must be finite and >= 0, got {values[row]!r}")
    return arrays


def srpt_completion_times(release: ArrayLike, processing: ArrayLike) -> np.ndarray:
    """Completion time of every job under preemptive SRPT on one unit-speed machine.

    Event-driven and exact up to float rounding: between events the job with the least remaining work
    runs; ties go to the earlier release, then the lower index. Each arrival preempts at most once,
    so the cost is O(n log n).
    """
    arrays = _as_arrays("srpt_completion_times", release=release, processing=processing)
    release_arr, work = arrays["release"], arrays["processing"]
    order = np.lexsort((np.arange(len(release_arr)), release_arr))
    completion = np.empty(len(release_arr))
    ready: list[tuple[float, float, int]] = []
    now, nxt = 0.0, 0
    while nxt < len(order) or ready:
        if not ready:
            now = max(now, release_arr[order[nxt]])
        while nxt < len(order) and release_arr[order[nxt]] <= now:
            job = int(order[nxt])
            heapq.heappush(ready, (work[job], release_arr[job], job))
            nxt += 1
        remaining, released, job = heapq.heappop(ready)
        next_arrival = release_arr[order[nxt]] if nxt < len(order) else np.inf
        if now + remaining <= next_arrival:
            now += remaining
            completion[job] = now
        else:
            heapq.heappush(ready, (remaining - (next_arrival - now), released, job))
            now = next_arrival
    return completion


def lemma1_lower_bound(release: ArrayLike, gpus: ArrayLike, iterations: ArrayLike,
                       alpha_min: ArrayLike, G: int) -> float:
    """OPT_A1 = sum of SRPT completion times with p_i = (g_i/G) n_i alpha_min_i (Lemma 1: <= OPT_A)."""
    arrays = _as_arrays("lemma1_lower_bound", release=release, gpus=gpus, iterations=iterations,
                        alpha_min=alpha_min)
    _check_cluster_size("lemma1_lower_bound", arrays["gpus"], G)
    processing = arrays["gpus"] / G * arrays["iterations"] * arrays["alpha_min"]
    return float(srpt_completion_times(arrays["release"], processing).sum())


def trivial_lower_bound(release: ArrayLike, iterations: ArrayLike, alpha_min: ArrayLike) -> float:
    """sum_i (r_i + n_i alpha_min_i): each job alone on an empty cluster from its release."""
    arrays = _as_arrays("trivial_lower_bound", release=release, iterations=iterations, alpha_min=alpha_min)
    return float(np.sum(arrays["release"] + arrays["iterations"] * arrays["alpha_min"]))


def _check_cluster_size(caller: str, gpus: np.ndarray, G: int) -> None:
    if not G > 0:
        raise ConfigError(f"{caller}: G must be > 0, got {G!r}")
    if len(gpus) and gpus.max() > G:
        row = int(np.argmax(gpus))
        raise ConfigError(f"{caller}: job {row} needs {gpus[row]:g} GPUs, more than G={G}")


@dataclass(frozen=True)
class LowerBound:
    """Lower bounds on OPT_A (sum of completion times) and which alpha_min they used."""

    lemma1: float
    trivial: float
    total_release: float
    alpha_min_source: str

    @property
    def value(self) -> float:
        """The best (largest) of the bounds on sum_i C_i."""
        return max(self.lemma1, self.trivial)

    @property
    def total_jct(self) -> float:
        """The same bound on sum_i (C_i - r_i)."""
        return self.value - self.total_release


def lower_bound(release: ArrayLike, gpus: ArrayLike, iterations: ArrayLike, alpha_min: ArrayLike, G: int,
                alpha_min_source: str = "given") -> LowerBound:
    """Both bounds on plain arrays; `alpha_min_source` only labels where alpha_min came from."""
    return LowerBound(lemma1=lemma1_lower_bound(release, gpus, iterations, alpha_min, G),
                      trivial=trivial_lower_bound(release, iterations, alpha_min),
                      total_release=float(np.sum(np.asarray(release, dtype=float))),
                      alpha_min_source=alpha_min_source)


def _alpha_min_consolidated(job: Job, cluster: Cluster, timing: TimingModel, solver: SolverSettings) -> float:
    """alpha with every link at the faster of the two bandwidths (`TimingModel.alpha_lower_bound`):
    <= alpha_min on any cluster (the all-intra alpha on real clusters, where b_inter <= b_intra)."""
    return timing.alpha_lower_bound(job.plan, cluster)


def _alpha_min_exact(job: Job, cluster: Cluster, timing: TimingModel, solver: SolverSettings) -> float:
    """The ILP's proven lower bound on alpha_min (its optimum when solved to zero gap), never below the
    consolidated bound, so a time- or gap-limited solve cannot overstate alpha_min."""
    if job.plan.is_fixed:
        return _alpha_min_consolidated(job, cluster, timing, solver)
    try:
        from ..placement.ilp import alpha_min_exact
    except ImportError as error:
        raise ConfigError("alpha_min_source='exact' needs asrpt_bench.placement.ilp.alpha_min_exact, "
                          f"which is not available ({error}); use 'consolidated'") from error
    alpha, record = alpha_min_exact(job.plan, cluster, timing, solver)
    proven = record.bound if record.bound is not None and math.isfinite(record.bound) else -math.inf
    return float(min(alpha, max(_alpha_min_consolidated(job, cluster, timing, solver), proven)))


ALPHA_MIN_SOURCES: dict[str, Callable[[Job, Cluster, TimingModel, SolverSettings], float]] = {
    "consolidated": _alpha_min_consolidated,   # every link at the faster bandwidth: <= alpha_min, no solver
    "exact": _alpha_min_exact,                 # ILP on the empty cluster (its proven bound)
}


def alpha_min_for_jobs(jobs: Sequence[Job], cluster: Cluster, timing: TimingModel = DEFAULT_TIMING,
                       source: str = "consolidated", solver: SolverSettings = SolverSettings()) -> np.ndarray:
    """A value <= the true alpha_min of every job, from the named source (fixed-alpha jobs: alpha)."""
    if source not in ALPHA_MIN_SOURCES:
        raise ConfigError(f"unknown alpha_min_source {source!r}; known: {sorted(ALPHA_MIN_SOURCES)}")
    compute = ALPHA_MIN_SOURCES[source]
    by_plan: dict[TrainingPlan, float] = {}
    values = []
    for job in jobs:
        if job.plan not in by_plan:
            by_plan[job.plan] = compute(job, cluster, timing, solver)
        values.append(by_plan[job.plan])
    return np.asarray(values, dtype=float)


def lower_bound_for_jobs(jobs: Sequence[Job], cluster: Cluster, timing: TimingModel = DEFAULT_TIMING,
                         alpha_min_source: str = "consolidated",
                         solver: SolverSettings = SolverSettings()) -> LowerBound:
    """Lower bounds on OPT_A for simulator jobs (true iterations), alpha_min from `alpha_min_source`."""
    alpha_min = alpha_min_for_jobs(jobs, cluster, timing, alpha_min_source, solver)
    return lower_bound(release=[job.release for job in jobs], gpus=[job.gpus for job in jobs],
                       iterations=[job.iterations for job in jobs], alpha_min=alpha_min,
                       G=cluster.total_gpus, alpha_min_source=alpha_min_source)
