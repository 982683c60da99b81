"""Invariants every registered placer must keep; a new placer is picked up without editing this file."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.core import GB, Cluster, Stage, TrainingPlan
from asrpt_bench.placement import PLACERS, make_placer
from asrpt_bench.placement.random_fit import RandomPlacer

plans = st.lists(
    st.tuples(st.integers(1, 4), st.floats(0.05, 0.5), st.floats(0.0, 4.0), st.floats(0.0, 0.5)),
    min_size=1, max_size=4,
).map(lambda rows: TrainingPlan("p", f"s{len(rows)}", tuple(
    Stage(c * m, p * GB, a * GB if s < len(rows) - 1 else 0.0, m) for s, (m, c, p, a) in enumerate(rows))))
free_vectors = st.lists(st.integers(0, 4), min_size=1, max_size=6).map(tuple)


every_placer = pytest.mark.parametrize("name", sorted(PLACERS))


def test_importing_the_package_registers_every_builtin_placer():
    assert {"heavy_edge", "random", "first_fit", "ilp"} <= set(PLACERS)


@every_placer
@settings(max_examples=40, deadline=None)
@given(plan=plans, free=free_vectors)
def test_placement_respects_capacity_and_places_every_vertex_once(name, plan, free):
    placer = make_placer(name)
    cluster = Cluster(len(free), 4, 100.0, 10.0)
    placement = placer.place(plan, free, cluster)
    if sum(free) < plan.gpus:
        assert placement is None
        return
    assert placement is not None
    placement.validate(plan, free)
    assert len(placement.servers) == plan.gpus
    assert all(placement.counts(len(free))[h] <= free[h] for h in range(len(free)))


@every_placer
@settings(max_examples=20, deadline=None)
@given(plan=plans, free=free_vectors)
def test_placement_is_deterministic(name, plan, free):
    placer = make_placer(name)
    cluster = Cluster(len(free), 4, 100.0, 10.0)
    first = placer.place(plan, free, cluster)
    assert placer.place(plan, free, cluster) == first
    assert make_placer(name).place(plan, free, cluster) == first


@every_placer
def test_placer_accepts_a_list_as_free_vector(name):
    placer = make_placer(name)
    plan = TrainingPlan("p", "2x2", (Stage(0.2, GB, 0.1 * GB, 2), Stage(0.3, GB, 0.0, 2)))
    placement = placer.place(plan, [1, 2, 1], Cluster(3, 2))
    placement.validate(plan, [1, 2, 1])


def test_random_placer_is_a_pure_function_of_seed_plan_and_free():
    plan = TrainingPlan("p", "one", (Stage(0.4, GB, 0.0, 6),))
    free, cluster = (3, 3, 3, 3), Cluster(4, 3)
    assert RandomPlacer(seed=5).place(plan, free, cluster) == RandomPlacer(seed=5).place(plan, free, cluster)
    draws = {RandomPlacer(seed=s).place(plan, free, cluster) for s in range(20)}
    assert len(draws) > 1


def test_random_placer_picks_free_gpus_uniformly():
    # One replica; server 1 holds 3 of the 4 free GPUs, so it should be chosen about 3/4 of the time.
    plan = TrainingPlan("p", "single", (Stage(0.1, 0.0, 0.0, 1),))
    picks = Counter(RandomPlacer(seed=s).place(plan, (1, 3), Cluster(2, 4)).servers[0] for s in range(2000))
    assert 0.70 <= picks[1] / 2000 <= 0.80
