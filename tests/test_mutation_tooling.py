"""The mutation run's docs page is what its recorded runs give, and CI has the per-test timeout that turns a
test looping forever (as a mutant of a search loop can) into a failure instead of a hang."""

from __future__ import annotations

from pathlib import Path

import pytest

import tool_scripts


def load_tool():
    return tool_scripts.load_tool("mutation")


def test_docs_page_and_readme_scores_are_generated_from_the_recorded_runs() -> None:
    tool = load_tool()
    runs, judgements = tool.records(), tool.load_judgements()
    assert tool.block(tool.DOC, tool.BEGIN, tool.END) == tool.render(runs, judgements), \
        "run `python tools/mutation.py report`"
    assert tool.block(tool.README, tool.README_BEGIN, tool.README_END) == tool.summary(runs, judgements), \
        "run `python tools/mutation.py report`"


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


def test_the_mutation_score_leaves_out_survivors_judged_equivalent_and_the_raw_score_does_not() -> None:
    tool = load_tool()
    diff = "-    x = a * b\n+    x = a / b"
    record = {"outcome": {"k": "killed", "t": "timeout", "eq": "survived", "gap": "survived", "none": "no tests",
                          "stale": "survived", "skip": "skipped"},
              "survivors": {name: diff for name in ("eq", "gap", "none", "stale", "skip")}}
    judgements = {"eq": {"line": "x = a / b", "equivalent": True, "why": "w"},
                  "gap": {"line": "x = a / b", "equivalent": False, "why": "w"},
                  "none": {"line": "x = a / b", "equivalent": True, "why": "w"},
                  "stale": {"line": "x = a - b", "equivalent": True, "why": "w"},
                  "skip": {"line": "x = a / b", "equivalent": True, "why": "w"}}
    assert tool.score(record) == (2, 6)                            # raw: killed / sampled (not skipped)
    assert tool.equivalents(record, judgements) == 2               # eq and none; stale and skipped do not count
    assert tool.mutation_score(record, judgements) == (2, 4)       # killed / (sampled - equivalent)
    assert tool.percent(2, 4) == "50.0%" and tool.percent(0, 0) == "n/a"
    assert tool.summary([{**record, "module": "sim/"}], judgements).endswith(
        ": `sim/` 50.0% (33.3%); no recorded run yet: `schedulers/`, `timing`, `placement/heavy_edge`, "
        "`workloads/schema`.")


def test_a_package_mutates_every_file_under_it_and_a_module_one_file(tmp_path: Path) -> None:
    tool = load_tool()
    for name in ("sim/__init__.py", "sim/engine.py", "sim/deep/inner.py", "sim/notes.txt", "sim/__pycache__/x.py",
                 "timing.py"):
        (tmp_path / "asrpt_bench" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "asrpt_bench" / name).write_text("")
    files = tool.module_paths("sim/", tmp_path)
    assert [p.as_posix() for p in files] == ["asrpt_bench/sim/__init__.py", "asrpt_bench/sim/deep/inner.py",
                                              "asrpt_bench/sim/engine.py"]
    assert [p.as_posix() for p in tool.module_paths("timing", tmp_path)] == ["asrpt_bench/timing.py"]
    assert (tool.slug("sim/"), tool.slug("sim/engine"), tool.display_path("sim/")) == ("sim", "sim.engine",
                                                                                        "asrpt_bench/sim/")
    with pytest.raises(SystemExit, match="no package 'placement/'"):
        tool.module_paths("placement/", tmp_path)
    with pytest.raises(SystemExit, match="no module 'sim'"):
        tool.module_paths("sim", tmp_path)
    cfg = tool.setup_cfg(files, ["test_sim_engine.py"], ["pyproject.toml"])
    only = cfg.split("only_mutate =", 1)[1].split("\npytest", 1)[0].split()
    assert only == [p.as_posix() for p in files]


def test_a_seeded_sample_is_drawn_once_across_the_population() -> None:
    tool = load_tool()
    population = [f"m{i:03d}" for i in range(300)]
    sample = tool.draw(population, 150, 0)
    assert sample == tool.draw(population, 150, 0) == sorted(sample) and len(set(sample)) == 150
    assert sample != tool.draw(population, 150, 1)
    assert tool.draw(population, 0, 0) == population and tool.draw(population[:5], 150, 0) == population[:5]
