"""The heterogeneity study (issue 24 step 5): its two experiments (Gavel's trace on Gavel's typed cluster;
Philly on the mixed preset) compose and run at small scale through the app; their tables
are collected, drawn by their figures and summarised per trace by the findings lines and the report row, which
count the references that use no prediction beside A-SRPT and price non-migration and non-preemption."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.collect import collect
from asrpt_bench.report import doc_numbers, reproduction
from asrpt_bench.report import heterogeneity_plots
from asrpt_bench.report.figures import FIGURES
from asrpt_bench.report.heterogeneity_plots import (COUNTED, intervals_beside_one, price_ratios, trace_text,
                                                    without_repeats)
from asrpt_bench.report.plots import geometric_ci
from asrpt_bench.report.published import load_result
from asrpt_bench.report.style import save_figure
from test_cli import run_app
from test_paper_figures import log_axis_problems

ROOT = Path(__file__).resolve().parents[1]


def run_small(tmp_path: Path, name: str) -> pd.DataFrame:
    """Experiment `name` through the app: tiny, seeds 0 and 1, load 1.0, every pool choice and virtual machine."""
    done = run_app("-m", f"experiment={name}", "debug=tiny", "seed=0,1",
                   "workload.target_load=1.0", f"hydra.sweep.dir={tmp_path / 'runs'}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return collect([tmp_path / "runs"])


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> pd.DataFrame:
    return run_small(tmp_path_factory.mktemp("heterogeneity"), "heterogeneity")


@pytest.fixture(scope="module")
def philly(tmp_path_factory) -> pd.DataFrame:
    return run_small(tmp_path_factory.mktemp("heterogeneity_philly"), "heterogeneity_philly")


SCHEDULERS = {"asrpt", "asrpt+easy", "asrpt_oracle", "fifo", "fifo+easy", "fifo_replan", "spjf+easy", "wcs_duration",
              "wcs_workload", "wcs_subtime", "srtf", "srtf_oracle", "las2d"}


def test_every_point_runs_every_scheduler_on_the_typed_cluster(table):
    assert (table["status"] == "complete").all() and table["run_dir"].nunique() == 8
    assert set(table["scheduler"]) == SCHEDULERS
    assert set(table["placement.pool"]) == {"fastest_fit", "type_agnostic"}
    assert set(table["scheduler.virtual_gpus"]) == {"speed_weighted", "count"}
    assert (table["cluster_gpus"] == 108).all() and {"jobs_k80", "jobs_p100", "jobs_v100"} <= set(table.columns)


def test_the_philly_study_runs_the_same_schedulers_on_the_mixed_preset(philly):
    assert (philly["status"] == "complete").all() and philly["run_dir"].nunique() == 8
    assert set(philly["scheduler"]) == SCHEDULERS and set(philly["workload.name"]) == {"philly"}
    assert (philly["cluster_gpus"] == 96).all() and {"jobs_k80", "jobs_p100", "jobs_v100"} <= set(philly.columns)


def test_the_figures_and_text_read_both_tables_per_trace(table, philly, tmp_path, monkeypatch):
    for name, data in (("heterogeneity", table), ("heterogeneity_philly", philly)):
        spec = next(spec for spec in FIGURES if spec.name == name)
        spec.check(data, tmp_path / f"{name}.csv")
        figure = spec.plot(data)
        assert len(figure.axes) == 4 and log_axis_problems(figure) == []
        assert save_figure(figure, tmp_path, spec.name)
    tables = {"heterogeneity": table, "heterogeneity_philly": philly}
    monkeypatch.setattr(doc_numbers, "load_result", lambda results, name: tables[name])
    monkeypatch.setattr(reproduction, "load_result", lambda results, name: tables[name])
    assert heterogeneity_plots.STUDIES == ("heterogeneity", "heterogeneity_philly")
    text = doc_numbers.BLOCKS["heterogeneity"](tmp_path)
    assert text.startswith("- Heterogeneous GPUs, each scheduler's total JCT / the best WCS per point")
    lines = text.splitlines()
    assert [line[:60] for line in lines[1:]] == [
        "  - gavel, 30 jobs on 36 V100 + 36 P100 + 36 K80 (loads 1, 2 seeds): fastest_fit: "[:60],
        "  - philly, 30 jobs on 32 V100 + 32 P100 + 32 K80 (loads 1, 2 seeds): fastest_fit: "[:60]]
    for line in lines[1:]:
        assert all(f"; {name}" in line or f": {name}" in line for name in COUNTED[1:])
        assert "price of non-migration, fifo / fifo_replan " in line and "/ srtf_oracle " in line and "/ las2d " in line
    claim = reproduction.heterogeneity_claim(tmp_path)
    assert claim.experiment == "heterogeneity, heterogeneity_philly"
    assert claim.ours.startswith("gavel, 30 jobs on 36 V100 + 36 P100 + 36 K80: fastest_fit: asrpt")
    assert ". philly, 30 jobs on 32 V100 + 32 P100 + 32 K80: fastest_fit: asrpt" in claim.ours


def test_the_committed_line_counts_every_reference_and_prices_by_the_stated_definitions():
    """On results/heterogeneity.csv: per pool choice the six counted schedulers, each load's interval and the
    two prices; FIFO / fifo_replan checked against the per-seed ratios computed here."""
    committed = load_result(ROOT / "results", "heterogeneity")
    line = trace_text(committed)
    assert line.startswith("  - gavel, 460 jobs on 36 V100 + 36 P100 + 36 K80 (loads 0.8, 1, 5 seeds): fastest_fit: ")
    for pool in ("fastest_fit", "type_agnostic"):
        part = line.split(f"{pool}: ")[1].split(". ")[0]
        for name in ("asrpt/count", "asrpt/speed_weighted", "asrpt_oracle/count", "fifo", "fifo+easy", "wcs_subtime",
                     "spjf+easy"):
            assert f"{name} " in part and "of 2 loads)" in part
        runs = committed[committed["placement.pool"] == pool].drop_duplicates(["scheduler", "workload.target_load",
                                                                                 "seed"])
        pivot = runs.pivot_table(index=["workload.target_load", "seed"], columns="scheduler", values="total_jct")
        ratio = (pivot["fifo"] / pivot["fifo_replan"]).rename("ratio").reset_index()
        price = geometric_ci(ratio, ["workload.target_load"], "ratio")
        expected = ", ".join(f"{row['mean']:.3g} [{row['low']:.3g}, {row['high']:.3g}]" for _, row in price.iterrows())
        assert f"price of non-migration, fifo / fifo_replan {expected} (above 1 at " in part
        assert "price of non-preemption, best non-preemptive / srtf " in part


def test_schedulers_the_virtual_machine_does_not_reach_are_named_once_and_prices_invert():
    rows = []
    for machine, asrpt in (("speed_weighted", 3.0), ("count", 5.0)):
        for seed in (0, 1):
            for name, total in (("asrpt", asrpt), ("fifo", 4.0), ("fifo_replan", 2.0), ("srtf", 1.0),
                                ("wcs_duration", 2.0), ("wcs_workload", 6.0), ("wcs_subtime", 8.0)):
                rows.append({"placement.pool": "fastest_fit", "scheduler.virtual_gpus": machine,
                             "workload.target_load": 1.0, "seed": seed, "scheduler": name,
                             "total_jct": total * (1 + seed), "status": "complete"})
    table = pd.DataFrame(rows)
    ratios = without_repeats(heterogeneity_plots.heterogeneity_ratios(table, COUNTED)).set_index(
        ["scheduler", "scheduler.virtual_gpus"])["mean"]
    assert ratios.to_dict() == pytest.approx({("asrpt", "count"): 2.5, ("asrpt", "speed_weighted"): 1.5,
                                              ("fifo", ""): 2.0, ("wcs_subtime", ""): 4.0})
    prices = without_repeats(price_ratios(table)).set_index(["scheduler", "scheduler.virtual_gpus"])
    assert prices["mean"].to_dict() == pytest.approx({("fifo_replan", ""): 2.0, ("srtf", ""): 2.0})
    assert prices.loc[("srtf", ""), "best_wcs"] == "wcs_duration"


def test_one_seed_counts_no_interval_beside_one():
    summary = pd.DataFrame({"mean": [0.5, 2.0, 0.5], "low": [0.4, 1.5, 0.45], "high": [0.6, 2.5, 0.55],
                            "n": [1, 2, 2]})
    assert intervals_beside_one(summary) == (1, 1)
