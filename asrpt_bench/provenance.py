"""Provenance of a run: the config hash, the git revision and the versions that shape results."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from functools import lru_cache
from importlib.metadata import PackageNotFoundError
from pathlib import Path

from .config import RunConfig
from .versions import installed_version


NOT_HASHED = ("progress", "workers", "cache")
"""Config keys that never change results, so a sweep point that differs only in them is the same run."""


def config_hash(config: RunConfig) -> str:
    """12 hex digits identifying everything that changes results (not `progress`, `workers` or `cache`)."""
    payload = {k: v for k, v in config.to_dict().items() if k not in NOT_HASHED}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:12]


@lru_cache(maxsize=1)
def git_revision() -> str | None:
    """The checkout's commit (with `-dirty` if modified), or None outside a git checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        revision = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], check=True,
                                  capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               check=True, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{revision}-dirty" if dirty else revision


def versions() -> dict[str, str]:
    """Versions of Python, this package and the libraries that shape results (a copy: the caller's to keep)."""
    return dict(_versions())


@lru_cache(maxsize=1)
def _versions() -> dict[str, str]:
    """Looked up once per process (versions.installed_version), which keeps the libraries it loaded."""
    found = {"python": platform.python_version()}
    for package in ("asrpt_bench", "numpy", "pandas", "scipy", "scikit-learn", "networkx", "highspy", "pulp",
                    "ortools"):
        try:
            found[package] = installed_version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return found
