"""The simulator holds a scheduler to its contract (docs/extending.md): a plugin that starts a job with a
per-iteration time of its own making, a stale placement, twice, before its release or never, or asks for a
timer in the past, is refused naming itself and the job; a proposal it builds correctly is honoured.
`simulate(..., estimate_placer=...)` decides alpha~min."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from asrpt_bench.cluster import Pool
from asrpt_bench.core import Cluster, ConfigError, Job, Placement, Stage, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers.base import EventKind, Proposal
from asrpt_bench.sim import simulate

FIRST_FIT = FirstFitPlacer()


class Scripted:
    """A scheduler whose every decision is `act(ctx, queue)`, the queue holding the jobs arrived so far."""

    name, oracle = "scripted", False

    def __init__(self, act, timer=None) -> None:
        self.act, self.timer = act, timer

    def reset(self, cluster) -> None:
        self.queue = []

    def on_arrival(self, job, now) -> None:
        self.queue.append(job)

    def dispatch(self, ctx) -> None:
        self.act(ctx, self.queue)

    def next_timer(self):
        return self.timer


def fixed(job_id: str, release: float, gpus: int, iterations: int, alpha: float = 1.0) -> Job:
    return Job(job_id, release, TrainingPlan.fixed(gpus, alpha), iterations)


def start_all(change=lambda ctx, job, proposal: proposal, eligible=lambda ctx, job: job.release):
    """Start the queue in order, each job with `change` applied to the placer's proposal."""
    def act(ctx, queue):
        while queue and (proposal := ctx.propose(queue[0])) is not None:
            job = queue.pop(0)
            ctx.start(change(ctx, job, proposal), eligible(ctx, job))
    return act


def test_a_proposal_with_a_smaller_alpha_than_its_placement_is_refused():
    cheat = start_all(lambda ctx, job, p: Proposal(p.job_id, p.placement, p.alpha / 2))
    with pytest.raises(RuntimeError, match=r"^scheduler 'scripted': proposal for job 'a' carries a wrong alpha$"):
        simulate([fixed("a", 0.0, 2, 7)], Cluster(2, 2), Scripted(cheat), FIRST_FIT)


def test_a_proposal_the_scheduler_builds_itself_is_honoured_when_it_is_right():
    # first-fit would take server 0; the scheduler picks server 1 with the plan's true alpha
    own = start_all(lambda ctx, job, p: Proposal(job.job_id, Placement((1, 1)), 2.5))
    result = simulate([fixed("a", 3.0, 2, 4, alpha=2.5)], Cluster(2, 2), Scripted(own), FIRST_FIT)
    (record,) = result.records
    assert (record.placement, record.alpha, record.start, record.end) == ((1, 1), 2.5, 3.0, 13.0)


TWO_POOLS = Cluster(pools=[Pool("v100", 1, 2), Pool("k80", 1, 2)])


def test_on_pools_a_proposal_the_scheduler_builds_itself_is_honoured_when_its_pool_and_alpha_are_right():
    # first-fit would take the v100 server 0; the scheduler picks the k80 server 1 (pool 1)
    own = start_all(lambda ctx, job, p: Proposal(job.job_id, Placement((1, 1)), p.alpha, 1))
    (record,) = simulate([fixed("a", 3.0, 2, 4, alpha=2.5)], TWO_POOLS, Scripted(own), FIRST_FIT).records
    assert (record.placement, record.pool, record.alpha, record.start, record.end) == ((1, 1), "k80", 2.5, 3.0, 13.0)


@pytest.mark.parametrize(("change", "message"), [
    (lambda job, p: Proposal(job.job_id, Placement((1, 1)), p.alpha, 0), "carries a wrong pool or alpha"),
    (lambda job, p: Proposal(job.job_id, Placement((1, 1)), p.alpha / 2, 1), "carries a wrong pool or alpha"),
    (lambda job, p: Proposal(job.job_id, Placement((0, 1)), p.alpha, 0),
     r"placement \(0, 1\) spans pools \['k80', 'v100'\]; a gang runs inside one pool"),
])
def test_on_pools_a_proposal_with_a_wrong_pool_or_alpha_is_refused(change, message):
    cheat = start_all(lambda ctx, job, p: change(job, p))
    with pytest.raises(RuntimeError, match=rf"^scheduler 'scripted': .*job 'a'.*{message}$"):
        simulate([fixed("a", 0.0, 2, 7)], TWO_POOLS, Scripted(cheat), FIRST_FIT)



def test_on_pools_a_proposal_in_a_pool_whose_type_cannot_run_the_job_is_refused_naming_the_scheduler():
    v100_only = Job("a", 0.0, TrainingPlan.fixed(2, 1.0), 7,
                    type_plans=(("v100", TrainingPlan.fixed(2, 1.0)), ("k80", None)))
    cheat = start_all(lambda ctx, job, p: Proposal(job.job_id, Placement((1, 1)), p.alpha, 1))
    with pytest.raises(RuntimeError, match=r"^scheduler 'scripted': job 'a' was placed in pool 'k80', whose type "
                                           r"cannot run it$"):
        simulate([v100_only], TWO_POOLS, Scripted(cheat), FIRST_FIT)

def test_a_stale_proposal_cannot_take_gpus_another_start_took():
    def stale(ctx, queue):
        if len(queue) == 2:
            first, second = ctx.propose(queue[0]), ctx.propose(queue[1])  # both see 3 free GPUs
            ctx.start(first, 0.0)
            ctx.start(second, 0.0)
    with pytest.raises(ValueError, match=r"placement puts 2 replicas on server 0 with 1 free GPUs"):
        simulate([fixed("a", 0.0, 2, 7), fixed("b", 0.0, 2, 7)], Cluster(1, 3), Scripted(stale), FIRST_FIT)


def test_a_job_started_twice_is_refused():
    def twice(ctx, queue):
        if queue:
            proposal = ctx.propose(queue[0])
            ctx.start(proposal, 0.0)
            ctx.start(ctx.propose(queue.pop(0)), 0.0)
    with pytest.raises(RuntimeError, match=r"^scheduler 'scripted' started job 'a' twice$"):
        simulate([fixed("a", 0.0, 1, 7)], Cluster(1, 4), Scripted(twice), FIRST_FIT)


@pytest.mark.parametrize("eligible, message", [
    (lambda ctx, job: job.release - 1.0, "job 'a' eligible at 1.0, released 2.0, started 2.0"),
    (lambda ctx, job: ctx.now + 1.0, "job 'a' eligible at 3.0, released 2.0, started 2.0"),
])
def test_an_eligibility_outside_release_and_start_is_refused(eligible, message):
    with pytest.raises(RuntimeError, match=rf"^scheduler 'scripted': {message}$"):
        simulate([fixed("a", 2.0, 1, 7)], Cluster(1, 4), Scripted(start_all(eligible=eligible)), FIRST_FIT)


def test_eligibility_may_be_the_release_or_the_start():
    jobs = [fixed("a", 2.0, 1, 7), fixed("b", 2.0, 1, 7)]
    scheduler = Scripted(start_all(eligible=lambda ctx, job: job.release if job.job_id == "a" else ctx.now))
    assert [r.eligible for r in simulate(jobs, Cluster(1, 4), scheduler, FIRST_FIT).records] == [2.0, 2.0]


def test_a_timer_not_after_now_is_refused():
    scheduler = Scripted(start_all(), timer=(0.0, EventKind.DELAY_EXPIRY))
    with pytest.raises(RuntimeError, match=r"^scheduler 'scripted' asked for a timer at 0.0 <= now 0.0$"):
        simulate([fixed("a", 0.0, 1, 7)], Cluster(1, 4), scheduler, FIRST_FIT)


def test_a_job_never_started_is_reported():
    def only_a(ctx, queue):
        for job in [j for j in queue if j.job_id == "a"]:
            ctx.start(ctx.propose(job), job.release)
            queue.remove(job)
    with pytest.raises(RuntimeError, match=r"^scheduler 'scripted' with placer 'first_fit' never started 2 job\(s\), "
                                           r"first 'b'$"):
        simulate([fixed("a", 0.0, 1, 1), fixed("b", 0.0, 1, 1), fixed("c", 5.0, 1, 1)], Cluster(1, 4),
                 Scripted(only_a), FIRST_FIT)


@dataclass(frozen=True)
class OneGpuPerServer:
    """A placer that spreads every job, one GPU per server from server 0 (hashable, as estimates are cached)."""

    name: str = "one_per_server"

    def place(self, plan, free, cluster):
        hosts = [h for h, room in enumerate(free) if room > 0][:plan.gpus]
        return Placement(tuple(hosts)) if len(hosts) == plan.gpus else None


@pytest.mark.parametrize("cluster", [Cluster(servers=4, gpus_per_server=4, b_intra=100.0, b_inter=10.0),
                                     Cluster(pools=[Pool(servers=4, gpus_per_server=4, b_intra=100.0, b_inter=10.0)])],
                         ids=["plain", "one-pool"])
def test_the_estimate_placer_decides_alpha_min_and_the_run_placer_the_alpha(cluster):
    """paper-notes 2.5 light vector on 4 x 4 GPUs, 100/10 GB/s: 0.152 s on one server, 0.17 s on four; the
    same on a cluster given as one pool, whose estimates are made per pool."""
    plan = TrainingPlan("vector", "p2xd2", (Stage(0.2, 0.4e9, 0.1e9, 2), Stage(0.3, 0.2e9, 0.0, 2)))
    jobs = [Job("a", 0.0, plan, 100)]
    default = simulate(jobs, cluster, Scripted(start_all()), FIRST_FIT).records[0]
    spread = simulate(jobs, cluster, Scripted(start_all()), FIRST_FIT, estimate_placer=OneGpuPerServer()).records[0]
    assert default.alpha_min == pytest.approx(0.152, rel=1e-12) and spread.alpha_min == pytest.approx(0.17, rel=1e-12)
    assert default.alpha == spread.alpha == pytest.approx(0.152, rel=1e-12)
    assert default.alpha_max == spread.alpha_max == pytest.approx(0.17, rel=1e-12)
    moved = simulate(jobs, cluster, Scripted(start_all()), OneGpuPerServer(), estimate_placer=OneGpuPerServer())
    assert (moved.records[0].alpha, moved.records[0].placement) == (pytest.approx(0.17, rel=1e-12), (0, 1, 2, 3))


def test_a_placer_without_a_place_method_is_refused_naming_it():
    with pytest.raises(ConfigError, match=r"^placer must be a placer object with a place\(\) method \(e.g. from "
                                          r"make_placer\), got object <object object at 0x[0-9a-f]+>$"):
        simulate([fixed("a", 0.0, 1, 2)], Cluster(1, 2), Scripted(start_all()), object())


def test_when_every_job_is_too_large_for_every_pool_nothing_is_simulated_and_the_message_says_so():
    with pytest.raises(ConfigError) as refused:
        simulate([fixed("big", 0.0, 3, 5)], TWO_POOLS, Scripted(start_all()), FIRST_FIT, drop_oversize=True)
    assert str(refused.value) == (
        "every job (1) needs more than the GPUs of every pool that runs them (first: 'big'), so nothing is left to "
        "simulate; use a larger cluster (cluster.servers, cluster.gpus_per_server, cluster.pools)")


def test_the_progress_bar_counts_the_jobs(capsys):
    simulate([fixed("a", 0.0, 1, 2), fixed("b", 0.0, 1, 2)], Cluster(1, 2), Scripted(start_all()), FIRST_FIT,
             progress=True)
    shown = capsys.readouterr().err
    assert "simulate scripted: 100%" in shown and "| 2/2 [" in shown
