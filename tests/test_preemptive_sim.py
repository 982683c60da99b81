"""The preemptive simulator with srtf / srtf_oracle: hand-checked schedules, the audit of preemptive
runs, property tests with restarts > 0, and an independent small SRTF checked schedule for schedule."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.core import ConfigError, Cluster, Job, PreemptionPrice, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer, make_placer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.preemptive import JobColumns
from asrpt_bench.schedulers.replan import FIFOReplan
from asrpt_bench.schedulers.srtf import SRTF
from asrpt_bench.sim import ScheduleAuditError, simulate
from asrpt_bench.sim.audit import audit_preemptive
from asrpt_bench.sim.running import RunningTable

FIRST_FIT = FirstFitPlacer()
pytestmark = pytest.mark.filterwarnings("ignore:.*need all")


def fixed(job_id: str, release: float, gpus: int, iterations: int, alpha: float = 1.0) -> Job:
    return Job(job_id, float(release), TrainingPlan.fixed(gpus, alpha), iterations)


def ends(jobs, cluster, name="srtf_oracle", predictions=None, **preemption):
    result = simulate(jobs, cluster, make_scheduler(name), FIRST_FIT, predictions=predictions,
                      preemption=PreemptionPrice(**preemption))
    return {r.job_id: r.end for r in result.records}, result


@pytest.mark.parametrize("jobs, expected", [
    # a runs 0-2; b (3) preempts a (8 left); c (1) preempts b (2 left) at 3; c 3-4, b 4-6, a 6-14
    ([fixed("a", 0, 1, 10), fixed("b", 2, 1, 3), fixed("c", 3, 1, 1)], {"a": 14, "b": 6, "c": 4}),
    # equal remaining times: the earlier release keeps the GPU (a has 4 left at 1, as b)
    ([fixed("a", 0, 1, 5), fixed("b", 1, 1, 4)], {"a": 5, "b": 9}),
    # equal remaining and release: table order
    ([fixed("b", 0, 1, 4), fixed("a", 0, 1, 4)], {"b": 4, "a": 8}),
    # a longer arrival never preempts; the shortest waiting job runs at each completion
    ([fixed("a", 0, 1, 3), fixed("b", 1, 1, 5), fixed("c", 2, 1, 2), fixed("d", 2, 1, 1)],
     {"a": 3, "d": 4, "c": 6, "b": 11}),
    # alpha 2 s per iteration: remaining time is remaining iterations x alpha (a: 6 x 2 = 12 > b: 4)
    ([fixed("a", 0, 1, 8, alpha=2.0), fixed("b", 4, 1, 4)], {"b": 8, "a": 20}),
])
def test_single_gpu_jobs_on_one_gpu_follow_preemptive_srpt(jobs, expected):
    """Preemptive SRPT is optimal for 1 | r_j, pmtn | sum C_j; these are its schedules, by hand."""
    got, _ = ends(jobs, Cluster(1, 1), restart_s=0.0)
    assert got == expected


def test_srpt_on_two_gpus_by_hand():
    """d (1) and c (2) take both GPUs at 1; at 2 c (1 left) and a (5 left, before b by table order)
    run; at 3 a and b: a 4 left -> 7, b 5 left -> 8."""
    jobs = [fixed("a", 0, 1, 6), fixed("b", 0, 1, 6), fixed("c", 1, 1, 2), fixed("d", 1, 1, 1)]
    got, result = ends(jobs, Cluster(1, 2), restart_s=0.0)
    assert got == {"d": 2, "c": 3, "a": 7, "b": 8}
    assert {r.job_id: r.preemptions for r in result.records} == {"a": 1, "b": 1, "c": 0, "d": 0}
    assert result.metrics["preemptions"] == 2


def test_job_columns_grow_to_any_input_order():
    """Jobs arrive in release order, not input order: the first to arrive may be the 201st of the input."""
    columns = JobColumns(gpus=0, known=0.0)
    columns.set(200, gpus=4, known=2.5)
    columns.set(3, gpus=1)
    assert (columns["gpus"][200], columns["known"][200], columns["gpus"][3], columns["known"][3]) == (4, 2.5, 1, 0.0)


def test_the_running_table_reads_progress_as_the_scalar_rule():
    """A row banked 3 iterations and 5 s, runs from 10 at 2 s an iteration: nothing more at 10, half an
    iteration and a second more at 11."""
    table = RunningTable(4)
    table.add(0, done=3.0, ran=5.0, run_start=10.0, alpha=2.0, iterations=10.0, protected_until=10.5)
    states = [[column.tolist() for column in table.states(now)] for now in (10.0, 11.0)]
    assert states == [[[0], [False], [3.0], [5.0]], [[0], [True], [3.5], [6.0]]]


def test_the_running_table_reads_picked_rows_as_all_rows():
    """`states_of` gives the floats of `states` for the orders asked, in their order, also after a removal
    moved the last row into the removed one's place."""
    table = RunningTable(4)
    table.add(7, done=3.0, ran=5.0, run_start=10.0, alpha=2.0, iterations=10.0, protected_until=10.5)
    table.add(2, done=0.0, ran=0.0, run_start=12.0, alpha=0.0, iterations=4.0, protected_until=12.0)
    table.add(9, done=1.0, ran=1.0, run_start=8.0, alpha=0.5, iterations=3.0, protected_until=9.0)
    table.remove(7)
    orders, _, progress, run_seconds = table.states(11.0)
    assert orders.tolist() == [9, 2] and progress.tolist() == [3.0, 0.0] and run_seconds.tolist() == [4.0, 0.0]
    picked_progress, picked_seconds = table.states_of(np.array([2, 9]), 11.0)
    assert picked_progress.tolist() == [0.0, 3.0] and picked_seconds.tolist() == [0.0, 4.0]


def test_utilization_over_a_span_shorter_than_a_second():
    """a (0.5 s) and b (0.25 s, released at 0.25) run side by side on 4 GPUs: 0.75 GPU-s of 4 x 0.5."""
    jobs = [fixed("a", 0, 1, 2, alpha=0.25), fixed("b", 0.25, 1, 1, alpha=0.25)]
    got, result = ends(jobs, Cluster(1, 4))
    assert got == {"a": 0.5, "b": 0.5} and result.metrics["utilization"] == 0.375
    assert (result.scheduler, result.placer) == ("srtf_oracle", FIRST_FIT.name)


def test_restart_holds_the_gpus_without_progress():
    """As the first instance, restart 2 s: b resumes at 4, restores until 6, ends 8; a resumes at 8, ends 18."""
    jobs = [fixed("a", 0, 1, 10), fixed("b", 2, 1, 3), fixed("c", 3, 1, 1)]
    got, result = ends(jobs, Cluster(1, 1), restart_s=2.0)
    assert got == {"a": 18, "b": 8, "c": 4}
    segments = [(s.job_id, s.start, s.end, s.restart_s) for s in result.segments]
    assert segments == [("a", 0, 2, 0), ("b", 2, 3, 0), ("c", 3, 4, 0), ("b", 4, 8, 2), ("a", 8, 18, 2)]
    assert {r.job_id: (r.preemptions, r.restore_s) for r in result.records} == {
        "a": (1, 2.0), "b": (1, 2.0), "c": (0, 0.0)}
    assert result.metrics["utilization"] == 1.0
    # JCT = wait + service + restore: a waits while suspended (2-8), b from 3 to 4; none waits to start
    assert {r.job_id: (r.wait_s, r.service_s, r.restore_s, r.first_start_delay_s) for r in result.records} == {
        "a": (6.0, 10.0, 2.0, 0.0), "b": (1.0, 3.0, 2.0, 0.0), "c": (0.0, 1.0, 0.0, 0.0)}
    assert result.metrics["mean_wait"] == 7 / 3 and result.metrics["mean_first_start_delay"] == 0.0
    assert result.metrics["waited_share"] == 2 / 3 and result.metrics["busy_share"] == 1.0
    assert (result.metrics["preempted_share"], result.metrics["mean_preemptions"], result.metrics["max_preemptions"]) == (
        2 / 3, 2 / 3, 1.0)


@pytest.mark.parametrize("restart", [0.5, 2.0])
def test_a_restoring_job_becomes_suspendable_when_its_restore_ends(restart):
    """min_run 0: c (2) preempts a (9 left) at 1; a resumes at 3 and restores; b (1) arrives at 3.2, while a
    cannot be suspended, and preempts it the instant its restore ends (a decision instant however short the
    restore); a resumes after b and restores again."""
    jobs = [fixed("a", 0, 1, 10), fixed("c", 1, 1, 2), fixed("b", 3.2, 1, 1)]
    _, result = ends(jobs, Cluster(1, 1), restart_s=restart)
    restored = 3 + restart
    assert [(s.job_id, s.start, s.end, s.restart_s) for s in result.segments] == [
        ("a", 0, 1, 0), ("c", 1, 3, 0), ("a", 3, restored, restart), ("b", restored, restored + 1, 0),
        ("a", restored + 1, restored + 1 + restart + 9, restart)]


def test_a_preemptive_scheduler_hears_of_each_arrival_at_its_release():
    """The instant a scheduler plugin is told of an arrival is the job's release."""
    heard = []

    class Listening(SRTF):
        def on_arrival(self, job, now):
            heard.append((job.job_id, now))
            super().on_arrival(job, now)

    simulate([fixed("a", 0, 1, 3), fixed("b", 1.5, 1, 1)], Cluster(1, 2), Listening(), FIRST_FIT)
    assert heard == [("a", 0.0), ("b", 1.5)]


def test_min_run_protects_a_started_job():
    """min_run 5: a cannot be suspended before 5; then b (3 left) preempts it (5 left)."""
    got, _ = ends([fixed("a", 0, 1, 10), fixed("b", 2, 1, 3)], Cluster(1, 1), restart_s=0.0, min_run_s=5.0)
    assert got == {"b": 8, "a": 13}


def test_protected_jobs_consume_the_budget_first_and_the_walk_skips():
    """2 GPUs, min_run 10: a (1 GPU) is protected until 10, so at 1 one GPU is left: b (2 GPUs, first
    in the order) is skipped and c (1 GPU) starts; at 10 b is first and takes both GPUs, a is suspended."""
    jobs = [fixed("a", 0, 1, 20), fixed("b", 1, 2, 1), fixed("c", 1, 1, 5)]
    got, _ = ends(jobs, Cluster(1, 2), restart_s=0.0, min_run_s=10.0)
    assert got == {"c": 6, "b": 11, "a": 21}


def test_srtf_orders_by_predicted_remaining_time():
    """a is predicted at 1 iteration: after 1 s its predicted remaining time is 0 and it keeps the GPU."""
    jobs = [fixed("a", 0, 1, 10), fixed("b", 1, 1, 3)]
    predictions = {"a": 1.0, "b": 3.0}
    assert ends(jobs, Cluster(1, 1), "srtf", predictions, restart_s=0.0)[0] == {"a": 10, "b": 13}
    assert ends(jobs, Cluster(1, 1), "srtf_oracle", predictions, restart_s=0.0)[0] == {"b": 4, "a": 13}


def test_preemption_parameters_are_checked_naming_the_key():
    with pytest.raises(ConfigError, match=r"preemption.restart_s must be a number of seconds in \[0, 1e\+12\], got -1"):
        PreemptionPrice(restart_s=-1)
    with pytest.raises(ConfigError, match=r"preemption.min_run_s must be a number of seconds in \[0, 1e\+12\], got 'x'"):
        PreemptionPrice(min_run_s="x")
    with pytest.raises(ConfigError, match=r"^preemption.speed: the preemption price has no parameter 'speed'"):
        PreemptionPrice.parse({"speed": 1}, "preemption", "the preemption price")
    with pytest.raises(ConfigError, match=r"^preemption must be a PreemptionPrice"):
        simulate([fixed("a", 0, 1, 1)], Cluster(1, 1), make_scheduler("srtf"), FIRST_FIT, preemption={"restart_s": 0})
    with pytest.raises(ConfigError, match=r"^scheduler\.tau: scheduler 'srtf' has no parameter 'tau'"):
        make_scheduler("srtf", tau=1.0)
    with pytest.raises(ConfigError, match=r"^scheduler.preemption: scheduler 'srtf' has no parameter 'preemption'"):
        make_scheduler("srtf", preemption={"restart_s": 0})


# --- the audit of preemptive runs catches corrupted schedules -----------------------------------------

AUDIT_JOBS = [fixed("a", 0, 1, 10), fixed("b", 2, 1, 3), fixed("c", 3, 1, 1)]


@pytest.fixture()
def preempted():
    _, result = ends(AUDIT_JOBS, Cluster(1, 1), restart_s=2.0)
    return result


def swap(segments, k, **changes):
    return [replace(s, **changes) if i == k else s for i, s in enumerate(segments)]


def test_audit_passes_the_simulated_schedule(preempted):
    assert audit_preemptive(preempted.records, preempted.segments, Cluster(1, 1), AUDIT_JOBS, restart_s=2.0) is None


@pytest.mark.parametrize("k, changes, message", [
    (1, {"start": 1.0}, r"job 'b', segment \[1.0, 3.0\) starts before the job's release 2.0"),
    (4, {"end": 17.0}, r"job 'a': its record does not match|job 'a': its segments do 9.0 iterations, expected 10"),
    (3, {"restart_s": 0.0, "end": 6.0}, r"job 'b': segment at 4.0 restarts for 0.0 s, expected 2.0"),
    (0, {"alpha": 0.5}, r"job 'a', segment \[0.0, 2.0\): alpha 0.5 but its placement gives 1.0"),
])
def test_audit_catches_a_corrupted_segment(preempted, k, changes, message):
    bad = swap(preempted.segments, k, **changes)
    with pytest.raises(ScheduleAuditError, match=message):
        audit_preemptive(preempted.records, bad, Cluster(1, 1), AUDIT_JOBS, restart_s=2.0)


def test_audit_accepts_a_record_within_rounding_of_its_segments(preempted):
    """A record's service time is compared with its segments' sum to 1e-9 of its magnitude: a's 10 s off by
    5e-9 passes, off by 1e-6 is caught."""
    for off, passes in ((5e-9, True), (1e-6, False)):
        records = [replace(r, service_s=r.service_s + off) if r.job_id == "a" else r for r in preempted.records]
        if passes:
            assert audit_preemptive(records, preempted.segments, Cluster(1, 1), AUDIT_JOBS, restart_s=2.0) is None
        else:
            with pytest.raises(ScheduleAuditError, match=r"job 'a': its record does not match"):
                audit_preemptive(records, preempted.segments, Cluster(1, 1), AUDIT_JOBS, restart_s=2.0)


def test_audit_catches_two_segments_on_one_gpu(preempted):
    """b resumes at 3.5 instead of 4 (record moved with it): GPU 0 is still c's until 4."""
    bad = swap(preempted.segments, 3, start=3.5, end=7.5)
    records = [replace(r, end=7.5) if r.job_id == "b" else r for r in preempted.records]
    with pytest.raises(ScheduleAuditError, match=r"GPU 0 is held by jobs 'c' and 'b' at time 3.5"):
        audit_preemptive(records, bad, Cluster(1, 1), AUDIT_JOBS, restart_s=2.0)


@pytest.mark.parametrize("changes", [{"preemptions": 0}, {"end": 15.0}])
def test_audit_catches_a_record_that_disagrees_with_its_segments(preempted, changes):
    records = [replace(r, **changes) if r.job_id == "a" else r for r in preempted.records]
    with pytest.raises(ScheduleAuditError, match=r"job 'a': its record does not match its 2 segment\(s\)"):
        audit_preemptive(records, preempted.segments, Cluster(1, 1), AUDIT_JOBS, restart_s=2.0)


# --- property tests: the invariants hold with restarts > 0 on any instance ----------------------------

@st.composite
def instances(draw):
    servers, per = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    cluster = Cluster(servers, per, b_intra=100.0, b_inter=10.0)
    jobs = []
    for k in range(draw(st.integers(1, 8))):
        gpus = draw(st.integers(1, min(4, cluster.total_gpus)))
        alpha = draw(st.sampled_from([0.5, 1.0, 3.0]))
        plan = TrainingPlan.fixed(gpus, alpha, alpha * draw(st.sampled_from([1.0, 2.0])))
        jobs.append(Job(f"j{k}", float(draw(st.integers(0, 20))), plan, draw(st.integers(0, 30))))
    predictions = {job.job_id: float(draw(st.integers(0, 40))) for job in jobs}
    restart = draw(st.sampled_from([0.5, 3.0, 30.0]))
    min_run = draw(st.sampled_from([0.0, 1.0, 7.0]))
    return jobs, cluster, predictions, restart, min_run


def check_invariants(jobs, cluster, result, restart, min_run):
    """Independent of the audit: per GPU no two segments overlap; per job the segments start after
    release, follow each other, pay the restart when resumed, are only cut after the protected
    window, and their progress adds up to the iterations."""
    by_id = {job.job_id: job for job in jobs}
    per_gpu, per_job = defaultdict(list), defaultdict(list)
    for segment in result.segments:
        per_job[segment.job_id].append(segment)
        for gpu in segment.gpu_ids:
            if segment.end > segment.start:
                per_gpu[gpu].append((segment.start, segment.end))
    for intervals in per_gpu.values():
        intervals.sort()
        assert all(a[1] <= b[0] for a, b in zip(intervals, intervals[1:]))
    assert set(per_job) == set(by_id)
    for job_id, own in per_job.items():
        job = by_id[job_id]
        assert own[0].start >= job.release and own[0].restart_s == 0
        assert all(a.end <= b.start and b.restart_s == restart for a, b in zip(own, own[1:]))
        assert all(s.end - s.start >= restart * (k > 0) + min_run for k, s in enumerate(own[:-1]))
        assert sum(s.iterations for s in own) == pytest.approx(job.iterations, rel=1e-9, abs=1e-9)
        record = next(r for r in result.records if r.job_id == job_id)
        assert (record.start, record.end, record.preemptions) == (own[0].start, own[-1].end, len(own) - 1)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(instances(), st.sampled_from(["srtf", "srtf_oracle"]), st.sampled_from(["first_fit", "heavy_edge"]))
def test_preemptive_invariants_hold_with_restarts(instance, name, placer):
    jobs, cluster, predictions, restart, min_run = instance
    run = lambda: simulate(jobs, cluster, make_scheduler(name), make_placer(placer), predictions=predictions,  # noqa: E731
                           preemption=PreemptionPrice(restart_s=restart, min_run_s=min_run))
    result = run()
    check_invariants(jobs, cluster, result, restart, min_run)
    again = run()
    assert again.records == result.records and again.segments == result.segments


# --- an independent small SRTF: exact schedules on random single-server instances ---------------------

def reference_srtf(jobs, gpus_total, restart, min_run, predicted=None):
    """Gang SRTF on one server with placement-independent alpha, written from the definition: at each
    instant (arrival, completion, end of a restart or of a min-run window) order the released
    unfinished jobs by remaining iterations x alpha (ties: release, table order); jobs inside their
    protected window keep their GPUs; the rest are admitted in order while their GPUs fit."""
    n = len(jobs)
    done = [0.0] * n
    run = {}  # job -> (segment start, progress start)
    ran_before = [False] * n
    segments = defaultdict(list)
    finished = {}
    t = 0.0

    def progress(i):
        return done[i] + (max(0.0, t - run[i][1]) / jobs[i].plan.declared_alpha if i in run else 0.0)

    def remaining_time(i):
        iterations = jobs[i].iterations if predicted is None else predicted[jobs[i].job_id]
        return max(0.0, iterations - progress(i)) * jobs[i].plan.declared_alpha

    while len(finished) < n:
        for i in [i for i in run if progress(i) >= jobs[i].iterations]:
            segments[i].append((run[i][0], t))
            finished[i] = t
            del run[i]
        active = [i for i in range(n) if jobs[i].release <= t and i not in finished]
        protected = [i for i in run if t < run[i][1] + min_run]
        budget = gpus_total - sum(jobs[i].gpus for i in protected)
        admitted = set(protected)
        for i in sorted((i for i in active if i not in protected), key=lambda i: (remaining_time(i), jobs[i].release, i)):
            if jobs[i].gpus <= budget:
                admitted.add(i)
                budget -= jobs[i].gpus
        for i in [i for i in run if i not in admitted]:
            done[i] = progress(i)
            segments[i].append((run[i][0], t))
            del run[i]
        for i in sorted(admitted - set(run), key=lambda i: (remaining_time(i), jobs[i].release, i)):
            run[i] = (t, t + (restart if ran_before[i] else 0.0))
            ran_before[i] = True
        instants = [job.release for job in jobs if job.release > t]
        for i, (_, begin) in run.items():
            instants.append(begin + (jobs[i].iterations - done[i]) * jobs[i].plan.declared_alpha)
            instants += [x for x in (begin, begin + min_run) if x > t]
        if not instants:
            break
        t = min(instants)
    return {jobs[i].job_id: end for i, end in finished.items()}, {jobs[i].job_id: s for i, s in segments.items()}


@st.composite
def single_server_instances(draw):
    gpus_total = draw(st.integers(1, 4))
    jobs = [Job(f"j{k}", float(draw(st.integers(0, 12))),
                TrainingPlan.fixed(draw(st.integers(1, gpus_total)), draw(st.sampled_from([0.5, 1.0, 2.0]))),
                draw(st.integers(1, 12)))
            for k in range(draw(st.integers(1, 7)))]
    predictions = {job.job_id: float(draw(st.integers(0, 15))) for job in jobs}
    return jobs, gpus_total, predictions, draw(st.sampled_from([0.0, 1.0, 4.0])), draw(st.sampled_from([0.0, 2.0]))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(single_server_instances(), st.booleans())
def test_srtf_matches_an_independent_reference(instance, oracle):
    jobs, gpus_total, predictions, restart, min_run = instance
    name = "srtf_oracle" if oracle else "srtf"
    got, result = ends(jobs, Cluster(1, gpus_total), name, predictions, restart_s=restart, min_run_s=min_run)
    expected_ends, expected_segments = reference_srtf(jobs, gpus_total, restart, min_run,
                                                      None if oracle else predictions)
    assert got == expected_ends
    segments = defaultdict(list)
    for segment in result.segments:
        segments[segment.job_id].append((segment.start, segment.end))
    assert dict(segments) == expected_segments


class StartsThenAsks:
    """A preemptive scheduler that starts each arrival if it fits and records what running_states says
    about it at that very instant; `suspend_queued` makes it suspend a job it never started instead."""

    name, oracle, preemptive = "starts_then_asks", False, True

    def __init__(self, suspend_queued: bool = False, timer: float | None = None) -> None:
        self.suspend_queued, self.timer, self.states = suspend_queued, timer, []

    def reset(self, cluster) -> None:
        self.queue = []

    def on_arrival(self, job, now) -> None:
        self.queue.append(job)

    def on_completion(self, job, now) -> None:
        pass

    def decide(self, ctx) -> None:
        while self.queue:
            job = self.queue[0]
            if self.suspend_queued:
                ctx.suspend(job)
            proposal = ctx.propose(job)
            if proposal is None:
                return
            ctx.start(proposal)
            self.queue.pop(0)
            self.states.append((job.job_id, ctx.now, ctx.running_states([job])))

    def next_timer(self):
        return self.timer


def test_a_job_started_at_this_instant_is_suspendable_with_no_progress_yet():
    scheduler = StartsThenAsks()
    result = simulate([fixed("a", 0, 2, 3, alpha=2.0), fixed("b", 4, 1, 1)], Cluster(1, 2), scheduler, FIRST_FIT)
    assert scheduler.states == [("a", 0.0, [(True, 0.0, 0.0)]), ("b", 6.0, [(True, 0.0, 0.0)])]
    # a 2-GPU job's segment on server 0: placement and GPUs as space-separated strings
    frame = result.segments_frame()
    assert list(frame["placement"]) == ["0 0", "0"] and list(frame["gpu_ids"]) == ["0 1", "0"]


def test_suspending_a_job_that_is_not_running_is_refused_naming_the_scheduler_and_the_job():
    with pytest.raises(RuntimeError, match=r"^scheduler 'starts_then_asks' suspended job 'a', which is not running$"):
        simulate([fixed("a", 0, 1, 3)], Cluster(1, 2), StartsThenAsks(suspend_queued=True), FIRST_FIT)


def test_a_timer_that_is_not_in_the_future_is_refused_naming_the_scheduler():
    with pytest.raises(RuntimeError, match=r"^scheduler 'starts_then_asks' asked for a timer at 0.0 <= now 0.0$"):
        simulate([fixed("a", 0, 1, 3)], Cluster(1, 2), StartsThenAsks(timer=0.0), FIRST_FIT)


@pytest.mark.parametrize("name", ["srtf", "srtf_oracle", "psjf", "psjf_oracle", "las2d", "fifo_replan"])
def test_a_preemptive_scheduler_is_named_as_registered(name):
    """The name is what the engine's refusals and the records' `scheduler` column show."""
    assert make_scheduler(name).name == name


def test_a_job_past_its_predicted_iterations_keeps_remaining_time_zero_and_is_not_preempted():
    """srtf ranks by predicted remaining time, floored at 0: a (predicted 2 iterations, runs 10) has 0 left
    from 2 on, so b (0.5 s, from 5) waits for it: a 0-10, b 10-10.5."""
    jobs = [fixed("a", 0, 1, 10), fixed("b", 5, 1, 1, alpha=0.5)]
    got, result = ends(jobs, Cluster(1, 1), name="srtf", predictions={"a": 2.0, "b": 1.0}, restart_s=0.0)
    assert got == {"a": 10, "b": 10.5} and result.metrics["preemptions"] == 0


def test_fifo_replan_refuses_a_negative_round_naming_the_key():
    """By name through the registry and by the class itself (the Python API's other door)."""
    message = r"^scheduler\.round_s must be a number of seconds in \[0, 1e\+12\], got -1$"
    with pytest.raises(ConfigError, match=message):
        make_scheduler("fifo_replan", round_s=-1)
    with pytest.raises(ConfigError, match=message):
        FIFOReplan(round_s=-1)


def test_an_arrival_out_of_release_and_input_order_is_refused_naming_the_scheduler_and_the_job():
    """An admission scheduler breaks priority ties by arrival rank, which is (release, input order) only
    if arrivals come in that order, as the simulator delivers them."""
    scheduler = make_scheduler("srtf")
    scheduler.reset(Cluster(1, 2))
    view = lambda job_id, release, order: SimpleNamespace(  # noqa: E731
        job_id=job_id, release=release, order=order, gpus=1, predicted_iterations=3.0, alpha_min=1.0)
    scheduler.on_arrival(view("a", 5.0, 1), 5.0)
    with pytest.raises(RuntimeError, match=r"^scheduler 'srtf': job 'b' arrived out of \(release, input order\)$"):
        scheduler.on_arrival(view("b", 5.0, 0), 5.0)
