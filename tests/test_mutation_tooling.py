"""The mutation run's docs page is what its recorded runs give, and CI has the per-test timeout that turns a
test looping forever (as a mutant of a search loop can) into a failure instead of a hang."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_tool():
    spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_page_is_generated_from_the_recorded_runs() -> None:
    tool = load_tool()
    text = tool.DOC.read_text()
    block = text.split(tool.BEGIN, 1)[1].split(tool.END, 1)[0].strip("\n")
    assert block == tool.render(tool.records(), tool.load_judgements()), "run `python tools/mutation.py report`"


def test_every_judgement_names_a_recorded_survivor_and_is_current() -> None:
    tool = load_tool()
    survivors = {name: diff for record in tool.records() for name, diff in record["survivors"].items()}
    for name, entry in tool.load_judgements().items():
        assert name in survivors, f"{name}: judged but not a survivor of any recorded run"
        assert entry["line"] == tool.mutated_line(survivors[name]), f"{name}: the judgement is stale"
        assert isinstance(entry["equivalent"], bool) and entry["why"].strip(), name


def test_score_counts_timeouts_as_kills_and_the_interval_holds_the_estimate() -> None:
    tool = load_tool()
    record = {"outcome": {"a": "killed", "b": "timeout", "c": "survived", "d": "no tests", "e": "skipped"}}
    assert tool.score(record) == (2, 4)
    low, high = tool.wilson(95, 100)
    assert low < 0.95 < high and low == pytest.approx(0.8882, abs=1e-4) and high == pytest.approx(0.9785, abs=1e-4)


def test_a_test_has_a_generous_timeout(request: pytest.FixtureRequest) -> None:
    assert request.config.pluginmanager.hasplugin("timeout"), "pytest-timeout is in the test extra"
    assert float(request.config.getini("timeout")) == 900
