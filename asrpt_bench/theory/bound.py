"""Theorem 1's competitive-ratio bound and the symbols it needs, computed from a run's per-job table.

The bound's formula is the paper's (as quoted by the review, paper-notes 7.2). The paper's exact
definitions of rho_bar and eps_bar were not available: the ones here are this project's
reconstructions (paper-notes 7.4), selectable by name, and every returned dict says so.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import pandas as pd

from ..core import ConfigError

RECONSTRUCTION_NOTE = ("rho_bar and eps_bar are reconstructions (paper-notes 7.4), not the paper's "
                       "verified definitions")
RUN_TABLE_ALPHA_MIN = "run table (scheduler's estimate)"


def _check_finite(name: str, value: float, minimum: float, strict: bool = False) -> float:
    if not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
        raise ConfigError(f"theorem1_bound: {name} must be a finite number, got {value!r}")
    if value < minimum or (strict and value == minimum):
        relation = ">" if strict else ">="
        raise ConfigError(f"theorem1_bound: {name} must be {relation} {minimum}, got {value!r}")
    return float(value)


def theorem1_bound(rho: float, rho_bar: float, eps_bar: float, tau: float, G: int, g_max: int) -> float:
    """Theorem 1: sum C_i(A-SRPT) / OPT_A <= this value.

    (2 + tau + rho*G/(G-g_max))*rho + 2*rho*g_max*rho_bar*(1 + tau + (1+rho)*G/(G-g_max))*eps_bar.
    Requires rho >= 1, rho_bar >= 1, eps_bar >= 0, tau >= 0 and 1 <= g_max < G (the bound's G/(G-g_max)
    is undefined otherwise).
    """
    rho = _check_finite("rho", rho, 1.0)
    rho_bar = _check_finite("rho_bar", rho_bar, 1.0)
    eps_bar = _check_finite("eps_bar", eps_bar, 0.0)
    tau = _check_finite("tau", tau, 0.0)
    G = _check_finite("G", G, 0.0, strict=True)
    g_max = _check_finite("g_max", g_max, 1.0)
    if g_max >= G:
        raise ConfigError(f"theorem1_bound: needs g_max < G (paper-notes 1.2), got g_max={g_max:g}, G={G:g}")
    spread = G / (G - g_max)
    perfect = (2.0 + tau + rho * spread) * rho
    return perfect + 2.0 * rho * g_max * rho_bar * (1.0 + tau + (1.0 + rho) * spread) * eps_bar


def per_job_prediction_errors(frame: pd.DataFrame) -> pd.DataFrame:
    """Per job: eps_i = |predicted - true| iterations and eps_i / n_i (NaN where n_i = 0).

    Works on any table with `iterations` and `predicted_iterations` (e.g. jobs.parquet), so other
    normalisations of eps_bar can be computed from it.
    """
    _require_columns(frame, ("iterations", "predicted_iterations"), "per_job_prediction_errors")
    true = frame["iterations"].to_numpy(dtype=float)
    predicted = frame["predicted_iterations"].to_numpy(dtype=float)
    absolute = np.abs(predicted - true)
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(true > 0, absolute / np.where(true > 0, true, 1.0), np.nan)
    result = pd.DataFrame({"abs_error": absolute, "rel_error": relative}, index=frame.index)
    if "job_id" in frame.columns:
        result.insert(0, "job_id", frame["job_id"].to_numpy())
    return result


def _rho_bar_alpha_min_spread(frame: pd.DataFrame) -> float:
    alpha_min = frame["alpha_min"].to_numpy(dtype=float)
    return float(alpha_min.max() / alpha_min.min())


def _rho_bar_iterations_spread(frame: pd.DataFrame) -> float:
    n = frame["iterations"].to_numpy(dtype=float)
    if n.min() <= 0:
        raise ConfigError("theory_symbols: rho_bar_definition='iterations_spread' needs every job's "
                          "iterations > 0")
    return float(n.max() / n.min())


def _eps_bar_per_smallest_job(frame: pd.DataFrame) -> float:
    n = frame["iterations"].to_numpy(dtype=float)
    if n.min() <= 0:
        raise ConfigError("theory_symbols: eps_bar_definition='per_smallest_job' divides by the smallest "
                          "true iterations, which is 0 here; use 'mean_relative' or drop empty jobs")
    return float(per_job_prediction_errors(frame)["abs_error"].sum() / (len(frame) * n.min()))


def _eps_bar_mean_relative(frame: pd.DataFrame) -> float:
    relative = per_job_prediction_errors(frame)["rel_error"]
    if relative.isna().any():
        raise ConfigError("theory_symbols: eps_bar_definition='mean_relative' needs every job's "
                          "iterations > 0")
    return float(relative.mean())


RHO_BAR_DEFINITIONS: dict[str, Callable[[pd.DataFrame], float]] = {
    "alpha_min_spread": _rho_bar_alpha_min_spread,      # max_i alpha_min_i / min_i alpha_min_i (7.4)
    "iterations_spread": _rho_bar_iterations_spread,    # max_i n_i / min_i n_i (alternative in 7.4)
}
EPS_BAR_DEFINITIONS: dict[str, Callable[[pd.DataFrame], float]] = {
    "per_smallest_job": _eps_bar_per_smallest_job,      # sum_i eps_i / (I * n_min) (7.4)
    "mean_relative": _eps_bar_mean_relative,            # mean_i eps_i / n_i
}


def _require_columns(frame: pd.DataFrame, columns: tuple[str, ...], caller: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ConfigError(f"{caller}: job table lacks column(s) {missing}; it has {list(frame.columns)}")


def theory_symbols(jobs_frame: pd.DataFrame, G: int, tau: float,
                   rho_bar_definition: str = "alpha_min_spread",
                   eps_bar_definition: str = "per_smallest_job",
                   alpha_min_source: str = RUN_TABLE_ALPHA_MIN) -> dict[str, object]:
    """rho, rho_bar, eps_bar, g_max, G, tau and the Theorem 1 bound of one run.

    `jobs_frame` needs gpus, iterations, predicted_iterations, alpha_min, alpha_max per job.
    rho = max_i alpha_max_i / alpha_min_i (paper-notes 7.2); rho_bar and eps_bar follow the named
    reconstruction (7.4). The paper's alpha_min is the true one. A run table's alpha_min column is the
    scheduler's estimate (Heavy-Edge on the empty cluster), which can exceed it, so rho from that column
    can be below the true rho; pass a valid alpha_min (theory.lower_bounds.alpha_min_for_jobs) for a
    faithful bound. `alpha_min_source` only labels where the column came from, in the returned dict.
    """
    for key, table, value in (("rho_bar_definition", RHO_BAR_DEFINITIONS, rho_bar_definition),
                              ("eps_bar_definition", EPS_BAR_DEFINITIONS, eps_bar_definition)):
        if value not in table:
            raise ConfigError(f"theory_symbols: unknown {key} {value!r}; known: {sorted(table)}")
    _require_columns(jobs_frame, ("gpus", "iterations", "predicted_iterations", "alpha_min", "alpha_max"),
                     "theory_symbols")
    if len(jobs_frame) == 0:
        raise ConfigError("theory_symbols: the job table is empty")
    alpha_min = jobs_frame["alpha_min"].to_numpy(dtype=float)
    alpha_max = jobs_frame["alpha_max"].to_numpy(dtype=float)
    if not (np.all(np.isfinite(alpha_min)) and alpha_min.min() > 0):
        raise ConfigError("theory_symbols: every alpha_min must be finite and > 0")
    if np.any(alpha_max < alpha_min * (1 - 1e-12)):
        row = int(np.flatnonzero(alpha_max < alpha_min * (1 - 1e-12))[0])
        raise ConfigError(f"theory_symbols: row {row + 1}: alpha_max {alpha_max[row]!r} < alpha_min "
                          f"{alpha_min[row]!r}")
    rho = float(max(1.0, np.max(alpha_max / alpha_min)))
    rho_bar = RHO_BAR_DEFINITIONS[rho_bar_definition](jobs_frame)
    eps_bar = EPS_BAR_DEFINITIONS[eps_bar_definition](jobs_frame)
    g_max = int(jobs_frame["gpus"].max())
    return {
        "rho": rho,
        "rho_bar": rho_bar,
        "eps_bar": eps_bar,
        "tau": float(tau),
        "G": int(G),
        "g_max": g_max,
        "num_jobs": int(len(jobs_frame)),
        "theorem1_bound": theorem1_bound(rho, rho_bar, eps_bar, tau, G, g_max),
        "rho_bar_definition": rho_bar_definition,
        "eps_bar_definition": eps_bar_definition,
        "alpha_min_source": alpha_min_source,
        "note": RECONSTRUCTION_NOTE,
    }
