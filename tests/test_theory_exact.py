import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.core import ConfigError
from asrpt_bench.theory.exact import brute_force_optimum, exact_optimum, serial_list_schedule


def _assert_feasible(schedule, release, gpus, durations, G):
    starts = schedule.starts
    assert np.all(starts >= np.asarray(release) - 1e-9)
    np.testing.assert_allclose(schedule.ends, starts + np.asarray(durations))
    for t in starts:
        running = (starts <= t) & (t < schedule.ends)
        assert np.asarray(gpus)[running].sum() <= G


def test_reviewer_instance_optimum():
    for result in (exact_optimum([0, 0], [1, 50], [100000, 2000], 100),
                   brute_force_optimum([0, 0], [1, 50], [100000, 2000], 100)):
        assert result.objective == 102000
        assert result.starts.tolist() == [0, 0]
        assert result.proven_optimal


def test_optimum_may_leave_gpus_idle():
    # G=2. X (g=1, 10 s) released at 0, Y (g=2, 1 s) released at 1. Starting X at once costs
    # 10 + 11 = 21; holding X until Y is done costs 2 + 12 = 14.
    release, gpus, durations = [0, 1], [1, 2], [10, 1]
    for result in (exact_optimum(release, gpus, durations, 2), brute_force_optimum(release, gpus, durations, 2)):
        assert result.objective == 14
        assert result.starts.tolist() == [2, 1]


def test_serial_list_schedule_may_start_a_job_before_earlier_listed_ones():
    starts = serial_list_schedule([0, 1], np.array([5.0, 0.0]), np.array([1, 1]), np.array([1.0, 2.0]), 2)
    assert starts.tolist() == [5.0, 0.0]


instances = st.integers(1, 4).flatmap(lambda G: st.tuples(
    st.just(G),
    st.lists(st.tuples(st.integers(0, 6), st.integers(1, G), st.integers(0, 7)), min_size=1, max_size=4)))


@settings(max_examples=40, deadline=None)
@given(instances)
def test_cpsat_matches_brute_force_on_small_instances(instance):
    G, jobs = instance
    release, gpus, durations = (list(column) for column in zip(*jobs))
    cpsat = exact_optimum(release, gpus, durations, G)
    brute = brute_force_optimum(release, gpus, durations, G)
    assert cpsat.status == "OPTIMAL" and cpsat.rounding_s == 0.0
    assert cpsat.objective == pytest.approx(brute.objective)
    _assert_feasible(cpsat, release, gpus, durations, G)
    _assert_feasible(brute, release, gpus, durations, G)


def test_decimal_inputs_are_scaled_exactly():
    release, gpus, durations = [0, 0.5, 1], [2, 2, 1], [1.25, 1, 3]
    result = exact_optimum(release, gpus, durations, 3)
    assert result.proven_optimal
    assert result.objective == pytest.approx(brute_force_optimum(release, gpus, durations, 3).objective)
    assert result.objective == pytest.approx(7.5)


def test_non_decimal_inputs_are_rounded_up_and_reported():
    release, gpus, durations = [0, 0.5, 1], [2, 2, 1], [1 / 3, 1, 3]
    result = exact_optimum(release, gpus, durations, 3, resolution_s=0.01)
    assert 0 < result.rounding_s <= 0.01
    assert not result.proven_optimal
    _assert_feasible(result, release, gpus, durations, 3)
    optimum = brute_force_optimum(release, gpus, durations, 3).objective
    rounded_optimum = brute_force_optimum(np.ceil(np.array(release) * 100) / 100, gpus,
                                          np.ceil(np.array(durations) * 100) / 100, 3).objective
    assert optimum - 1e-9 <= result.objective <= rounded_optimum + 1e-9


def test_cpsat_is_deterministic():
    release, gpus, durations = [0, 1, 1, 2, 3], [2, 1, 3, 2, 1], [4, 3, 2, 2, 5]
    first = exact_optimum(release, gpus, durations, 4)
    second = exact_optimum(release, gpus, durations, 4)
    assert first.starts.tolist() == second.starts.tolist()
    assert first.objective == second.objective


@pytest.mark.parametrize("call, message", [
    (lambda: exact_optimum([0], [5], [1], 4), r"gpus\[0\] must be an integer in \[1, G=4\]"),
    (lambda: exact_optimum([0, 0], [1, 1], [1, -2], 4), r"durations\[1\] must be finite and >= 0"),
    (lambda: exact_optimum([0], [1], [1, 2], 4), "differ in length"),
    (lambda: exact_optimum([0], [1], [1], 4, resolution_s=0), "resolution_s must be > 0"),
    (lambda: brute_force_optimum([0] * 8, [1] * 8, [1] * 8, 2), "8 jobs exceed max_jobs=7"),
])
def test_bad_inputs_are_named(call, message):
    with pytest.raises(ConfigError, match=message):
        call()
