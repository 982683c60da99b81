"""Test-wide setup: runs (in-process and in subprocesses) cache prepared work in a per-session
temporary directory, never in the user's ~/.cache, and sign it with a key made there, never in the
user's ~/.config."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _session_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    previous = {name: os.environ.get(name) for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg_cache"))
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg_config"))
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def forget_new_registries():
    """Drop the registries a test created once it ends, so the test can run again in the same process (as
    mutmut's stats run and clean run do): a second `Registry(kind)` of one kind is refused."""
    from asrpt_bench.registry import REGISTRIES

    before = set(REGISTRIES)
    yield
    for kind in set(REGISTRIES) - before:
        del REGISTRIES[kind]
