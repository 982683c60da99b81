"""Per-user metrics of a schedule (`users.csv` of every compare and simulate run) and the fairness figures of
the summary: who waited, and who a policy would have served better or worse.

Per user: jobs, mean wait (`wait_s`: every second a job held no GPUs, suspensions included, as the
run's `mean_wait`), mean slowdown (JCT / (n_i x alpha~min_i), over the jobs with a
positive ideal duration, as the run's `mean_slowdown`), and GPU-hours held (GPUs x the time the job held
them: its segments' for a preemptive run). Jobs without a user are counted under `(none)`. Fairness over
the users with a mean slowdown: Jain's index (sum x)^2 / (n sum x^2) of their mean slowdowns (1: every user
slowed alike; 1/n: one user takes all the slowdown), and the worst user's mean slowdown over the median
user's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

NO_USER = "(none)"
USER_COLUMNS = ("user", "jobs", "mean_wait_s", "mean_slowdown", "gpu_hours")


def user_table(jobs: pd.DataFrame, segments: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per user of a schedule's per-job table (USER_COLUMNS, users sorted by name)."""
    user = _user_keys(jobs["user"]) if "user" in jobs else NO_USER
    ideal = (jobs["iterations"] * jobs["alpha_min"]).to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = np.where(ideal > 0, jobs["jct"].to_numpy(dtype=float) / ideal, np.nan)
    frame = pd.DataFrame({"user": user, "wait": jobs["wait_s"].to_numpy(dtype=float),
                          "slowdown": slowdown, "gpu_seconds": _gpu_seconds(jobs, segments)})
    grouped = frame.groupby("user", sort=True)
    table = pd.DataFrame({"jobs": grouped.size(), "mean_wait_s": grouped["wait"].mean(),
                          "mean_slowdown": grouped["slowdown"].mean(),
                          "gpu_hours": grouped["gpu_seconds"].sum() / 3600.0}).reset_index()
    return table[list(USER_COLUMNS)]


def _user_keys(users: pd.Series) -> pd.Series:
    """Each job's user (NO_USER where it has none) as objects, one object per distinct user: the keys a
    conversion of the column to objects gives, without a string object per job (a replay of millions of jobs by
    a few thousand users)."""
    codes, uniques = pd.factorize(users)
    names = np.array([*uniques, NO_USER], dtype=object)
    return pd.Series(names[codes], index=users.index, dtype=object)  # code -1 (no user): the last name


def _gpu_seconds(jobs: pd.DataFrame, segments: pd.DataFrame | None) -> np.ndarray:
    """GPU-seconds each job held: GPUs x (end - start), or the sum over its segments when preempted."""
    held = (jobs["gpus"] * (jobs["end"] - jobs["start"])).to_numpy(dtype=float)
    if segments is None or segments.empty:
        return held
    per_job = (segments["gpus"] * (segments["end"] - segments["start"])).groupby(segments["job_id"]).sum()
    return jobs["job_id"].map(per_job).fillna(pd.Series(held, index=jobs.index)).to_numpy(dtype=float)


def fairness(users: pd.DataFrame) -> dict[str, float | int]:
    """`users`, `jain_user_slowdown` and `worst_user_slowdown_ratio` of a user table (module doc)."""
    slowdowns = users["mean_slowdown"].to_numpy(dtype=float)
    slowdowns = slowdowns[~np.isnan(slowdowns)]
    if not len(slowdowns):
        return {"users": len(users), "jain_user_slowdown": float("nan"), "worst_user_slowdown_ratio": float("nan")}
    jain = float(slowdowns.sum() ** 2 / (len(slowdowns) * np.sum(slowdowns ** 2)))
    return {"users": len(users), "jain_user_slowdown": jain,
            "worst_user_slowdown_ratio": float(slowdowns.max() / np.median(slowdowns))}
