"""The dispatch map's figure on a small made-up results table: ratios to the best WCS, one panel per
trace x sigma plus the oracle row."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from matplotlib import pyplot as plt

from asrpt_bench.report.dispatch_plots import (REFERENCES, dispatch_ratios, legend_labels, near_best,
                                               plot_dispatch_map, variant_name)
from test_paper_figures import log_axis_problems

SCHEDULERS = {"asrpt": 4.0, "asrpt+easy": 2.0, "asrpt+conservative": 2.5, "asrpt+greedy": 1.5, "asrpt_oracle": 3.0,
              "asrpt_oracle+easy": 1.0, "spjf+easy": 1.2, "wcs_duration": 2.0, "wcs_workload": 3.0, "wcs_subtime": 2.2}


def table() -> pd.DataFrame:
    rows = []
    for trace in ("philly", "gavel"):
        for sigma in (0.0, None):
            for eligibility in ("virtual", "release"):
                for load in (0.5, 1.0):
                    for seed in range(2):
                        for name, jct in SCHEDULERS.items():
                            rows.append({"workload.name": trace, "workload.recurrence.sigma": sigma,
                                         "scheduler.eligibility": eligibility, "workload.target_load": load,
                                         "seed": seed, "scheduler": name, "total_jct": jct * (1 + 0.1 * seed),
                                         "status": "complete"})
    return pd.DataFrame(rows)


def test_ratios_are_over_the_best_wcs_of_each_point():
    summary = dispatch_ratios(table())
    assert set(summary["best_wcs"]) == {"wcs_duration"}
    easy = summary[summary["scheduler"] == "asrpt+easy"]
    assert easy["mean"].to_numpy() == pytest.approx(1.0)
    assert summary[summary["scheduler"] == "asrpt"]["mean"].to_numpy() == pytest.approx(2.0)
    assert variant_name("asrpt", "strict") == "asrpt" and variant_name("spjf", "easy") == "spjf+easy"


def test_figure_has_a_panel_per_trace_and_sigma_and_an_oracle_row():
    figure = plot_dispatch_map(table())
    assert len(figure.axes) == 2 * (2 + 1)
    assert "A-SRPT (oracle)" in figure.axes[-1].get_title()


def test_log_axes_draw_geometric_intervals_and_hidden_lines_are_named():
    figure = plot_dispatch_map(table())
    labels = [text.get_text() for legend in figure.legends for text in legend.get_texts()]
    assert len(figure.legends) == 1 and not any(axes.get_legend() for axes in figure.axes)  # below the panels
    assert len(labels) == len(set(labels))
    plt.close(figure)
    assert log_axis_problems(figure) == []
    assert "easy, release (= easy, virtual)" in labels
    assert legend_labels(dispatch_ratios(table()))["strict, virtual"] == "strict, virtual"


def test_within_is_two_sided_below_one_is_counted_apart_and_references_once_per_trace():
    """A ratio of 0.9 is below 1 but not within 5%; 1.02 is within; 0.97 is both. Intervals are made exact by
    equal totals on both seeds. The references run once per eligibility value but count once."""
    rows = []
    totals = {"asrpt": 1.02, "asrpt+easy": 0.9, "asrpt+greedy": 0.97, "wcs_duration": 1.0, "wcs_subtime": 1.2,
              "spjf+easy": 1.04, "random_order+easy": 1.5}
    for trace in ("philly", "gavel"):
        for eligibility in ("virtual", "release"):
            for load, seed in ((0.5, 0), (0.5, 1), (1.0, 0), (1.0, 1)):
                for name, total in totals.items():
                    rows.append({"workload.name": trace, "workload.recurrence.sigma": 1.0,
                                 "scheduler.eligibility": eligibility, "workload.target_load": load, "seed": seed,
                                 "scheduler": name, "total_jct": total, "status": "complete"})
    counts = near_best(dispatch_ratios(pd.DataFrame(rows))).set_index(
        ["workload.name", "scheduler", "scheduler.eligibility"])
    assert counts.loc[("philly", "asrpt", "virtual"), ["points", "within", "below"]].tolist() == [2, 2, 0]
    assert counts.loc[("philly", "asrpt+easy", "release"), ["within", "below"]].tolist() == [0, 2]
    assert counts.loc[("gavel", "asrpt+greedy", "virtual"), ["within", "below"]].tolist() == [2, 2]
    references = counts[counts.index.get_level_values("scheduler").isin(REFERENCES)]
    assert len(references) == 6 and set(references.index.get_level_values("scheduler.eligibility")) == {"virtual"}
    assert counts.loc[("gavel", "spjf+easy", "virtual"), "within"] == 2
    assert counts.loc[("gavel", "random_order+easy", "virtual"), ["within", "lowest"]].tolist() == [0, 1.5]
    assert list(counts.index.get_level_values("scheduler"))[-3:] == list(REFERENCES)
