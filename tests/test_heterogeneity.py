"""The heterogeneity study (issue 24 step 5): its config composes and runs at small
scale through the app on Gavel's typed cluster; its table is collected, drawn by its figure and
summarised by its findings line and report row."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.collect import collect
from asrpt_bench.report import doc_numbers, reproduction
from asrpt_bench.report.figures import FIGURES
from asrpt_bench.report.heterogeneity_plots import intervals_beside_one
from asrpt_bench.report.style import save_figure
from test_cli import run_app
from test_paper_figures import log_axis_problems

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> pd.DataFrame:
    tmp_path = tmp_path_factory.mktemp("heterogeneity")
    (tmp_path / "experiment").mkdir()
    shutil.copy(ROOT / "asrpt_bench" / "conf" / "experiment" / "heterogeneity.yaml", tmp_path / "experiment")
    done = run_app("--config-dir", str(tmp_path), "-m", "experiment=heterogeneity", "debug=tiny", "seed=0,1",
                   "workload.target_load=1.0", f"hydra.sweep.dir={tmp_path / 'runs'}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return collect([tmp_path / "runs"])


def test_every_point_runs_every_scheduler_on_the_typed_cluster(table):
    assert (table["status"] == "complete").all() and table["run_dir"].nunique() == 8
    assert set(table["scheduler"]) == {"asrpt", "asrpt+easy", "asrpt_oracle", "fifo", "fifo+easy", "fifo_replan",
                                       "spjf+easy", "wcs_duration", "wcs_workload", "wcs_subtime", "srtf"}
    assert set(table["placement.pool"]) == {"fastest_fit", "type_agnostic"}
    assert set(table["scheduler.virtual_gpus"]) == {"speed_weighted", "count"}
    assert (table["cluster_gpus"] == 108).all() and {"jobs_k80", "jobs_p100", "jobs_v100"} <= set(table.columns)


def test_the_figure_and_text_read_the_table(table, tmp_path, monkeypatch):
    spec = next(spec for spec in FIGURES if spec.name == "heterogeneity")
    spec.check(table, tmp_path / "heterogeneity.csv")
    figure = spec.plot(table)
    assert len(figure.axes) == 4 and log_axis_problems(figure) == []
    assert save_figure(figure, tmp_path, spec.name)
    monkeypatch.setattr(doc_numbers, "load_result", lambda results, name: table)
    monkeypatch.setattr(reproduction, "load_result", lambda results, name: table)
    text = doc_numbers.BLOCKS["heterogeneity"](tmp_path)
    assert text.startswith("- Heterogeneous GPUs (Gavel's trace on 36 V100 + 36 P100 + 36 K80;")
    assert "fastest_fit/speed_weighted: asrpt " in text and "type_agnostic/count: asrpt " in text
    claim = reproduction.heterogeneity_claim(tmp_path)
    assert claim.experiment == "heterogeneity" and claim.ours.startswith("fastest_fit/count: ")


def test_one_seed_counts_no_interval_beside_one():
    summary = pd.DataFrame({"mean": [0.5, 2.0, 0.5], "low": [0.4, 1.5, 0.45], "high": [0.6, 2.5, 0.55],
                            "n": [1, 2, 2]})
    assert intervals_beside_one(summary) == (1, 1)
