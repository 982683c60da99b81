"""Reader for Galvatron's per-layer profiles of encoder-decoder (T5) models.

`computation_profiling_*.json` holds the forward ms *per sample* of one layer of each type
(`layertype_0_bsz{B}_seq{S}` encoder, `layertype_1_bsz{B}_seq{S}` decoder) and of everything else
(`layertype_other_bsz{B}_seq[{S},{S}]`: embeddings and head). Backward = 2 x forward, Galvatron's own
cost-model assumption. Parameter counts come from the architecture (`meta_configs/*.json`):
- encoder layer: self-attention 4 * d_model * (num_heads * d_kv) + feed-forward 2 * d_model * d_ff
  + 2 layer norms of d_model (equals ~12 h^2 when d_ff = 4h and num_heads * d_kv = h);
- decoder layer: two attentions (self + cross) 8 * d_model * (num_heads * d_kv) + 2 * d_model * d_ff
  + 3 layer norms;
- the embeddings/head layer: vocab_size * d_model (T5 ties input and output embeddings).
Bytes are 4 per parameter (fp32 master weights). A layer's output is batch * seq * d_model * 2 bytes
(bf16). The embeddings layer embeds both the encoder and the decoder input, and every decoder layer
reads the encoder output (cross-attention), so every cut carries two such tensors: encoder hidden +
decoder input embeddings before the decoder, decoder hidden + encoder output inside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import ConfigError
from .model import Layer, ModelProfile

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

BYTES_PER_PARAM = 4
BYTES_PER_ACTIVATION = 2
BACKWARD_OVER_FORWARD = 2.0


def read_galvatron_t5(computation: str | Path | Traversable, meta: str | Path | Traversable, *,
                      batch_size: int, seq_len: int, name: str = "t5") -> ModelProfile:
    """Read a Galvatron T5 profile at (batch_size, seq_len) into a ModelProfile (source GPU seconds).

    Layers: one embeddings/head layer, then num_layers encoder and num_decoder_layers decoder layers.
    """
    times = _load_json(computation)
    arch = _load_json(meta)
    per_sample_ms = {
        "encoder": _key(times, f"layertype_0_bsz{batch_size}_seq{seq_len}", computation),
        "decoder": _key(times, f"layertype_1_bsz{batch_size}_seq{seq_len}", computation),
        "other": _key(times, f"layertype_other_bsz{batch_size}_seq[{seq_len},{seq_len}]", computation),
    }
    d_model = _positive_int(arch, "d_model", meta)
    d_ff = _positive_int(arch, "d_ff", meta)
    inner = _positive_int(arch, "num_heads", meta) * _positive_int(arch, "d_kv", meta)
    encoders = _positive_int(arch, "num_layers", meta)
    decoders = _positive_int(arch, "num_decoder_layers", meta) if "num_decoder_layers" in arch else encoders
    vocab = _positive_int(arch, "vocab_size", meta)

    params = {
        "encoder": 4 * d_model * inner + 2 * d_model * d_ff + 2 * d_model,
        "decoder": 8 * d_model * inner + 2 * d_model * d_ff + 3 * d_model,
        "other": vocab * d_model,
    }
    hidden_bytes = float(batch_size * seq_len * d_model * BYTES_PER_ACTIVATION)

    kinds = ["other"] + ["encoder"] * encoders + ["decoder"] * decoders
    layers = []
    for position, kind in enumerate(kinds):
        seconds = per_sample_ms[kind] * batch_size * (1.0 + BACKWARD_OVER_FORWARD) / 1000.0
        index = position - 1 - (encoders if kind == "decoder" else 0)
        layers.append(Layer(name="embeddings_and_head" if kind == "other" else f"{kind}_{index}",
                            compute_s=seconds,
                            output_bytes=hidden_bytes * (2 if kind == "other" else 1),
                            boundary_bytes=0.0 if position == len(kinds) - 1 else 2 * hidden_bytes,
                            param_bytes=float(params[kind] * BYTES_PER_PARAM)))
    return ModelProfile(name=name, layers=tuple(layers), source=str(computation), batch_size=batch_size)


def _load_json(path: str | Path | Traversable) -> dict[str, Any]:
    path = Path(path) if isinstance(path, str) else path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read profile file {path}: {error}") from error
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}, line {error.lineno}: invalid JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level")
    return data


def _key(data: dict[str, Any], key: str, path: object) -> float:
    if key not in data:
        raise ConfigError(f"{path}: missing key {key!r} (is the batch size / sequence length profiled?)")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise ConfigError(f"{path}: key {key!r} must be a non-negative number, got {value!r}")
    return float(value)


def _positive_int(data: dict[str, Any], key: str, path: object) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{path}: key {key!r} must be a positive integer, got {value!r}")
    return value
