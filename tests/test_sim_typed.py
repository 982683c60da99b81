"""The simulator on typed clusters (clusters given as pools): hand-worked schedules of fastest_fit FIFO,
A-SRPT's speed-weighted virtual machine, EASY and conservative reservations per pool and fifo_replan's
moves; fastest_fit FIFO and fifo_replan against independent small implementations; the audit's pool rules;
the per-type metrics; a typed run through the app."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import warnings
from typing import Callable, Iterator

import numpy as np
import pytest

from asrpt_bench.cluster import GPU_TYPES, Cluster, Pool
from asrpt_bench.core import ConfigError, Job, Placement, PreemptionPrice, Stage, TrainingPlan
from asrpt_bench.placement import POOL_CHOICES, Placer, make_placer, register_pool_choice
from asrpt_bench.placement.pools import PoolOption
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.sim.audit import ScheduleAuditError, audit_preemptive, audit_schedule

FIRST_FIT = make_placer("first_fit")
TWO_BY_TWO = Cluster(pools=[Pool("v100", 1, 2), Pool("k80", 1, 2)])
ONE_EACH = Cluster(pools=[Pool("v100", 1, 1), Pool("k80", 1, 1)])


def job(name: str, release: float, gpus: int, iterations: int, **alphas: float | None) -> Job:
    """A fixed-alpha job with a measured alpha per GPU type (None: cannot run there)."""
    plans = tuple((t, None if a is None else TrainingPlan.fixed(gpus, a)) for t, a in alphas.items())
    return Job(name, release, TrainingPlan.fixed(gpus, 1.0), iterations, type_plans=plans)


def schedule(result) -> list[tuple]:
    return [(r.job_id, r.start, r.end, r.pool) for r in result.records]


def run(jobs, cluster, scheduler, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return simulate(jobs, cluster, scheduler, options.pop("placer", FIRST_FIT), **options)


@contextlib.contextmanager
def pool_choice_plugin(name: str, choose: Callable) -> Iterator[Placer]:
    """Pool choice `name` registered for the block, answering with `choose(query)`; yields a first-fit placer
    that chooses pools with it."""
    registered = name

    @register_pool_choice(name)
    @dataclasses.dataclass(frozen=True)
    class Plugin:
        name: str = registered

        def choose(self, query):
            return choose(query)

    try:
        yield make_placer("first_fit", pool=name)
    finally:
        del POOL_CHOICES[name]


# ---- hand-worked schedules


def test_fastest_fit_fifo_by_hand():
    # A takes the V100s; B finds them busy and runs on the K80s at its K80 speed; C runs only on V100 and,
    # as the head, blocks D (which would run faster on K80) until A ends; then both fit the V100s
    jobs = [job("A", 0, 2, 10, v100=1, k80=4), job("B", 1, 2, 10, v100=1, k80=2),
            job("C", 2, 1, 5, v100=1, k80=None), job("D", 3, 1, 4, v100=2, k80=1)]
    result = run(jobs, TWO_BY_TWO, make_scheduler("fifo"))
    assert schedule(result) == [("A", 0, 10, "v100"), ("B", 1, 21, "k80"), ("C", 10, 15, "v100"),
                                ("D", 10, 18, "v100")]
    metrics = result.metrics
    assert (metrics["busy_gpu_s_v100"], metrics["busy_gpu_s_k80"]) == (2 * 10 + 5 + 8, 2 * 20)
    assert metrics["utilization_v100"] == pytest.approx(33 / (2 * 21))
    assert (metrics["jobs_v100"], metrics["jobs_k80"]) == (3, 1)
    assert metrics["mean_jct_v100"] == pytest.approx((10 + 13 + 15) / 3) and metrics["mean_jct_k80"] == 20


def test_asrpt_virtual_machine_counts_gpus_at_their_speed_by_hand():
    # one V100 and one K80: the virtual machine has 1 + 0.2064 GPUs of the fastest type (virtual_gpus
    # speed_weighted), or 2 (count); sizes are g n alpha_fast / G
    jobs = [job("A", 0, 1, 10, v100=1, k80=2), job("B", 1, 1, 2, v100=1, k80=1)]
    capacity = 1 + GPU_TYPES["k80"].compute_speed
    weighted = run(jobs, ONE_EACH, make_scheduler("asrpt_oracle"))
    b_virtual = 1 + 2 / capacity  # B arrives at 1 with less virtual work left than A and finishes first
    a_virtual = 10 / capacity + 2 / capacity
    assert [(r.job_id, r.eligible, r.start, r.end, r.pool) for r in weighted.records] == [
        ("A", a_virtual, a_virtual, a_virtual + 10, "v100"), ("B", b_virtual, b_virtual, b_virtual + 2, "v100")]
    counted = run(jobs, ONE_EACH, make_scheduler("asrpt_oracle", virtual_gpus="count"))
    assert schedule(counted) == [("A", 6.0, 16.0, "v100"), ("B", 2.0, 4.0, "v100")]


EASY_JOBS = [job("X", 0, 1, 10, v100=1, k80=None), job("Y", 0, 1, 20, v100=None, k80=1),
             job("H", 1, 2, 5, v100=1, k80=1), job("L1", 2, 1, 100, v100=1, k80=1),
             job("L2", 3, 1, 5, v100=1, k80=None)]


@pytest.mark.parametrize("dispatch", ["easy", "conservative"])
def test_reservations_are_per_pool_by_hand(dispatch):
    """H (2 GPUs) fits no pool at 1 though 2 GPUs are idle. Its reservation is in the V100 pool, where X
    frees a GPU at 10 (the K80 pool's comes at 20). L1 (100 s) would delay it in the V100 pool, so it may
    start only on the K80s; L2 ends by 10 in the V100 pool and starts there."""
    result = run(EASY_JOBS, TWO_BY_TWO, make_scheduler("fifo", dispatch=dispatch))
    assert schedule(result) == [("X", 0, 10, "v100"), ("Y", 0, 20, "k80"), ("H", 10, 15, "v100"),
                                ("L1", 2, 102, "k80"), ("L2", 3, 8, "v100")]
    assert result.metrics["reservation_violations"] == 0 and result.metrics["backfilled_starts"] == 2


@pytest.mark.parametrize("dispatch", ["easy", "conservative"])
def test_a_pools_reservation_counts_only_the_jobs_running_in_it_by_hand(dispatch):
    """H (2 GPUs, K80 only) waits for Y to free the second K80 at 50; X's V100 freed at 10 is no use to it.
    So L (1 K80 GPU, 30 s) backfills at 2 on the idle K80, ending by 50 (counting X's end in the K80 pool
    would reserve H at 10 and hold L back)."""
    jobs = [job("X", 0, 1, 10, v100=1, k80=None), job("Y", 0, 1, 50, v100=None, k80=1),
            job("H", 1, 2, 5, v100=None, k80=1), job("L", 2, 1, 30, v100=None, k80=1)]
    result = run(jobs, TWO_BY_TWO, make_scheduler("fifo", dispatch=dispatch))
    assert schedule(result) == [("X", 0, 10, "v100"), ("Y", 0, 50, "k80"), ("H", 50, 55, "k80"),
                                ("L", 2, 32, "k80")]


def test_without_reservations_the_head_waits_for_the_slow_pool():
    # greedy: L1 takes the idle V100 (the tie goes to pool order) and H waits for the K80s
    result = run(EASY_JOBS, TWO_BY_TWO, make_scheduler("fifo", dispatch="greedy"))
    assert ("H", 20, 25, "k80") in schedule(result) and ("L1", 2, 102, "v100") in schedule(result)


def test_easy_over_the_whole_queue_looks_past_a_job_too_large_for_the_idle_gpus_by_hand():
    """A-SRPT's EASY over its whole dispatch queue (eligibility "release") on two pools of 4: A and B hold
    3 GPUs each until 100. J and H are pending from 1, J blocked at the head (3 GPUs) with H behind it
    needing 4, more than the 2 idle GPUs in all. S (1 GPU, 2 s) arrives at 5 behind them: it ends long
    before J's shadow time, so the scan passes over H and starts it."""
    fast = {"v100": 1, "k80": 1}
    jobs = [job("A", 0, 3, 100, **fast), job("B", 0, 3, 100, **fast), job("J", 1, 3, 2, **fast),
            job("H", 1, 4, 2, **fast), job("S", 5, 1, 2, **fast)]
    cluster = Cluster(pools=[Pool("v100", 1, 4), Pool("k80", 1, 4)])
    result = run(jobs, cluster, make_scheduler("asrpt_oracle", dispatch="easy", eligibility="release"))
    assert schedule(result) == [("A", 0, 100, "v100"), ("B", 0, 100, "k80"), ("J", 100, 102, "v100"),
                                ("H", 100, 102, "k80"), ("S", 5, 7, "v100")]
    assert result.metrics["backfilled_starts"] == 1


@pytest.mark.parametrize("restart, round_s, b_end", [(0, 0, 15.0), (30, 0, 45.0), (0, 4, 16.0)])
def test_fifo_replan_moves_a_job_to_a_faster_type_by_hand(restart, round_s, b_end):
    # A and B start at 0 on the V100 and the K80 (B at half speed); when A ends at 10, B moves to the V100
    # with its 5 iterations done (10 s at alpha 2), pays the restart and does the last 5 at alpha 1. With
    # rounds of 4 s it moves at 12 (6 done, 4 left)
    jobs = [job("A", 0, 1, 10, v100=1, k80=2), job("B", 0, 1, 10, v100=1, k80=2)]
    result = run(jobs, ONE_EACH, make_scheduler("fifo_replan", round_s=round_s),
                 preemption=PreemptionPrice(restart_s=restart))
    assert schedule(result) == [("A", 0, 10.0, "v100"), ("B", 0, b_end, "v100")]
    moved = max(10.0, round_s * math.ceil(10.0 / round_s)) if round_s else 10.0
    assert [(s.job_id, s.start, s.end, s.alpha, s.restart_s) for s in result.segments] == [
        ("A", 0, 10.0, 1, 0.0), ("B", 0, moved, 2, 0.0), ("B", moved, b_end, 1, float(restart))]
    assert result.records[1].preemptions == 1
    fifo = run(jobs, ONE_EACH, make_scheduler("fifo"))
    assert schedule(fifo)[1] == ("B", 0, 20, "k80")  # the non-migrating FIFO keeps B on the K80


def test_fifo_replan_defers_a_move_between_rounds_to_the_next_round_by_hand():
    """Rounds of 1 s: A ends at 10.5 on the V100, between two rounds, so B moves there at the round at 11
    (5.5 of its iterations done on the K80 at alpha 2), pays the 30 s restart and does the last 4.5 at alpha
    1. Without rounds it moves at A's end."""
    jobs = [job("A", 0, 1, 10, v100=1.05, k80=2), job("B", 0, 1, 10, v100=1, k80=2)]
    segments = {round_s: [(s.job_id, s.start, s.end) for s in
                          run(jobs, ONE_EACH, make_scheduler("fifo_replan", round_s=round_s)).segments]
                for round_s in (1, 0)}
    assert segments[1] == [("A", 0, 10.5), ("B", 0, 11.0), ("B", 11.0, 45.5)]
    assert segments[0] == [("A", 0, 10.5), ("B", 0, 10.5), ("B", 10.5, 45.25)]


def test_fifo_replan_starts_a_job_in_the_pool_its_plan_chose_by_hand():
    """fifo_replan plans by GPU counts and empty-pool estimates. P2 ends at 5 and leaves the V100 pool's two
    free GPUs on two servers; X (2 replicas of one stage, 10 GB of gradients) arrives at 6 and is planned on
    the V100s (0.2 / 2 + 2 x 1/2 x 10 GB / 300 GB/s = 0.133 s per iteration on one server, against 0.533 on
    the K80s), so it starts there split over the two servers (the all-reduce at 12.5 GB/s: 0.9 s). FIFO,
    placing by fastest_fit alone, judges the real placements and takes the K80s."""
    def data_parallel(compute_s: float) -> TrainingPlan:
        return TrainingPlan("dp", "d2", (Stage(compute_s, 10e9, 0.0, 2),))

    x = Job("X", 6.0, data_parallel(0.2), 20, type_plans=(("v100", data_parallel(0.2)), ("k80", data_parallel(1.0))))
    jobs = [job("P1", 0, 1, 100, v100=1, k80=None), job("P2", 0, 1, 5, v100=1, k80=None),
            job("P3", 0, 1, 100, v100=1, k80=None), x]
    cluster = Cluster(pools=[Pool("v100", 2, 2), Pool("k80", 1, 2)])
    replanned = run(jobs, cluster, make_scheduler("fifo_replan"), preemption=PreemptionPrice(restart_s=0))
    assert [(r.job_id, r.pool, r.placement) for r in replanned.records][-1] == ("X", "v100", (0, 1))
    assert replanned.records[-1].alpha == pytest.approx(0.9, rel=1e-12)
    fifo = run(jobs, cluster, make_scheduler("fifo"))
    assert (fifo.records[-1].pool, fifo.records[-1].alpha) == ("k80", pytest.approx(1.0 / 2 + 10 / 300, rel=1e-12))


def test_fifo_replan_plans_with_a_pool_choice_that_reads_pool_names():
    """A pool choice plugin sees each candidate pool's name when fifo_replan plans: one that prefers the pool
    named k80 puts A there, although the V100 runs it twice as fast. Its one query names the job, each pool
    (index, name, type, free GPUs, A's estimate there) and, as what the placer would do there, no placement
    and the estimate's alpha (a plan makes no placement)."""
    queries = []

    def k80_first(query):
        queries.append((query.job_id, query.options, [query.placed(option.index) for option in query.options]))
        return next((option.index for option in query.options if option.name == "k80"),
                    query.options[0].index if query.options else None)

    with pool_choice_plugin("k80_first_test", k80_first) as placer:
        result = run([job("A", 0, 1, 10, v100=1, k80=2)], ONE_EACH, make_scheduler("fifo_replan"), placer=placer)
    assert schedule(result) == [("A", 0, 20.0, "k80")]
    assert queries == [("A", (PoolOption(0, "v100", "v100", 1, 1.0), PoolOption(1, "k80", "k80", 1, 2.0)),
                        [(Placement(()), 1.0), (Placement(()), 2.0)])]


def test_a_pool_choice_is_asked_with_the_jobs_id_when_a_job_starts():
    """FIFO on a typed cluster asks the pool choice once per start it tries, naming the job (a seeded random
    choice such as type_agnostic draws from it)."""
    asked = []

    def first_option(query):
        asked.append(query.job_id)
        return query.options[0].index

    with pool_choice_plugin("recording_test", first_option) as placer:
        jobs = [job("A", 0, 1, 10, v100=1, k80=2), job("B", 1, 1, 10, v100=1, k80=2)]
        result = run(jobs, ONE_EACH, make_scheduler("fifo"), placer=placer)
    assert schedule(result) == [("A", 0, 10.0, "v100"), ("B", 1, 21.0, "k80")]
    assert asked == ["A", "B"]


def test_fifo_replan_plans_again_at_the_next_round_after_a_plan_that_started_a_job():
    """The plan subtracts protected jobs first, so a plan that started a job can differ from the next one with
    no event between: a pool choice that reads free GPUs (most free, ties by pool order) puts X (1 GPU) on
    the V100s (4 free against 3); Y (2 GPUs) arrives at 10 and takes the V100s too (3 against 3). At the round
    at 11 Y is protected (min_run_s 5), the V100s have 2 free against 3, so X moves to the K80s; when its
    window ends at 16 nothing is protected and X moves back. A decision after one that started a job plans
    again."""
    def most_free(query):
        return max(query.options, key=lambda option: (option.free_gpus, -option.index)).index

    cluster = Cluster(pools=[Pool("v100", 1, 4), Pool("k80", 1, 3)])
    jobs = [job("X", 0, 1, 100, v100=1, k80=1), job("Y", 10, 2, 100, v100=1, k80=1)]
    with pool_choice_plugin("most_free_test", most_free) as placer:
        result = run(jobs, cluster, make_scheduler("fifo_replan", round_s=1), placer=placer,
                     preemption=PreemptionPrice(restart_s=0, min_run_s=5))
    assert [(s.job_id, s.start, s.end, s.placement) for s in result.segments] == [
        ("X", 0, 11.0, (0,)), ("X", 11.0, 16.0, (1,)), ("X", 16.0, 100.0, (0,)), ("Y", 10.0, 110.0, (0, 0))]


def test_fifo_replan_moves_jobs_at_one_instant_in_arrival_order_whatever_their_input_order():
    """H holds both V100s until 10; A (released at 1) and B (at 2) start on the K80s and both move to the
    V100s when H ends. B comes first in the input, but the two K80 segments end in arrival order, A's then
    B's, as the plan walks the jobs (release, then input order)."""
    jobs = [job("H", 0, 2, 10, v100=1, k80=None), job("B", 2, 1, 100, v100=1, k80=2),
            job("A", 1, 1, 100, v100=1, k80=2)]
    result = run(jobs, TWO_BY_TWO, make_scheduler("fifo_replan"), preemption=PreemptionPrice(restart_s=0))
    assert [(s.job_id, s.start, s.end, s.placement) for s in result.segments] == [
        ("H", 0, 10.0, (0, 0)), ("A", 1, 10.0, (1,)), ("B", 2, 10.0, (1,)), ("A", 10.0, 105.5, (0,)),
        ("B", 10.0, 106.0, (0,))]


def test_fifo_replan_type_agnostic_plans_with_the_pool_choice():
    jobs = [job(f"j{k}", 0, 1, 10, v100=1, k80=2) for k in range(6)]
    agnostic = run(jobs, ONE_EACH, make_scheduler("fifo_replan"), placer=make_placer("first_fit", pool="type_agnostic"))
    assert {r.pool for r in agnostic.records} == {"v100", "k80"}
    again = run(jobs, ONE_EACH, make_scheduler("fifo_replan"), placer=make_placer("first_fit", pool="type_agnostic"))
    assert schedule(again) == schedule(agnostic)


# ---- against independent small implementations


def random_typed_jobs(rng: np.random.Generator, n: int) -> list[Job]:
    jobs = []
    for k in range(n):
        gpus = int(rng.choice([1, 1, 1, 2, 3]))
        alphas = {t: float(rng.integers(1, 5)) for t in ("v100", "p100", "k80")}
        if rng.random() < 0.3:
            alphas[str(rng.choice(["p100", "k80"]))] = None
        jobs.append(job(f"j{k}", float(rng.integers(0, 30)), gpus, int(rng.integers(1, 8)), **alphas))
    return jobs


RANDOM_CLUSTER = Cluster(pools=[Pool("v100", 1, 3), Pool("p100", 1, 3), Pool("k80", 1, 4)])
TYPES = ("v100", "p100", "k80")
SIZES = (3, 3, 4)


def alpha_of(j: Job, pool: int) -> float:
    plan = j.plan_on(TYPES[pool])
    return math.inf if plan is None or j.gpus > SIZES[pool] else plan.declared_alpha


def fastest_pool(j: Job, free: list[int]) -> int | None:
    fitting = [(alpha_of(j, p), p) for p in range(3) if math.isfinite(alpha_of(j, p)) and free[p] >= j.gpus]
    return min(fitting)[1] if fitting else None


def reference_fifo(jobs: list[Job]) -> dict[str, float]:
    """Strict FIFO with fastest_fit on GPU counts per pool (fixed alphas: placement inside a pool is moot)."""
    queue = sorted(jobs, key=lambda j: (j.release, jobs.index(j)))
    free, running, ends = list(SIZES), [], {}
    now = queue[0].release
    while True:
        for end, j, pool in [r for r in running if r[0] <= now]:
            running.remove((end, j, pool))
            free[pool] += j.gpus
        while queue and queue[0].release <= now and (pool := fastest_pool(queue[0], free)) is not None:
            j = queue.pop(0)
            free[pool] -= j.gpus
            ends[j.job_id] = now + j.iterations * alpha_of(j, pool)
            running.append((ends[j.job_id], j, pool))
        if not queue and not running:
            return ends
        now = min([end for end, _, _ in running] + [j.release for j in queue if j.release > now])


def reference_replan(jobs: list[Job]) -> dict[str, float]:
    """fifo_replan with restart 0 at every event: fluid progress, plan from scratch in arrival order."""
    order = sorted(jobs, key=lambda j: (j.release, jobs.index(j)))
    done = {j.job_id: 0.0 for j in jobs}
    ends: dict[str, float] = {}
    now = 0.0
    while len(ends) < len(jobs):
        free, plan = list(SIZES), {}
        for j in (j for j in order if j.release <= now and j.job_id not in ends):
            pool = fastest_pool(j, free)
            if pool is None:
                break
            free[pool] -= j.gpus
            plan[j.job_id] = (j, pool)
        finish = {jid: now + (j.iterations - done[jid]) * alpha_of(j, pool) for jid, (j, pool) in plan.items()}
        step = min(list(finish.values()) + [j.release for j in order if j.release > now][:1])
        for jid, (j, pool) in plan.items():
            if finish[jid] <= step:
                ends[jid] = finish[jid]
            else:
                done[jid] += (step - now) / alpha_of(j, pool)
        now = step
    return ends


@pytest.mark.parametrize("seed", range(30))
def test_fastest_fit_fifo_equals_an_independent_implementation(seed):
    jobs = random_typed_jobs(np.random.default_rng(seed), 12)
    result = run(jobs, RANDOM_CLUSTER, make_scheduler("fifo"))
    expected = reference_fifo(jobs)
    assert {r.job_id: r.end for r in result.records} == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(30))
def test_fifo_replan_equals_an_independent_implementation(seed):
    jobs = random_typed_jobs(np.random.default_rng(100 + seed), 12)
    result = run(jobs, RANDOM_CLUSTER, make_scheduler("fifo_replan"), preemption=PreemptionPrice(restart_s=0.0))
    assert {r.job_id: r.end for r in result.records} == pytest.approx(reference_replan(jobs), rel=1e-9)



def reference_asrpt_strict(jobs: list[Job], capacity: float) -> dict[str, tuple[float, float, str]]:
    """A-SRPT (perfect predictions, strict dispatch, virtual eligibility) on RANDOM_CLUSTER as docs/theory.md
    states it for typed clusters, for fixed-alpha jobs (never comm-heavy): job i's virtual size is
    g_i n_i alpha_fast_i / capacity, alpha_fast_i its alpha on its fastest type that holds it; a preemptive SRPT
    machine (ties: release, input order) makes it eligible at its virtual completion; eligible jobs wait in
    virtual completion order and the head starts, in the fastest pool with room, while one has room.
    Decision instants: arrivals, completions, virtual completions. For instants that never tie (continuous
    releases and alphas): a tie broken by rounding is not the rule's to decide. (start, end, pool type) per
    job."""
    index = {j.job_id: k for k, j in enumerate(jobs)}
    fast = {j.job_id: min(alpha_of(j, p) for p in range(3)) for j in jobs}
    remaining = {j.job_id: j.gpus * j.iterations * fast[j.job_id] / capacity for j in jobs}
    arrivals = sorted(jobs, key=lambda j: (j.release, index[j.job_id]))
    virtual: list[Job] = []                     # released, not yet virtually complete
    pending: list[Job] = []                     # virtually complete, not started, in completion order
    free, running, out = list(SIZES), [], {}
    now = arrivals[0].release

    def srpt_head() -> Job:
        return min(virtual, key=lambda j: (remaining[j.job_id], j.release, index[j.job_id]))

    while len(out) < len(jobs):
        for end, j, pool in [r for r in running if r[0] <= now]:
            running.remove((end, j, pool))
            free[pool] += j.gpus
        while arrivals and arrivals[0].release <= now:
            virtual.append(arrivals.pop(0))
        while pending and (pool := fastest_pool(pending[0], free)) is not None:
            j = pending.pop(0)
            free[pool] -= j.gpus
            out[j.job_id] = (now, now + j.iterations * alpha_of(j, pool), TYPES[pool])
            running.append((out[j.job_id][1], j, pool))
        candidates = [end for end, _, _ in running] + [j.release for j in arrivals[:1]]
        if virtual:
            candidates.append(now + remaining[srpt_head().job_id])
        step = min(candidates)
        if virtual:  # the SRPT machine runs its head until the next instant
            head = srpt_head()
            remaining[head.job_id] -= step - now
            if remaining[head.job_id] <= 1e-9:
                virtual.remove(head)
                pending.append(head)
        now = step
    return out


@pytest.mark.parametrize("virtual_gpus", ["count", "speed_weighted"])
@pytest.mark.parametrize("seed", range(20))
def test_typed_asrpt_strict_equals_an_independent_implementation(seed, virtual_gpus):
    """The typed A-SRPT whose Philly result stands out in the heterogeneity study (asrpt_oracle far above
    the forest's A-SRPT with virtual_gpus=count): its schedule on random typed instances is the documented
    rule's, pool by pool, so that result is the rule's and not the simulator's."""
    rng = np.random.default_rng(200 + seed)
    jobs = []
    for k in range(14):  # continuous releases and alphas: no two instants tie
        alphas = {t: float(rng.uniform(0.5, 4)) for t in TYPES}
        if rng.random() < 0.3:
            alphas[str(rng.choice(["p100", "k80"]))] = None
        jobs.append(job(f"j{k}", float(rng.uniform(0, 30)), int(rng.choice([1, 1, 1, 2, 3])),
                        int(rng.integers(1, 8)), **alphas))
    capacity = 10.0 if virtual_gpus == "count" else sum(
        n * GPU_TYPES[t].compute_speed for n, t in zip(SIZES, TYPES))
    result = run(jobs, RANDOM_CLUSTER, make_scheduler("asrpt_oracle", virtual_gpus=virtual_gpus))
    got = {r.job_id: (r.start, r.end, r.pool) for r in result.records}
    expected = reference_asrpt_strict(jobs, capacity)
    assert {k: v[2] for k, v in got.items()} == {k: v[2] for k, v in expected.items()}
    times = sorted(got)
    assert [got[k][:2] for k in times] == [pytest.approx(expected[k][:2], rel=1e-9) for k in times]

# ---- every scheduler and dispatch rule on a typed cluster


@pytest.mark.parametrize("name", ["fifo", "spjf+easy", "spjf+conservative", "wcs_duration", "wcs_workload",
                                  "wcs_subtime", "asrpt", "asrpt+easy", "asrpt+conservative", "asrpt+greedy",
                                  "asrpt_oracle", "srtf", "srtf_oracle", "las2d", "fifo_replan"])
@pytest.mark.parametrize("pool", ["fastest_fit", "first_fit", "type_agnostic"])
def test_every_scheduler_runs_audited_on_a_typed_cluster(name, pool):
    jobs = random_typed_jobs(np.random.default_rng(7), 40)
    result = run(jobs, RANDOM_CLUSTER, make_scheduler(name), placer=make_placer("heavy_edge", pool=pool),
                 predictions={j.job_id: j.iterations * 1.5 for j in jobs})
    metrics = result.metrics
    assert sum(metrics[f"jobs_{t}"] for t in TYPES) == len(jobs)
    busy = sum(metrics[f"busy_gpu_s_{t}"] for t in TYPES)
    assert busy == pytest.approx(metrics["utilization"] * 10 * (metrics["makespan"] - min(j.release for j in jobs)))


def test_zoo_jobs_run_slower_on_a_slower_type():
    from asrpt_bench.profiles import build_plan

    plan = build_plan("resnet50", "p1xd1")
    result = run([Job("z", 0.0, plan, 100)], Cluster(pools=[Pool("k80", 1, 1)]), make_scheduler("fifo"))
    alone = run([Job("z", 0.0, plan, 100)], Cluster(servers=1, gpus_per_server=1), make_scheduler("fifo"))
    assert result.records[0].alpha == pytest.approx(alone.records[0].alpha / GPU_TYPES["k80"].compute_speed)
    shorthand = run([Job("z", 0.0, plan, 100)], Cluster(servers=1, gpus_per_server=1, type="k80"), make_scheduler("fifo"))
    assert shorthand.records[0].alpha == result.records[0].alpha


# ---- refusals and the audit


def test_a_job_no_pool_runs_is_refused_and_one_no_pool_holds_is_dropped():
    with pytest.raises(ConfigError, match=r"job 'c' can run in no pool of the cluster: its alpha is empty on every "
                                          r"GPU type the cluster has \(v100, k80\)"):
        run([job("c", 0, 1, 5, v100=None, k80=None)], TWO_BY_TWO, make_scheduler("fifo"))
    with pytest.raises(ConfigError, match=r"job 'big' needs 3 GPUs but no pool that runs it holds them"):
        run([job("big", 0, 3, 5, v100=1, k80=1)], TWO_BY_TWO, make_scheduler("fifo"))
    result = run([job("big", 0, 3, 5, v100=1, k80=1), job("a", 0, 1, 5, v100=1, k80=1)], TWO_BY_TWO,
                 make_scheduler("fifo"), drop_oversize=True)
    assert result.dropped == ("big",)


@pytest.mark.parametrize("pool, where", [("fastest_fit", ("a", 0, 10, "v100")), ("first_fit", ("a", 0, 20, "k80"))])
def test_the_pool_choice_of_the_placer_is_the_one_used(pool, where):
    """The K80 pool comes first: fastest_fit still takes the V100, first_fit the first pool with room."""
    slow_first = Cluster(pools=[Pool("k80", 1, 1), Pool("v100", 1, 1)])
    result = run([job("a", 0, 1, 10, v100=1, k80=2)], slow_first, make_scheduler("fifo"),
                 placer=make_placer("first_fit", pool=pool))
    assert schedule(result) == [where]


def test_per_type_metrics_add_up_the_pools_of_one_type():
    """Two V100 pools of 2 GPUs, each busy 0-10: the type's 4 GPUs are all busy."""
    same = Cluster(pools=[Pool("v100", 1, 2, name="a"), Pool("v100", 1, 2, name="b")])
    result = run([job("x", 0, 2, 10, v100=1), job("y", 0, 2, 10, v100=1)], same, make_scheduler("fifo"))
    assert schedule(result) == [("x", 0, 10, "a"), ("y", 0, 10, "b")]
    assert (result.metrics["busy_gpu_s_v100"], result.metrics["utilization_v100"]) == (40.0, 1.0)


def test_a_log_replay_on_a_cluster_of_pools_is_refused():
    with pytest.raises(ConfigError, match=r"^scheduler=recorded cannot replay the log: a log does not say which "
                                          r"GPU type a job ran on, and this cluster is given as pools "
                                          r"\(1 x 2 v100 \+ 1 x 2 k80\)$"):
        run([Job("a", 0.0, TrainingPlan.fixed(1, 1.0), 10, recorded_wait=5.0)], TWO_BY_TWO, make_scheduler("recorded"))


def test_a_one_pool_cluster_of_the_reference_type_runs_each_job_at_its_alpha_there():
    """V100 is the reference type: a job's measured V100 alpha (2) replaces its plan's (1), and a job with no
    V100 time is refused."""
    assert schedule(run([job("a", 0, 1, 10, v100=2, k80=4)], Cluster(1, 2), make_scheduler("fifo"))) == [
        ("a", 0, 20, "v100")]
    with pytest.raises(ConfigError, match=r"^job 'c' cannot run on the cluster's GPU type v100 \(its alpha there is "
                                          r"empty: no measured time\)$"):
        run([job("c", 0, 1, 5, v100=None, k80=1)], Cluster(1, 2), make_scheduler("fifo"))


def test_the_audit_checks_pools():
    jobs = [job("A", 0, 2, 10, v100=1, k80=4), job("B", 1, 2, 10, v100=1, k80=2)]
    result = run(jobs, TWO_BY_TWO, make_scheduler("fifo"))
    a, b = result.records
    spanning = dataclasses.replace(a, placement=(0, 1), gpu_ids=(0, 2), servers_used=2)
    with pytest.raises(ScheduleAuditError, match=r"job 'A': placement \(0, 1\) spans pools \['k80', 'v100'\]"):
        audit_schedule((spanning, b), TWO_BY_TWO, jobs)
    with pytest.raises(ScheduleAuditError, match="job 'B': recorded pool 'v100' but its placement is in pool 'k80'"):
        audit_schedule((a, dataclasses.replace(b, pool="v100")), TWO_BY_TWO, jobs)
    # B runs in the cluster's second pool: a pool name the cluster does not have is caught there too
    with pytest.raises(ScheduleAuditError, match="job 'B': recorded pool 'p100' but its placement is in pool 'k80'"):
        audit_schedule((a, dataclasses.replace(b, pool="p100")), TWO_BY_TWO, jobs)
    with pytest.raises(ScheduleAuditError, match="job 'B': recorded alpha 1 but its placement gives 2 in pool 'k80'"):
        audit_schedule((a, dataclasses.replace(b, alpha=1, end=11)), TWO_BY_TWO, jobs)


def test_the_preemptive_audit_checks_each_segment_s_pool():
    jobs = [job("A", 0, 2, 10, v100=1, k80=4), job("B", 1, 2, 10, v100=1, k80=2)]
    result = run(jobs, TWO_BY_TWO, make_scheduler("srtf_oracle"))
    segments = list(result.segments)
    segments[0] = dataclasses.replace(segments[0], placement=(0, 1), gpu_ids=(0, 2))
    with pytest.raises(ScheduleAuditError, match=r"^job 'A', segment \[0, 10.0\): placement \(0, 1\) spans pools "
                                                 r"\['k80', 'v100'\]; a gang runs inside one pool$"):
        audit_preemptive(result.records, segments, TWO_BY_TWO, jobs)


def test_virtual_gpus_on_one_type_is_refused():
    with pytest.raises(ConfigError, match=r"scheduler.virtual_gpus=count acts on a cluster of several GPU types; "
                                          r"this cluster has one \(8 x 8 v100\)"):
        run([job("a", 0, 1, 1, v100=1)], Cluster(), make_scheduler("asrpt", virtual_gpus="count"))


def test_a_typed_compare_run_reports_per_type_metrics_and_a_valid_lower_bound(tmp_path):
    from asrpt_bench.composition import compose_run_config
    from asrpt_bench.experiment import run_experiment

    config = compose_run_config(["cluster=gavel_36_36_36", "workload=gavel", "workload.num_jobs=150",
                                 "predictor=oracle", "task.schedulers=[asrpt,fifo,fifo_replan]", "progress=false",
                                 f"cache.dir={tmp_path / 'cache'}"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_experiment(config)
    comparison = result.comparison.set_index("scheduler")
    for name in ("asrpt", "fifo", "fifo_replan"):
        row = comparison.loc[name]
        assert row["sum_completion"] >= row["lower_bound"] > 0
        assert sum(row[f"jobs_{t}"] for t in ("v100", "p100", "k80")) == row["num_jobs"]
        assert 0 <= row["utilization_k80"] <= 1 and math.isnan(row["theorem1_bound"])
