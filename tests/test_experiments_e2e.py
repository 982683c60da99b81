"""Every named experiment, on the tiny debug setting: sweep -> collect -> figure, in a tmp dir.

The experiments are found by listing conf/experiment, so a new one is picked up. Each swept axis
other than the seed is cut to its first two values to keep the suite fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from asrpt_bench.cli import CONFIG_DIR
from asrpt_bench.collect import main as collect_main
from asrpt_bench.report.figures import FIGURES, make_figures

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = sorted(p.stem for p in (CONFIG_DIR / "experiment").glob("*.yaml"))


def _reduced_axes(name: str) -> list[str]:
    config = yaml.safe_load((CONFIG_DIR / "experiment" / f"{name}.yaml").read_text())
    params = config["hydra"]["sweeper"]["params"]
    return [f"{key}={','.join(str(values).split(',')[:2])}" for key, values in params.items() if key != "seed"]


def test_every_experiment_has_a_figure() -> None:
    assert {spec.name for spec in FIGURES} == set(EXPERIMENTS)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_runs_end_to_end(name: str, tmp_path: Path) -> None:
    sweep = tmp_path / "multirun" / name
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", "-m", f"experiment={name}", "debug=tiny",
                           *_reduced_axes(name), f"hydra.sweep.dir={sweep}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = tmp_path / "results"
    assert collect_main([str(sweep), "--out", str(results / f"{name}.csv")]) == 0
    table = pd.read_csv(results / f"{name}.csv")
    assert (table["status"] == "complete").all(), table.loc[table["status"] != "complete", "error"].tolist()
    assert set(table["seed"]) == {0, 1}
    written, _, refused = make_figures(results, tmp_path / "figures")
    assert refused == []
    assert sorted(p.name for p in written) == [f"{name}.pdf", f"{name}.png"]
