import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.theory.adversarial import SearchSpace, evaluate, random_lemma2_check, search, simulate_asrpt
from asrpt_bench.workloads.instances import get_instance
from asrpt_bench.workloads.schema import validate_job_table

REVIEWER_EQ12 = 97000 / 4000   # (101000 - 4000) / 4000


def reviewer_table() -> pd.DataFrame:
    return get_instance("lemma2_reviewer").table


def test_reviewer_instance_objectives():
    frame = simulate_asrpt(reviewer_table().assign(alpha_max=1.0), G=100, tau=0.0).set_index("job_id")
    assert frame.loc["A", "end"] == 101000 and frame.loc["B", "end"] == 4000
    assert evaluate("eq12", reviewer_table(), G=100) == pytest.approx(REVIEWER_EQ12)
    assert evaluate("ratio", reviewer_table(), G=100) == pytest.approx(105000 / 102000 / 4.0)


def test_search_beats_the_reviewer_instance_on_eq12_and_its_table_reruns(tmp_path):
    result = search("eq12", seed=1, budget=100)
    assert result.best_value >= REVIEWER_EQ12
    assert len(result.history) == 100
    assert result.history["best_value"].is_monotonic_increasing
    assert result.history["best_value"].iloc[-1] == result.best_value
    path = result.write_table(tmp_path / "eq12.csv")
    table = validate_job_table(pd.read_csv(path), str(path))
    assert list(pd.read_csv(path).columns) == ["job_id", "release", "gpus", "iterations", "alpha", "alpha_max"]
    assert evaluate("eq12", table, G=100) == pytest.approx(result.best_value)


def test_search_is_deterministic_in_the_seed():
    first = search("eq12", seed=3, budget=25, space=SearchSpace(G=16, max_jobs=3))
    second = search("eq12", seed=3, budget=25, space=SearchSpace(G=16, max_jobs=3))
    pd.testing.assert_frame_equal(first.history, second.history)
    pd.testing.assert_frame_equal(first.best_table, second.best_table)
    other = search("eq12", seed=4, budget=25, space=SearchSpace(G=16, max_jobs=3))
    assert not other.history["value"].equals(first.history["value"])


def test_ratio_search_stays_within_theorem1():
    result = search("ratio", seed=0, budget=20, space=SearchSpace(G=8, max_jobs=3, max_iterations=50,
                                                                   max_release=20))
    assert 0 < result.best_value <= 1.0
    assert (result.history["value"] <= 1.0).all()
    assert evaluate("ratio", result.best_table, G=8) == pytest.approx(result.best_value)
    assert result.best_table["gpus"].max() < 8


def test_bad_arguments_are_named():
    with pytest.raises(ConfigError, match="unknown adversarial objective 'makespan'"):
        search("makespan", seed=0, budget=10)
    with pytest.raises(ConfigError, match="budget must be >= 1"):
        search("eq12", seed=0, budget=0)
    with pytest.raises(ConfigError, match="needs g_max < G=50"):
        evaluate("eq12", reviewer_table(), G=50)
    with pytest.raises(ConfigError, match="min_jobs <= max_jobs"):
        SearchSpace(min_jobs=3, max_jobs=2)


def test_repaired_inequalities_hold_on_random_simulated_runs():
    counts = random_lemma2_check(seed=0, num_instances=45)
    assert set(counts["tau"]) == {0.0, 0.5, 2.0}
    assert counts["eq12_violated_jobs"].sum() > 0          # the paper's step fails on ordinary instances
    for name in ("repaired_start", "repaired_start_tight", "lemma2_final"):
        assert counts[f"{name}_violated_jobs"].sum() == 0, name
    assert counts.loc[counts["tau"] > 0, "heavy_jobs_waited"].sum() > 0
