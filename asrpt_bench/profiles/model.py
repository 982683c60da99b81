"""ModelProfile: a model as a chain of layers with compute time, activation and parameter bytes.

Every reader (graph.txt, Galvatron JSON) produces this one type; stage partitioning and plans
read nothing else. Units: seconds and bytes; times are for the whole profiled mini-batch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core import ConfigError


@dataclass(frozen=True)
class Layer:
    """One layer of the chain.

    compute_s: forward + backward seconds for the whole profiled mini-batch on one GPU.
    output_bytes: the layer's own output activations (what a pipeline stage stashes for backward).
    boundary_bytes: activation bytes crossing a cut placed right after this layer, including
    skip connections from earlier layers (0 for the last layer).
    param_bytes: parameter bytes (fp32, 4 B per parameter).
    """

    name: str
    compute_s: float
    output_bytes: float
    boundary_bytes: float
    param_bytes: float


@dataclass(frozen=True)
class ModelProfile:
    """A profiled model: its layers in pipeline order, where the numbers came from, and the batch.

    `speed_factor` is the factor already applied to the source times to get V100-equivalent seconds.
    """

    name: str
    layers: tuple[Layer, ...]
    source: str
    batch_size: int | None = None
    speed_factor: float = 1.0

    def __post_init__(self) -> None:
        if not self.layers:
            raise ConfigError(f"model {self.name!r} ({self.source}) has no layers")

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def compute_s(self) -> float:
        """Forward + backward seconds of one mini-batch on one GPU."""
        return sum(layer.compute_s for layer in self.layers)

    @property
    def param_bytes(self) -> float:
        return sum(layer.param_bytes for layer in self.layers)

    @property
    def output_bytes(self) -> float:
        return sum(layer.output_bytes for layer in self.layers)

    def scaled(self, speed_factor: float, name: str | None = None) -> "ModelProfile":
        """The same profile with every compute time multiplied by `speed_factor` (source GPU -> V100)."""
        check_speed_factor(speed_factor, name or self.name)
        layers = tuple(replace(layer, compute_s=layer.compute_s * speed_factor) for layer in self.layers)
        return replace(self, name=name or self.name, layers=layers,
                       speed_factor=self.speed_factor * speed_factor)


def check_speed_factor(speed_factor: float, model: str) -> None:
    """Reject speed factors that are not positive finite numbers."""
    if not isinstance(speed_factor, (int, float)) or not 0 < speed_factor < float("inf"):
        raise ConfigError(f"model {model!r}: speed_factor must be a positive number, got {speed_factor!r}")
