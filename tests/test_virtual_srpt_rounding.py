"""Regression: floating-point rounding in virtual SRPT must not produce a timer at the current instant."""

import pytest

from asrpt_bench.core import Cluster, Job, TrainingPlan
from asrpt_bench.placement import make_placer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.virtual_srpt import VirtualSRPT
from asrpt_bench.sim import simulate


def test_instance_found_by_the_adversarial_search_runs_with_the_hand_schedule():
    """p~ = (0.03, 93.3, 3.12) on G = 100: virtual completions 0.03, 3.15, 96.45 (0.03 + 3.12 = 3.15 is
    inexact in binary). Starts follow them: C = 1.03, 96.45 + 1866, 3.15 + 52."""
    jobs = [Job(i, 0.0, TrainingPlan.fixed(g, 1.0), n) for i, (g, n) in enumerate([(3, 1), (5, 1866), (6, 52)])]
    result = simulate(jobs, Cluster(1, 100), make_scheduler("asrpt", tau=0.0), make_placer("first_fit"))
    ends = [record.end for record in result.records]
    assert ends == pytest.approx([1.03, 1962.45, 55.15])


def test_looking_at_a_later_instant_does_not_round_the_remaining_work():
    """Size 0.3 seen at 0.03: remaining work was once rewritten to 0.27 there, and 0.03 + 0.27 =
    0.30000000000000004. Work is now booked only at virtual events, so the completion stays 0.3."""
    srpt = VirtualSRPT()
    srpt.add("a", 0.3, (0,), 0.0)
    assert srpt.advance_to(0.03) == []
    assert srpt.next_completion() == 0.3
    assert srpt.advance_to(0.3) == [("a", 0.3)]
    assert srpt.next_completion() is None


def test_work_that_rounds_below_one_ulp_at_an_arrival_completes_at_that_instant():
    """Anchor 0.15 (a completion there), size 0.2680638175547476: it ends at 0.41806381755474764. An
    arrival one ulp earlier books 0.2680638175547476 - (0.4180638175547476 - 0.15) = 0.0 of work left,
    so the job completes at the arrival instead of leaving a timer at the current instant."""
    srpt = VirtualSRPT()
    srpt.add("first", 0.15, (0,), 0.0)
    srpt.add("a", 0.2680638175547476, (1,), 0.0)
    assert srpt.advance_to(0.15) == [("first", 0.15)]
    arrival = 0.4180638175547476
    assert srpt.next_completion() > arrival
    assert srpt.add("b", 1.0, (2,), arrival) == [("a", arrival)]
    assert srpt.next_completion() == arrival + 1.0


def test_next_completion_is_always_strictly_in_the_future():
    srpt = VirtualSRPT()
    srpt.add("a", 0.1, (0,), 0.0)
    srpt.add("b", 0.2, (1,), 0.0)
    t = 0.0
    for _ in range(3):
        nxt = srpt.next_completion()
        if nxt is None:
            break
        target = nxt - 1e-17 if nxt > t else nxt
        srpt.advance_to(max(t, target))
        t = srpt.now
        follow = srpt.next_completion()
        assert follow is None or follow > t
