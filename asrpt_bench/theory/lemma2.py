"""Check the steps of the paper's Lemma 2 argument, and Theorem 1, on any finished schedule.

Input is a plain per-job table, one row per job: job_id, release, start, end, gpus, iterations, alpha,
alpha_max, predicted_iterations and eligible (the virtual completion time C~_i in the single-machine SRPT
instance). Optional: virtual_rank (the virtual order; default: by eligible, then start, then row) and
alpha_min (the scheduler's alpha~_min, for the tight repaired inequality when tau > 0).

Per job i, with jobs j < i ordered before i and W_<i = sum_{j<i} g_j n_j alpha_max_j (paper-notes 7.2, 7.5):
- Eq. 12 (the paper's intermediate step): max_{j<i} C_j <= C~_i + W_<i / (G - g_max).
- Busy-GPU premise: at least G - g_max GPUs busy at every moment, measured as the total time it fails
  in [C~_i, S_i) (the wait of i) and in [C~_i, max_{j<i} C_j) (the window Eq. 12 is about).
- Repaired start-time bound: S_i <= (1 + tau) C~_i + W_<i / (G - g_max), and its tight form
  S_i <= C~_i + tau sum_{j<=i} p~_j + sum_{j<i} g_j n_j alpha_j / (G - g_max + 1).
- Reconstructed final Lemma 2 bound: C_i <= (1 + tau) C~_i + W_<i / (G - g_max) + n_i alpha_max_i.
Violations are reported as max(0, actual - claimed), absolute (seconds) and relative (/ claimed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import ConfigError
from .bound import theorem1_bound, theory_symbols

REQUIRED_COLUMNS = ("job_id", "release", "start", "end", "gpus", "iterations", "alpha", "alpha_max",
                    "predicted_iterations", "eligible")
INEQUALITIES = ("eq12", "repaired_start", "repaired_start_tight", "lemma2_final")


@dataclass(frozen=True)
class Theorem1Check:
    """sum C_i / reference against the Theorem 1 bound.

    With reference = OPT the check is conclusive. With a lower bound on OPT the ratio over-estimates
    the true one, so 'holds' is conclusive and an excess is only 'inconclusive'.
    """

    sum_completion: float
    reference: float
    reference_is_optimal: bool
    bound: float

    @property
    def ratio(self) -> float:
        return self.sum_completion / self.reference

    @property
    def status(self) -> str:
        if self.ratio <= self.bound * (1 + 1e-9):
            return "holds"
        return "violated" if self.reference_is_optimal else "inconclusive"

    @property
    def violated(self) -> bool:
        return self.status == "violated"


@dataclass(frozen=True)
class Lemma2Report:
    """Per-job table of every checked inequality (virtual order) and a one-line-per-quantity summary."""

    per_job: pd.DataFrame
    summary: dict[str, float | int | str]
    theorem1: Theorem1Check | None


def _prepare(schedule: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in REQUIRED_COLUMNS if c not in schedule.columns]
    if missing:
        raise ConfigError(f"lemma2 checker: schedule lacks column(s) {missing}; it has {list(schedule.columns)}")
    if len(schedule) == 0:
        raise ConfigError("lemma2 checker: the schedule is empty")
    table = schedule.reset_index(drop=True).copy()
    for column in REQUIRED_COLUMNS[1:] + tuple(c for c in ("virtual_rank", "alpha_min") if c in table):
        values = pd.to_numeric(table[column], errors="coerce")
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise ConfigError(f"lemma2 checker: row {row + 1}, column {column!r}: missing or not a number "
                              f"({table[column].iloc[row]!r})")
        table[column] = values.astype(float)
    table["row"] = np.arange(len(table))
    keys = ["virtual_rank", "row"] if "virtual_rank" in table else ["eligible", "start", "row"]
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def _busy_profile(start: np.ndarray, end: np.ndarray, gpus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints t_0 < ... < t_m and busy GPUs on each [t_k, t_{k+1}); zero outside."""
    times = np.unique(np.concatenate([start, end]))
    delta = np.zeros(len(times))
    np.add.at(delta, np.searchsorted(times, start), gpus)
    np.add.at(delta, np.searchsorted(times, end), -gpus)
    return times, np.cumsum(delta)[:-1]


def _time_below(times: np.ndarray, busy: np.ndarray, threshold: float, lo: float, hi: float) -> float:
    """Total time in [lo, hi) with fewer than `threshold` GPUs busy."""
    if not hi > lo:
        return 0.0
    edges = np.concatenate([[min(lo, times[0])], times, [max(hi, times[-1])]])
    level = np.concatenate([[0.0], busy, [0.0]])
    overlap = np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0.0, None)
    return float(overlap[level < threshold].sum())


def _sum_before(values: np.ndarray) -> np.ndarray:
    """sum_{j<i} values_j for every position i."""
    return np.concatenate([[0.0], np.cumsum(values)[:-1]])


def _violation(frame: pd.DataFrame, name: str, actual: np.ndarray, claim: np.ndarray) -> None:
    frame[f"{name}_claim"] = claim
    frame[f"{name}_violation"] = np.where(np.isnan(claim), np.nan, np.maximum(0.0, actual - claim))
    with np.errstate(divide="ignore", invalid="ignore"):
        frame[f"{name}_violation_rel"] = np.where(claim > 0, frame[f"{name}_violation"] / claim,
                                                  np.where(frame[f"{name}_violation"] > 0, np.inf, 0.0))
    frame.loc[np.isnan(claim), f"{name}_violation_rel"] = np.nan


def check_lemma2(schedule: pd.DataFrame, G: int, tau: float = 0.0, g_max: int | None = None) -> pd.DataFrame:
    """Evaluate every Lemma 2 step for every job (rows in virtual order); see the module docstring."""
    table = _prepare(schedule)
    g_max = int(table["gpus"].max()) if g_max is None else int(g_max)
    if not 1 <= g_max < G:
        raise ConfigError(f"lemma2 checker: needs 1 <= g_max < G, got g_max={g_max}, G={G}")
    if tau < 0:
        raise ConfigError(f"lemma2 checker: tau must be >= 0, got {tau}")
    g = table["gpus"].to_numpy()
    n = table["iterations"].to_numpy()
    start, end, eligible = (table[c].to_numpy() for c in ("start", "end", "eligible"))
    work_max = g * n * table["alpha_max"].to_numpy()
    work_actual = g * n * table["alpha"].to_numpy()
    predecessors_end = np.concatenate([[0.0], np.maximum.accumulate(end)[:-1]])  # empty set: 0

    out = table[["job_id", "release", "eligible", "start", "end", "gpus"]].copy()
    out.insert(1, "virtual_position", np.arange(len(table)))
    out["gpus"] = out["gpus"].astype(int)
    out["predecessors_makespan"] = predecessors_end
    spread = _sum_before(work_max) / (G - g_max)
    _violation(out, "eq12", predecessors_end, eligible + spread)
    _violation(out, "repaired_start", start, (1 + tau) * eligible + spread)
    if "alpha_min" in table or tau == 0:
        virtual_work = (g / G) * table["predicted_iterations"].to_numpy() * (
            table["alpha_min"].to_numpy() if "alpha_min" in table else 0.0)
        tight = eligible + tau * np.cumsum(virtual_work) + _sum_before(work_actual) / (G - g_max + 1)
    else:
        tight = np.full(len(table), np.nan)
    _violation(out, "repaired_start_tight", start, tight)
    _violation(out, "lemma2_final", end, (1 + tau) * eligible + spread + n * table["alpha_max"].to_numpy())

    times, busy = _busy_profile(start, end, g.astype(float))
    threshold = G - g_max
    out["premise_fail_wait_s"] = [_time_below(times, busy, threshold, lo, hi) for lo, hi in zip(eligible, start)]
    out["premise_fail_predecessors_s"] = [
        _time_below(times, busy, threshold, lo, hi) for lo, hi in zip(eligible, predecessors_end)]
    return out


def check_theorem1(sum_completion: float, reference: float, bound: float,
                   reference_is_optimal: bool) -> Theorem1Check:
    """Compare sum C_i / reference with the bound; reference is OPT (exact) or a lower bound on it."""
    if not reference > 0:
        raise ConfigError(f"check_theorem1: the reference (OPT or a lower bound) must be > 0, got {reference!r}")
    return Theorem1Check(float(sum_completion), float(reference), bool(reference_is_optimal), float(bound))


def lemma2_report(schedule: pd.DataFrame, G: int, tau: float = 0.0, g_max: int | None = None,
                  reference: float | None = None, reference_is_optimal: bool = False,
                  bound: float | None = None) -> Lemma2Report:
    """check_lemma2 plus a summary and, given OPT or a lower bound as `reference`, the Theorem 1 check.

    Without `bound`, it is Theorem 1 with rho, rho_bar and eps_bar from theory_symbols on the schedule's
    alpha_min column (required then) and the given g_max.
    """
    per_job = check_lemma2(schedule, G, tau, g_max)
    g_max = int(per_job["gpus"].max()) if g_max is None else int(g_max)
    summary: dict[str, float | int | str] = {"num_jobs": len(per_job), "G": int(G), "g_max": g_max,
                                             "tau": float(tau)}
    for name in INEQUALITIES:
        violation = per_job[f"{name}_violation"]
        summary[f"{name}_violated_jobs"] = int((violation > 0).sum())
        summary[f"{name}_max_violation"] = float(violation.max(skipna=True)) if violation.notna().any() else np.nan
        summary[f"{name}_max_violation_rel"] = (float(per_job[f"{name}_violation_rel"].max(skipna=True))
                                                if violation.notna().any() else np.nan)
    for name in ("premise_fail_wait_s", "premise_fail_predecessors_s"):
        summary[f"{name}_max"] = float(per_job[name].max())
    theorem1 = None
    if reference is not None:
        if bound is None:
            if "alpha_min" not in schedule.columns:
                raise ConfigError("lemma2_report: pass `bound` or give the schedule an alpha_min column")
            symbols = theory_symbols(schedule, G, tau)
            bound = theorem1_bound(symbols["rho"], symbols["rho_bar"], symbols["eps_bar"], tau, G, g_max)
        theorem1 = check_theorem1(float(schedule["end"].sum()), reference, bound, reference_is_optimal)
        summary.update(theorem1_ratio=theorem1.ratio, theorem1_bound=theorem1.bound,
                       theorem1_status=theorem1.status)
    return Lemma2Report(per_job=per_job, summary=summary, theorem1=theorem1)
