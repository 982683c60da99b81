"""The app composes the config tree once per run (Hydra's own get_mode would compose it a second time
only to read `hydra.mode`, which this tree never sets; cli_app._mode_from_flags)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from omegaconf import OmegaConf

from asrpt_bench import cli_app
from asrpt_bench.composition import CONFIG_DIR

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "data" / "fixed_jobs.csv"
COUNTING = """
import sys
from hydra._internal.config_loader_impl import ConfigLoaderImpl
calls = []
original = ConfigLoaderImpl.load_configuration
def counted(self, *args, **kwargs):
    calls.append(str(kwargs.get("run_mode")))
    return original(self, *args, **kwargs)
ConfigLoaderImpl.load_configuration = counted
from asrpt_bench import cli
sys.argv = ["asrpt-bench", *sys.argv[1:]]
try:
    cli.main()
finally:
    print("COMPOSITIONS", len(calls), calls, file=sys.stderr)
"""


def compositions(tmp_path: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0"}
    done = subprocess.run([sys.executable, "-c", COUNTING, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    line = [line for line in done.stderr.splitlines() if line.startswith("COMPOSITIONS")][-1]
    return int(line.split()[1]), done.stderr


def test_a_single_run_composes_the_config_once(tmp_path: Path) -> None:
    count, stderr = compositions(tmp_path, "task=simulate", "workload=csv", f"workload.path={TABLE}",
                                 "predictor=oracle", "progress=false", f"hydra.run.dir={tmp_path / 'run'}")
    assert count == 1, stderr
    assert (tmp_path / "run" / "summary.json").exists()


def test_a_bad_key_is_still_reported_in_one_line(tmp_path: Path) -> None:
    count, stderr = compositions(tmp_path, "task=simulate", "scheduler.nope=1", f"hydra.run.dir={tmp_path / 'bad'}")
    assert count == 1
    assert stderr.startswith("asrpt-bench: error: scheduler.nope: scheduler 'asrpt' has no parameter 'nope'")
    assert not (tmp_path / "bad").exists()


def test_no_config_file_sets_the_hydra_mode() -> None:
    """What makes skipping Hydra's mode-reading composition exact: no file of the tree sets hydra.mode."""
    for path in sorted(CONFIG_DIR.rglob("*.yaml")):
        node = OmegaConf.load(path)
        hydra_node = node.get("hydra") if hasattr(node, "get") else None
        assert not (hydra_node is not None and "mode" in hydra_node), path
        assert "hydra.mode" not in node, path


def test_arguments_that_may_set_the_mode_keep_hydras_own_reading() -> None:
    assert not cli_app._sets_mode(["-m", "seed=1,2", "scheduler.tau=0"])
    assert cli_app._sets_mode(["hydra.mode=MULTIRUN"]) and cli_app._sets_mode(["++hydra.mode=RUN"])
    assert cli_app._sets_mode(["--config-dir", "/elsewhere"]) and cli_app._sets_mode(["-cn", "other"])
