"""Scalar metrics of one simulated schedule (design.md 4: summary.json keys)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core import Cluster
from .records import JobRecord


def schedule_metrics(records: Sequence[JobRecord], cluster: Cluster, dropped: int = 0) -> dict[str, float | int]:
    """total_jct = sum(C_i - r_i), sum_completion = sum C_i, mean/p95 JCT, makespan (the last
    completion), utilization = busy GPU-seconds / (G * (makespan - first release)), mean queueing
    delay (start - release), num_jobs and the dropped count."""
    if not records:
        return {"num_jobs": 0, "dropped": dropped, "total_jct": 0.0, "sum_completion": 0.0, "mean_jct": 0.0,
                "p95_jct": 0.0, "makespan": 0.0, "utilization": 0.0, "mean_queueing_delay": 0.0}
    release = np.array([r.release for r in records])
    start = np.array([r.start for r in records])
    end = np.array([r.end for r in records])
    gpus = np.array([r.gpus for r in records], dtype=float)
    jct = end - release
    makespan = float(end.max())
    span = makespan - float(release.min())
    busy = float(np.sum(gpus * (end - start)))
    return {
        "num_jobs": len(records),
        "dropped": dropped,
        "total_jct": float(jct.sum()),
        "sum_completion": float(end.sum()),
        "mean_jct": float(jct.mean()),
        "p95_jct": float(np.percentile(jct, 95)),
        "makespan": makespan,
        "utilization": busy / (cluster.total_gpus * span) if span > 0 else 0.0,
        "mean_queueing_delay": float(np.mean(start - release)),
    }
