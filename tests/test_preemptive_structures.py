"""The bookkeeping structures that keep the preemptive loop fast: each must leave the schedule exactly as
the plain computation gives it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import asrpt_bench.sim.placement_memo as placement_memo
import asrpt_bench.sim.preemptive as preemptive_sim
from asrpt_bench.core import Cluster, PreemptionPrice
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers import bounds as bounds_module
from asrpt_bench.schedulers.bounds import RunningBounds
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.jobs import jobs_from_table


@pytest.fixture(autouse=True)
def python_loop(monkeypatch):
    """Every preemptive run here goes through the Python loop, whose structures these are (the compiled loop,
    which takes srtf, psjf and las2d runs by default, is held to this loop's schedules in test_preemptive_compiled)."""
    monkeypatch.setattr(preemptive_sim, "compiled_rule", lambda *arguments: None)

TABLE = Path(__file__).resolve().parent / "data" / "fixed_jobs.csv"
CLUSTER = Cluster(servers=8, gpus_per_server=8)


def job(order: int, gpus: int = 1) -> SimpleNamespace:
    return SimpleNamespace(order=order, gpus=gpus)


def test_held_jobs_come_due_when_their_window_ends_in_window_order():
    bounds = RunningBounds()
    a, b, c = job(0, 2), job(1, 4), job(2, 1)
    bounds.hold(a, 10.0)
    bounds.hold(b, 5.0)
    bounds.hold(c, 5.0)
    assert bounds.unhold_due(4.9) == [] and bounds.held_gpus == 7
    assert bounds.unhold_due(5.0) == [b, c]
    assert (bounds.held_gpus, bounds.suspendable_gpus) == (2, 5)
    assert bounds.unhold_due(20.0) == [a]
    assert (bounds.held_gpus, bounds.suspendable_gpus, bounds.held) == (0, 7, {})


def test_a_job_that_finishes_while_held_never_comes_due():
    bounds = RunningBounds()
    a, b = job(0, 2), job(1, 3)
    bounds.hold(a, 5.0)
    bounds.hold(b, 6.0)
    bounds.remove(a)
    assert bounds.held_gpus == 3
    assert bounds.unhold_due(10.0) == [b]
    assert (bounds.held_gpus, bounds.suspendable_gpus) == (0, 3)


def test_a_held_job_comes_due_at_its_latest_window_only():
    """A job held again (it finished its window, stopped and runs again) comes due at its new window's end,
    not at an older booking of the same job."""
    bounds = RunningBounds()
    a = job(0, 2)
    bounds.hold(a, 5.0)
    bounds.remove(a)
    bounds.hold(a, 8.0)
    assert bounds.unhold_due(6.0) == []
    assert bounds.unhold_due(8.0) == [a]



def test_many_bounds_put_at_once_are_kept_and_expire_as_one_by_one():
    """`put_all` (the bulk path of a walk with more than a few stale bounds) against `put` per entry: the same
    sorted entries, and the bounds that expire by an instant are taken out with their orders, the others kept."""
    entries = [(1.0, 7, 1, 1), (3.0, 1, 2, 4), (3.0, 2, 3, 1), (5.0, 3, 0, 2)]
    untils = [float("inf"), 10.0, 30.0, 20.0]
    bulk, single = RunningBounds(), RunningBounds()
    bulk.put_all(list(entries), np.array(untils))
    for entry, until in zip(entries, untils):
        single.put(entry, until)
    assert bulk.entries == single.entries == entries
    for now in (10.0, 25.0, 40.0):
        assert bulk.take((0.0, 0), now, exact=True) == single.take((0.0, 0), now, exact=True)
    assert bulk.entries == single.entries == [(1.0, 7, 1, 1)]
    fresh = RunningBounds()
    fresh.put_all(list(entries), np.array(untils))
    assert fresh.take((0.0, 0), 20.0, exact=True) == [2, 0]


@pytest.mark.parametrize("seed", range(8))
def test_bounds_put_at_once_merge_as_a_sort_would(seed):
    """A walk's recomputed entries go back by `put_all`, appended after the kept ones where they rank after
    all of them and bisected in (up to MERGE_BY_INSERTION of them) or merged by a sort otherwise: the list is
    the sorted union either way, for batches with none, a few and many entries inside the kept range."""
    rng = np.random.default_rng(seed)
    bounds, plain = RunningBounds(), []
    orders = iter(range(10_000))
    for _ in range(60):
        low = float(rng.choice([0.0, 50.0, 99.0, 100.0]))
        batch = sorted((float(rng.integers(low, low + 100)), int(rng.integers(1_000_000)), next(orders), 1)
                       for _ in range(int(rng.integers(0, 3 * bounds_module.MERGE_BY_INSERTION))))
        bounds.put_all(list(batch), None)
        plain = sorted(plain + batch)
        assert bounds.entries == plain
        assert all(bounds.entry_of[entry[2]] == entry for entry in plain)


def fixed_jobs():
    return jobs_from_table(load_csv(TABLE), str(TABLE))


class CountingPlacer:
    """Heavy-Edge, counting its calls."""

    name = "heavy_edge"

    def __init__(self) -> None:
        self.placer, self.calls = HeavyEdgePlacer(), 0

    def place(self, plan, free, cluster):
        self.calls += 1
        return self.placer.place(plan, free, cluster)


def run(name: str, placer, restart: float | None = 30.0):
    """The fixed jobs under `name`; a non-preemptive scheduler gets no preemption price (restart None)."""
    jobs = fixed_jobs()
    price = {} if restart is None else {"preemption": PreemptionPrice(restart_s=restart)}
    return simulate(jobs, CLUSTER, make_scheduler(name), placer, predictions={j.job_id: float(j.iterations) for j in jobs},
                    **price)


@pytest.mark.parametrize("name, restart", [("srtf", 30.0), ("srtf", 0.0), ("las2d", 30.0), ("psjf", 30.0),
                                           ("asrpt", None), ("asrpt+easy", None), ("asrpt+conservative", None),
                                           ("fifo", None)])
def test_remembered_placements_give_the_placers_schedule(monkeypatch, name, restart):
    """With the placement memo (preemptive and non-preemptive runs alike) the placer is called less often, and
    the schedule and segments are those of a run that asks the placer every time (a memo of size 0 forgets
    each placement at once)."""
    remembered = CountingPlacer()
    result = run(name, remembered, restart)
    monkeypatch.setattr(placement_memo, "PLACEMENT_MEMO", 0)
    asked = CountingPlacer()
    plain = run(name, asked, restart)
    assert list(result.records) == list(plain.records)
    assert list(result.segments) == list(plain.segments)
    assert remembered.calls < asked.calls


def test_the_placement_memo_keeps_at_most_its_size(monkeypatch):
    monkeypatch.setattr(placement_memo, "PLACEMENT_MEMO", 5)
    sizes = []
    original = preemptive_sim._PreemptiveSimulation.propose

    def propose(self, job, pool=None, exclude=None):
        proposal = original(self, job, pool, exclude)
        sizes.append(len(self.placements))
        return proposal

    monkeypatch.setattr(preemptive_sim._PreemptiveSimulation, "propose", propose)
    run("srtf", HeavyEdgePlacer())
    assert max(sizes) == 5


def test_las2d_bounds_recomputed_in_bulk_expire_at_the_next_threshold(monkeypatch):
    """Twelve jobs start together, so their queue-0 bounds expire together at the first threshold, where a
    waiting job makes the walk recompute them in one vectorised step (more than ONE_BY_ONE:
    AdmissionScheduler._bound_all), which books when each new bound expires in turn: at the second threshold
    the eight still running fall behind the suspended queue-1 jobs, which take four of them, as in the plain
    reference."""
    from asrpt_bench.core import Job, TrainingPlan
    from asrpt_bench.placement import FirstFitPlacer
    from asrpt_bench.schedulers.preemptive import AdmissionScheduler
    from reference_preemptive import PlainLAS2D
    from test_preemptive_reference import schedule

    bulk: list[tuple[float, int]] = []
    bound_all = AdmissionScheduler._bound_all

    def recorded(self, orders, ctx):
        bulk.append((ctx.now, len(orders)))
        return bound_all(self, orders, ctx)

    monkeypatch.setattr(AdmissionScheduler, "_bound_all", recorded)
    jobs = [Job(f"a{k}", 0.0, TrainingPlan.fixed(1, 1.0), 1000) for k in range(12)]
    jobs += [Job("c", 5.0, TrainingPlan.fixed(4, 1.0), 500), Job("e", 6.0, TrainingPlan.fixed(8, 1.0), 500)]
    thresholds = (10.0, 100.0)
    got = simulate(jobs, Cluster(2, 8), make_scheduler("las2d", queue_thresholds=thresholds), FirstFitPlacer())
    expected = simulate(jobs, Cluster(2, 8), PlainLAS2D("las2d", thresholds), FirstFitPlacer())
    assert bulk == [(10.0, 12)]
    assert schedule(got) == schedule(expected)
    assert sorted(s.job_id for s in got.segments if s.end == 100.0 and s.job_id.startswith("a")) == \
        ["a4", "a5", "a6", "a7"]
