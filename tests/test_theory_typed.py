"""Exact references on typed clusters: theory.exact_optimum with a jobs x pools duration matrix against the
classical exact algorithm for unrelated machines (min-cost bipartite matching, Horn 1973 / Bruno, Coffman
and Sethi 1974) on static 1-GPU instances, and the typed lower bound of theory.lower_bounds below the
exact optimum."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from asrpt_bench.errors import ConfigError
from asrpt_bench.theory.exact import exact_optimum
from asrpt_bench.theory.lower_bounds import lower_bound, typed_lower_bound

UNREACHABLE = 1e12


def matching_optimum(durations: np.ndarray, sizes: list[int]) -> float:
    """min sum C_j of 1-GPU jobs released at 0 on unrelated machines: pool p is sizes[p] machines of its type.
    A job placed k-th from last on a machine adds k times its duration there to sum C_j, so an optimal
    schedule is a min-cost matching of jobs to (machine, position-from-last) slots."""
    n = durations.shape[0]
    machines = [p for p, size in enumerate(sizes) for _ in range(size)]
    cost = np.full((n, len(machines) * n), UNREACHABLE)
    for m, p in enumerate(machines):
        for k in range(n):
            cost[:, m * n + k] = np.where(np.isfinite(durations[:, p]), (k + 1) * durations[:, p], UNREACHABLE)
    rows, columns = linear_sum_assignment(cost)
    return float(cost[rows, columns].sum())


def random_static_instance(rng: np.random.Generator) -> tuple[np.ndarray, list[int]]:
    pools = int(rng.integers(1, 4))
    sizes = rng.integers(1, 4, size=pools).tolist()
    n = int(rng.integers(1, 7))
    durations = rng.integers(1, 30, size=(n, pools)).astype(float)
    durations[rng.random((n, pools)) < 0.25] = np.inf
    durations[np.arange(n), rng.integers(0, pools, size=n)] = rng.integers(1, 30, size=n)  # runnable somewhere
    return durations, sizes


@pytest.mark.slow
def test_exact_optimum_equals_the_matching_optimum_on_1000_static_unrelated_machine_instances():
    rng = np.random.default_rng(2024)
    for _ in range(1000):
        durations, sizes = random_static_instance(rng)
        n = durations.shape[0]
        schedule = exact_optimum(np.zeros(n), np.ones(n, dtype=int), durations, sizes)
        assert schedule.proven_optimal
        assert schedule.objective == pytest.approx(matching_optimum(durations, sizes), abs=1e-9)
        chosen = durations[np.arange(n), schedule.pools]
        assert np.all(np.isfinite(chosen)) and np.allclose(schedule.ends - schedule.starts, chosen)


def test_a_job_takes_the_pool_that_finishes_it_first():
    # one slow 1-GPU pool and one fast one: the two jobs share the fast pool only if it pays
    durations = np.array([[10.0, 2.0], [10.0, 3.0]])
    schedule = exact_optimum([0, 0], [1, 1], durations, [1, 1])
    assert schedule.objective == 2 + 5 and list(schedule.pools) == [1, 1]
    durations = np.array([[4.0, 2.0], [4.0, 3.0]])
    schedule = exact_optimum([0, 0], [1, 1], durations, [1, 1])
    assert schedule.objective == 4 + 2 and sorted(schedule.pools) == [0, 1]


def test_a_gang_fits_only_a_pool_large_enough():
    # 3 GPUs: only pool 1 (4 GPUs) holds it, though pool 0 (2 GPUs) would be faster
    schedule = exact_optimum([0], [3], np.array([[1.0, 5.0]]), [2, 4])
    assert schedule.objective == 5 and list(schedule.pools) == [1]


def test_one_pool_as_a_matrix_is_the_untyped_problem():
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(1, 6))
        release, gpus = rng.integers(0, 10, size=n).astype(float), rng.integers(1, 4, size=n)
        durations = rng.integers(1, 20, size=n).astype(float)
        plain = exact_optimum(release, gpus, durations, 4)
        typed = exact_optimum(release, gpus, durations[:, None], [4])
        assert typed.objective == plain.objective and list(typed.pools) == [0] * n


def test_the_typed_lower_bound_never_exceeds_the_exact_optimum():
    rng = np.random.default_rng(11)
    for _ in range(150):
        pools = int(rng.integers(1, 4))
        sizes = rng.integers(1, 5, size=pools)
        n = int(rng.integers(1, 7))
        gpus = rng.integers(1, sizes.max() + 1, size=n)
        release = rng.integers(0, 20, size=n).astype(float)
        iterations = rng.integers(1, 10, size=n).astype(float)
        alpha = rng.integers(1, 6, size=(n, pools)).astype(float)
        alpha[rng.random((n, pools)) < 0.2] = np.inf
        holds = np.flatnonzero(sizes >= gpus.max())
        alpha[:, holds[0]] = rng.integers(1, 6, size=n)  # every job runs in a pool that holds it
        durations = iterations[:, None] * alpha
        optimum = exact_optimum(release, gpus, durations, sizes.tolist()).objective
        bound = typed_lower_bound(release, gpus, iterations, alpha, sizes.tolist())
        assert bound.value <= optimum + 1e-9


def test_the_typed_lower_bound_on_one_type_is_lemma_1():
    release, gpus, iterations, alpha = [0.0, 1.0, 2.0], [1, 2, 4], [5.0, 3.0, 2.0], np.array([1.0, 2.0, 0.5])
    typed = typed_lower_bound(release, gpus, iterations, np.stack([alpha, alpha], axis=1), [4, 4])
    plain = lower_bound(release, gpus, iterations, alpha, 8)
    assert typed.lemma1 == pytest.approx(plain.lemma1) and typed.trivial == plain.trivial


def test_the_speed_weighted_capacity_counts_each_pool_at_its_best_relative_speed():
    # job 0 runs at alpha 1 in pool 0 and 4 in pool 1 (speed 1/4 there); job 1 only in pool 1, where it is fastest
    alpha = np.array([[1.0, 4.0], [np.inf, 2.0]])
    bound = typed_lower_bound([0.0, 0.0], [1, 1], [4.0, 1.0], alpha, [1, 1])
    # G_eff = 1 * 1 + 1 * max(1/4, 1) = 2: p = (4 / 2, 2 / 2) -> SRPT: 1, 3
    assert bound.lemma1 == pytest.approx(1.0 + 3.0)
    assert bound.trivial == pytest.approx(4.0 + 2.0)


@pytest.mark.parametrize("durations, sizes, message", [
    (np.array([[1.0, 2.0]]), [2], "jobs x pools matrix of shape (1, 1)"),
    (np.array([[np.inf, np.inf]]), [2, 2], "job 0 (1 GPUs) can run in no pool"),
    (np.array([[1.0, -1.0]]), [2, 2], "durations[0, 1] must be >= 0 or inf"),
    (np.array([[1.0, 1.0]]), [2, 0], "G must be an integer >= 1 or a sequence of pool sizes"),
])
def test_bad_typed_instances_are_refused_in_one_line(durations, sizes, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        exact_optimum([0.0], [1], durations, sizes)
