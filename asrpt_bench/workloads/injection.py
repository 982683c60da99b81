"""Jobs injected into a workload for the injection study: long gang jobs of never-seen groups.

Each injected job has its own group `syn-inject-<k>` (absent from every history, so the forest
treats it as unseen), `gpus` GPUs and a trace-like `duration`; releases are uniform over
[0, span] from the generator (seed, "inject"). The first k of n injected jobs are the same for
every n >= k, so a sweep over the count adds jobs to a fixed set.
"""

from __future__ import annotations

import pandas as pd

from ..core import Cluster, ConfigError
from ..timing import TimingModel
from .assign import assign_models
from .recurrence import SYNTHETIC_PREFIX
from .schema import validate_job_table
from .seeding import component_rng

INJECT_PREFIX = f"{SYNTHETIC_PREFIX}inject-"


def injected_jobs(count: int, *, gpus: int, duration: float, span: float, seed: int, cluster: Cluster,
                  timing: TimingModel, max_gpus: int | None = None) -> pd.DataFrame:
    """`count` injected jobs as an assigned job table (module doc)."""
    largest = max(pool.total_gpus for pool in cluster.pool_list)
    if gpus > largest:
        where = "the cluster's" if len(cluster.pool_list) == 1 else "the largest pool's"
        raise ConfigError(f"workload.inject_gpus={gpus} is more than {where} {largest} GPUs; "
                          "injected jobs must fit the cluster (lower workload.inject_gpus)")
    releases = component_rng(seed, "inject").uniform(0.0, span, size=count)
    table = pd.DataFrame({
        "job_id": [f"{INJECT_PREFIX}{k:03d}" for k in range(count)],
        "release": releases,
        "gpus": [gpus] * count,
        "duration": [float(duration)] * count,
        "group": [f"{INJECT_PREFIX}{k:03d}" for k in range(count)],
    })
    source = "workload.inject_jobs"
    return assign_models(validate_job_table(table, source), cluster, seed, timing=timing, max_gpus=max_gpus)
