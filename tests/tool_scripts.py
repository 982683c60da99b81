"""The scripts under tools/ are not a package: tests load one by its path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_tool(script: str) -> ModuleType:
    """tools/<script>.py as a module named after it."""
    spec = importlib.util.spec_from_file_location(script, ROOT / "tools" / f"{script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
