"""A registry imports a built-in component's module only when its name is first looked up (registry.py,
`declare`), so a run imports the components it names. Each check runs in a fresh interpreter, where no test
has imported a component module yet: the declared tables must match what the modules register, a default
run's composition must leave the unnamed components unimported, and everything a user sees (the "known"
list of an unknown name, a plugin's registration, a replaced built-in's warning) must be as when every
built-in was imported up front."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("schedulers", "placement", "prediction", "workloads", "tasks")
ALL_SCHEDULERS = ("['asrpt', 'asrpt_oracle', 'fifo', 'fifo_replan', 'las2d', 'psjf', 'psjf_oracle', 'random_order', "
                  "'recorded', 'spjf', 'spwf', 'srtf', 'srtf_oracle', 'wcs_duration', 'wcs_subtime', 'wcs_workload']")


def fresh(code: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`code` run by a new interpreter on this checkout (nothing imported yet)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_each_declared_name_is_registered_by_its_module_and_no_module_registers_an_undeclared_one(
        tmp_path: Path) -> None:
    done = fresh("""
        import importlib, json, pkgutil, sys
        from asrpt_bench import registry
        registering = {}
        original = registry.Registry.register
        def register(self, name, *args, **kwargs):
            frame = sys._getframe(1)
            while frame.f_code.co_name != "<module>":
                frame = frame.f_back
            registering.setdefault(self.kind, {})[name] = frame.f_globals["__name__"]
            return original(self, name, *args, **kwargs)
        registry.Registry.register = register
        for package in %r:
            module = importlib.import_module("asrpt_bench." + package)
            for info in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
                importlib.import_module(info.name)
        from asrpt_bench.config import COMPONENT_GROUPS, component_registry
        declared = {kind: component_registry(kind).declared for kind in COMPONENT_GROUPS}
        print(json.dumps({"registering": {k: registering[k] for k in COMPONENT_GROUPS}, "declared": declared}))
    """ % (PACKAGES,), tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert len(found["declared"]["scheduler"]) == 16
    assert found["declared"]["placement"]["ilp"] == "asrpt_bench.placement.ilp"
    for kind, registering in found["registering"].items():
        declared = found["declared"][kind]
        # every name is declared with the module that registers it, except a package's registry module's own
        # names, which register when the package is imported (workloads.sources)
        eager = {name for name, module in registering.items() if name not in declared}
        assert {registering[name] for name in eager} <= {"asrpt_bench.workloads.sources"}, (kind, eager)
        assert {name: registering[name] for name in declared} == declared, kind


def test_a_default_run_imports_only_the_components_it_names_and_a_listing_imports_them_all(tmp_path: Path) -> None:
    done = fresh("""
        import json, sys
        from asrpt_bench.composition import compose_run_config
        from asrpt_bench.config import component_registry
        from asrpt_bench.experiment import check_components
        config = compose_run_config([])
        check_components(config)
        before = sorted(m for m in sys.modules if m.startswith("asrpt_bench."))
        names = component_registry("scheduler").names()
        after = sorted(m for m in sys.modules if m.startswith("asrpt_bench."))
        print(json.dumps({"before": before, "after": after, "names": names}))
    """, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    named = {"asrpt_bench.schedulers.asrpt", "asrpt_bench.schedulers.wcs", "asrpt_bench.schedulers.fifo",
             "asrpt_bench.placement.heavy_edge", "asrpt_bench.prediction.forest", "asrpt_bench.tasks.compare"}
    unnamed = {"asrpt_bench.schedulers.las2d", "asrpt_bench.schedulers.srtf", "asrpt_bench.placement.ilp",
               "asrpt_bench.placement.random_fit", "asrpt_bench.prediction.noisy", "asrpt_bench.tasks.theory",
               "asrpt_bench.theory.exact"}
    assert named <= set(found["before"])
    assert unnamed & set(found["before"]) == set()
    assert {"asrpt_bench.schedulers.las2d", "asrpt_bench.schedulers.srtf"} <= set(found["after"])
    assert str(found["names"]) == ALL_SCHEDULERS


def test_an_unknown_component_gets_the_same_one_line_error_listing_every_built_in(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HYDRA_FULL_ERROR", None)
    expected = {
        "task.schedulers=[asrpt,nope]": f"asrpt-bench: error: unknown scheduler 'nope'; known: {ALL_SCHEDULERS}, or "
                                        "<name>+<dispatch> with dispatch one of ['strict', 'easy', 'conservative', "
                                        "'greedy']",
        "scheduler=nope": "asrpt-bench: error: Could not find 'scheduler/nope'; available: asrpt, asrpt_oracle, fifo, "
                          "fifo_replan, las2d, psjf, psjf_oracle, random_order, recorded, spjf, spwf, srtf, "
                          "srtf_oracle, wcs_duration, wcs_subtime, wcs_workload",
        "placement=nope": "asrpt-bench: error: Could not find 'placement/nope'; available: first_fit, heavy_edge, "
                          "ilp, random",
    }
    for override, line in expected.items():
        done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", override, f"hydra.run.dir={tmp_path / 'run'}"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert (done.returncode, done.stderr.strip()) == (2, line), override
        assert not (tmp_path / "run").exists()


PLUGIN = """
from asrpt_bench.schedulers import register_scheduler
from asrpt_bench.schedulers.priority import SPJF


@register_scheduler("fifo", replace=True)
class MyFIFO(SPJF):
    pass


@register_scheduler("my_fifo")
class MyOtherFIFO(SPJF):
    pass
"""
"""A plugin that takes the name of a built-in whose module it does not import (schedulers.fifo)."""


def test_a_plugin_registers_and_replaces_a_built_in_not_imported_yet(tmp_path: Path) -> None:
    (tmp_path / "my_plugin.py").write_text(PLUGIN, encoding="utf-8")
    done = fresh("""
        import json, sys, warnings
        from asrpt_bench.composition import compose_run_config
        from asrpt_bench.config import component_registry
        from asrpt_bench.registry import REPLACED
        assert "asrpt_bench.schedulers.fifo" not in sys.modules
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            config = compose_run_config(["plugins=[my_plugin]", "task=simulate", "scheduler=my_fifo"])
        registry = component_registry("scheduler")
        print(json.dumps({"scheduler": config.scheduler.name, "replaced": REPLACED,
                          "warnings": [str(w.message) for w in caught],
                          "fifo": registry.entry("fifo").module, "my_fifo": registry.entry("my_fifo").module}))
    """, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    message = "scheduler 'fifo' of asrpt_bench.schedulers.fifo replaced by the one of my_plugin"
    assert found == {"scheduler": "my_fifo", "replaced": [message], "warnings": [message], "fifo": "my_plugin",
                     "my_fifo": "my_plugin"}


def test_a_plugin_taking_a_built_in_name_not_imported_yet_is_refused_naming_the_built_in(tmp_path: Path) -> None:
    (tmp_path / "taker.py").write_text(PLUGIN.replace(', replace=True', ''), encoding="utf-8")
    done = fresh("""
        import sys
        from asrpt_bench.errors import ConfigError
        assert "asrpt_bench.schedulers.fifo" not in sys.modules
        try:
            import taker
        except ConfigError as error:
            print(error)
    """, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == ("scheduler 'fifo' is already registered by asrpt_bench.schedulers.fifo; register "
                                   "it under another name, or pass replace=True to replace it")
