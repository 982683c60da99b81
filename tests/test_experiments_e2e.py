"""`experiments/run_all.sh --quick` end to end, as CI runs it: every named experiment at small scale
(asrpt_bench.quick) with seeds 0 and 1 (so confidence bands are drawn), collected, and every figure
drawn from those tables with its index, in a scratch directory. The experiments are found by listing
conf/experiment, so a new one is picked up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.quick import experiments
from asrpt_bench.report.figures import FIGURES, TABLE_ONLY

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = experiments()


def test_every_experiment_has_a_figure_or_says_why_not() -> None:
    drawn = {spec.name for spec in FIGURES}
    assert drawn | set(TABLE_ONLY) == set(EXPERIMENTS) and not drawn & set(TABLE_ONLY)


@pytest.mark.slow
def test_quick_run_all_runs_every_experiment_and_draws_every_figure(tmp_path: Path) -> None:
    committed = {path.name: path.read_bytes() for path in (ROOT / "results").glob("*.csv*")}
    done = subprocess.run(["bash", str(ROOT / "experiments" / "run_all.sh"), "--quick", "--out", str(tmp_path),
                           "seed=0,1"], cwd=ROOT, capture_output=True, text=True, timeout=1500,
                          env={**os.environ, "PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr[-3000:]
    for name in EXPERIMENTS:
        table = pd.read_csv(tmp_path / "results" / f"{name}.csv")
        assert (table["status"] == "complete").all(), (name, table["error"].dropna().tolist())
        assert set(table["seed"]) == {0, 1}, name
        assert set(table["experiment"]) == {name}
        assert (tmp_path / "figures" / f"{name}.png").exists() != (name in TABLE_ONLY), name
    index = (tmp_path / "figures" / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in index for name in EXPERIMENTS if name not in TABLE_ONLY)
    assert {path.name: path.read_bytes() for path in (ROOT / "results").glob("*.csv*")} == committed
