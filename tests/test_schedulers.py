"""Baselines on hand-computed schedules, the virtual SRPT, and the scheduler registry."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from asrpt_bench.core import Cluster, ConfigError, Job, TrainingPlan
from asrpt_bench.params import Params, param
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.rules import integer
from asrpt_bench.schedulers import FIFO, SCHEDULERS, SPJF, VirtualSRPT, make_scheduler
from asrpt_bench.schedulers.base import QueueScheduler, register_scheduler, submission_key
from asrpt_bench.schedulers.wcs import WCSSubTime
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.instances import get_instance

FIRST_FIT = FirstFitPlacer()
ONE_GPU = pytest.mark.filterwarnings("ignore:.*need all 1 GPUs")


def fixed(job_id: str, release: float, gpus: int, iterations: int) -> Job:
    return Job(job_id, release, TrainingPlan.fixed(gpus, 1.0), iterations)


def run(name: str, jobs, cluster, predictions=None, **params) -> dict[str, tuple[float, float]]:
    result = simulate(jobs, cluster, make_scheduler(name, **params), FIRST_FIT, predictions=predictions)
    return {r.job_id: (r.start, r.end) for r in result.records}


# Orders instance, 1 server x 4 GPUs, alpha = 1: L1 (r0, g2, n10) and L2 (r0, g2, n4) fill the
# cluster; L2 ends at 4, freeing 2 GPUs. Queued by then: A (r1, g2, n2: duration 2, workload 4),
# B (r2, g1, n6: 6, 6), C (r3, g1, n3: 3, 3). Keys: duration A < C < B, workload C < A < B,
# submission A < B < C.
ORDERS = [fixed("L1", 0, 2, 10), fixed("L2", 0, 2, 4), fixed("A", 1, 2, 2), fixed("B", 2, 1, 6),
          fixed("C", 3, 1, 3)]
LONG = {"L1": (0.0, 10.0), "L2": (0.0, 4.0)}

ORDERS_SCHEDULES = {
    # t=4: A fits (2 GPUs) 4-6; t=6: B 6-12, C 6-9.
    "fifo": {**LONG, "A": (4.0, 6.0), "B": (6.0, 12.0), "C": (6.0, 9.0)},
    "spjf": {**LONG, "A": (4.0, 6.0), "B": (6.0, 12.0), "C": (6.0, 9.0)},
    "wcs_duration": {**LONG, "A": (4.0, 6.0), "B": (6.0, 12.0), "C": (6.0, 9.0)},
    "wcs_subtime": {**LONG, "A": (4.0, 6.0), "B": (6.0, 12.0), "C": (6.0, 9.0)},
    # t=4: C 4-7, head A needs 2 of the 1 idle GPU and blocks B; t=7: A 7-9; t=9: B 9-15.
    "spwf": {**LONG, "A": (7.0, 9.0), "B": (9.0, 15.0), "C": (4.0, 7.0)},
    # t=4: C 4-7, A does not fit, B takes the last GPU 4-10; t=7: 1 idle, A still waits; t=10: A 10-12.
    "wcs_workload": {**LONG, "A": (10.0, 12.0), "B": (4.0, 10.0), "C": (4.0, 7.0)},
}


@pytest.mark.parametrize("name", sorted(ORDERS_SCHEDULES))
def test_baseline_schedules_on_orders_instance(name):
    assert run(name, ORDERS, Cluster(1, 4)) == ORDERS_SCHEDULES[name]


HEAD_OF_LINE = {
    # L (g5, n10) 0-10 on 6 GPUs; W (g5, r1, n1) waits for L; S (g1, r2, n2).
    "fifo": {"L": (0.0, 10.0), "W": (10.0, 11.0), "S": (10.0, 12.0)},  # W ahead by release: S blocked
    "spjf": {"L": (0.0, 10.0), "W": (10.0, 11.0), "S": (10.0, 12.0)},  # W shorter (1 < 2): S blocked
    "spwf": {"L": (0.0, 10.0), "W": (10.0, 11.0), "S": (2.0, 4.0)},  # S lighter (2 < 5): S is head
    "wcs_duration": {"L": (0.0, 10.0), "W": (10.0, 11.0), "S": (2.0, 4.0)},  # S passes the stuck W
    "wcs_workload": {"L": (0.0, 10.0), "W": (10.0, 11.0), "S": (2.0, 4.0)},
    "wcs_subtime": {"L": (0.0, 10.0), "W": (10.0, 11.0), "S": (2.0, 4.0)},
}


@pytest.mark.parametrize("name", sorted(HEAD_OF_LINE))
def test_head_blocks_strict_schedulers_but_not_work_conserving_ones(name):
    instance = get_instance("head_of_line")
    assert run(name, instance.jobs(), instance.cluster) == HEAD_OF_LINE[name]


@ONE_GPU
def test_duration_source_predicted_vs_oracle():
    """One GPU. X (r0, n5) runs 0-5; P (r1, n10) and Q (r1, n1) wait, with predictions swapped
    (P 1, Q 10). SPJF on predictions: P 5-15, Q 15-16; on true durations: Q 5-6, P 6-16."""
    jobs = [fixed("X", 0, 1, 5), fixed("P", 1, 1, 10), fixed("Q", 1, 1, 1)]
    predictions = {"X": 5, "P": 1, "Q": 10}
    cluster = Cluster(1, 1)
    predicted = run("spjf", jobs, cluster, predictions=predictions)
    oracle = run("spjf", jobs, cluster, predictions=predictions, duration_source="oracle")
    assert predicted == {"X": (0.0, 5.0), "P": (5.0, 15.0), "Q": (15.0, 16.0)}
    assert oracle == {"X": (0.0, 5.0), "P": (6.0, 16.0), "Q": (5.0, 6.0)}
    assert make_scheduler("wcs_duration", duration_source="oracle").oracle
    assert not make_scheduler("wcs_duration").oracle


@ONE_GPU
def test_asrpt_oracle_ignores_predictions():
    """1x1 GPU, both at 0: predictions say P (n10) is short, oracle A-SRPT uses the true sizes
    (P 10, Q 1): Q completes virtually at 1 and runs 1-2; P eligible at 11, runs 11-21."""
    jobs = [fixed("P", 0, 1, 10), fixed("Q", 0, 1, 1)]
    predictions = {"P": 1, "Q": 10}
    assert run("asrpt_oracle", jobs, Cluster(1, 1), predictions=predictions) == {"P": (11.0, 21.0),
                                                                                  "Q": (1.0, 2.0)}
    assert run("asrpt", jobs, Cluster(1, 1), predictions=predictions) == {"P": (1.0, 11.0), "Q": (11.0, 12.0)}


def test_virtual_srpt_preempts_and_breaks_ties():
    """X (size 5, t0) runs; Y (size 1, t1) preempts it: Y done at 2, X at 6. Z (size 0, t6) done at 6.
    Ties on remaining work go to the smaller tiebreak key."""
    srpt = VirtualSRPT()
    assert srpt.add("X", 5.0, (0.0, 0), 0.0) == []
    assert srpt.next_completion() == 5.0
    assert srpt.add("Y", 1.0, (1.0, 1), 1.0) == []
    assert srpt.next_completion() == 2.0
    assert srpt.advance_to(3.0) == [("Y", 2.0)]
    assert srpt.next_completion() == 6.0
    assert srpt.add("Z", 0.0, (6.0, 2), 6.0) == [("X", 6.0)]
    assert srpt.advance_to(6.0) == [("Z", 6.0)]
    tie = VirtualSRPT()
    tie.add("late", 2.0, (0.0, 1), 0.0)
    tie.add("early", 2.0, (0.0, 0), 0.0)
    assert tie.advance_to(10.0) == [("early", 2.0), ("late", 4.0)]
    with pytest.raises(ValueError, match="back in time"):
        tie.advance_to(5.0)


@ONE_GPU
def test_srpt_tiebreak_by_id_only():
    """One GPU, oracle sizes: 'a' (order 0, r1, size 1), 'b' (order 1, r0, size 2). At t=1 both have 1 left.
    release_id: b first (virtual 2), a (virtual 3): real b 2-4, a waits for the GPU: 4-5.
    id: a first (virtual 2), b (virtual 3): real a 2-3, b 3-5."""
    jobs = [fixed("a", 1, 1, 1), fixed("b", 0, 1, 2)]
    by_release = run("asrpt_oracle", jobs, Cluster(1, 1), srpt_tiebreak="release_id", tau=0.0)
    by_id = run("asrpt_oracle", jobs, Cluster(1, 1), srpt_tiebreak="id", tau=0.0)
    assert by_release == {"b": (2.0, 4.0), "a": (4.0, 5.0)}
    assert by_id == {"a": (2.0, 3.0), "b": (3.0, 5.0)}


def test_registry_has_every_scheduler():
    assert set(SCHEDULERS) >= {"asrpt", "asrpt_oracle", "spjf", "spwf", "wcs_duration", "wcs_workload",
                               "wcs_subtime", "fifo"}
    asrpt = make_scheduler("asrpt")
    assert (asrpt.tau, asrpt.comm_heavy, asrpt.consolidation_test, asrpt.delay_origin, asrpt.srpt_tiebreak,
            asrpt.backfill, asrpt.oracle) == (1.0, 1.5, "alpha", "enqueue", "release_id", False, False)
    assert make_scheduler("asrpt_oracle").oracle


def test_unknown_scheduler_and_parameter_errors_name_the_key():
    with pytest.raises(ConfigError, match=r"unknown scheduler 'srpt'"):
        make_scheduler("srpt")
    with pytest.raises(ConfigError, match=r"^scheduler\.tau: scheduler 'spjf' has no parameter 'tau'; its "
                                          r"parameters: \['dispatch', 'duration_source', 'overrun', "
                                          r"'min_estimate_s'\]$"):
        make_scheduler("spjf", tau=1.0)
    with pytest.raises(ConfigError, match=r"^scheduler\.comm_hevy: scheduler 'asrpt' has no parameter 'comm_hevy'"):
        make_scheduler("asrpt", comm_hevy=2.0)
    with pytest.raises(ConfigError, match=r"^scheduler\.oracle: scheduler 'asrpt_oracle' has no parameter 'oracle'"):
        make_scheduler("asrpt_oracle", oracle=False)
    with pytest.raises(ConfigError, match=r"^scheduler\.duration_source acts only on backfilling estimates"):
        make_scheduler("fifo", duration_source="oracle")


@pytest.mark.parametrize("name, params, message", [
    ("asrpt", {"tau": -1}, r"^scheduler\.tau must be a number >= 0, got -1$"),
    ("asrpt", {"comm_heavy": 0.5}, r"^scheduler\.comm_heavy must be a number >= 1, got 0\.5$"),
    ("asrpt", {"consolidation_test": "cut"}, r"scheduler\.consolidation_test must be one of"),
    ("asrpt", {"delay_origin": "start"}, r"scheduler\.delay_origin must be one of"),
    ("asrpt", {"srpt_tiebreak": "random"}, r"scheduler\.srpt_tiebreak must be one of"),
    ("asrpt_oracle", {"backfill": "yes"}, r"^scheduler\.backfill must be true or false, got 'yes'$"),
    ("wcs_workload", {"duration_source": "true"}, r"scheduler\.duration_source must be one of"),
])
def test_invalid_parameter_values_are_rejected(name, params, message):
    with pytest.raises(ConfigError, match=message):
        make_scheduler(name, **params)


def test_an_ordered_queue_constructed_directly_refuses_what_its_own_params_refuse():
    """FIFO and WCS-SubTime order by submission time, so their params make duration_source inert outside
    backfilling: constructed directly (the Python API) they refuse it as `scheduler.duration_source=` does;
    SPJF's order reads durations and takes it."""
    with pytest.raises(ConfigError, match=r"^scheduler\.duration_source acts only on backfilling estimates "
                                          r".*scheduler\.dispatch='strict' it would change nothing$"):
        FIFO(duration_source="oracle")
    with pytest.raises(ConfigError, match=r"scheduler\.dispatch='greedy' it would change nothing$"):
        WCSSubTime(duration_source="oracle")
    assert FIFO(duration_source="oracle", dispatch="easy").oracle and SPJF(duration_source="oracle").oracle


@dataclass(frozen=True)
class DepthParams(Params):
    depth: int = param(1, integer(1), "how far the head may look")


def test_a_plugin_registered_with_its_params_type_is_made_with_its_keys_and_refuses_others():
    @register_scheduler("deep_fifo_test", DepthParams)
    def deep_fifo(depth: int = 1) -> FIFO:
        scheduler = FIFO()
        scheduler.name = f"deep_fifo_{depth}"
        return scheduler

    try:
        assert SCHEDULERS.params_type("deep_fifo_test") is DepthParams
        assert make_scheduler("deep_fifo_test", depth=3).name == "deep_fifo_3"
        with pytest.raises(ConfigError, match=r"^scheduler\.depth must be a positive integer, got 0$"):
            make_scheduler("deep_fifo_test", depth=0)
        with pytest.raises(ConfigError, match=r"^scheduler\.tau: scheduler 'deep_fifo_test' has no parameter 'tau'"):
            make_scheduler("deep_fifo_test", tau=1.0)
    finally:
        del SCHEDULERS["deep_fifo_test"]


@pytest.mark.parametrize("strict, rule", [(True, "strict"), (False, "greedy")])
def test_the_plain_queue_api_makes_a_strict_or_a_work_conserving_queue(strict, rule):
    """QueueScheduler(name, key, strict=...) without a dispatch rule: strict=True is the head-of-line queue,
    strict=False the work-conserving one."""
    scheduler = QueueScheduler("by_release", submission_key, strict=strict)
    assert (scheduler.dispatch_rule, scheduler.strict) == (rule, strict)
