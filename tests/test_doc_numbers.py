"""Measured numbers in README.md and docs/*.md: every generated block is what the committed results/
give (drift fails), every block name is known, and no line outside a block says 'measured' + a number."""

from __future__ import annotations

from pathlib import Path

import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.report import doc_numbers
from asrpt_bench.report.reproduction import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = doc_numbers.doc_files(ROOT)


def test_every_generated_block_matches_the_committed_results():
    assert doc_numbers.update_docs(ROOT, ROOT / "results", check=True) == [], \
        "run: python -m asrpt_bench.report.reproduction --results results --out REPRODUCTION.md"


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_block_names_are_known(path):
    assert set(doc_numbers.block_names(path.read_text(encoding="utf-8"))) <= set(doc_numbers.BLOCKS)


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_no_hand_typed_measured_number_outside_blocks(path):
    assert doc_numbers.unmarked_measured(path.read_text(encoding="utf-8")) == []


def test_every_block_is_used_somewhere():
    used = {name for path in DOCS for name in doc_numbers.block_names(path.read_text(encoding="utf-8"))}
    assert used == set(doc_numbers.BLOCKS)


def test_unknown_and_unclosed_blocks_are_refused():
    with pytest.raises(ConfigError, match="x.md: unknown generated block 'nosuch'"):
        doc_numbers.rewrite("<!-- generated:nosuch -->\n<!-- /generated:nosuch -->\n", "x.md", lambda n: "")
    with pytest.raises(ConfigError, match="generated block 'findings' has no closing"):
        doc_numbers.rewrite("<!-- generated:findings -->\nold\n", "x.md", lambda n: "")


def test_rewrite_replaces_only_the_content():
    text = "before\n<!-- generated:ablations -->\nold 1.5\n<!-- /generated:ablations -->\nafter\n"
    assert doc_numbers.rewrite(text, "x.md", lambda name: f"new {name}") == \
        "before\n<!-- generated:ablations -->\nnew ablations\n<!-- /generated:ablations -->\nafter\n"
    assert doc_numbers.unmarked_measured(text) == []
    assert doc_numbers.unmarked_measured("Measured 0.44 by hand\n") == ["Measured 0.44 by hand"]


@pytest.mark.slow
def test_drift_in_a_doc_is_found_and_rewritten(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    stale = "x\n<!-- generated:ablations -->\n| backfill | 0.36 |\n<!-- /generated:ablations -->\n"
    (tmp_path / "docs" / "a.md").write_text(stale, encoding="utf-8")
    report = tmp_path / "REPRODUCTION.md"
    argv = ["--results", str(ROOT / "results"), "--out", str(report), "--docs", str(tmp_path)]
    assert main(argv) == 0
    assert main([*argv, "--check"]) == 0
    fresh = (tmp_path / "docs" / "a.md").read_text(encoding="utf-8")
    assert "0.36" not in fresh and "experiment=ablation_backfill" in fresh
    (tmp_path / "docs" / "a.md").write_text(stale, encoding="utf-8")
    assert main([*argv, "--check"]) == 1
    assert "generated blocks differ" in capsys.readouterr().err


def test_the_blocks_show_their_progress_on_request_and_not_through_a_pipe(tmp_path, capsys):
    (tmp_path / "README.md").write_text("<!-- generated:ablations -->\n<!-- /generated:ablations -->\n", encoding="utf-8")
    doc_numbers.update_docs(tmp_path, ROOT / "results", check=True, progress=True)
    shown = capsys.readouterr().err
    assert "generated blocks: 100%" in shown and "1/1" in shown and "ablations" in shown
    doc_numbers.update_docs(tmp_path, ROOT / "results", check=True)  # default: only on a terminal
    assert capsys.readouterr().err == ""
