"""The notebook API: compare schedulers on a job table held in memory (asrpt_bench.api)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from asrpt_bench.api import compare, compare_run
from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import ConfigError

# G = 4, alpha 1 s: a (2 GPUs, 10 s) at 0, b (4 GPUs, 20 s) at 1, c (1 GPU, 5 s) at 2.
TABLE = pd.DataFrame({"job_id": ["a", "b", "c"], "release": [0.0, 1.0, 2.0], "gpus": [2, 4, 1],
                      "iterations": [10, 20, 5], "alpha": [1.0, 1.0, 1.0]})


def test_compare_on_an_in_memory_table_gives_the_hand_checked_schedules() -> None:
    frame = compare(TABLE, ["fifo", "wcs_duration"], servers=1, gpus_per_server=4).set_index("scheduler")
    # FIFO: a 0-10, b waits for all 4 GPUs 10-30, c behind it 30-35: JCTs 10 + 29 + 33.
    assert (frame.loc["fifo", "total_jct"], frame.loc["fifo", "makespan"]) == (72.0, 35.0)
    # WCS-Duration: a 0-10, c fits beside a 2-7, b 10-30: JCTs 10 + 29 + 5.
    assert (frame.loc["wcs_duration", "total_jct"], frame.loc["wcs_duration", "makespan"]) == (44.0, 30.0)


def test_the_same_table_is_the_same_workload() -> None:
    first = compare_run(TABLE, ["fifo"], servers=1, gpus_per_server=4)
    again = compare_run(TABLE.copy(), ["fifo"], servers=1, gpus_per_server=4)
    assert first.summary["config_hash"] == again.summary["config_hash"]


def test_bad_tables_and_arguments_are_named() -> None:
    with pytest.raises(ConfigError, match=r"^table must be a pandas DataFrame of the job-table schema, got list$"):
        compare([1, 2], ["fifo"])
    with pytest.raises(ConfigError, match=r"^schedulers must be a list of scheduler names, got 'fifo'$"):
        compare(TABLE, "fifo")
    with pytest.raises(ConfigError, match="the in-memory table"):
        compare(TABLE.drop(columns="gpus"), ["fifo"])


def test_the_memory_workload_is_refused_on_the_command_line() -> None:
    with pytest.raises(ConfigError, match=r"^workload\.table_id is required: workload=memory runs a table given in "
                                          r"Python \(asrpt_bench\.api\.compare\), not from the command line$"):
        compose_run_config(["workload=memory"])


def test_a_compare_without_asrpt_reduces_against_the_first_listed_scheduler() -> None:
    from asrpt_bench.report.tables import format_result

    result = compare_run(TABLE, ["wcs_duration", "fifo"], servers=1, gpus_per_server=4)
    assert result.summary["reference_scheduler"] == "wcs_duration" and result.summary["total_jct"] == 44.0
    frame = result.comparison.set_index("scheduler")
    assert frame.loc["fifo", "asrpt_reduction"] == 1 - 44.0 / 72.0
    text = format_result(result)
    assert "wcs_duration / scheduler" in text and "A-SRPT" not in text
    assert "earlier jobs held back as the predictor's history (not simulated): 0" in text
    assert ("wcs_duration / scheduler = total JCT(wcs_duration) / total JCT(scheduler) (above 1: the scheduler's is "
            "lower)\nwcs_duration's run:") in text
    assert text.splitlines()[1:4] == ["   scheduler total JCT (s) mean JCT (s) makespan (s) wcs_duration / scheduler",
                                      "wcs_duration          44.0         14.7         30.0                     1.00",
                                      "        fifo          72.0         24.0         35.0                     0.61"]


def test_the_scheduler_argument_is_the_reference_of_the_comparison() -> None:
    result = compare_run(TABLE, ["wcs_duration", "fifo"], servers=1, gpus_per_server=4, scheduler="fifo")
    assert result.summary["reference_scheduler"] == "fifo" and result.summary["total_jct"] == 72.0
    assert result.comparison.set_index("scheduler").loc["wcs_duration", "asrpt_reduction"] == 1 - 72.0 / 44.0
    with pytest.raises(ConfigError, match=r"^scheduler=spjf is not among task\.schedulers \[wcs_duration,fifo\]"):
        compare_run(TABLE, ["wcs_duration", "fifo"], servers=1, gpus_per_server=4, scheduler="spjf")


def test_contention_is_reported_and_a_run_without_any_wait_says_the_schedulers_cannot_differ() -> None:
    """Two jobs that never overlap on 4 GPUs: nobody waits under fifo or spjf, one warning says so;
    overlapping them makes b wait 1 s under fifo (released at 1, a holds 3 of 4 GPUs until 2)."""
    apart = pd.DataFrame({"job_id": ["a", "b"], "release": [0.0, 5.0], "gpus": [3, 2], "iterations": [2, 2],
                          "alpha": [1.0, 1.0]})
    with pytest.warns(UserWarning, match="^no job waited: the schedulers cannot differ$"):
        result = compare_run(apart, ["fifo", "spjf"], servers=1, gpus_per_server=4)
    assert result.summary["no_job_waited"] is True
    assert result.comparison["waited_share"].tolist() == [0.0, 0.0]
    # GPU-seconds held inside the release span [0, 5]: a's 3 x 2, over 4 GPUs x 5 s
    assert result.comparison["busy_share"].tolist() == [0.3, 0.3]
    together = apart.assign(release=[0.0, 1.0])
    result = compare_run(together, ["fifo", "spjf"], servers=1, gpus_per_server=4)
    assert result.summary["no_job_waited"] is False and "no job waited" not in result.summary["warnings"]
    assert result.comparison["waited_share"].tolist() == [0.5, 0.5]
    assert result.comparison["mean_wait"].tolist() == [0.5, 0.5]
    assert result.jobs.set_index(["scheduler", "job_id"])["wait_s"].to_dict() == {
        ("fifo", "a"): 0.0, ("fifo", "b"): 1.0, ("spjf", "a"): 0.0, ("spjf", "b"): 1.0}


def test_the_printed_summary_leaves_out_what_the_rule_leaves_undefined() -> None:
    """Strict dispatch makes no reservations: its reservation violations are NaN and not printed as 'nan';
    a rule that makes them prints the count."""
    from asrpt_bench.report.tables import format_result

    strict = compare_run(TABLE, ["wcs_duration", "fifo"], servers=1, gpus_per_server=4)
    assert math.isnan(strict.summary["reservation_violations"])
    assert "shadow time or reservation" not in format_result(strict) and ": nan" not in format_result(strict)
    easy = compare_run(TABLE, ["fifo+easy", "fifo"], servers=1, gpus_per_server=4)
    assert "starts after the first shadow time or reservation (jobs): 0" in format_result(easy)
