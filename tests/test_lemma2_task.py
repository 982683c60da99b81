"""Task `lemma2`: the reviewer's instance through the real pipeline gives the hand-worked Eq. 12 violation,
and a scheduler without virtual completion times is refused in one line."""

from __future__ import annotations

import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import ConfigError
from asrpt_bench.experiment import run_experiment


def test_the_reviewer_instance_breaks_eq12_as_worked_by_hand() -> None:
    """paper-notes 7.5: C_A = 101000, C_B = 4000; Eq. 12 claims 4000 for the jobs before B, which end at 101000."""
    result = run_experiment(compose_run_config(["experiment=lemma2_reviewer", "progress=false"]))
    summary = result.summary
    assert (summary["eq12_worst_job"], summary["eq12_worst_claim"], summary["eq12_worst_predecessors_makespan"],
            summary["eq12_worst_end"]) == ("B", 4000.0, 101000.0, 4000.0)
    assert (summary["G"], summary["g_max"], summary["eq12_violated_jobs"]) == (100, 50, 1)
    assert result.jobs.set_index("job_id")["end"].to_dict() == {"A": 101000.0, "B": 4000.0}
    check = result.tables["lemma2_check"].set_index("job_id")
    assert check.loc["B", "eq12_violation"] == 97000.0 and check.loc["A", "eq12_violation"] == 0.0


def test_lemma2_refuses_a_scheduler_without_virtual_completions() -> None:
    config = compose_run_config(["task=lemma2", "workload=lemma2_reviewer", "predictor=oracle", "scheduler=fifo",
                                 "progress=false"])
    with pytest.raises(ConfigError, match=r"task=lemma2 checks A-SRPT's schedule: scheduler must be one of "
                                          r"\['asrpt', 'asrpt_oracle'\], got 'fifo'"):
        run_experiment(config)
