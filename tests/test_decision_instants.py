"""Decision instants are exactly the documented ones (docs/simulator.md, "Decision instants"): arrivals,
completions, real virtual completions and the delay expiries of held-back jobs; a virtual completion
that a later arrival moved is withdrawn. A-SRPT under every dispatch rule and eligibility matches the
independent reference of tests/reference_asrpt.py, which decides at those instants only."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.config import PredictorConfig, RunConfig, WorkloadConfig
from asrpt_bench.core import GB, Cluster, Job, Stage, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer, HeavyEdgePlacer
from asrpt_bench.prepare import load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.jobs import jobs_from_table
from reference_asrpt import Options, simulate_reference

RULES = ("strict", "greedy", "easy", "conservative")
FIXED_TABLE = Path(__file__).resolve().parent / "data" / "fixed_jobs.csv"


class InstantSpy:
    """An A-SRPT that notes the time of every decision it is asked for."""

    def __init__(self, **params: object) -> None:
        self.inner = make_scheduler("asrpt", **params)
        self.instants: list[float] = []

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def dispatch(self, ctx) -> None:
        self.instants.append(ctx.now)
        self.inner.dispatch(ctx)


def test_a_virtual_completion_moved_by_an_arrival_is_no_decision_instant():
    """A (p~ = 10) runs virtually from 0; B (p~ = 4) arrives at 1 and preempts it, so A's completion
    projected at 10 moves to 14. B is eligible at 5 and runs to 9; A is eligible at 14 and runs to 24."""
    jobs = [Job("A", 0.0, TrainingPlan.fixed(2, 1.0), 10), Job("B", 1.0, TrainingPlan.fixed(2, 1.0), 4)]
    spy = InstantSpy()
    result = simulate(jobs, Cluster(1, 2), spy, FirstFitPlacer())
    assert {r.job_id: (r.eligible, r.start, r.end) for r in result.records} == {"A": (14.0, 14.0, 24.0),
                                                                                "B": (5.0, 5.0, 9.0)}
    assert spy.instants == [0.0, 1.0, 5.0, 9.0, 14.0, 24.0]


def engine_schedule(jobs, cluster, placer, options: Options, predictions) -> dict:
    params = {key: getattr(options, key) for key in Options.__dataclass_fields__ if key != "oracle"}
    name = "asrpt_oracle" if options.oracle else "asrpt"
    result = simulate(jobs, cluster, make_scheduler(name, **params), placer, predictions=predictions)
    return {r.job_id: (r.eligible, r.start, r.end, r.placement) for r in result.records}


@st.composite
def instances(draw):
    """Small clusters with a slow inter-server link, fixed-alpha jobs and comm-heavy pipeline jobs (whose
    alpha depends on their placement), integral releases and sizes (exact ties), wrong predictions."""
    cluster = Cluster(draw(st.integers(1, 3)), draw(st.integers(2, 4)), b_intra=100.0, b_inter=10.0)
    total = cluster.total_gpus
    jobs, predictions = [], {}
    for k in range(draw(st.integers(2, 10))):
        if draw(st.booleans()):
            plan = TrainingPlan.fixed(draw(st.integers(1, total)), draw(st.sampled_from([1.0, 2.0])))
        else:
            stages = tuple(Stage(0.2, draw(st.sampled_from([0.0, 4.0])) * GB, 0.1 * GB, draw(st.integers(1, 2)))
                           for _ in range(draw(st.integers(1, 2))))
            plan = TrainingPlan("pipe", f"p{len(stages)}", stages)
            if plan.gpus > total:
                plan = TrainingPlan.fixed(total, 1.0)
        jobs.append(Job(f"j{k}", float(draw(st.integers(0, 6))), plan, draw(st.integers(0, 10))))
        predictions[f"j{k}"] = float(draw(st.integers(0, 14)))
    return jobs, cluster, predictions


@pytest.mark.filterwarnings("ignore:.*need all")
@settings(max_examples=150, deadline=None, derandomize=True)
@given(instances(), st.sampled_from(RULES), st.sampled_from(["virtual", "release"]),
       st.sampled_from([{}, {"tau": 0.0}, {"tau": 2.0, "delay_origin": "head"}, {"consolidation_test": "servers"},
                        {"overrun": "double", "min_estimate_s": 2.0}]))
def test_asrpt_matches_the_reference_on_random_instances(instance, rule, eligibility, extra):
    jobs, cluster, predictions = instance
    if "overrun" in extra and rule not in ("easy", "conservative"):
        extra = {}
    options = Options(dispatch=rule, eligibility=eligibility, **extra)
    placer = HeavyEdgePlacer()
    assert engine_schedule(jobs, cluster, placer, options, predictions) == \
        simulate_reference(jobs, cluster, placer, options, predictions)


def noisy_predictions(jobs: list[Job], sigma: float, seed: int) -> dict:
    rng = random.Random(seed)
    return {job.job_id: job.iterations * rng.lognormvariate(0.0, sigma) for job in jobs}


@pytest.mark.filterwarnings("ignore:.*need all")
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("eligibility", ["virtual", "release"])
def test_asrpt_matches_the_reference_on_the_fixed_table_with_prediction_errors(rule, eligibility):
    """400 Philly jobs with Heavy-Edge placement (placement-dependent alpha), predictions off by a
    log-normal factor (sigma 1), so running jobs overrun their estimates."""
    jobs = jobs_from_table(load_csv(FIXED_TABLE), str(FIXED_TABLE))
    predictions = noisy_predictions(jobs, 1.0, seed=3)
    cluster, placer, options = Cluster(4, 8), HeavyEdgePlacer(), Options(dispatch=rule, eligibility=eligibility)
    expected = simulate_reference(jobs, cluster, placer, options, predictions)
    got = engine_schedule(jobs, cluster, placer, options, predictions)
    assert [job_id for job_id in got if got[job_id] != expected[job_id]] == []



@pytest.mark.filterwarnings("ignore:.*need all")
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("sigma", [1.0, 0.0])
def test_a_delay_budget_from_the_head_matches_the_reference_on_the_fixed_table(rule, sigma):
    """delay_origin=head with tau 2 on the fixed table: comm-heavy heads whose placement is not consolidated
    wait tau x p~ from the instant they reach the head of their rule's queue, as the reference has it (and
    not from an earlier instant when a job behind the head was tried: with exact predictions, conservative
    backfilling tries such jobs at their reservations)."""
    jobs = jobs_from_table(load_csv(FIXED_TABLE), str(FIXED_TABLE))
    predictions = noisy_predictions(jobs, sigma, seed=3)
    cluster, placer = Cluster(4, 8), HeavyEdgePlacer()
    options = Options(dispatch=rule, tau=2.0, delay_origin="head")
    expected = simulate_reference(jobs, cluster, placer, options, predictions)
    got = engine_schedule(jobs, cluster, placer, options, predictions)
    assert [job_id for job_id in got if got[job_id] != expected[job_id]] == []

@pytest.fixture(scope="module")
def philly_head() -> tuple[list[Job], Cluster]:
    """The first 2,000 jobs of the packaged Philly trace on 8 x 8 GPUs: long queues, so every rule's
    fast structures (EASY and greedy block queues, conservative backfilling's kept reservations) are
    exercised thousands of times."""
    config = RunConfig(workload=WorkloadConfig("philly", num_jobs=2000, train_fraction=0.0), cluster=Cluster(servers=8),
                       predictor=PredictorConfig("oracle"))
    workload = load_workload(config.validate())
    return workload.jobs, workload.cluster


@pytest.mark.filterwarnings("ignore:.*need all")
@pytest.mark.parametrize("rule", [*RULES[:3], pytest.param("conservative", marks=pytest.mark.slow)])
def test_asrpt_matches_the_reference_on_two_thousand_philly_jobs(philly_head, rule):
    """Each rule against the plain reference on 2,000 Philly jobs with predictions off by a log-normal
    factor (sigma 1): the schedules agree record for record."""
    jobs, cluster = philly_head
    predictions = noisy_predictions(jobs, 1.0, seed=3)
    placer, options = HeavyEdgePlacer(), Options(dispatch=rule)
    expected = simulate_reference(jobs, cluster, placer, options, predictions)
    got = engine_schedule(jobs, cluster, placer, options, predictions)
    assert len(got) == len(jobs)
    assert [job_id for job_id in got if got[job_id] != expected[job_id]] == []
