"""REPRODUCTION.md is generated from the committed results/ tables: regenerating it changes nothing,
and a table that cannot be trusted (missing, incomplete, another experiment's, stale against its
experiment's sweep) stops the report with one line naming it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.report.published import load_result, normalised, sweep_params
from asrpt_bench.report.reproduction import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


@pytest.mark.slow
def test_regenerating_the_committed_report_changes_nothing(capsys: pytest.CaptureFixture) -> None:
    assert main(["--results", str(RESULTS), "--out", str(ROOT / "REPRODUCTION.md"), "--docs", str(ROOT), "--check"]) == 0
    assert capsys.readouterr().out == (f"asrpt-bench-report: {ROOT / 'REPRODUCTION.md'} matches the tables in {RESULTS}/\n"
                                       f"asrpt-bench-report: the docs' generated blocks match the tables in {RESULTS}/\n")


def test_check_fails_when_the_report_was_edited(tmp_path: Path) -> None:
    edited = tmp_path / "REPRODUCTION.md"
    edited.write_text((ROOT / "REPRODUCTION.md").read_text(encoding="utf-8").replace("92%", "95%"), encoding="utf-8")
    assert main(["--results", str(RESULTS), "--out", str(edited), "--docs", "none", "--check"]) == 1


def test_the_committed_reviewer_instance_breaks_eq12_as_worked_by_hand() -> None:
    """paper-notes 7.5: C_A = 101000, C_B = 4000; Eq. 12 claims 4000 for the jobs before B, which end at 101000."""
    case = load_result(RESULTS, "lemma2_reviewer").iloc[0]
    assert (case["eq12_worst_job"], case["eq12_worst_claim"], case["eq12_worst_predecessors_makespan"],
            case["eq12_worst_end"]) == ("B", 4000.0, 101000.0, 4000.0)


def copy_table(tmp_path: Path, name: str) -> Path:
    shutil.copy(RESULTS / f"{name}.csv", tmp_path / f"{name}.csv")
    return tmp_path / f"{name}.csv"


def test_a_missing_table_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"compare_default\.csv: missing; make it with experiments/run_all\.sh"):
        load_result(tmp_path, "compare_default")


def test_a_table_of_another_experiment_is_refused(tmp_path: Path) -> None:
    shutil.copy(RESULTS / "compare_default.csv", tmp_path / "ablation_backfill.csv")
    with pytest.raises(ConfigError, match=r"expected runs of experiment 'ablation_backfill', found \['compare_default'\]"):
        load_result(tmp_path, "ablation_backfill")


def test_a_stale_table_is_refused_naming_the_key(tmp_path: Path) -> None:
    path = copy_table(tmp_path, "compare_default")
    table = pd.read_csv(path)
    table[table["seed"] != 4].to_csv(path, index=False)  # the experiment sweeps seeds 0..4
    with pytest.raises(ConfigError, match=r"stale against conf/experiment/compare_default\.yaml: seed has "
                                          r"\['0', '1', '2', '3'\] but the experiment sweeps \['0', '1', '2', '3', '4'\]"):
        load_result(tmp_path, "compare_default")


def test_an_incomplete_table_is_refused(tmp_path: Path) -> None:
    path = copy_table(tmp_path, "compare_default")
    table = pd.read_csv(path)
    table.loc[0, "status"] = "failed"
    table.to_csv(path, index=False)
    with pytest.raises(ConfigError, match=r"1 run\(s\) did not complete"):
        load_result(tmp_path, "compare_default")


def test_report_exits_2_with_one_line_on_a_refused_table(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["--results", str(tmp_path), "--out", str(tmp_path / "R.md")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("asrpt-bench-report: error: ")
    assert not (tmp_path / "R.md").exists()


@pytest.mark.parametrize(("value", "spelling"), [("0.50", "0.5"), (0.5, "0.5"), ("null", "null"), (float("nan"), "null"),
                                                 ("True", "true"), (True, "true"), ("4", "4"), (4.0, "4"),
                                                 ("philly", "philly")])
def test_yaml_and_table_spellings_of_a_value_agree(value: object, spelling: str) -> None:
    assert normalised(value) == spelling


def test_sweep_params_read_the_experiment_yaml() -> None:
    assert sweep_params("fig7_single_gpu_share")["workload.single_gpu_share"] == ["0.0", "0.2", "0.4", "0.6", "0.8"]
