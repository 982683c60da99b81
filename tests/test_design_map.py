"""The design map (eligibility x virtual order x dispatch, with the trivial references): its config composes
and runs at small scale through the app; its table is collected, drawn by its figure and summarised by its
findings line and report row."""

from __future__ import annotations


import pandas as pd
import pytest

from asrpt_bench.collect import collect
from asrpt_bench.report import doc_numbers, reproduction
from asrpt_bench.report.design_plots import prediction_gap, virtual_order_effect
from asrpt_bench.report.figures import FIGURES
from asrpt_bench.report.style import save_figure
from test_cli import run_app
from test_paper_figures import log_axis_problems


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> pd.DataFrame:
    tmp_path = tmp_path_factory.mktemp("design_map")
    done = run_app("-m", "experiment=design_map", "debug=tiny", "seed=0,1",
                   "workload=philly", "workload.recurrence.sigma=1", "scheduler.eligibility=virtual,reservation",
                   "scheduler.virtual=srpt,psjf", "workload.target_load=1.0", f"hydra.sweep.dir={tmp_path / 'runs'}",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return collect([tmp_path / "runs"])


def test_every_point_runs_every_scheduler(table):
    assert (table["status"] == "complete").all() and table["run_dir"].nunique() == 8
    assert set(table["scheduler"]) >= {"asrpt+conservative", "random_order+easy", "spjf+easy", "wcs_subtime"}
    asrpt = table[table["scheduler"] == "asrpt"].set_index(["scheduler.eligibility", "scheduler.virtual", "seed"])
    assert asrpt.loc[("reservation", "srpt", 0), "total_jct"] != asrpt.loc[("virtual", "srpt", 0), "total_jct"]


def test_the_figure_and_text_read_the_table(table, tmp_path, monkeypatch):
    spec = next(spec for spec in FIGURES if spec.name == "design_map")
    spec.check(table, tmp_path / "design_map.csv")
    figure = spec.plot(table)
    assert len(figure.axes) == 2 and log_axis_problems(figure) == []
    assert save_figure(figure, tmp_path, spec.name)
    monkeypatch.setattr(doc_numbers, "load_result", lambda results, name: table)
    monkeypatch.setattr(reproduction, "load_result", lambda results, name: table)
    text = doc_numbers.BLOCKS["design_map"](tmp_path)
    assert text.startswith("- Eligibility x virtual order x dispatch (design map, loads 1-1, 2 seeds;")
    assert "easy/reservation/psjf" in text and "random_order+easy" in text and "within 5%: the 95% interval" in text
    claim = reproduction.virtual_order_claim(tmp_path)
    assert claim.experiment == "design_map" and claim.ours.startswith("philly sigma 1: ")


def test_the_order_effect_and_oracle_gap_are_per_seed_ratios():
    rows = []
    for seed in (0, 1):
        for virtual, factor in (("srpt", 1.0), ("psjf", 0.8)):
            for name, total in (("asrpt", 10.0), ("asrpt_oracle", 5.0)):
                rows.append({"workload.name": "philly", "workload.recurrence.sigma": None, "workload.target_load": 1.0,
                             "scheduler.eligibility": "virtual", "scheduler.virtual": virtual, "seed": seed,
                             "scheduler": name, "total_jct": total * factor * (1 + seed), "status": "complete"})
    effect = virtual_order_effect(pd.DataFrame(rows)).set_index("scheduler")
    assert effect.loc["asrpt", ["lowest", "highest"]].tolist() == pytest.approx([0.8, 0.8])
    assert effect.loc["asrpt", "workload.recurrence.sigma"] == "null"
    gap = prediction_gap(pd.DataFrame(rows)).set_index("scheduler.virtual")
    assert gap.loc["psjf", "lowest"] == pytest.approx(2.0)
