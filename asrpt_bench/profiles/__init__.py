"""Real per-layer model profiles, parallel configurations, stage partitioning and the model zoo."""

from .configs import ParallelConfig, factorizations, stage_memory_bytes
from .galvatron import read_galvatron_t5
from .graph_txt import parse_graph_txt, read_graph_txt
from .model import Layer, ModelProfile
from .partition import Partition, partition, stages_of
from .summary import zoo_summary
from .zoo import (
    SPEED_FACTORS,
    available_gpu_counts,
    build_plan,
    configurations,
    get_model,
    model_family,
    model_names,
    plans_for,
    register_model,
)

__all__ = [
    "SPEED_FACTORS", "Layer", "ModelProfile", "ParallelConfig", "Partition", "available_gpu_counts",
    "build_plan", "configurations", "factorizations", "get_model", "model_family", "model_names",
    "parse_graph_txt", "partition", "plans_for", "read_galvatron_t5", "read_graph_txt", "register_model",
    "stage_memory_bytes", "stages_of", "zoo_summary",
]
