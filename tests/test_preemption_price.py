"""The preemption_price experiment's config composes, and its figure's ratios are the ones defined."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from matplotlib import pyplot as plt

from asrpt_bench.collect import collect
from asrpt_bench.report import doc_numbers
from asrpt_bench.report.preemption_plots import best_variants, plot_preemption_price, preemption_price
from test_cli import run_app
from test_paper_figures import log_axis_problems


TOTALS = {"asrpt": 10.0, "wcs_duration": 8.0, "fifo": 20.0, "srtf": 4.0, "srtf_oracle": 2.0, "las2d": 16.0}


def table() -> pd.DataFrame:
    """Two traces x two loads x two restart prices x three seeds; srtf costs restart/30 more per 30 s."""
    rows = []
    for trace, load, restart, seed in itertools.product(["philly", "gavel"], [0.5, 1.0], [0, 30], [0, 1, 2]):
        for name, total in TOTALS.items():
            scale = (1 + restart / 30) if name in ("srtf", "srtf_oracle", "las2d") else 1.0
            rows.append({"workload.name": trace, "workload.target_load": load, "preemption.restart_s": restart,
                         "seed": seed, "scheduler": name, "total_jct": total * scale * (1 + 0.01 * seed),
                         "experiment": "preemption_price", "status": "complete"})
    return pd.DataFrame(rows)


def test_ratios_are_over_the_best_non_preemptive_scheduler():
    summary = preemption_price(table()).set_index(["workload.name", "preemption.restart_s", "workload.target_load",
                                                   "scheduler"])
    assert set(summary["best_wcs"]) == {"wcs_duration"}
    assert summary.loc[("philly", 0, 0.5, "srtf"), "mean"] == pytest.approx(0.5)
    assert summary.loc[("gavel", 30, 1.0, "las2d"), "mean"] == pytest.approx(4.0)
    assert summary.loc[("gavel", 30, 1.0, "srtf_oracle"), "excludes_one"]


def test_the_figure_has_one_panel_per_trace():
    figure = plot_preemption_price(table())
    assert [axes.get_title() for axes in figure.axes] == ["gavel", "philly"]
    plt.close(figure)


def test_the_experiment_config_composes(tmp_path):
    """experiment=preemption_price composes with the app's config: the preemptive references beside the
    non-preemptive schedulers, sigma 1."""
    done = run_app("experiment=preemption_price", "--cfg", "job", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "srtf_oracle" in done.stdout and "las2d" in done.stdout and "sigma: 1.0" in done.stdout


def test_log_axes_draw_geometric_intervals_and_hidden_lines_are_named():
    equal = table()
    equal.loc[equal["scheduler"] == "las2d", "total_jct"] = equal.loc[equal["scheduler"] == "srtf", "total_jct"].to_numpy()
    figure = plot_preemption_price(equal)
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert log_axis_problems(figure) == []
    plt.close(figure)
    assert labels[:5] == ["SRTF", "SRTF (oracle)", "2D-LAS", "restart 0 s", "restart 30 s"]
    assert "SRTF, restart 0 s (= 2D-LAS, restart 0 s)" in labels[5:]


def test_every_panel_labels_at_least_three_ticks_on_its_ratio_axis():
    """A ratio axis within a decade (Gavel's 0.9-1.3) gets evenly spaced round ticks, not a lone 1."""
    from asrpt_bench.report.plots import RatioLocator

    assert [f"{t:g}" for t in RatioLocator().tick_values(0.88, 1.35) if 0.88 <= t <= 1.35] == ["0.9", "1", "1.1", "1.2",
                                                                                              "1.3"]
    assert [f"{t:g}" for t in RatioLocator().tick_values(0.7, 6.0) if 0.7 <= t <= 6.0] == ["1", "2", "5"]
    figure = plot_preemption_price(table())
    figure.canvas.draw()
    for axes in figure.axes:
        low, high = axes.get_ylim()
        shown = [tick for tick in axes.get_yticks() if low <= tick <= high]
        assert len(shown) >= 3, (axes.get_title(), shown)
    plt.close(figure)


def test_the_rerun_runs_small_and_takes_each_references_best_variant(tmp_path, monkeypatch):
    """experiment=preemption_price (always / net_gain x min run 0 / 300 s) at small scale through the app,
    collected: the figure draws one line per reference and restart, the price takes the best variant, and the
    findings line adds how suspensions spread over jobs."""
    done = run_app("-m", "experiment=preemption_price", "debug=tiny", "seed=0,1",
                   "workload=philly", "preemption.restart_s=30", "scheduler.preempt_rule=always,net_gain",
                   "preemption.min_run_s=0,300", "workload.target_load=1.0", f"hydra.sweep.dir={tmp_path / 'runs'}",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = collect([tmp_path / "runs"])
    assert (table["status"] == "complete").all() and table["run_dir"].nunique() == 8
    assert {"psjf", "psjf_oracle", "las2d"} <= set(table["scheduler"]) and "preempted_share" in table.columns
    summary = preemption_price(table)
    assert len(summary) == 4 * 5  # 4 variants x 5 references at one trace, restart and load
    best = best_variants(summary)
    assert len(best) == 5 and best["variant"].str.startswith("preempt_rule ").all()
    figure = plot_preemption_price(table)
    assert log_axis_problems(figure) == []
    plt.close(figure)
    monkeypatch.setattr(doc_numbers, "load_result", lambda results, name: table)
    text = doc_numbers.preemption_findings(tmp_path)
    assert "the best of every preempt_rule x min_run_s variant per point" in text
    assert "Suspensions per job at restart 30 s" in text and "psjf net_gain, min run 0 s:" in text
    assert text.count("las2d, min run 300 s:") == 1 and "las2d always" not in text  # no rule reaches las2d
