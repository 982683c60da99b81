"""Selecting jobs from a job table: the chronological history/later split, contiguous time slices and
single-GPU-share resampling.

Both keep the table's schema and attrs. Time windows and job counts select a slice that is
contiguous in time (paper-notes 10 item 25); resampling fixes the share of single-GPU jobs for the
Fig 7 sweep (item 26).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..rules import integer, job_count, shown
from .seeding import component_rng


def history_size(num_jobs: int, train_fraction: float) -> int:
    """How many of `num_jobs` jobs (in release order) form the history: floor(train_fraction * num_jobs)
    of the decimal value as written (0.7 * 90 is 62.99999... in binary floating point, 63 here)."""
    if not 0.0 <= train_fraction < 1.0:
        raise ConfigError(f"workload.train_fraction must be in [0, 1), got {train_fraction!r}")
    return math.floor(Fraction(str(float(train_fraction))) * num_jobs)


def chronological_split(table: pd.DataFrame, train_fraction: float = 0.8) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(history, later): the first floor(train_fraction * N) jobs by release (ties keep row order) and the
    rest, each with a fresh index and the table's attrs (paper-notes 6: the predictor learns from the first
    80%). train_fraction = 0 gives no history (every job is simulated: hand-made instances with an oracle
    or noisy predictor)."""
    order = np.argsort(table["release"].to_numpy(dtype=float), kind="stable")
    cut = history_size(len(table), train_fraction)
    parts = []
    for rows in (order[:cut], order[cut:]):
        part = _take(table, rows).reset_index(drop=True)
        part.attrs.update(table.attrs)
        parts.append(part)
    return parts[0], parts[1]


def _take(table: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """table.iloc[rows]: a slice, which shares the table's columns until one is written (copy-on-write), when
    `rows` are consecutive ascending rows (a table already in release order); a copy otherwise. A replay of
    millions of jobs thus holds its table once, not once per step."""
    if len(rows) and rows[-1] - rows[0] == len(rows) - 1 and bool(np.all(np.diff(rows) == 1)):
        return table.iloc[int(rows[0]):int(rows[-1]) + 1]
    return table.iloc[rows]


def sort_by_release(table: pd.DataFrame) -> pd.DataFrame:
    """Rows in release order; ties keep their current order (stable), index reset."""
    order = np.argsort(table["release"].to_numpy(dtype=float), kind="stable")
    return _keep_attrs(table, _take(table, order).reset_index(drop=True))


def slice_jobs(table: pd.DataFrame, *, num_jobs: int | None = None, offset: int = 0,
               start: float | None = None, end: float | None = None, shift: bool = True) -> pd.DataFrame:
    """A contiguous-in-time slice: jobs released in [start, end) seconds, then `num_jobs` of them
    starting at position `offset` (release order). `shift` moves the first kept release to 0.

    Asking for more jobs than there are is refused (never silently truncated): a sweep over
    num_jobs must not label a smaller run with a larger count."""
    job_count(optional=True).require("workload.num_jobs", num_jobs)
    integer(0).require("workload.offset", offset)
    if start is not None and end is not None and end <= start:
        raise ConfigError(f"workload.end ({end}) must be greater than workload.start ({start})")
    ordered = sort_by_release(table)
    release = ordered["release"].to_numpy(dtype=float)
    keep = np.ones(len(ordered), dtype=bool)
    if start is not None:
        keep &= release >= start
    if end is not None:
        keep &= release < end
    window = ordered if keep.all() else ordered[keep]
    if len(window) == 0:
        if start is None and end is None:
            raise ConfigError("no jobs to simulate: the job table (after the history split of "
                              "workload.train_fraction) is empty")
        raise ConfigError(f"the time window [{shown(start)}, {shown(end)}) s contains no jobs")
    if offset >= len(window):
        raise ConfigError(f"workload.offset={offset} is past the {len(window)} jobs in the selected window")
    available = len(window) - offset
    if num_jobs is not None and num_jobs > available:
        raise ConfigError(f"workload.num_jobs={num_jobs} asks for more jobs than the {available:,} available "
                          f"(after workload.offset={offset}); lower it, or set workload.num_jobs=null to "
                          f"simulate all {available:,}")
    stop = None if num_jobs is None else offset + num_jobs
    chosen = window.iloc[offset:stop].reset_index(drop=True)
    if shift:
        chosen["release"] = chosen["release"] - chosen["release"].iloc[0]
    return _keep_attrs(table, chosen)


def resample_single_gpu_share(table: pd.DataFrame, share: float, *, num_jobs: int | None = None,
                              seed: int = 0, replace: bool = False,
                              releases: str = "original") -> pd.DataFrame:
    """Draw `num_jobs` jobs (default: as many as the table has) of which round(share * num_jobs)
    come from the single-GPU pool and the rest from the multi-GPU pool, uniformly at random.

    releases="original": every drawn job keeps its own release (sorted, first shifted to 0);
    releases="slots": the drawn jobs, in random order, take the release times of the table's first
    `num_jobs` jobs, so the arrival process is the same at every share and only the mix changes.
    With replace=False a pool smaller than its quota is an error; with replace=True duplicates get
    job ids suffixed `#k`.
    """
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"workload.single_gpu_share must be in [0, 1], got {shown(share)}")
    if releases not in _RELEASE_MODES:
        raise ConfigError(f"releases must be one of {sorted(_RELEASE_MODES)}, got {releases!r}")
    job_count(optional=True).require("workload.num_jobs", num_jobs)
    total = len(table) if num_jobs is None else num_jobs
    if total < 1:
        raise ConfigError(f"workload.num_jobs must be a positive integer, got {shown(num_jobs)}")
    ordered = sort_by_release(table)
    single = np.flatnonzero(ordered["gpus"].to_numpy() == 1)
    multi = np.flatnonzero(ordered["gpus"].to_numpy() > 1)
    want_single = int(round(share * total))
    want = {"single-GPU": (single, want_single), "multi-GPU": (multi, total - want_single)}
    rng = component_rng(seed, "single_gpu_share")
    drawn = []
    for pool_name, (pool, count) in want.items():
        if count == 0:
            continue
        if len(pool) == 0 or (not replace and count > len(pool)):
            raise ConfigError(f"workload.single_gpu_share={shown(share)} with {total} jobs needs {count} {pool_name} "
                              f"jobs but the table has {len(pool)}; lower workload.num_jobs or set "
                              "workload.resample_replace=true")
        drawn.append(rng.choice(pool, size=count, replace=replace))
    rows = np.sort(np.concatenate(drawn), kind="stable")
    sample = ordered.iloc[rows].reset_index(drop=True)
    if replace:
        repeat = sample.groupby("job_id", sort=False).cumcount().to_numpy()
        ids = sample["job_id"].astype(str).to_numpy(dtype=object)
        sample["job_id"] = [i if k == 0 else f"{i}#{k}" for i, k in zip(ids, repeat)]
    sample = _RELEASE_MODES[releases](sample, ordered, rng)
    sample["release"] = sample["release"] - sample["release"].iloc[0]
    return _keep_attrs(table, sample)


def _own_releases(sample: pd.DataFrame, ordered: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    return sample


def _slot_releases(sample: pd.DataFrame, ordered: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    if len(sample) > len(ordered):
        raise ConfigError(f"releases='slots' needs num_jobs <= {len(ordered)} (the table's jobs)")
    shuffled = sample.iloc[rng.permutation(len(sample))].reset_index(drop=True)
    shuffled["release"] = ordered["release"].to_numpy(dtype=float)[: len(sample)]
    return shuffled


_RELEASE_MODES = {"original": _own_releases, "slots": _slot_releases}


def _keep_attrs(source: pd.DataFrame, result: pd.DataFrame) -> pd.DataFrame:
    result.attrs.update(source.attrs)
    return result
