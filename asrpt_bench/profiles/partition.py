"""Stage partitioning: split a layer chain into p contiguous stages minimising the bottleneck.

The objective is the per-iteration time of `TimingModel.alpha_from_links` with every link
intra-server at a reference bandwidth: the largest of the stage times (compute / d plus the ring
all-reduce of the stage's parameters) and the boundary transfers (each its own station, or folded
into the sending stage when the timing model says so). For `pipeline_mode="sync"` this async
objective is used as a proxy (the flush time is not a max over stages, so the DP does not apply).
Stages whose per-GPU memory exceeds the capacity (see configs.py) are not allowed. Dynamic
programming over (stage, end layer), O(L^2 p), vectorised over the start layer with numpy; ties go
to the earliest split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import ConfigError, Stage
from ..timing import DEFAULT_TIMING, TimingModel
from .configs import ParallelConfig, memory_capacity_bytes, stage_memory_bytes
from .model import ModelProfile

DEFAULT_BANDWIDTH_GBPS = 300.0


@dataclass(frozen=True)
class Partition:
    """Stage s holds layers bounds[s-1]..bounds[s]-1 (bounds[-1] = number of layers).

    bottleneck_s is the per-iteration time with every link intra-server at the reference bandwidth.
    """

    bounds: tuple[int, ...]
    bottleneck_s: float


def partition(profile: ModelProfile, config: ParallelConfig, *,
              bandwidth_gbps: float = DEFAULT_BANDWIDTH_GBPS, gpu_memory_gb: float = 32.0,
              timing: TimingModel = DEFAULT_TIMING) -> Partition | None:
    """The bottleneck-optimal memory-feasible partition of `profile` into config.stages stages,
    or None when no partition fits in `gpu_memory_gb` per GPU."""
    stages, replicas = config.stages, config.replicas
    num_layers = profile.num_layers
    if stages > num_layers:
        raise ConfigError(f"model {profile.name!r} has {num_layers} layers, too few for {stages} stages "
                          f"(config {config.name})")
    if not bandwidth_gbps > 0:
        raise ConfigError(f"reference bandwidth must be positive GB/s, got {bandwidth_gbps!r}")
    capacity = memory_capacity_bytes(gpu_memory_gb)

    compute, params, outputs = (_prefix([getattr(layer, key) for layer in profile.layers])
                                for key in ("compute_s", "param_bytes", "output_bytes"))
    stage_compute = (compute[None, :] - compute[:, None]) / replicas
    stage_params = params[None, :] - params[:, None]
    stage_outputs = outputs[None, :] - outputs[:, None]
    stage_time = stage_compute + _allreduce_times(stage_params, replicas, bandwidth_gbps, timing)
    cut_bytes = np.array([0.0] + [layer.boundary_bytes for layer in profile.layers[:-1]] + [0.0])
    boundary_time = timing.p2p_time(cut_bytes, bandwidth_gbps)
    if timing.fold_p2p_into_stage:
        stage_time = stage_time + boundary_time[None, :]
        boundary_time = np.zeros_like(boundary_time)
    start, end = np.indices(stage_time.shape)
    nonempty = start < end

    best = np.full(num_layers + 1, np.inf)
    best[0] = 0.0
    choices: list[np.ndarray] = []
    for s in range(stages):
        memory = stage_memory_bytes(stage_params, stage_outputs, s, config)
        allowed = nonempty & (memory <= capacity) & np.isfinite(best)[:, None]
        entering = np.maximum(best, boundary_time) if s > 0 else best
        candidate = np.where(allowed, np.maximum(entering[:, None], stage_time), np.inf)
        choices.append(np.argmin(candidate, axis=0))
        best = candidate[choices[-1], np.arange(num_layers + 1)]
    if not np.isfinite(best[num_layers]):
        return None
    bounds = [num_layers]
    for s in range(stages - 1, 0, -1):
        bounds.append(int(choices[s][bounds[-1]]))
    return Partition(bounds=tuple(reversed(bounds)), bottleneck_s=float(best[num_layers]))


def stages_of(profile: ModelProfile, bounds: tuple[int, ...], replicas: int) -> tuple[Stage, ...]:
    """The Stages of a partition: summed compute and parameters, boundary bytes after each stage."""
    stages = []
    begin = 0
    for end in bounds:
        layers = profile.layers[begin:end]
        stages.append(Stage(compute_s=sum(layer.compute_s for layer in layers),
                            param_bytes=sum(layer.param_bytes for layer in layers),
                            activation_bytes=layers[-1].boundary_bytes if end < profile.num_layers else 0.0,
                            replicas=replicas))
        begin = end
    return tuple(stages)


def _prefix(values: list[float]) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(np.asarray(values, dtype=float))))


def _allreduce_times(param_bytes: np.ndarray, replicas: int, bandwidth_gbps: float,
                     timing: TimingModel) -> np.ndarray:
    """TimingModel.allreduce_time elementwise: affine in the bytes for bytes > 0, zero otherwise."""
    probe = 1e9
    at_probe = timing.allreduce_time(probe, replicas, bandwidth_gbps)
    slope = (timing.allreduce_time(2 * probe, replicas, bandwidth_gbps) - at_probe) / probe
    return np.where(param_bytes > 0, slope * param_bytes + (at_probe - slope * probe), 0.0)
