"""paper_figures/ holds every figure, drawn byte-stably from the committed results/ tables, each file
at most 300 KB, with an index that names its paper figure, table and command; no log axis of any figure
draws an arithmetic or non-positive interval, or a bar."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib import pyplot as plt
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from asrpt_bench.core import ConfigError
from asrpt_bench.report.figures import FIGURES, FigureSpec, make_figures
from asrpt_bench.report.plots import coincident_labels, geometric_ci, mean_ci, plot_band, worst_gap
from asrpt_bench.report.style import MAX_FILE_BYTES
from asrpt_bench.report.table_check import read_table, table_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_same_tables_give_the_same_bytes(tmp_path: Path) -> None:
    first, _, refused = make_figures(ROOT / "results", tmp_path / "a")
    second, _, _ = make_figures(ROOT / "results", tmp_path / "b")
    assert refused == []
    assert [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


@pytest.mark.slow
def test_paper_figures_holds_every_figure_within_the_size_limit(tmp_path: Path) -> None:
    committed = ROOT / "paper_figures"
    for spec in FIGURES:
        assert (committed / f"{spec.name}.png").exists(), spec.name
    assert all(path.stat().st_size <= MAX_FILE_BYTES for path in committed.glob("*.p[nd][gf]"))
    written, _, _ = make_figures(ROOT / "results", tmp_path)
    assert (committed / "README.md").read_text(encoding="utf-8") == (tmp_path / "README.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in committed.glob("*.p[nd][gf]")) == sorted(p.name for p in written)


def log_axis_problems(figure: Figure) -> list[str]:
    """What misleads on the figure's log y axes: a band or error bar that is not the geometric interval
    of plots.geometric_ci (artist gid "ci:geometric") or reaches zero or below, and any bar."""
    problems = []
    for k, axes in enumerate(figure.axes):
        if axes.get_yscale() != "log":
            continue
        for artist in axes.collections:
            if not isinstance(artist, (PolyCollection, LineCollection)):
                continue
            if artist.get_gid() != "ci:geometric":
                problems.append(f"axes {k}: an interval drawn as {artist.get_gid() or 'untagged'}")
            heights = np.concatenate([path.vertices[:, 1] for path in artist.get_paths()] or [np.ones(1)])
            if not np.all(np.isfinite(heights) & (heights > 0)):
                problems.append(f"axes {k}: an interval reaching {np.nanmin(heights):.3g}")
        problems += [f"axes {k}: a bar" for patch in axes.patches if isinstance(patch, Rectangle)]
    return problems


@pytest.mark.parametrize("spec", FIGURES, ids=lambda spec: spec.name)
def test_every_log_axis_draws_geometric_positive_intervals_and_no_bars(spec: FigureSpec) -> None:
    figure = spec.plot(read_table(table_path(ROOT / "results", spec.table)))
    try:
        assert log_axis_problems(figure) == []
    finally:
        plt.close(figure)


def test_the_log_axis_check_catches_arithmetic_bands_and_bars() -> None:
    table = pd.DataFrame({"x": [1, 1, 1, 2, 2, 2], "v": [1.0, 1.0, 1e4, 1.0, 2.0, 3.0]})
    figure, (arithmetic, bars, geometric) = plt.subplots(1, 3)
    plot_band(arithmetic, mean_ci(table, ["x"], "v"), "x")
    bars.bar([1, 2], [1.0, 2.0])
    plot_band(geometric, geometric_ci(table, ["x"], "v"), "x")
    for axes in figure.axes:
        axes.set_yscale("log")
    problems = log_axis_problems(figure)
    plt.close(figure)
    assert problems[0] == "axes 0: an interval drawn as ci:arithmetic"
    assert problems[1].startswith("axes 0: an interval reaching -")
    assert problems[2:] == ["axes 1: a bar", "axes 1: a bar"]


def test_coinciding_series_say_so_in_the_legend() -> None:
    summary = pd.DataFrame({"s": ["wcs_duration"] * 2 + ["wcs_workload"] * 2 + ["fifo"] * 2, "x": [1, 2] * 3,
                            "mean": [1.0, 2.0, 1.0, 2.0, 1.0, 5.0]})
    assert coincident_labels(summary, "s", "x") == {"wcs_duration": "WCS-Duration",
                                                    "wcs_workload": "WCS-Workload (= WCS-Duration)",
                                                    "fifo": "FIFO (= WCS-Duration at x 1)"}


def test_the_worst_placement_gap_is_one_maximum_over_instances() -> None:
    runs = read_table(ROOT / "results" / "placement_heavy_edge_vs_ilp.csv")
    contract = runs[runs["placement.mode"] == "contract"]
    assert worst_gap(contract) == contract["alpha_penalty_max"].max()
    instances = pd.read_csv(ROOT / "results" / "placement_study_contract.csv")
    assert worst_gap(instances) == instances["gap"].max()


def test_a_gzipped_table_is_found_and_read_as_the_csv_it_holds(tmp_path: Path) -> None:
    """A committed table above 4 MB is stored as NAME.csv.gz (run_all.sh --publish): the report finds it
    under its plain name and reads the same rows; a plain NAME.csv beside it is refused, not guessed at."""
    import gzip

    text = "experiment,total_jct\nx,1.5\n"
    (tmp_path / "x.csv.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    assert table_path(tmp_path, "x.csv") == tmp_path / "x.csv.gz"
    assert read_table(table_path(tmp_path, "x.csv"))["total_jct"].tolist() == [1.5]
    (tmp_path / "x.csv").write_text(text)
    with pytest.raises(ConfigError, match="x.csv and x.csv.gz both exist beside each other"):
        table_path(tmp_path, "x.csv")
    assert table_path(tmp_path, "y.csv") == tmp_path / "y.csv"


def test_drawing_shows_its_progress_naming_each_figure_on_request(tmp_path: Path, capsys) -> None:
    import shutil

    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(ROOT / "results" / "ablation_backfill.csv", results)
    written, skipped, _ = make_figures(results, tmp_path / "out", progress=True)
    shown = capsys.readouterr().err
    assert [p.name for p in written] == ["ablation_backfill.png", "ablation_backfill.pdf"]
    assert len(skipped) == len(FIGURES) - 1
    assert "figures: 100%" in shown and f"{len(FIGURES)}/{len(FIGURES)}" in shown
    assert all(spec.name in shown for spec in FIGURES)
    make_figures(results, tmp_path / "again")  # default: only on a terminal
    assert capsys.readouterr().err == ""
