"""tools/gavel_side_by_side.py reads Gavel's stdout and our jobs.parquet, matches jobs by trace line and
refuses inputs it cannot match."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import tool_scripts


def load_tool():
    return tool_scripts.load_tool("gavel_side_by_side")


GAVEL_STDOUT = """Total duration: 400.000 seconds (0.11 hours)
Job completion times:
Job 0: 100.000
Job 1: 300.000
Job 2: 200.000
Average job completion time: 200.000 seconds (0.06 hours)
"""


def write_ours(path: Path, jcts: list[float], scheduler: list[str] | None = None) -> Path:
    n = len(jcts)
    table = pd.DataFrame({"job_id": [f"gavel-t-{i % 3 + 1:05d}" for i in range(n)],
                          "release": [10.0] * n, "end": [10.0 + j for j in jcts], "jct": jcts})
    if scheduler is not None:
        table["scheduler"] = scheduler
    table.to_parquet(path)
    return path


def test_matches_jobs_by_trace_line_and_reports_agreement(tmp_path, capsys):
    tool = load_tool()
    (tmp_path / "g.out").write_text(GAVEL_STDOUT, encoding="utf-8")
    ours = write_ours(tmp_path / "jobs.parquet", [100.0, 200.0, 150.0])
    assert tool.main([str(tmp_path / "g.out"), str(ours)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "ours_without_gavel_jct: 0" in lines
    assert "ours_mean_jct_s: 150" in lines
    assert "mean_jct_gavel_over_ours: 1.333333333" in lines
    assert "ours_makespan_s: 200" in lines
    assert "makespan_gavel_over_ours: 2" in lines
    assert "median_abs_job_gap_s: 50" in lines  # gaps 0, 100, 50


def test_picks_one_scheduler_of_a_compare_run(tmp_path):
    tool = load_tool()
    path = write_ours(tmp_path / "jobs.parquet", [100.0, 300.0, 200.0, 1.0, 1.0, 1.0], ["a"] * 3 + ["b"] * 3)
    jcts, makespan = tool.read_ours(path, "a")
    assert jcts.to_dict() == {0: 100.0, 1: 300.0, 2: 200.0} and makespan == 300.0
    with pytest.raises(SystemExit, match=r"holds schedulers \['a', 'b'\]: give --scheduler"):
        tool.read_ours(path, None)
    with pytest.raises(SystemExit, match="no scheduler 'c'"):
        tool.read_ours(path, "c")


def test_refuses_other_output_and_other_jobs(tmp_path):
    tool = load_tool()
    (tmp_path / "x.out").write_text("Job 0: 1.0\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="x.out: no 'Job N:'"):
        tool.read_gavel(tmp_path / "x.out")
    (tmp_path / "g.out").write_text(GAVEL_STDOUT, encoding="utf-8")
    ours = write_ours(tmp_path / "jobs.parquet", [100.0, 200.0])
    with pytest.raises(SystemExit, match=r"1 Gavel jobs are not in ours \(first: 2\)"):
        tool.main([str(tmp_path / "g.out"), str(ours)])


def test_a_job_gavel_gave_up_on_is_left_out_of_both_means(tmp_path):
    tool = load_tool()
    (tmp_path / "g.out").write_text(GAVEL_STDOUT.replace("Job 1: 300.000\n", "")
                                    .replace("200.000 seconds", "150.000 seconds"), encoding="utf-8")
    gavel, mean, makespan = tool.read_gavel(tmp_path / "g.out")
    ours, ours_makespan = tool.read_ours(write_ours(tmp_path / "jobs.parquet", [100.0, 1000.0, 300.0]), None)
    result = tool.compare(gavel, mean, makespan, ours, ours_makespan)
    assert result["jobs"] == 2 and result["ours_without_gavel_jct"] == 1
    assert result["ours_mean_jct_s"] == 200.0 and result["mean_jct_gavel_over_ours"] == 0.75
    assert result["ours_makespan_s"] == 1000.0
