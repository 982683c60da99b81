"""Job tables: one schema, loaders for real traces and plain CSV, synthetic workloads, model assignment.

Importing the package registers every built-in workload source (sources.py) and instance (instances.py).
"""

from . import instances, sources  # noqa: F401  (registration)
from .assign import assign_models
from .csv_table import load_csv
from .pai2020 import load_pai2020
from .philly import load_philly
from .slicing import resample_single_gpu_share, slice_jobs
from .synthetic import synthetic_workload

__all__ = ["assign_models", "load_csv", "load_pai2020", "load_philly", "resample_single_gpu_share", "slice_jobs",
           "synthetic_workload"]
