"""Exact optimum of tiny instances of the non-preemptive cluster problem, for checking bounds and ratios.

The problem: jobs with release r_i, rigid GPU demand g_i and fixed duration d_i = n_i * alpha_i share G
identical GPUs; each job runs without interruption on g_i GPUs from some S_i >= r_i; minimise sum_i C_i.
Durations do not depend on placement here. For model-based jobs pass alpha_min (true), which makes the
result a lower bound on the placement-aware optimum OPT_A: keeping the starts of an optimal real schedule
and shortening each job to n_i alpha_min_i <= n_i alpha_i keeps it feasible and lowers every C_i.

On a typed cluster (pools of unrelated speeds) `durations` is a jobs x pools matrix (inf where a job cannot
run in a pool) and G the pools' GPU counts: each job runs in one pool, on g_i of its GPUs, for the duration
of that pool; the optimum also says which pool (`ExactSchedule.pools`).

Two solvers: OR-Tools CP-SAT (intervals + one cumulative constraint) and an enumeration of serial
list schedules used by the tests to check CP-SAT on up to a few jobs.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..core import ConfigError

ArrayLike = Sequence[float] | np.ndarray
MAX_SCALE_DIGITS = 6


@dataclass(frozen=True)
class ExactSchedule:
    """A schedule in seconds, its sum of completion times and how it was obtained.

    rounding_s is the largest amount any release or duration was rounded up to fit CP-SAT's integer
    grid: 0 means `objective` is the exact optimum (status OPTIMAL); otherwise the schedule is still
    feasible for the original data, so `objective` is an upper bound on the optimum whose gap shrinks
    with the resolution. best_bound is the solver's proven lower bound on the objective of the rounded
    (integer) model, in seconds.
    """

    starts: np.ndarray
    ends: np.ndarray
    objective: float
    status: str
    wall_time_s: float
    method: str
    rounding_s: float
    best_bound: float
    pools: np.ndarray | None = None
    """The pool of every job, on a typed instance (None: one pool)."""

    @property
    def proven_optimal(self) -> bool:
        return self.status == "OPTIMAL" and self.rounding_s == 0.0


def _validate(release: ArrayLike, gpus: ArrayLike, durations: ArrayLike, G: int, caller: str
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = np.asarray(release, dtype=float)
    g = np.asarray(gpus, dtype=float)
    d = np.asarray(durations, dtype=float)
    if not len(r) == len(g) == len(d):
        raise ConfigError(f"{caller}: release, gpus and durations differ in length ({len(r)}, {len(g)}, {len(d)})")
    if not (isinstance(G, (int, np.integer)) and G >= 1):
        raise ConfigError(f"{caller}: G must be a positive integer, got {G!r}")
    for name, values in (("release", r), ("durations", d)):
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ConfigError(f"{caller}: {name}[{row}] must be finite and >= 0, got {values[row]!r}")
    bad = (g != np.round(g)) | (g < 1) | (g > G)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ConfigError(f"{caller}: gpus[{row}] must be an integer in [1, G={G}], got {g[row]!r}")
    return r, g.astype(int), d


def _validate_typed(release: ArrayLike, gpus: ArrayLike, durations: ArrayLike, G: Sequence[int], caller: str
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """release, gpus, the jobs x pools duration matrix (inf: cannot run there) and the pool sizes, checked:
    every job fits, with a finite duration, at least one pool."""
    sizes = np.asarray(G)
    if sizes.ndim != 1 or not len(sizes) or not all(isinstance(x, (int, np.integer)) and x >= 1 for x in G):
        raise ConfigError(f"{caller}: G must be an integer >= 1 or a sequence of pool sizes >= 1, got {G!r}")
    d = np.asarray(durations, dtype=float)
    r = np.asarray(release, dtype=float)
    if d.ndim != 2 or d.shape != (len(r), len(sizes)):
        raise ConfigError(f"{caller}: durations must be a jobs x pools matrix of shape ({len(r)}, {len(sizes)}), "
                          f"got shape {d.shape}")
    bad = np.isnan(d) | (d < 0)
    if bad.any():
        row, pool = map(int, np.argwhere(bad)[0])
        raise ConfigError(f"{caller}: durations[{row}, {pool}] must be >= 0 or inf (cannot run there), got {d[row, pool]!r}")
    r, g, _ = _validate(r, gpus, np.zeros(len(r)), int(sizes.sum()), caller)
    runnable = np.isfinite(d) & (g[:, None] <= sizes[None, :])
    stranded = ~runnable.any(axis=1)
    if stranded.any():
        row = int(np.flatnonzero(stranded)[0])
        raise ConfigError(f"{caller}: job {row} ({g[row]} GPUs) can run in no pool: every pool that holds it has an "
                          "infinite duration")
    return r, g, np.where(runnable, d, np.inf), sizes.astype(int)


def _integer_scale(values: np.ndarray) -> int | None:
    """The smallest 10**k (k <= 6) making every value integral, or None."""
    for digits in range(MAX_SCALE_DIGITS + 1):
        scaled = values * 10 ** digits
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))):
            return 10 ** digits
    return None


def exact_optimum(release: ArrayLike, gpus: ArrayLike, durations: ArrayLike, G: int | Sequence[int],
                  time_limit_s: float = 10.0, resolution_s: float | None = None,
                  num_workers: int = 1, seed: int = 0) -> ExactSchedule:
    """Minimum sum of completion times by CP-SAT: start_i >= r_i, cumulative(capacity G, demands g_i).

    Typed: `durations` a jobs x pools matrix and G the pool sizes (module doc); each job gets one optional
    interval per pool that runs it, exactly one present, and one cumulative per pool.

    Times are scaled to integers: by the smallest power of ten that makes every release and duration
    integral (exact), or, if none <= 1e6 does or `resolution_s` is given, by 1/resolution_s with every
    value rounded UP (the schedule stays feasible; the rounding is reported). One worker and a fixed
    seed make the search deterministic.
    """
    if np.ndim(G) == 1:
        r, g, matrix, sizes = _validate_typed(release, gpus, durations, G, "exact_optimum")
    else:
        r, g, d = _validate(release, gpus, durations, G, "exact_optimum")
        matrix, sizes = d[:, None], np.array([int(G)])
    if time_limit_s <= 0:
        raise ConfigError(f"exact_optimum: time_limit_s must be > 0, got {time_limit_s!r}")
    began = time.perf_counter()
    finite = matrix[np.isfinite(matrix)]
    if resolution_s is None:
        scale = _integer_scale(np.concatenate([r, finite])) or 10 ** MAX_SCALE_DIGITS
    elif resolution_s > 0:
        scale = 1.0 / resolution_s
    else:
        raise ConfigError(f"exact_optimum: resolution_s must be > 0, got {resolution_s!r}")

    def up(values: np.ndarray) -> np.ndarray:
        return np.ceil(values * scale - 1e-9 * np.maximum(1.0, values * scale)).astype(np.int64)

    scaled_r = up(r)
    scaled_d = np.where(np.isfinite(matrix), up(np.where(np.isfinite(matrix), matrix, 0.0)), -1)
    rounding = float(max(np.max(scaled_r / scale - r, initial=0.0),
                         np.max(scaled_d[np.isfinite(matrix)] / scale - finite, initial=0.0)))
    rounding = rounding if rounding > 1e-9 * max(1.0, float(np.max(np.concatenate([r, finite]), initial=0.0))) else 0.0

    from ortools.sat.python import cp_model  # imported here: OR-Tools loads slowly and few runs need it

    model = cp_model.CpModel()
    horizon = int(scaled_r.max(initial=0) + np.where(scaled_d >= 0, scaled_d, 0).max(axis=1, initial=0).sum())
    pools = range(len(sizes))
    starts, ends = [], []
    by_pool: list[list[tuple[Any, int]]] = [[] for _ in pools]
    chosen: list[list[tuple[int, Any]]] = []
    for i in range(len(r)):
        runnable = [p for p in pools if scaled_d[i, p] >= 0]
        shortest = min(int(scaled_d[i, p]) for p in runnable)
        start = model.new_int_var(int(scaled_r[i]), horizon, f"start_{i}")
        end = model.new_int_var(int(scaled_r[i]) + shortest, horizon, f"end_{i}")
        if len(sizes) == 1:
            by_pool[0].append((model.new_interval_var(start, int(scaled_d[i, 0]), end, f"job_{i}"), int(g[i])))
            chosen.append([(0, None)])
        else:
            literals = []
            for p in runnable:
                present = model.new_bool_var(f"job_{i}_in_{p}")
                interval = model.new_optional_interval_var(start, int(scaled_d[i, p]), end, present, f"job_{i}_{p}")
                by_pool[p].append((interval, int(g[i])))
                literals.append((p, present))
            model.add_exactly_one(literal for _, literal in literals)
            chosen.append(literals)
        starts.append(start)
        ends.append(end)
    for p in pools:
        if by_pool[p]:
            model.add_cumulative([item for item, _ in by_pool[p]], [demand for _, demand in by_pool[p]], int(sizes[p]))
    model.minimize(sum(ends))

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = int(num_workers)
    solver.parameters.random_seed = int(seed)
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"exact_optimum: CP-SAT found no schedule ({solver.status_name(status)}) within "
                           f"{time_limit_s} s on {len(r)} jobs; raise time_limit_s or shrink the instance")
    start_s = np.array([solver.value(s) for s in starts], dtype=float) / scale
    in_pool = np.array([next(p for p, literal in options if literal is None or solver.value(literal))
                        for options in chosen], dtype=int)
    end_s = start_s + matrix[np.arange(len(r)), in_pool]
    return ExactSchedule(starts=start_s, ends=end_s, objective=float(end_s.sum()),
                         status=solver.status_name(status), wall_time_s=time.perf_counter() - began,
                         method="cpsat", rounding_s=rounding,
                         best_bound=float(solver.best_objective_bound) / scale,
                         pools=in_pool if np.ndim(G) == 1 else None)


def _earliest_start(placed: list[tuple[float, float, int]], release: float, duration: float, demand: int,
                    G: int) -> float:
    """Earliest t >= release where `demand` GPUs are free throughout [t, t + duration)."""
    if duration == 0:
        return release
    candidates = sorted({release} | {end for _, end, _ in placed if end > release})
    for t in candidates:
        checkpoints = [t] + [s for s, _, _ in placed if t < s < t + duration]
        if all(sum(g for s, e, g in placed if s <= x < e) + demand <= G for x in checkpoints):
            return t
    raise AssertionError("unreachable: after the last end every GPU is free")


def serial_list_schedule(order: Sequence[int], release: np.ndarray, gpus: np.ndarray, durations: np.ndarray,
                         G: int) -> np.ndarray:
    """Serial schedule generation: in `order`, start each job at its earliest feasible time given the jobs
    already placed (it may start before them if capacity allows). Returns starts by job index."""
    starts = np.empty(len(release))
    placed: list[tuple[float, float, int]] = []
    for i in order:
        starts[i] = _earliest_start(placed, release[i], durations[i], int(gpus[i]), G)
        placed.append((starts[i], starts[i] + durations[i], int(gpus[i])))
    return starts


def brute_force_optimum(release: ArrayLike, gpus: ArrayLike, durations: ArrayLike, G: int,
                        max_jobs: int = 7) -> ExactSchedule:
    """Minimum sum of completion times by enumerating the serial list schedule of every job order.

    Why an optimum is among them: take an optimal schedule S* and list the jobs by S*-start. Placing them
    serially, job k fits at S*_k: every job placed before it starts at or before S*_j <= S*_k and, by
    induction, occupies within [S*_k, inf) only times it occupied in S*, so capacity there is no more
    used than in S*. Its earliest feasible start is therefore <= S*_k, so every C_k is <= C*_k, and the
    schedule is optimal for any objective non-decreasing in the completion times (sum C_i among them).
    This holds for rigid multi-GPU jobs; the plain greedy list schedule that never starts a job before an
    earlier-listed one would not have this property. Cost: n! orders; meant for n <= 7.
    """
    r, g, d = _validate(release, gpus, durations, G, "brute_force_optimum")
    if len(r) > max_jobs:
        raise ConfigError(f"brute_force_optimum: {len(r)} jobs exceed max_jobs={max_jobs} (n! orders)")
    began = time.perf_counter()
    best_starts, best_value = np.zeros(0), math.inf
    for order in itertools.permutations(range(len(r))):
        starts = serial_list_schedule(order, r, g, d, G)
        value = float(np.sum(starts + d))
        if value < best_value - 1e-12 * max(1.0, abs(value)):
            best_starts, best_value = starts, value
    if not len(r):
        best_value = 0.0
    return ExactSchedule(starts=best_starts, ends=best_starts + d, objective=best_value, status="OPTIMAL",
                         wall_time_s=time.perf_counter() - began, method="brute_force", rounding_s=0.0,
                         best_bound=best_value)


def durations_from_table(table: pd.DataFrame, alpha_column: str = "alpha") -> np.ndarray:
    """d_i = n_i * alpha_i from a job table (use the true alpha_min column for model-based jobs)."""
    for column in ("iterations", alpha_column):
        if column not in table.columns or table[column].isna().any():
            raise ConfigError(f"durations_from_table: every job needs {column!r}")
    return table["iterations"].to_numpy(dtype=float) * table[alpha_column].to_numpy(dtype=float)
