"""Virtual SRPT keeps exact time: ties in remaining work break by (release, input order), never by
rounding, and real completions at unrelated instants cannot change the virtual schedule."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.core import Cluster, Job, TrainingPlan
from asrpt_bench.placement import make_placer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.virtual_srpt import VirtualSRPT
from asrpt_bench.sim import simulate

ONE_SERVER_OF_TWO = Cluster(servers=1, gpus_per_server=2)


def _run(jobs: list[Job], predictions: dict[str, float]) -> dict[str, tuple[float, float]]:
    result = simulate(jobs, ONE_SERVER_OF_TWO, make_scheduler("asrpt", tau=0.0), make_placer("first_fit"),
                      predictions=predictions)
    return {record.job_id: (record.eligible, record.end) for record in result.records}


def test_exact_tie_at_an_arrival_goes_to_the_earlier_release_despite_an_unrelated_completion() -> None:
    """G = 2. B (0, 36 it., p~ 18), X (0, 1 it. of 0.002 s, predicted 0), C (16, 4 it., p~ 2): at 16
    B has exactly 2 left, C ties and loses on release. B eligible 18 ends 54, C eligible 20 ends 24.
    X's real completion at 0.002 once rewrote B's work to 17.998 and let C go first (C 22, B 56)."""
    b = Job("B", 0.0, TrainingPlan.fixed(1, 1.0), 36)
    x = Job("X", 0.0, TrainingPlan.fixed(1, 0.002), 1)
    c = Job("C", 16.0, TrainingPlan.fixed(1, 1.0), 4)
    with_x = _run([b, x, c], {"B": 36, "X": 0, "C": 4})
    assert with_x == {"B": (18.0, 54.0), "X": (0.0, 0.002), "C": (20.0, 24.0)}
    without_x = _run([b, c], {"B": 36, "C": 4})
    assert without_x == {"B": (18.0, 54.0), "C": (20.0, 24.0)}


def test_tie_break_is_release_then_input_order() -> None:
    srpt = VirtualSRPT()
    srpt.add("late_row_first", 4.0, (0.0, 1), 0.0)
    srpt.add("early_row", 4.0, (0.0, 0), 0.0)
    assert srpt.advance_to(8.0) == [("early_row", 4.0), ("late_row_first", 8.0)]


# Small integers make exact ties frequent; looks at k ms are inexact in binary.
virtual_jobs = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 8)), min_size=2, max_size=10)
odd_instants = st.lists(st.integers(1, 60_000).map(lambda ms: ms / 1000), max_size=30)


@settings(max_examples=150, deadline=None)
@given(jobs=virtual_jobs, looks=odd_instants)
def test_looking_at_extra_instants_never_changes_the_virtual_schedule(jobs: list[tuple[int, int]],
                                                                      looks: list[float]) -> None:
    """The same arrivals with and without `advance_to` at arbitrary extra instants (the real events
    A-SRPT dispatches at) give identical completions; integer inputs give integer completion times."""

    def completions(extra: list[float]) -> list[tuple[int, float]]:
        srpt = VirtualSRPT()
        done: list[tuple[int, float]] = []
        events = sorted([(release, 0, k) for k, (release, _) in enumerate(jobs)] + [(t, 1, -1) for t in extra])
        for time, kind, k in events:
            if kind == 0:
                done += srpt.add(k, float(jobs[k][1]), (jobs[k][0], k), float(time))
            else:
                done += srpt.advance_to(time)
        return done + srpt.advance_to(10_000.0)

    plain = completions([])
    assert completions(looks) == plain
    assert all(time == int(time) for _, time in plain)


@settings(max_examples=40, deadline=None)
@given(jobs=st.lists(st.tuples(st.integers(0, 12), st.integers(1, 12)), min_size=2, max_size=8),
       fillers=st.lists(st.tuples(st.integers(0, 12), st.integers(1, 997)), min_size=1, max_size=6))
def test_real_completions_at_odd_instants_do_not_move_eligibility(jobs: list[tuple[int, int]],
                                                                  fillers: list[tuple[int, int]]) -> None:
    """Jobs predicted at 0 iterations add no virtual work but finish in real time at odd instants
    (k ms); the other jobs' eligibility instants (their virtual completions) are unchanged."""
    main = [Job(f"j{k}", float(release), TrainingPlan.fixed(1, 1.0), n) for k, (release, n) in enumerate(jobs)]
    extra = [Job(f"x{k}", float(release), TrainingPlan.fixed(1, ms / 1000), 1) for k, (release, ms) in enumerate(fillers)]
    predictions = {job.job_id: float(job.iterations) for job in main} | {job.job_id: 0.0 for job in extra}
    alone = _run(main, predictions)
    mixed = _run(main + extra, predictions)
    assert {job_id: alone[job_id][0] for job_id in alone} == {job_id: mixed[job_id][0] for job_id in alone}


def test_a_shorter_arrival_preempts_and_the_longest_job_finishes_last() -> None:
    """A (4 at 0), B (1 at 1), C (2 at 2): B preempts A at 1 (1 < 3 left) and ends at 2; C (2 < 3) runs
    to 4; A resumes with 3 left and ends at 7. Looking at the remaining work never moves it."""
    srpt = VirtualSRPT()
    assert srpt.add("A", 4.0, (0.0, 0), 0.0) == [] and srpt.next_completion() == 4.0 and len(srpt) == 1
    assert srpt.add("B", 1.0, (1.0, 1), 1.0) == [] and srpt.now == 1.0
    assert srpt.remaining(1.5) == {"A": 3.0, "B": 0.5} and srpt.next_completion() == 2.0
    assert srpt.add("C", 2.0, (2.0, 2), 2.0) == [("B", 2.0)] and len(srpt) == 2
    assert srpt.remaining(3.0) == {"A": 3.0, "C": 1.0} and srpt.next_completion() == 4.0
    assert srpt.advance_to(5.0) == [("C", 4.0)] and srpt.now == 5.0
    assert srpt.remaining(5.0) == {"A": 2.0} and srpt.next_completion() == 7.0
    assert srpt.remaining(9.0) == {"A": 0.0}  # a look past the running job's end reports no work, never less
    assert srpt.advance_to(7.0) == [("A", 7.0)]
    assert srpt.remaining(8.0) == {} and srpt.next_completion() is None and len(srpt) == 0


def test_a_zero_size_job_completes_at_its_release() -> None:
    srpt = VirtualSRPT()
    srpt.add("long", 10.0, (0.0, 0), 0.0)
    assert srpt.add("empty", 0.0, (3.0, 1), 3.0) == []
    assert srpt.advance_to(3.0) == [("empty", 3.0)] and srpt.remaining(3.0) == {"long": 7.0}


@pytest.mark.parametrize("size", [-1.0, math.nan, math.inf])
def test_a_size_that_is_not_finite_and_non_negative_is_refused(size: float) -> None:
    with pytest.raises(ValueError, match=rf"^virtual job 'x': size must be finite and >= 0, got {size}$"):
        VirtualSRPT().add("x", size, (0.0, 0), 0.0)


def test_virtual_time_never_goes_back() -> None:
    srpt = VirtualSRPT()
    srpt.add("A", 4.0, (0.0, 0), 0.0)
    srpt.advance_to(5.0)
    for step in (lambda: srpt.advance_to(4.0), lambda: srpt.add("B", 1.0, (4.0, 1), 4.0)):
        with pytest.raises(ValueError, match=r"^virtual SRPT cannot go back in time from 5.0 to 4.0$"):
            step()
