"""Every named experiment at its quick scale (asrpt_bench.quick, as `run_all.sh --quick` runs it) with
seeds 0 and 1 (so confidence bands are drawn): sweep -> collect -> figure, in a tmp dir. The experiments are found by listing conf/experiment, so a
new one is picked up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.collect import main as collect_main
from asrpt_bench.quick import experiments, quick_overrides
from asrpt_bench.report.figures import FIGURES, make_figures

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = experiments()


def test_every_experiment_has_a_figure() -> None:
    assert {spec.name for spec in FIGURES} == set(EXPERIMENTS)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_runs_end_to_end(name: str, tmp_path: Path) -> None:
    sweep = tmp_path / "multirun" / name
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", "-m", *quick_overrides(name), "seed=0,1",
                           f"hydra.sweep.dir={sweep}"],
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
