"""Synthetic recurrence keys (job groups and users) for traces that have none, such as Philly.

The predictor of the paper learns iterations from (group, user) of recurring jobs. Philly only has
the virtual cluster (VC), so we generate recurring job *templates* per VC from a seeded generator:
jobs of one VC are bucketed by GPU count and log-duration (a template's runs look alike), each
bucket is split into templates with random (Dirichlet) popularity, and templates are owned by
users of that VC. Every generated value starts with `syn-` and the table carries
`attrs["recurrence_keys"] = "synthetic"`: results resting on these keys are labelled as such.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core import ConfigError
from .seeding import component_rng

SYNTHETIC_PREFIX = "syn-"
RECURRENCE_PARAMS = ("jobs_per_template", "templates_per_user", "duration_bin_base", "concentration")


def synthesize_recurrence(table: pd.DataFrame, seed: int, *, by: str = "vc",
                          jobs_per_template: float = 20.0, templates_per_user: float = 4.0,
                          duration_bin_base: float = 2.0, concentration: float = 1.0) -> pd.DataFrame:
    """Return a copy of `table` with synthetic `group` and `user` columns.

    by: column whose values partition jobs into independent pools (the VC for Philly).
    jobs_per_template: mean jobs per template (a bucket of b jobs gets ceil(b / this) templates).
    templates_per_user: mean templates per user within a pool.
    duration_bin_base: width of a log-duration bucket (2.0: durations within a factor of 2).
    concentration: Dirichlet concentration of template popularity (small -> a few templates dominate).
    """
    if by not in table.columns:
        raise ConfigError(f"synthesize_recurrence: column {by!r} not in the table {list(table.columns)}")
    if "duration" not in table.columns or table["duration"].isna().any():
        raise ConfigError("synthesize_recurrence needs a duration for every job")
    for key, value, low in (("jobs_per_template", jobs_per_template, 1.0),
                            ("templates_per_user", templates_per_user, 1.0),
                            ("duration_bin_base", duration_bin_base, 1.0 + 1e-9),
                            ("concentration", concentration, 1e-9)):
        if not value >= low:
            raise ConfigError(f"recurrence.{key} must be >= {low:g}, got {value!r}")
    rng = component_rng(seed, "recurrence")
    durations = table["duration"].to_numpy(dtype=float)
    duration_bin = np.floor(np.log(np.maximum(durations, 1.0)) / math.log(duration_bin_base)).astype(int)
    pool = table[by].astype(str).to_numpy(dtype=object)
    gpus = table["gpus"].to_numpy(dtype=int)
    keys = pd.DataFrame({"pool": pool, "gpus": gpus, "bin": duration_bin})
    group = np.empty(len(table), dtype=object)
    user = np.empty(len(table), dtype=object)
    for pool_name, pool_rows in keys.groupby("pool", sort=True).indices.items():
        pool_keys = keys.iloc[pool_rows]
        templates: list[np.ndarray] = []
        for (g, b), rows in sorted(pool_keys.groupby(["gpus", "bin"], sort=True).indices.items()):
            rows = pool_rows[rows]
            count = math.ceil(len(rows) / jobs_per_template)
            popularity = rng.dirichlet(np.full(count, concentration))
            choice = rng.choice(count, size=len(rows), p=popularity)
            for k in range(count):
                members = rows[choice == k]
                if len(members):
                    group[members] = f"{SYNTHETIC_PREFIX}g-{pool_name}-{g}g-b{b}-{k}"
                    templates.append(members)
        num_users = math.ceil(len(templates) / templates_per_user)
        owners = rng.integers(num_users, size=len(templates))
        for members, owner in zip(templates, owners):
            user[members] = f"{SYNTHETIC_PREFIX}u-{pool_name}-{owner}"
    result = table.copy()
    result["group"] = group
    result["user"] = user
    result.attrs["recurrence_keys"] = "synthetic"
    return result
