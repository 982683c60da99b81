"""The model zoo: named models from the packaged real profiles, their configurations and plans.

Profiles come from different GPUs, so each source's times are multiplied by a speed factor to get
V100-equivalent seconds (SPEED_FACTORS; override per call with `speed_factor=`):
- dapple: profiled on V100 (DAPPLE's reproduction guide) -> 1.0;
- pipedream: GPU not recorded; its vgg16 file is byte-identical to DAPPLE's V100 one and ResNet-50
  at batch 128 runs at ~290 images/s (fp32 V100 territory) -> 1.0;
- galvatron: A100 bf16. A100 dense bf16 tensor peak is 312 TFLOPS vs 125 for V100 fp16, a ratio of
  2.5, in line with the 2-3x training speed-ups published for transformers -> 2.5.
Users add models from their own graph.txt with `register_model`.
"""

from __future__ import annotations

import os

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable

from ..core import ConfigError, TrainingPlan
from ..timing import DEFAULT_TIMING, TimingModel
from .configs import ParallelConfig, factorizations
from .galvatron import read_galvatron_t5
from .graph_txt import read_graph_txt
from .model import ModelProfile, check_speed_factor
from .partition import DEFAULT_BANDWIDTH_GBPS, partition, stages_of

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

SPEED_FACTORS = MappingProxyType({"dapple": 1.0, "pipedream": 1.0, "galvatron": 2.5})
"""Source GPU time x factor = V100-equivalent time, per profile source."""

DEFAULT_GPU_MEMORY_GB = 32.0
DEFAULT_GPU_COUNTS = (1, 2, 4, 8, 16, 32)
T5_BATCH_SIZE = 8
T5_SEQ_LEN = 512


@dataclass(frozen=True)
class ZooEntry:
    """How to load one model: a loader giving source-GPU seconds, the profile family (a key of
    SPEED_FACTORS, or "user") and the factor to V100."""

    load: Callable[[], ModelProfile]
    family: str
    speed_factor: float


def _packaged(relative: str) -> Traversable:
    resource = files("asrpt_bench")
    for part in ("data", "profiles", *relative.split("/")):
        resource = resource.joinpath(part)
    return resource


def _graph_txt(relative: str, batch_size: int) -> Callable[[], ModelProfile]:
    return lambda: read_graph_txt(_packaged(relative), batch_size=batch_size)


def _t5() -> ModelProfile:
    return read_galvatron_t5(_packaged("galvatron/T5/computation_profiling_bf16_t5-3B.json"),
                             _packaged("galvatron/T5/t5-3B.json"),
                             batch_size=T5_BATCH_SIZE, seq_len=T5_SEQ_LEN)


def _builtin(family: str, load: Callable[[], ModelProfile]) -> ZooEntry:
    return ZooEntry(load, family, SPEED_FACTORS[family])


_ZOO: dict[str, ZooEntry] = {
    "vgg19": _builtin("dapple", _graph_txt("dapple/vgg-19-pbs-32.txt", 32)),
    "inception_v3": _builtin("pipedream", _graph_txt("pipedream/inception_v3.graph.txt", 128)),
    "resnet50": _builtin("pipedream", _graph_txt("pipedream/resnet50.graph.txt", 128)),
    "gnmt": _builtin("dapple", _graph_txt("dapple/gnmt-16-pbs-64.txt", 64)),
    "bert24": _builtin("dapple", _graph_txt("dapple/bert-24-pbs-6.txt", 6)),
    "xlnet24": _builtin("dapple", _graph_txt("dapple/xlnet-24-pbs-1.txt", 1)),
    "t5": _builtin("galvatron", _t5),
}


def model_names() -> tuple[str, ...]:
    """Names of every model in the zoo, built-in first, in registration order."""
    return tuple(_ZOO)


def model_family(name: str) -> str:
    """Where the profile of `name` comes from: a key of SPEED_FACTORS, or "user" for registered files."""
    return _entry(name).family


def register_model(name: str, path: str | Path, speed_factor: float = 1.0,
                   batch_size: int | None = None, replace: bool = False) -> ModelProfile:
    """Add a model read from a PipeDream/DAPPLE graph.txt file; its times x speed_factor are V100 s.

    The file is read now, so a malformed file fails here (naming file and line).
    """
    if not isinstance(name, str) or not name:
        raise ConfigError(f"model name must be a non-empty string, got {name!r}")
    if name in _ZOO and not replace:
        raise ConfigError(f"model {name!r} is already registered; pass replace=True to redefine it")
    check_speed_factor(speed_factor, name)
    if not isinstance(path, (str, os.PathLike)):
        raise ConfigError(f"path must be a graph.txt file path (str or Path), got {type(path).__name__} {path!r}")
    profile = read_graph_txt(Path(path), name=name, batch_size=batch_size)
    _ZOO[name] = ZooEntry(lambda: profile, "user", float(speed_factor))
    _clear_caches()
    return get_model(name)


def get_model(name: str, speed_factor: float | None = None) -> ModelProfile:
    """The profile of zoo model `name` in V100-equivalent seconds (or scaled by `speed_factor`)."""
    entry = _entry(name)
    factor = entry.speed_factor if speed_factor is None else speed_factor
    check_speed_factor(factor, name)
    return _scaled_model(name, factor)


def configurations(model: str, gpus: int,
                   gpu_memory_gb: float = DEFAULT_GPU_MEMORY_GB) -> list[ParallelConfig]:
    """Every (p, d) with p * d = gpus, p <= number of layers, that fits in memory; fewest stages first.

    Raises ConfigError when no configuration realises `gpus` for `model`.
    """
    found = _configurations(model, gpus, gpu_memory_gb)
    if not found:
        layers = get_model(model).num_layers
        tried = [c.name for c in factorizations(gpus) if c.stages <= layers]
        raise ConfigError(f"model {model!r} has no parallel configuration for {gpus} GPUs: candidates "
                          f"{tried} (p <= {layers} layers) all exceed {gpu_memory_gb} GB per GPU")
    return list(found)


def available_gpu_counts(model: str, candidates: tuple[int, ...] = DEFAULT_GPU_COUNTS,
                         gpu_memory_gb: float = DEFAULT_GPU_MEMORY_GB) -> tuple[int, ...]:
    """The GPU counts among `candidates` that `model` has at least one configuration for."""
    return tuple(g for g in candidates if _configurations(model, g, gpu_memory_gb))


def build_plan(model_name: str, config: ParallelConfig | str, *,
               gpu_memory_gb: float = DEFAULT_GPU_MEMORY_GB,
               bandwidth_gbps: float = DEFAULT_BANDWIDTH_GBPS,
               speed_factor: float | None = None,
               timing: TimingModel = DEFAULT_TIMING) -> TrainingPlan:
    """The TrainingPlan of `model_name` under `config` ('p2xd4' or a ParallelConfig), with the
    bottleneck-optimal memory-feasible stage partition at the reference bandwidth (cached)."""
    parsed = ParallelConfig.parse(config)
    _entry(model_name)
    return _build_plan(model_name, parsed, gpu_memory_gb, bandwidth_gbps, speed_factor, timing)


def plans_for(model: str, gpus: int, gpu_memory_gb: float = DEFAULT_GPU_MEMORY_GB,
              **plan_options: object) -> list[TrainingPlan]:
    """Plans of every configuration of `model` on `gpus` GPUs (see `configurations`)."""
    return [build_plan(model, config, gpu_memory_gb=gpu_memory_gb, **plan_options)
            for config in configurations(model, gpus, gpu_memory_gb)]


def _entry(name: str) -> ZooEntry:
    if name not in _ZOO:
        raise ConfigError(f"unknown model {name!r}; known: {sorted(_ZOO)}")
    return _ZOO[name]


@lru_cache(maxsize=None)
def _scaled_model(name: str, speed_factor: float) -> ModelProfile:
    return _ZOO[name].load().scaled(speed_factor, name=name)


@lru_cache(maxsize=None)
def _configurations(model: str, gpus: int, gpu_memory_gb: float) -> tuple[ParallelConfig, ...]:
    profile = get_model(model)
    return tuple(config for config in factorizations(gpus)
                 if config.stages <= profile.num_layers
                 and partition(profile, config, gpu_memory_gb=gpu_memory_gb) is not None)


@lru_cache(maxsize=None)
def _build_plan(model: str, config: ParallelConfig, gpu_memory_gb: float, bandwidth_gbps: float,
                speed_factor: float | None, timing: TimingModel) -> TrainingPlan:
    profile = get_model(model, speed_factor)
    found = partition(profile, config, bandwidth_gbps=bandwidth_gbps, gpu_memory_gb=gpu_memory_gb,
                      timing=timing)
    if found is None:
        raise ConfigError(f"model {model!r} under config {config.name} does not fit in {gpu_memory_gb} GB "
                          f"per GPU (weights, gradients, Adam states and stashed activations)")
    return TrainingPlan(model=model, config=config.name,
                        stages=stages_of(profile, found.bounds, config.replicas))


def _clear_caches() -> None:
    for cached in (_scaled_model, _configurations, _build_plan):
        cached.cache_clear()
