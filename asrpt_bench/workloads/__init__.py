"""Job tables: one schema, loaders for real traces and plain CSV, synthetic workloads, model assignment.

Importing the package registers every built-in workload source (sources.py, which holds the registry); a
hand-made instance (instances.py) registers when its name is first looked up (the registry's `declare`
below), and a loader's module is imported when its name is first read here (exports.py).
"""

from __future__ import annotations

from ..exports import lazy_exports
from .sources import WORKLOADS

WORKLOADS.declare({  # the built-ins: each module is imported when one of its names is first looked up
    "lemma2_reviewer": "asrpt_bench.workloads.instances",
    "head_of_line": "asrpt_bench.workloads.instances",
})

__getattr__, __dir__ = lazy_exports(__name__, {
    "assign_models": "asrpt_bench.workloads.assign",
    "load_csv": "asrpt_bench.workloads.csv_table",
    "load_pai2020": "asrpt_bench.workloads.pai2020",
    "load_philly": "asrpt_bench.workloads.philly",
    "resample_single_gpu_share": "asrpt_bench.workloads.slicing",
    "slice_jobs": "asrpt_bench.workloads.slicing",
    "synthetic_workload": "asrpt_bench.workloads.synthetic",
}, submodules=(
    "instances", "sources"))

__all__ = ["assign_models", "load_csv", "load_pai2020", "load_philly", "resample_single_gpu_share", "slice_jobs",
           "synthetic_workload"]
