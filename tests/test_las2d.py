"""las2d (Tiresias' discretized 2D-LAS): exact schedules checked by hand, its parameters, invariants."""

from __future__ import annotations

import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.core import ConfigError, Cluster, Job, PreemptionPrice, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.las2d import LAS2DParams
from asrpt_bench.sim import simulate

pytestmark = pytest.mark.filterwarnings("ignore:.*need all")


def fixed(job_id: str, release: float, gpus: int, iterations: int) -> Job:
    return Job(job_id, float(release), TrainingPlan.fixed(gpus, 1.0), iterations)


def run(jobs, cluster, **params):
    result = simulate(jobs, cluster, make_scheduler("las2d", **params), FirstFitPlacer(),
                      preemption=PreemptionPrice(restart_s=0.0))
    segments = [(s.job_id, s.start, s.end) for s in result.segments]
    return {r.job_id: r.end for r in result.records}, segments


def test_demotion_at_the_threshold_and_fifo_within_a_queue():
    """One GPU, queues split at 2 GPU-s. a runs 0-2 and is demoted; b (queue 0) runs from 2; c arrives
    at 3 in queue 0 behind b (FIFO); b is demoted at 4 and c runs 4-5; then a and b share queue 1 and
    a, released first, runs to its end before b."""
    ends, segments = run([fixed("a", 0, 1, 10), fixed("b", 2, 1, 3), fixed("c", 3, 1, 1)], Cluster(1, 1),
                         queue_thresholds=[2.0])
    assert ends == {"a": 13, "b": 14, "c": 5}
    assert segments == [("a", 0, 2), ("b", 2, 4), ("c", 4, 5), ("a", 5, 13), ("b", 13, 14)]


def test_attained_service_counts_gpus_times_seconds():
    """Two GPUs, threshold 4 GPU-s: 2-GPU a reaches it after 2 s. At 1 b waits behind a (both queue 0,
    a first); at 2 a is demoted, b starts on one GPU and a no longer fits: it waits until b ends at 6."""
    ends, segments = run([fixed("a", 0, 2, 10), fixed("b", 1, 1, 4)], Cluster(1, 2), queue_thresholds=[4.0])
    assert ends == {"b": 6, "a": 14}
    assert segments == [("a", 0, 2), ("b", 2, 6), ("a", 6, 14)]


def test_three_queues():
    """Thresholds 1 and 3 GPU-s on one GPU: a is in queue 1 from 1 and b, arriving at 2, runs first;
    b reaches queue 1 at 3 and a, released first, resumes; a reaches queue 2 at 4, so b runs until it
    reaches queue 2 at 6; then a (released first) finishes its 3 iterations before b its last one."""
    ends, segments = run([fixed("a", 0, 1, 6), fixed("b", 2, 1, 4)], Cluster(1, 1), queue_thresholds=[1.0, 3.0])
    assert segments == [("a", 0, 2), ("b", 2, 3), ("a", 3, 4), ("b", 4, 6), ("a", 6, 9), ("b", 9, 10)]
    assert ends == {"a": 9, "b": 10}


def test_a_job_that_keeps_running_past_a_threshold_is_demoted_again_at_the_next():
    """Thresholds 1 and 5 GPU-s on two GPUs. a and c run from 0; b arrives at 0.5 and waits (queue 0, behind
    them). At 1 both reach queue 1: b takes c's GPU and a keeps running, so its next crossing is booked
    from its attained service: at 5. b reaches queue 1 at 2 and c (released first) resumes. At 5 a reaches
    queue 2 and b (queue 1) takes its GPU; at 6 c reaches queue 2 and a (released first) resumes; at 9 b
    reaches queue 2 and c resumes; then a, c and b finish in release order."""
    ends, segments = run([fixed("a", 0, 1, 20), fixed("c", 0, 1, 20), fixed("b", 0.5, 1, 20)], Cluster(1, 2),
                         queue_thresholds=[1.0, 5.0])
    assert segments == [("c", 0, 1), ("b", 1, 2), ("a", 0, 5), ("c", 2, 6), ("b", 5, 9), ("a", 6, 21),
                        ("c", 9, 24), ("b", 21, 36)]
    assert ends == {"a": 21, "c": 24, "b": 36}


def test_starvation_guard_promotes_a_waiting_job():
    """Threshold 2, promote_knob 1: a job waiting as long as it has run since its last promotion goes
    back to queue 0. Without the guard a (queue 1, released first) resumes at 4 and ends at 7; with
    it, a and b take turns of 2 s: a 0-2, b 2-4, a 4-6, b 6-8, a 8-9, b 9-15."""
    jobs = [fixed("a", 0, 1, 5), fixed("b", 1, 1, 10)]
    assert run(jobs, Cluster(1, 1), queue_thresholds=[2.0])[0] == {"a": 7, "b": 15}
    ends, segments = run(jobs, Cluster(1, 1), queue_thresholds=[2.0], promote_knob=1.0)
    assert segments == [("a", 0, 2), ("b", 2, 4), ("a", 4, 6), ("b", 6, 8), ("a", 8, 9), ("b", 9, 15)]
    assert ends == {"a": 9, "b": 15}
    # promote_knob 2: a, suspended at 2 after running 2 s, is due back in queue 0 only at 2 + 2 x 2 = 6; at 4,
    # when b is demoted, both are in queue 1 and a (released first) runs to its end
    assert run(jobs, Cluster(1, 1), queue_thresholds=[2.0], promote_knob=2.0)[1] == [
        ("a", 0, 2), ("b", 2, 4), ("a", 4, 7), ("b", 7, 15)]



def test_a_resumed_job_s_old_promotion_never_fires():
    """One GPU, threshold 1 GPU-s, promote_knob 0.5. a (from 2) is in queue 1 from 3; b arrives at 6 and
    preempts it: a's promotion is booked for 6 + 0.5 x 4 = 8. b reaches queue 1 at 7 and a (released
    first) resumes, which cancels that promotion; b, suspended after 1 s, is promoted at 7.5 and preempts a,
    whose new promotion is due at 7.5 + 0.5 x 4.5 - 1 (waited since its last promotion) = 8.75; b ends at
    8.5 and a at 9. Had the promotion of 8 stayed booked, a would take the GPU back from b at 8."""
    ends, segments = run([fixed("a", 2, 1, 5), fixed("b", 6, 1, 2)], Cluster(1, 1), queue_thresholds=[1.0],
                         promote_knob=0.5)
    assert segments == [("a", 2, 6), ("b", 6, 7), ("a", 7, 7.5), ("b", 7.5, 8.5), ("a", 8.5, 9)]
    assert ends == {"a": 9, "b": 8.5}


def test_the_timer_is_the_first_valid_promotion_after_now_and_one_due_now_stays_booked():
    """The scheduler's timer (`_next_instant`) skips stale bookings (an older token: the job ran since) and
    a valid promotion already due, which stays booked for the next decision's `_promote`, and reads the
    earliest valid one after now from the heap's top, not from a scan of every booking."""
    las2d = make_scheduler("las2d", promote_knob=1.0)
    las2d._clear()
    las2d.token_ = {1: 2, 2: 1, 3: 1}
    las2d.promotions_ = [(4.0, 3, 0), (5.0, 1, 1), (5.0, 2, 1), (6.0, 1, 2), (7.0, 3, 1)]
    heapq.heapify(las2d.promotions_)
    assert las2d._next_instant(5.0) == 6.0
    assert sorted(las2d.promotions_) == [(5.0, 2, 1), (6.0, 1, 2), (7.0, 3, 1)]
    las2d.token_[1] = 3  # job 1 ran again: its promotion of 6 is stale
    assert las2d._next_instant(5.0) == 7.0
    las2d.token_[3] = 2
    assert las2d._next_instant(5.0) is None and las2d.promotions_ == [(5.0, 2, 1)]

def test_a_job_suspended_in_queue_0_books_no_promotion():
    """One GPU, threshold 2 GPU-s, promote_knob 0.75. a runs 0-2 and is demoted; b runs from 2 until a,
    promoted at 2 + 0.75 x 2 = 3.5, takes the GPU back: b is suspended in queue 0, so no promotion is
    booked for it and it keeps its 1.5 GPU-s. a is demoted at 5.5 and b reaches queue 1 at 6, where a
    (released first, its promotion of 7 cancelled) runs to its end at 10. Had b booked a promotion (due at
    once), its attained service would restart from 0 and it would run 5.5-7 until a's promotion at 7."""
    ends, segments = run([fixed("a", 0, 1, 8), fixed("b", 0.5, 1, 6)], Cluster(1, 1), queue_thresholds=[2.0],
                         promote_knob=0.75)
    assert segments == [("a", 0, 2), ("b", 2, 3.5), ("a", 3.5, 5.5), ("b", 5.5, 6), ("a", 6, 10), ("b", 10, 14)]
    assert ends == {"a": 10, "b": 14}


def test_restarts_do_not_count_as_attained_service():
    """Restart 1 s, thresholds 2 and 3 GPU-s: a resumes at 4, restores until 5 and reaches 3 GPU-s of
    running at 6 (not 5), when b (queue 1) takes over; each later turn also restores for 1 s first."""
    jobs = [fixed("a", 0, 1, 6), fixed("b", 2, 1, 4)]
    result = simulate(jobs, Cluster(1, 1), make_scheduler("las2d", queue_thresholds=[2.0, 3.0]), FirstFitPlacer(),
                      preemption=PreemptionPrice(restart_s=1.0))
    segments = [(s.job_id, s.start, s.end, s.restart_s) for s in result.segments]
    assert segments == [("a", 0, 2, 0), ("b", 2, 4, 0), ("a", 4, 6, 1), ("b", 6, 8, 1), ("a", 8, 12, 1),
                        ("b", 12, 14, 1)]



def test_each_turn_restores_before_its_threshold_crossing_is_due():
    """Three GPUs; a (3 GPUs, 1 s of work) and b (1 GPU, 8 s); thresholds 0.5 and 4 GPU-s, promote_knob 2,
    restart 3 s. a runs 1.5-2 (0.5 s) and is demoted at 1/6 s; b preempts it and is demoted at 2.5, when a
    resumes and restores until 5.5, protected; b, promoted at 3.5, takes the GPUs at 5.5 and restores until
    8.5; a, promoted at 6 (waited 0.5 s), then wins every turn in queue 0 by its release: after each 3 s
    restore it runs 1/6 s to its threshold (its crossing is booked from the restore's end, not from the
    resumption), so three turns finish it at 24; b's turns between are restores only, and b ends at
    24 + 3 + 7.5 = 34.5."""
    jobs = [Job("a", 1.5, TrainingPlan.fixed(3, 1.0), 1), Job("b", 2.0, TrainingPlan.fixed(1, 1.0), 8)]
    result = simulate(jobs, Cluster(1, 3), make_scheduler("las2d", queue_thresholds=[0.5, 4.0], promote_knob=2.0),
                      FirstFitPlacer(), preemption=PreemptionPrice(restart_s=3.0))
    turn = 3 + 1 / 6
    expected = [("a", 1.5, 2), ("b", 2, 2.5), ("a", 2.5, 5.5), ("b", 5.5, 8.5), ("a", 8.5, 8.5 + turn),
                ("b", 8.5 + turn, 11.5 + turn), ("a", 11.5 + turn, 11.5 + 2 * turn),
                ("b", 11.5 + 2 * turn, 14.5 + 2 * turn), ("a", 14.5 + 2 * turn, 24), ("b", 24, 34.5)]
    assert [(s.job_id, s.start, s.end) for s in result.segments] == [
        (job, pytest.approx(start, rel=1e-12), pytest.approx(end, rel=1e-12)) for job, start, end in expected]

def test_short_thresholds_with_long_restarts_still_finish():
    """Threshold 1 GPU-s below a 2 s restart and an eager starvation guard: every turn makes progress
    because restoring is not attained service (found by the property test below as a livelock)."""
    jobs = [fixed("a", 0, 1, 2), fixed("b", 0, 1, 1)]
    result = simulate(jobs, Cluster(1, 1), make_scheduler("las2d", promote_knob=0.5, queue_thresholds=[1.0]),
                      FirstFitPlacer(), preemption=PreemptionPrice(restart_s=2.0))
    assert len(result.records) == 2


def test_defaults_are_tiresias_simulator_values():
    assert LAS2DParams().queue_thresholds == (3250.0, 7200.0) and LAS2DParams().promote_knob is None
    assert PreemptionPrice().restart_s == 30.0 and PreemptionPrice().min_run_s == 0.0


@pytest.mark.parametrize("params, message", [
    ({"queue_thresholds": []}, r"scheduler.queue_thresholds must be a non-empty increasing list of positive"),
    ({"queue_thresholds": [5.0, 2.0]}, r"scheduler.queue_thresholds must be a non-empty increasing list"),
    ({"queue_thresholds": [0.0]}, r"scheduler.queue_thresholds must be a non-empty increasing list"),
    ({"promote_knob": 0}, r"scheduler.promote_knob must be null \(no starvation guard\) or a number > 0, got 0"),
    ({"preemption": {"restart_s": 2.0}}, r"scheduler.preemption: scheduler 'las2d' has no parameter 'preemption'"),
    ({"restart_s": 2.0}, r"scheduler.restart_s: scheduler 'las2d' has no parameter 'restart_s'"),
])
def test_bad_parameters_are_refused_naming_the_key(params, message):
    with pytest.raises(ConfigError, match=message):
        make_scheduler("las2d", **params)


@st.composite
def instances(draw):
    cluster = Cluster(draw(st.integers(1, 2)), draw(st.integers(1, 4)))
    jobs = [fixed(f"j{k}", draw(st.integers(0, 15)), draw(st.integers(1, cluster.total_gpus)), draw(st.integers(0, 25)))
            for k in range(draw(st.integers(1, 8)))]
    return jobs, cluster


@settings(max_examples=60, deadline=None, derandomize=True)
@given(instances(), st.sampled_from([0.0, 2.0, 30.0]), st.sampled_from([None, 0.5, 2.0]),
       st.sampled_from([[1.0], [3.0, 8.0]]))
def test_las2d_runs_every_instance_deterministically(instance, restart, knob, thresholds):
    """Every job finishes (the audit inside simulate checks the segments) and reruns are identical."""
    jobs, cluster = instance
    scheduler = lambda: make_scheduler("las2d", promote_knob=knob, queue_thresholds=thresholds)  # noqa: E731
    price = PreemptionPrice(restart_s=restart)
    first = simulate(jobs, cluster, scheduler(), FirstFitPlacer(), preemption=price)
    again = simulate(jobs, cluster, scheduler(), FirstFitPlacer(), preemption=price)
    assert len(first.records) == len(jobs)
    assert first.records == again.records and first.segments == again.segments
