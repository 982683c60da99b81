"""docs/extending.md, run: every file it shows is written from the page, every command it shows runs,
each plugin passes the conformance kit, and a plugin that takes a built-in name is refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.config import RunConfig
from asrpt_bench.core import ConfigError
from asrpt_bench.registry import REGISTRIES
from asrpt_bench.testing import check_placer, check_predictor, check_scheduler, check_workload

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"```(python|bash)\n(.*?)```", re.S)


def files() -> dict[str, str]:
    """file name -> source of every python block of the page that starts with `# file: NAME`."""
    found = {}
    for language, body in BLOCK.findall(DOC):
        first = body.splitlines()[0]
        if language == "python" and first.startswith("# file: "):
            found[first.removeprefix("# file: ").strip()] = body
    return found


def commands() -> dict[str, list[str]]:
    """label -> the arguments of every `# run: LABEL` command of the page (after `asrpt-bench`)."""
    found: dict[str, list[str]] = {}
    for language, body in BLOCK.findall(DOC):
        if language != "bash":
            continue
        label = None
        for line in body.replace("\\\n", " ").splitlines():
            if line.startswith("# run: "):
                label = line.removeprefix("# run: ").strip()
            elif line.startswith("asrpt-bench ") and label:
                found[label] = line.split()[1:]
    return found


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("plugins")
    for name, source in files().items():
        (directory / name).write_text(source, encoding="utf-8")
    return directory


def run(plugin_dir: Path, label: str, name: str) -> Path:
    """Run the page's command `label` next to the plugin files (no PYTHONPATH to them: the working
    directory is searched, as `python -m` does); its run directory."""
    out = plugin_dir / name
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *commands()[label], "progress=false",
                           f"hydra.run.dir={out}"], cwd=plugin_dir, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def test_the_page_shows_one_file_per_kind_and_runs_each() -> None:
    assert set(files()) == {"my_lifo.py", "my_last_fit.py", "my_group_median.py", "my_trace.py",
                            "my_scipy_milp.py", "my_gpu_mix.py", "my_most_free.py"}
    assert set(commands()) == {"scheduler, placer and trace", "predictor", "solver backend", "task", "pool choice"}


def test_scheduler_placer_and_trace_with_parameters(plugin_dir: Path) -> None:
    out = run(plugin_dir, "scheduler, placer and trace", "first")
    jobs = pd.read_parquet(out / "jobs.parquet")
    starts = {name: dict(zip(part["job_id"], part["start"])) for name, part in jobs.groupby("scheduler")}
    assert starts == {"fifo": {"a": 0.0, "b": 10.0, "c": 20.0}, "lifo": {"a": 0.0, "b": 20.0, "c": 10.0}}
    assert set(pd.read_csv(out / "comparison.csv")["placer"]) == {"last_fit"}
    config = json.loads((out / "config.json").read_text())
    assert config["workload"]["gpus"] == 4 and "gpus" not in config["scheduler"]


def test_predictor_solver_backend_and_task(plugin_dir: Path) -> None:
    summary = json.loads((run(plugin_dir, "predictor", "predictor") / "summary.json").read_text())
    assert summary["num_jobs"] == 30
    summary = json.loads((run(plugin_dir, "solver backend", "solver") / "summary.json").read_text())
    assert summary["solver_used"] == "scipy_milp"
    table = pd.read_csv(run(plugin_dir, "task", "task") / "gpu_mix.csv")
    assert dict(zip(table["gpus"], table["jobs"])) == {"<=2": 0, "<=4": 3, ">4": 0}


def test_a_pool_choice_places_every_job_in_the_pool_with_most_free_gpus(plugin_dir: Path) -> None:
    out = run(plugin_dir, "pool choice", "pools")
    jobs = pd.read_parquet(out / "jobs.parquet").sort_values(["start", "job_id"])
    assert set(jobs["pool"]) == {"v100", "p100", "k80"} and len(jobs) == 60
    free = {"v100": 36, "p100": 36, "k80": 36}
    first = jobs[jobs["start"] == jobs["start"].min()]  # the jobs starting at once take the emptiest pools in turn
    for _, row in first.iterrows():
        assert free[row["pool"]] == max(free.values())
        free[row["pool"]] -= row["gpus"]


def test_a_plugin_key_is_checked_by_its_own_rule(plugin_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", "plugins=[my_lifo]", "scheduler=lifo",
                           "scheduler.depth=3", "task=simulate", "debug=tiny"], cwd=plugin_dir, env=env,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr) == (2, "asrpt-bench: error: scheduler.depth: scheduler 'lifo' has no "
                                                 "parameter 'depth'; its parameters: ['strict']\n")


def test_every_plugin_passes_the_conformance_kit(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(plugin_dir))
    added = {kind: set(registry) for kind, registry in REGISTRIES.items()}
    try:
        RunConfig(plugins=["my_lifo", "my_last_fit", "my_group_median", "my_trace", "my_scipy_milp"]).validate()
        check_scheduler("lifo", {"strict": False})
        check_placer("last_fit")
        check_predictor("group_median")
        check_workload("three_jobs")
    finally:
        for kind, registry in REGISTRIES.items():
            for name in set(registry) - added.get(kind, set()):
                del registry[name]
        for module in [m for m in sys.modules if m.startswith("my_")]:
            del sys.modules[module]


def test_a_plugin_that_takes_a_built_in_name_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_fifo.py").write_text(
        "from asrpt_bench.schedulers import FIFO, register_scheduler\n"
        "register_scheduler('fifo')(FIFO)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=r"^plugins: cannot import 'my_fifo': ConfigError: scheduler 'fifo' is "
                                          r"already registered by asrpt_bench\.schedulers\.fifo; register it under "
                                          r"another name, or pass replace=True to replace it$"):
        RunConfig(plugins=["my_fifo"]).validate()
    sys.modules.pop("my_fifo", None)


def test_a_plugin_that_cannot_be_imported_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^plugins: cannot import 'no_such_module': ModuleNotFoundError: No module "
                                          r"named 'no_such_module'$"):
        RunConfig(plugins=["no_such_module"]).validate()
