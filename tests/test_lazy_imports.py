"""Heavy libraries load only on the paths that use them (measured with `python -X importtime`).

scikit-learn and matplotlib cost seconds at startup, SciPy half a second, NetworkX some 70 ms; a simulation of a
CSV job table with oracle predictions uses none of them, nor a MILP/CP solver, nor does a forest run whose
predictions are cached. The same probe on a forest run that fits must see scikit-learn, so the probe itself is
shown to work. NetworkX is for the ILP placer and for reading graph.txt profiles (a cold run's model
assignment): Heavy-Edge places on Omega's weights (graph.omega_weights), so a warm run whose jobs span servers
does not import it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "data" / "fixed_jobs.csv"
HEAVY = ("sklearn", "matplotlib", "scipy", "ortools", "highspy", "pulp", "gurobipy", "ray")


def imported_modules(tmp_path: Path, *overrides: str) -> set[str]:
    """Every module the asrpt-bench app imports for one run with `overrides`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HYDRA_FULL_ERROR": "0"}
    tmp_path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "asrpt_bench.cli", *overrides, "progress=false",
                           f"hydra.run.dir={tmp_path / 'run'}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:") and "|" in line]
    return {line.rsplit("|", 1)[1].strip() for line in lines}


def top_level_heavy(modules: set[str]) -> set[str]:
    return {name for name in HEAVY if any(m == name or m.startswith(name + ".") for m in modules)}


def test_simulating_a_csv_with_oracle_predictions_imports_no_heavy_library(tmp_path: Path) -> None:
    modules = imported_modules(tmp_path, "task=simulate", "workload=csv", f"workload.path={TABLE}",
                               "predictor=oracle", "workload.job_cap=50", f"cache.dir={tmp_path / 'cache'}")
    assert "asrpt_bench.sim.engine" in modules
    assert top_level_heavy(modules) == set()


def test_a_warm_run_placing_jobs_across_servers_imports_no_networkx(tmp_path: Path) -> None:
    """Servers of 2 GPUs: the table's 4-GPU jobs span servers, so Heavy-Edge reads Omega's edges."""
    run = ("task=simulate", "workload=csv", f"workload.path={TABLE}", "predictor=oracle", "workload.job_cap=50",
           "cluster.gpus_per_server=2", "cluster.servers=16", f"cache.dir={tmp_path / 'cache'}")
    cold = imported_modules(tmp_path / "cold", *run)  # reads the zoo's graph.txt profiles (the probe sees NetworkX)
    assert "networkx" in cold
    warm = imported_modules(tmp_path / "warm", *run)
    assert "asrpt_bench.placement.heavy_edge" in warm and "asrpt_bench.placement.links" in warm
    assert not any(m == "networkx" or m.startswith("networkx.") for m in warm)


def test_a_forest_run_imports_scikit_learn_only_when_its_predictions_are_not_cached(tmp_path: Path) -> None:
    forest = ("task=simulate", "workload=synthetic", "debug=tiny", f"cache.dir={tmp_path / 'cache'}")
    cold = imported_modules(tmp_path / "cold", *forest)  # fits the forest (the probe sees scikit-learn)
    assert {"sklearn", "scipy"} <= top_level_heavy(cold)  # scikit-learn imports SciPy
    assert "matplotlib" not in top_level_heavy(cold)
    warm = imported_modules(tmp_path / "warm", *forest)  # the predictions come from the cache
    assert "asrpt_bench.sim.engine" in warm
    assert top_level_heavy(warm) == set()
