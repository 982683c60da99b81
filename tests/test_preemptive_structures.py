"""The bookkeeping structures that keep the preemptive loop fast: each must leave the schedule exactly as
the plain computation gives it."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import asrpt_bench.sim.preemptive as preemptive_sim
from asrpt_bench.core import Cluster, PreemptionPrice
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.bounds import RunningBounds
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.jobs import jobs_from_table

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



class PlainBounds:
    """The plain rule of RunningBounds' suspendable jobs: a dict of entries, scanned and sorted at every call."""

    def __init__(self) -> None:
        self.entries: dict[int, tuple[tuple[float, int, int, int], float]] = {}

    def put(self, entry, until):
        self.entries[entry[2]] = (entry, until)

    def take(self, first, now, exact):
        return sorted(order for order, (entry, until) in self.entries.items()
                      if until <= now or (not exact and entry >= first))

    def after(self, first):
        ranked = sorted(entry for entry, _ in self.entries.values() if entry >= first)
        return tuple(list(column) for column in zip(*ranked)) if ranked else ((), (), (), ())


@pytest.mark.parametrize("seed", range(6))
def test_bounds_take_and_rank_what_the_plain_rule_gives(seed):
    """Random puts, refreshes and removals of suspendable jobs with bounds that tie (priorities from a few
    values, signed zeros among them) and expire: `take` names the same jobs and `after` gives the same sorted
    columns as a scan and sort of every entry, exact bounds or not."""
    rng = np.random.default_rng(seed)
    bounds, plain, gpus_of = RunningBounds(), PlainBounds(), {}
    values = [0.0, -0.0, 1.0, 2.5, 2.5 + 1e-12, 7.0]
    ranks = rng.permutation(400).tolist()
    for step in range(400):
        now = float(step)
        members = list(plain.entries)
        action = rng.random()
        if members and action < 0.25:
            order = members[int(rng.integers(len(members)))]
            bounds.remove(job(order, gpus_of[order]))
            del plain.entries[order]
        elif members and action < 0.45:
            orders = rng.choice(members, size=int(rng.integers(1, len(members) + 1)), replace=False)
            priority = rng.choice(values, size=len(orders))
            untils = np.where(rng.random(len(orders)) < 0.5, np.inf, now + rng.integers(1, 20, len(orders)))
            bounds.refresh(orders, priority, untils)
            for order, value, until in zip(orders.tolist(), priority.tolist(), untils.tolist()):
                entry = plain.entries[order][0]
                plain.put((value, entry[1], order, entry[3]), until)
        else:
            order = int(rng.integers(200)) if members else step % 200
            if order in plain.entries:
                entry = (float(rng.choice(values)),) + plain.entries[order][0][1:]
            else:
                gpus_of[order] = int(rng.integers(1, 9))
                bounds.suspendable_gpus += gpus_of[order]
                entry = (float(rng.choice(values)), ranks[order], order, gpus_of[order])
            until = math.inf if rng.random() < 0.5 else now + float(rng.integers(1, 20))
            bounds.put(entry, until)
            plain.put(entry, until)
        first = (float(rng.choice(values)), int(rng.integers(400)))
        exact = bool(rng.random() < 0.5)
        assert sorted(bounds.take(first, now, exact)) == plain.take(first, now, exact)
        assert tuple(map(list, bounds.after(first))) == tuple(map(list, plain.after(first)))
        assert bounds.entries() == sorted(entry for entry, _ in plain.entries.values())
        assert bounds.suspendable_gpus == sum(entry[3] for entry, _ in plain.entries.values())


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


def run(name: str, placer, restart: float = 30.0):
    jobs = fixed_jobs()
    return simulate(jobs, CLUSTER, make_scheduler(name), placer, predictions={j.job_id: float(j.iterations) for j in jobs},
                    preemption=PreemptionPrice(restart_s=restart))


@pytest.mark.parametrize("name, restart", [("srtf", 30.0), ("srtf", 0.0), ("las2d", 30.0), ("psjf", 30.0)])
def test_remembered_placements_give_the_placers_schedule(monkeypatch, name, restart):
    """With the placement memo the placer is called less often, and the schedule and segments are those of
    a run that asks the placer every time (a memo of size 0 forgets each placement at once)."""
    remembered = CountingPlacer()
    result = run(name, remembered, restart)
    monkeypatch.setattr(preemptive_sim, "PLACEMENT_MEMO", 0)
    asked = CountingPlacer()
    plain = run(name, asked, restart)
    assert list(result.records) == list(plain.records)
    assert list(result.segments) == list(plain.segments)
    assert remembered.calls < asked.calls


def test_the_placement_memo_keeps_at_most_its_size(monkeypatch):
    monkeypatch.setattr(preemptive_sim, "PLACEMENT_MEMO", 5)
    sizes = []
    original = preemptive_sim._PreemptiveSimulation.propose

    def propose(self, job, pool=None, exclude=None):
        proposal = original(self, job, pool, exclude)
        sizes.append(len(self.placements))
        return proposal

    monkeypatch.setattr(preemptive_sim._PreemptiveSimulation, "propose", propose)
    run("srtf", HeavyEdgePlacer())
    assert max(sizes) == 5
