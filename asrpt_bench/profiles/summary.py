"""A one-table overview of the zoo: size, compute, parameters, GPU counts and alpha of every plan.

`python -m asrpt_bench.profiles --gpus 8` prints it; the numbers in docs/profiles.md come from here.
"""

from __future__ import annotations

import pandas as pd

from ..core import Cluster
from ..timing import DEFAULT_TIMING, TimingModel
from .zoo import DEFAULT_GPU_MEMORY_GB, available_gpu_counts, get_model, model_names, plans_for


def zoo_summary(gpus: int = 8, cluster: Cluster | None = None, timing: TimingModel = DEFAULT_TIMING,
                gpu_memory_gb: float = DEFAULT_GPU_MEMORY_GB) -> pd.DataFrame:
    """One row per (model, configuration on `gpus` GPUs) with the all-intra and worst-case alpha."""
    cluster = cluster or Cluster(servers=64, gpus_per_server=8)
    rows = []
    for name in model_names():
        profile = get_model(name)
        counts = available_gpu_counts(name, gpu_memory_gb=gpu_memory_gb)
        if not available_gpu_counts(name, (gpus,), gpu_memory_gb=gpu_memory_gb):
            continue  # checked on its own: `gpus` need not be one of the default counts (e.g. 64)
        for plan in plans_for(name, gpus, gpu_memory_gb=gpu_memory_gb):
            rows.append({
                "model": name, "layers": profile.num_layers, "batch": profile.batch_size,
                "compute_s": profile.compute_s, "param_mb": profile.param_bytes / 1e6,
                "gpu_counts": ",".join(map(str, counts)), "config": plan.config,
                "alpha_consolidated_s": timing.alpha_consolidated(plan, cluster),
                "alpha_max_s": timing.alpha_max(plan, cluster),
            })
    return pd.DataFrame(rows)
