"""paper_figures/ holds every figure, drawn byte-stably from the committed results/ tables, each file
at most 300 KB, with an index that names its paper figure, table and command."""

from __future__ import annotations

from pathlib import Path

from asrpt_bench.report.figures import FIGURES, make_figures
from asrpt_bench.report.style import MAX_FILE_BYTES

ROOT = Path(__file__).resolve().parents[1]


def test_the_same_tables_give_the_same_bytes(tmp_path: Path) -> None:
    first, _, refused = make_figures(ROOT / "results", tmp_path / "a")
    second, _, _ = make_figures(ROOT / "results", tmp_path / "b")
    assert refused == []
    assert [p.name for p in first] == [p.name for p in second]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_paper_figures_holds_every_figure_within_the_size_limit(tmp_path: Path) -> None:
    committed = ROOT / "paper_figures"
    for spec in FIGURES:
        assert (committed / f"{spec.name}.png").exists(), spec.name
    assert all(path.stat().st_size <= MAX_FILE_BYTES for path in committed.glob("*.p[nd][gf]"))
    written, _, _ = make_figures(ROOT / "results", tmp_path)
    assert (committed / "README.md").read_text(encoding="utf-8") == (tmp_path / "README.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in committed.glob("*.p[nd][gf]")) == sorted(p.name for p in written)
