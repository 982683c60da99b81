import numpy as np
import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.theory.exact import exact_optimum
from asrpt_bench.theory.lemma2 import check_lemma2, check_theorem1, lemma2_report


def reviewer_schedule() -> pd.DataFrame:
    """paper-notes 7.5 under A-SRPT: A starts at C~_A = 1000, B at C~_B = 2000."""
    return pd.DataFrame({
        "job_id": ["A", "B"], "release": [0.0, 0.0], "start": [1000.0, 2000.0], "end": [101000.0, 4000.0],
        "gpus": [1, 50], "iterations": [100000, 2000], "alpha": [1.0, 1.0], "alpha_max": [1.0, 1.0],
        "alpha_min": [1.0, 1.0], "predicted_iterations": [100000, 2000], "eligible": [1000.0, 2000.0]})


def test_reviewer_instance_flags_eq12_for_b_only():
    per_job = check_lemma2(reviewer_schedule(), G=100, tau=0.0).set_index("job_id")
    assert per_job.loc["B", "eq12_claim"] == 4000.0                # 2000 + 1*100000*1/(100-50)
    assert per_job.loc["B", "predecessors_makespan"] == 101000.0
    assert per_job.loc["B", "eq12_violation"] == 97000.0
    assert per_job.loc["B", "eq12_violation_rel"] == pytest.approx(97000 / 4000)
    assert per_job.loc["A", "eq12_violation"] == 0.0
    for name in ("repaired_start", "repaired_start_tight", "lemma2_final"):
        assert (per_job[f"{name}_violation"] == 0).all(), name
    assert per_job.loc["B", "repaired_start_tight_claim"] == pytest.approx(2000 + 100000 / 51)
    assert per_job.loc["A", "lemma2_final_claim"] == 101000.0


def test_reviewer_instance_busy_gpu_premise_fails_after_b_ends():
    per_job = check_lemma2(reviewer_schedule(), G=100).set_index("job_id")
    # from 4000 to 101000 only A's 1 GPU is busy, fewer than G - g_max = 50
    assert per_job.loc["B", "premise_fail_predecessors_s"] == pytest.approx(97000.0)
    assert per_job["premise_fail_wait_s"].tolist() == [0.0, 0.0]


def test_reviewer_instance_theorem1_holds():
    optimum = exact_optimum([0, 0], [1, 50], [100000, 2000], 100).objective
    report = lemma2_report(reviewer_schedule(), G=100, tau=0.0, reference=optimum, reference_is_optimal=True)
    assert report.theorem1.sum_completion == 105000.0
    assert report.theorem1.bound == pytest.approx(4.0)
    assert report.theorem1.ratio == pytest.approx(105000 / 102000)
    assert report.theorem1.status == "holds" and not report.theorem1.violated
    assert report.summary["eq12_violated_jobs"] == 1
    assert report.summary["eq12_max_violation"] == 97000.0
    assert report.summary["repaired_start_violated_jobs"] == 0
    assert report.summary["premise_fail_predecessors_s_max"] == pytest.approx(97000.0)


def test_wait_window_premise_and_repaired_start_violation():
    # G=4, g_max=2. A (1 GPU) runs 0-10; B (2 GPUs) becomes eligible at 1 but starts at 5 although it fits:
    # only 1 GPU is busy during [1, 5), below G - g_max = 2, and the repaired start bound
    # (1+0)*1 + 1*10*1/(4-2) = 6 still holds; a start at 8 would break it by 2.
    schedule = pd.DataFrame({
        "job_id": ["A", "B"], "release": [0.0, 0.0], "start": [0.0, 5.0], "end": [10.0, 7.0], "gpus": [1, 2],
        "iterations": [10, 2], "alpha": [1.0, 1.0], "alpha_max": [1.0, 1.0], "predicted_iterations": [10, 2],
        "eligible": [0.0, 1.0]})
    per_job = check_lemma2(schedule, G=4).set_index("job_id")
    assert per_job.loc["B", "premise_fail_wait_s"] == pytest.approx(4.0)
    assert per_job.loc["B", "repaired_start_claim"] == pytest.approx(6.0)
    assert per_job.loc["B", "repaired_start_violation"] == 0.0
    late = schedule.assign(start=[0.0, 8.0], end=[10.0, 10.0])
    per_job = check_lemma2(late, G=4).set_index("job_id")
    assert per_job.loc["B", "repaired_start_violation"] == pytest.approx(2.0)
    assert per_job.loc["B", "repaired_start_violation_rel"] == pytest.approx(2.0 / 6.0)
    assert per_job.loc["B", "premise_fail_wait_s"] == pytest.approx(7.0)


def test_virtual_rank_overrides_eligible_order():
    schedule = reviewer_schedule().assign(virtual_rank=[1, 0])
    per_job = check_lemma2(schedule, G=100)
    assert per_job["job_id"].tolist() == ["B", "A"]
    assert per_job.loc[1, "eq12_claim"] == pytest.approx(1000 + 50 * 2000 / 50)


def test_tight_form_needs_alpha_min_when_tau_positive():
    per_job = check_lemma2(reviewer_schedule().drop(columns="alpha_min"), G=100, tau=1.0)
    assert per_job["repaired_start_tight_claim"].isna().all()
    assert per_job["repaired_start_claim"].tolist() == [2000.0, 6000.0]
    with_alpha = check_lemma2(reviewer_schedule(), G=100, tau=1.0)
    # C~_B + tau*(p~_A + p~_B) + 100000/51 = 2000 + 2000 + 1960.78...
    assert with_alpha.loc[1, "repaired_start_tight_claim"] == pytest.approx(4000 + 100000 / 51)


def test_theorem1_check_with_lower_bound_is_inconclusive_not_violated():
    assert check_theorem1(500.0, 100.0, 4.0, reference_is_optimal=False).status == "inconclusive"
    assert check_theorem1(500.0, 100.0, 4.0, reference_is_optimal=True).status == "violated"
    assert check_theorem1(300.0, 100.0, 4.0, reference_is_optimal=False).status == "holds"
    with pytest.raises(ConfigError, match="must be > 0"):
        check_theorem1(1.0, 0.0, 4.0, True)


def test_bad_tables_are_named():
    with pytest.raises(ConfigError, match=r"lacks column\(s\) \['eligible'\]"):
        check_lemma2(reviewer_schedule().drop(columns="eligible"), G=100)
    with pytest.raises(ConfigError, match="row 2, column 'start'"):
        check_lemma2(reviewer_schedule().assign(start=[1000.0, np.nan]), G=100)
    with pytest.raises(ConfigError, match="g_max < G"):
        check_lemma2(reviewer_schedule(), G=50)
    with pytest.raises(ConfigError, match="pass `bound`"):
        lemma2_report(reviewer_schedule().drop(columns="alpha_min"), G=100, reference=102000.0)
