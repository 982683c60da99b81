"""A run's identity: everything that decides its result, hashed, so a sweep skips a point only when
nothing that decides it changed.

It covers the validated config (`provenance.config_hash`), the bytes of the input file or directory
(`workload.path`), the source of every `plugins` module, and the package's code fingerprint (as the
cache key does, cache.py). Editing a job table, a plugin or the package's code makes the next
sweep rerun the point instead of reporting it "already complete".
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

from . import io
from .cache import code_fingerprint, content_hash
from .config import RunConfig
from .provenance import config_hash
from .workloads.sources import TraceParams

KEY = "run_identity"
"""The summary.json key holding the identity of the run that wrote it."""


def _input_hash(path: str | None) -> str | None:
    if not path:
        return None
    target = Path(path).expanduser()
    return content_hash(target) if target.exists() else None


def _plugin_hash(module: str) -> str | None:
    """The bytes of a plugin module's file, or of its package's directory."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return None
    origin = Path(spec.origin)
    return content_hash(origin.parent if spec.submodule_search_locations else origin)


def run_identity(config: RunConfig) -> str:
    """16 hex digits of the SHA-256 of the config hash, input bytes, plugin sources and package code."""
    params = config.workload.params
    path = params.input_path() if isinstance(params, TraceParams) else None
    payload = {"config": config_hash(config), "input": _input_hash(path),
               "plugins": {module: _plugin_hash(module) for module in config.plugins},
               "code": code_fingerprint()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def is_current(run_dir: Path, identity: str) -> bool:
    """True if `run_dir` completed with this very identity (same config, inputs, plugins and code)."""
    try:
        return io.is_complete(run_dir) and io.read_summary(run_dir).get(KEY) == identity
    except (OSError, ValueError, AttributeError):  # an unreadable or truncated summary is not current
        return False
