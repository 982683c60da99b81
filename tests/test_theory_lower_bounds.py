import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.core import Cluster, ConfigError, Job, Placement, Stage, TrainingPlan
from asrpt_bench.theory.exact import brute_force_optimum
from asrpt_bench.theory.lower_bounds import (alpha_min_for_jobs, lemma1_lower_bound, lower_bound,
                                             lower_bound_for_jobs, srpt_completion_times,
                                             trivial_lower_bound)
from asrpt_bench.timing import DEFAULT_TIMING


@pytest.mark.parametrize("release, processing, expected", [
    ([0, 1], [5, 1], [6, 2]),                 # the short arrival preempts
    ([0, 0], [1000, 1000], [1000, 2000]),     # tie: lower index first (reviewer instance in A1)
    ([0, 2, 4], [4, 3, 1], [4, 8, 5]),        # job 2 (shorter) runs before the waiting job 1
    ([5, 0], [1, 1], [6, 1]),                 # idle gap until a release
    ([0, 0, 0], [0, 2, 0], [0, 2, 0]),        # zero-length jobs complete at release
])
def test_srpt_completion_times_hand_values(release, processing, expected):
    assert srpt_completion_times(release, processing).tolist() == expected


def _nonpreemptive_sum(release, processing, order):
    now, total = 0.0, 0.0
    for i in order:
        now = max(now, release[i]) + processing[i]
        total += now
    return total


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 15)), min_size=1, max_size=5))
def test_srpt_is_no_worse_than_any_nonpreemptive_order(jobs):
    release = [r for r, _ in jobs]
    processing = [p for _, p in jobs]
    srpt = srpt_completion_times(release, processing)
    assert np.all(srpt >= np.array(release) + np.array(processing) - 1e-9)
    best = min(_nonpreemptive_sum(release, processing, order)
               for order in itertools.permutations(range(len(jobs))))
    assert srpt.sum() <= best + 1e-9


def test_reviewer_instance_bounds():
    bound = lower_bound(release=[0, 0], gpus=[1, 50], iterations=[100000, 2000], alpha_min=[1, 1], G=100)
    assert bound.lemma1 == pytest.approx(1000 + 2000)
    assert bound.trivial == pytest.approx(100000 + 2000)
    assert bound.value == pytest.approx(102000)     # equals OPT here
    assert bound.total_jct == pytest.approx(102000)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5).flatmap(lambda G: st.tuples(
    st.just(G),
    st.lists(st.tuples(st.integers(0, 10), st.integers(1, G), st.integers(1, 8), st.sampled_from([0.5, 1.0, 2.0])),
             min_size=1, max_size=4))))
def test_lower_bounds_never_exceed_the_exact_optimum(instance):
    G, jobs = instance
    release, gpus, iterations, alpha = (np.array(column, dtype=float) for column in zip(*jobs))
    optimum = brute_force_optimum(release, gpus, iterations * alpha, G).objective
    bound = lower_bound(release, gpus, iterations, alpha, G)
    assert bound.lemma1 <= optimum + 1e-9
    assert bound.trivial <= optimum + 1e-9
    assert bound.value == max(bound.lemma1, bound.trivial)


def test_lemma1_can_beat_the_trivial_bound():
    # four single-GPU jobs of 10 s on a 1-GPU cluster: trivial 40, Lemma 1 = 10+20+30+40
    args = dict(release=[0] * 4, gpus=[1] * 4, iterations=[10] * 4, alpha_min=[1.0] * 4)
    assert lemma1_lower_bound(G=1, **args) == pytest.approx(100)
    assert trivial_lower_bound(args["release"], args["iterations"], args["alpha_min"]) == pytest.approx(40)


def test_alpha_min_for_jobs_fixed_and_model_plans():
    cluster = Cluster(servers=2, gpus_per_server=2, b_intra=100.0, b_inter=1.0)
    fixed = Job("f", 0.0, TrainingPlan.fixed(2, alpha=0.25, alpha_max=1.0), iterations=4)
    plan = TrainingPlan("toy", "p2xd2", (Stage(0.2, 2e9, 1e9, 2), Stage(0.2, 2e9, 0.0, 2)))
    model = Job("m", 1.0, plan, iterations=10)
    values = alpha_min_for_jobs([fixed, model, model], cluster, DEFAULT_TIMING, source="consolidated")
    assert values[0] == pytest.approx(0.25)
    assert values[1] == values[2] == pytest.approx(DEFAULT_TIMING.alpha_consolidated(plan, cluster))
    bound = lower_bound_for_jobs([fixed, model], cluster)
    assert bound.alpha_min_source == "consolidated"
    assert bound.trivial == pytest.approx(0 + 4 * 0.25 + 1 + 10 * values[1])
    with pytest.raises(ConfigError, match="unknown alpha_min_source 'heavy'"):
        alpha_min_for_jobs([fixed], cluster, source="heavy")


def test_exact_alpha_min_is_at_least_the_consolidated_one():
    pytest.importorskip("asrpt_bench.placement.ilp")
    cluster = Cluster(servers=2, gpus_per_server=2, b_intra=100.0, b_inter=1.0)
    plan = TrainingPlan("toy", "p1xd4", (Stage(0.4, 2e9, 0.0, 4),))
    job = Job("m", 0.0, plan, iterations=10)
    exact = alpha_min_for_jobs([job], cluster, source="exact")[0]
    # 4 replicas on 2-GPU servers must all-reduce across servers: strictly above the consolidated bound
    assert exact > DEFAULT_TIMING.alpha_consolidated(plan, cluster)
    assert exact == pytest.approx(DEFAULT_TIMING.alpha(plan, Placement((0, 0, 1, 1)), cluster), rel=1e-6)


def test_bad_inputs_are_named():
    with pytest.raises(ConfigError, match="differ in length"):
        lower_bound([0, 1], [1], [1, 1], [1, 1], G=4)
    with pytest.raises(ConfigError, match="job 1 needs 8 GPUs, more than G=4"):
        lemma1_lower_bound([0, 0], [1, 8], [1, 1], [1, 1], G=4)
    with pytest.raises(ConfigError, match=r"iterations\[0\] must be finite and >= 0"):
        trivial_lower_bound([0], [-1], [1])


def test_consolidated_alpha_min_stays_a_lower_bound_when_inter_server_links_are_faster():
    """With b_inter > b_intra spreading a stage is faster than consolidating it; the 'consolidated'
    source must still not exceed the alpha of any placement."""
    from asrpt_bench.core import Cluster, Job, Placement, Stage, TrainingPlan
    from asrpt_bench.theory.lower_bounds import alpha_min_for_jobs
    from asrpt_bench.timing import DEFAULT_TIMING

    plan = TrainingPlan("ar", "p1xd2", (Stage(0.2, 4e9, 0.0, 2),))
    cluster = Cluster(servers=2, gpus_per_server=2, b_intra=10.0, b_inter=100.0)
    spread = DEFAULT_TIMING.alpha(plan, Placement((0, 1)), cluster)
    together = DEFAULT_TIMING.alpha(plan, Placement((0, 0)), cluster)
    assert spread < together
    (bound,) = alpha_min_for_jobs([Job("j", 0.0, plan, 10)], cluster, DEFAULT_TIMING, "consolidated")
    assert bound == pytest.approx(spread)
