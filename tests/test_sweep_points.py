"""What a sweep point says about itself, and how the sweeper counts outcomes (asrpt_bench.sweep_points,
hydra_plugins/asrpt_sweeper); the launchers' tests run them end to end."""

from __future__ import annotations

from hydra.core.utils import JobReturn, JobStatus

from asrpt_bench.sweep_points import COMPLETE, FAILED, POINTS_ENV, SKIPPED, point_label, tally


def test_a_point_names_its_place_in_the_sweep() -> None:
    assert point_label(2, {POINTS_ENV: "12"}) == "point 3 of 12"
    assert point_label(0, {}) == "point 1"  # a sweeper that does not count


def test_the_tally_counts_every_outcome_even_when_absent() -> None:
    assert tally([SKIPPED, COMPLETE, SKIPPED], 5) == ("sweep: 3 of 5 points done: 1 complete, 2 skipped (complete), "
                                                      "0 failed")


def test_the_sweeper_reads_a_point_outcome_from_its_job_return() -> None:
    from hydra_plugins.asrpt_sweeper.sweeper import outcome

    assert outcome(JobReturn(status=JobStatus.COMPLETED, _return_value=SKIPPED)) == SKIPPED
    assert outcome(JobReturn(status=JobStatus.COMPLETED, _return_value=None)) == COMPLETE
    assert outcome(JobReturn(status=JobStatus.FAILED, _return_value=ValueError("x"))) == FAILED
