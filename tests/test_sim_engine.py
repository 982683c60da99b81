"""The simulator and A-SRPT on hand-checked instances; input errors; determinism."""

from __future__ import annotations

import dataclasses
import math
import warnings

import pandas as pd
import pytest

from asrpt_bench.adjustments import caught_adjustments
from asrpt_bench.core import Cluster, ConfigError, Job, Stage, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import records_frame, simulate
from asrpt_bench.workloads.instances import get_instance

GB = 1e9
FIRST_FIT = FirstFitPlacer()


def fixed(job_id: str, release: float, gpus: int, iterations: int, alpha: float = 1.0) -> Job:
    return Job(job_id, release, TrainingPlan.fixed(gpus, alpha), iterations)


def schedule(result) -> dict[str, tuple[float, float]]:
    return {r.job_id: (r.start, r.end) for r in result.records}


def test_reviewer_counterexample_under_asrpt_tau0():
    """paper-notes 7.5: G=100, A (g=1, n=1e5) and B (g=50, n=2000), alpha=1, both at 0.
    p_A = p_B = 1000; SRPT tie -> A first (release, id): C~_A = 1000, C~_B = 2000.
    A starts at 1000 and ends 101000; B starts at 2000 on 50 of the 99 idle GPUs, ends 4000."""
    instance = get_instance("lemma2_reviewer")
    result = simulate(instance.jobs(), instance.cluster, make_scheduler("asrpt", tau=0.0), FIRST_FIT,
                      predictions=instance.perfect_predictions())
    assert schedule(result) == {"A": (1000.0, 101000.0), "B": (2000.0, 4000.0)}
    assert [r.eligible for r in result.records] == [1000.0, 2000.0]
    assert result.metrics["sum_completion"] == 105000.0
    assert result.metrics["total_jct"] == 105000.0
    oracle = simulate(instance.jobs(), instance.cluster, make_scheduler("asrpt_oracle", tau=0.0), FIRST_FIT)
    assert schedule(oracle) == schedule(result)


def test_asrpt_preemptive_virtual_order_on_orders_instance():
    """1 server x 4 GPUs, alpha = 1, perfect predictions, tau = 0. Virtual sizes (g/4 * n):
    L1 (r0,g2,n10) 5, L2 (r0,g2,n4) 2, A (r1,g2,n2) 1, B (r2,g1,n6) 1.5, C (r3,g1,n3) 0.75.
    SRPT: L2 0-2 (at t=1 L2 has 1 left = A's size, tie to the earlier release), A 2-3, C 3-3.75,
    B 3.75-5.25, L1 5.25-10.25. Real: L2 2-6, A 3-5, C waits for A: 5-8, B 5.25-11.25,
    L1 10.25-20.25 (3 idle GPUs then)."""
    jobs = orders_instance()
    result = simulate(jobs, Cluster(1, 4), make_scheduler("asrpt", tau=0.0), FIRST_FIT)
    assert schedule(result) == {"L1": (10.25, 20.25), "L2": (2.0, 6.0), "A": (3.0, 5.0), "B": (5.25, 11.25),
                                "C": (5.0, 8.0)}
    assert {r.job_id: r.eligible for r in result.records} == {"L1": 10.25, "L2": 2.0, "A": 3.0, "B": 5.25,
                                                              "C": 3.75}


def orders_instance() -> list[Job]:
    return [fixed("L1", 0, 2, 10), fixed("L2", 0, 2, 4), fixed("A", 1, 2, 2), fixed("B", 2, 1, 6),
            fixed("C", 3, 1, 3)]


def test_head_that_does_not_fit_blocks_asrpt():
    """head_of_line instance, all predictions 0 so A-SRPT's pending order is release order:
    L (g5) 0-10; W (g5, r1) waits for L; S (g1, r2) would fit at 2 but waits behind W until W starts at 10
    (6 GPUs: W and S fit together then): W 10-11, S 10-12."""
    instance = get_instance("head_of_line")
    result = simulate(instance.jobs(), instance.cluster, make_scheduler("asrpt", tau=0.0), FIRST_FIT,
                      predictions={"L": 0, "W": 0, "S": 0})
    assert schedule(result) == {"L": (0.0, 10.0), "W": (10.0, 11.0), "S": (10.0, 12.0)}


def test_backfill_extension_lets_later_jobs_pass_the_head():
    """Same instance with backfill=True: S starts at 2 on the idle GPU while W waits."""
    instance = get_instance("head_of_line")
    result = simulate(instance.jobs(), instance.cluster, make_scheduler("asrpt", tau=0.0, backfill=True),
                      FIRST_FIT, predictions={"L": 0, "W": 0, "S": 0})
    assert schedule(result) == {"L": (0.0, 10.0), "W": (10.0, 11.0), "S": (2.0, 4.0)}


def test_unseen_jobs_are_eligible_at_release():
    """1x4 GPUs. Y (g2, n100, r0) predicted 100: p_Y = 2/4*100 = 50, eligible at 50.
    X (g1, n10, r5) predicted 0 (unseen): eligible at 5, starts at 5 on the empty cluster."""
    jobs = [fixed("Y", 0, 2, 100), fixed("X", 5, 1, 10)]
    result = simulate(jobs, Cluster(1, 4), make_scheduler("asrpt", tau=1.0), FIRST_FIT,
                      predictions={"Y": 100, "X": 0})
    records = {r.job_id: r for r in result.records}
    assert (records["X"].eligible, records["X"].start, records["X"].end) == (5.0, 5.0, 15.0)
    assert (records["Y"].eligible, records["Y"].start, records["Y"].end) == (50.0, 50.0, 150.0)
    assert records["X"].predicted_iterations == 0


# Comm-heavy delay (paper-notes 2.5 "heavy" vector): 4 servers x 2 GPUs, b_intra 100, b_inter 10.
# alpha = 0.152 with each stage pair on its own server (the empty-cluster estimate), 0.5 when a stage
# spans servers; alpha_max / alpha~min = 3.29 >= 1.5, so the job is comm-heavy.
HEAVY = TrainingPlan("heavy", "p2xd2", (Stage(0.2, 4 * GB, 0.1 * GB, 2), Stage(0.3, 0.2 * GB, 0.0, 2)))
LIGHT = TrainingPlan("light", "p2xd2", (Stage(0.2, 0.4 * GB, 0.1 * GB, 2), Stage(0.3, 0.2 * GB, 0.0, 2)))
BANDWIDTH_CLUSTER = Cluster(4, 2, b_intra=100.0, b_inter=10.0)


def fragmented(plan: TrainingPlan, long_blockers_end: int) -> tuple[list[Job], dict[str, float]]:
    """Eight 1-GPU blockers at t=0 (predicted 0, dispatched in order, first fit): k1,k2 on server 0, ...
    Odd ones end at 1, even ones at `long_blockers_end`, so from t=1 each server has 1 free GPU.
    H (the 4-GPU job, r=1, n=100) has p = 4/8 * 100 * 0.152 = 7.6 and is eligible at 8.6."""
    jobs = [fixed(f"k{k}", 0, 1, 1 if k % 2 else long_blockers_end) for k in range(1, 9)]
    jobs.append(Job("H", 1.0, plan, 100))
    predictions = {job.job_id: 0.0 for job in jobs}
    predictions["H"] = 100.0
    return jobs, predictions


def heavy_record(tau: float, long_blockers_end: int = 100, plan: TrainingPlan = HEAVY, **params):
    jobs, predictions = fragmented(plan, long_blockers_end)
    result = simulate(jobs, BANDWIDTH_CLUSTER, make_scheduler("asrpt", tau=tau, **params), FIRST_FIT,
                      predictions=predictions)
    return next(r for r in result.records if r.job_id == "H")


def test_tau0_never_delays_a_fitting_comm_heavy_job():
    record = heavy_record(tau=0.0)
    assert record.comm_ratio == pytest.approx(0.5 / 0.152)
    assert record.alpha_min == pytest.approx(0.152)
    assert record.eligible == pytest.approx(8.6)
    assert record.start == record.eligible
    assert record.alpha == pytest.approx(0.5)
    assert record.servers_used == 4


@pytest.mark.parametrize("test", ["alpha", "servers", "ratio"])
@pytest.mark.parametrize("origin", ["enqueue", "head"])
def test_comm_heavy_job_waits_exactly_its_budget_when_no_consolidation_comes(test, origin):
    """tau = 1: budget tau * p = 7.6; blockers hold the fragments until 100, so H starts at
    8.6 + 7.6 = 16.2 on the fragmented GPUs (alpha 0.5). H is head as soon as it is eligible."""
    record = heavy_record(tau=1.0, consolidation_test=test, delay_origin=origin)
    assert record.start == pytest.approx(16.2)
    assert record.start - record.eligible <= 1.0 * 7.6 * (1 + 1e-12)
    assert record.alpha == pytest.approx(0.5)


def test_comm_heavy_job_takes_the_consolidated_placement_when_it_frees_up_within_budget():
    """Blockers end at 10 < 16.2: at t=10 the cluster is empty, first fit puts each stage pair on
    one server (alpha 0.152), H starts at 10 and ends at 10 + 100 * 0.152 = 25.2."""
    record = heavy_record(tau=1.0, long_blockers_end=10)
    assert record.start == 10.0
    assert record.alpha == pytest.approx(0.152)
    assert record.end == pytest.approx(25.2)


def test_light_job_is_not_delayed():
    """The "light" vector: alpha_max / alpha~min = 0.17 / 0.152 < 1.5, so it starts when eligible."""
    record = heavy_record(tau=4.0, plan=LIGHT)
    assert record.comm_ratio == pytest.approx(0.17 / 0.152)
    assert record.start == record.eligible


def test_records_frame_columns_and_values():
    instance = get_instance("lemma2_reviewer")
    result = simulate(instance.jobs(), instance.cluster, make_scheduler("asrpt", tau=0.0), FIRST_FIT)
    frame = records_frame(result.records)
    for column in ("job_id", "release", "start", "end", "gpus", "model", "config", "servers_used", "alpha",
                   "alpha_min", "alpha_max", "iterations", "predicted_iterations", "comm_ratio", "eligible",
                   "first_start_delay_s", "wait_s", "service_s", "restore_s", "gpu_ids"):
        assert column in frame.columns
    assert frame["first_start_delay_s"].tolist() == frame["wait_s"].tolist() == [1000.0, 2000.0]
    assert frame["service_s"].tolist() == [100000.0, 2000.0] and frame["restore_s"].tolist() == [0.0, 0.0]
    assert frame["gpu_ids"].tolist() == ["0", " ".join(str(g) for g in range(1, 51))]
    assert result.frame().equals(frame)
    assert list(records_frame([]).columns) == list(frame.columns)  # no records: the same columns, no rows


def test_metrics_on_reviewer_instance():
    """C = (101000, 4000): mean JCT 52500, makespan 101000, busy GPU-s = 1*100000 + 50*2000 = 200000,
    utilization 200000 / (100 * 101000); mean wait = mean first-start delay = (1000 + 2000) / 2; both jobs
    waited; the release span is empty (both released at 0), so busy_share is undefined."""
    instance = get_instance("lemma2_reviewer")
    metrics = simulate(instance.jobs(), instance.cluster, make_scheduler("asrpt", tau=0.0), FIRST_FIT).metrics
    assert metrics["mean_jct"] == 52500.0
    assert metrics["makespan"] == 101000.0
    assert metrics["utilization"] == pytest.approx(200000 / (100 * 101000))
    assert metrics["mean_wait"] == metrics["mean_first_start_delay"] == 1500.0
    assert metrics["max_wait"] == metrics["max_first_start_delay"] == 2000.0
    assert metrics["waited_share"] == 1.0 and math.isnan(metrics["busy_share"])
    assert metrics["p95_jct"] == pytest.approx(4000 + 0.95 * 97000)
    assert (metrics["num_jobs"], metrics["dropped"]) == (2, 0)


def test_same_inputs_give_identical_records():
    jobs = orders_instance()
    runs = [simulate(jobs, Cluster(2, 2), make_scheduler(name), FIRST_FIT, predictions={j.job_id: 3 for j in jobs})
            for name in ("asrpt", "asrpt")]
    assert runs[0].records == runs[1].records


def test_oversize_job_is_rejected_naming_it():
    with pytest.raises(ConfigError, match=r"^job 'big' needs 5 GPUs but the cluster has 4; drop such jobs with "
                                          r"workload.drop_oversize=true \(in Python: simulate\(\.\.\., "
                                          r"drop_oversize=True\)\)$"):
        simulate([fixed("ok", 0, 1, 1), fixed("big", 0, 5, 1)], Cluster(1, 4), make_scheduler("fifo"), FIRST_FIT)


@pytest.mark.parametrize("name", ["fifo", "srtf_oracle"])
def test_drop_oversize_drops_warns_once_and_reports(name):
    """The non-preemptive and the preemptive simulator alike."""
    jobs = [fixed("ok", 0, 1, 1), fixed("big", 0, 5, 1), fixed("bigger", 0, 6, 1)]
    with pytest.warns(UserWarning, match=r"dropped 2 job\(s\)") as caught:
        result = simulate(jobs, Cluster(1, 4), make_scheduler(name), FIRST_FIT, drop_oversize=True)
    assert [(a.key, a.count) for a in caught_adjustments(caught)] == [("dropped_oversize_jobs", 2)]
    assert result.dropped == ("big", "bigger")
    assert result.metrics["dropped"] == 2
    assert [r.job_id for r in result.records] == ["ok"]


def test_job_using_the_whole_cluster_is_flagged():
    with pytest.warns(UserWarning, match=r"1 job\(s\) need all 4 GPUs .*'all'.*g_max < G"):
        simulate([fixed("all", 0, 4, 1)], Cluster(1, 4), make_scheduler("fifo"), FIRST_FIT)


def test_simulate_warnings_point_at_the_callers_line():
    """A job needing every GPU and dropped jobs are reported at the line that called simulate, not inside it."""
    with pytest.warns(UserWarning) as caught:
        simulate([fixed("all", 0, 4, 1)], Cluster(1, 4), make_scheduler("fifo"), FIRST_FIT)
        simulate([fixed("big", 0, 8, 1), fixed("ok", 0, 1, 1)], Cluster(1, 4), make_scheduler("srtf"), FIRST_FIT,
                 drop_oversize=True)
    assert [w.filename for w in caught] == [__file__, __file__]


def test_duplicate_job_ids_are_rejected():
    with pytest.raises(ConfigError, match=r"job 'a': duplicate job id"):
        simulate([fixed("a", 0, 1, 1), fixed("a", 1, 1, 1)], Cluster(1, 4), make_scheduler("fifo"), FIRST_FIT)


def test_negative_release_and_iterations_are_rejected_naming_the_job():
    with pytest.raises(ConfigError, match=r"job 'neg': release must be a finite number of seconds in \[0, 1e\+12\]"):
        fixed("neg", -1, 1, 1)
    with pytest.raises(ConfigError, match=r"job 'neg': iterations must be an integer in \[0, 1e\+12\], got -1"):
        fixed("neg", 0, 1, -1)
    bad = fixed("neg", 0, 1, 1)
    object.__setattr__(bad, "iterations", -3)
    with pytest.raises(ConfigError, match=r"job 'neg': iterations must be >= 0, got -3"):
        simulate([bad], Cluster(1, 4), make_scheduler("fifo"), FIRST_FIT)


def test_predictions_must_cover_every_job():
    with pytest.raises(ConfigError, match=r"job 'b': no predicted iterations"):
        simulate([fixed("a", 0, 1, 1), fixed("b", 0, 1, 1)], Cluster(1, 4), make_scheduler("asrpt"), FIRST_FIT,
                 predictions={"a": 1})
    with pytest.raises(ConfigError, match=r"job 'a': predicted iterations must be finite and >= 0"):
        simulate([fixed("a", 0, 1, 1)], Cluster(1, 4), make_scheduler("asrpt"), FIRST_FIT, predictions={"a": -1})
    for not_a_number in ("many", None):  # float() refuses the one with ValueError, the other with TypeError
        with pytest.raises(ConfigError, match=rf"job 'a': predicted iterations must be finite and >= 0, got "
                                              rf"{not_a_number!r}$"):
            simulate([fixed("a", 0, 1, 1)], Cluster(1, 4), make_scheduler("asrpt"), FIRST_FIT,
                     predictions={"a": not_a_number})


def test_arguments_of_the_wrong_type_are_refused_naming_the_argument():
    with pytest.raises(ConfigError, match=r"^jobs must be a list of Job, got int 5$"):
        simulate(5, Cluster(1, 4), make_scheduler("fifo"), FIRST_FIT)
    with pytest.raises(ConfigError, match=r"^jobs must be a list of Job \(one element is not\), got int 5$"):
        simulate([fixed("a", 0, 1, 1), 5], Cluster(1, 4), make_scheduler("fifo"), FIRST_FIT)
    with pytest.raises(ConfigError, match=r"^cluster must be a Cluster, got str '4 GPUs'$"):
        simulate([fixed("a", 0, 1, 1)], "4 GPUs", make_scheduler("fifo"), FIRST_FIT)
    with pytest.raises(ConfigError, match=r"^scheduler must be a scheduler object with a dispatch\(\) method"):
        simulate([fixed("a", 0, 1, 1)], Cluster(1, 4), object(), FIRST_FIT)


def test_non_oracle_scheduler_never_sees_true_iterations():
    """A scheduler that is not an oracle receives views with iterations=None."""
    seen = []

    class Spy:
        name, oracle = "spy", False

        def reset(self, cluster):
            self.queue = []

        def on_arrival(self, job, now):
            seen.append(job.iterations)
            self.queue.append(job)

        def dispatch(self, ctx):
            while self.queue and (proposal := ctx.propose(self.queue[0])) is not None:
                ctx.start(proposal, eligible=self.queue.pop(0).release)

        def next_timer(self):
            return None

    simulate([fixed("a", 0, 1, 7)], Cluster(1, 2), Spy(), FIRST_FIT)
    Spy.oracle = True
    simulate([fixed("a", 0, 1, 7)], Cluster(1, 2), Spy(), FIRST_FIT)
    assert seen == [None, 7]


def test_without_progress_nothing_is_printed(capsys):
    simulate(orders_instance(), Cluster(1, 4), make_scheduler("asrpt"), FIRST_FIT)
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("name", ["asrpt", "srtf"])
def test_progress_bar_counts_every_job(capsys, name):
    jobs = orders_instance()
    simulate(jobs, Cluster(1, 4), make_scheduler(name), FIRST_FIT, progress=True)
    err = capsys.readouterr().err
    assert f"simulate {name}" in err and f"{len(jobs)}/{len(jobs)}" in err


def test_job_table_instance_round_trip_through_frame():
    instance = get_instance("head_of_line")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = simulate(instance.jobs(), instance.cluster, make_scheduler("wcs_subtime"), FIRST_FIT)
    frame = result.frame()
    assert isinstance(frame, pd.DataFrame) and list(frame["job_id"]) == ["L", "W", "S"]


@pytest.mark.parametrize("origin", ["enqueue", "head"])
def test_delay_budget_runs_while_the_comm_heavy_head_does_not_fit(origin):
    """As `fragmented`, but k7 (the fragment of server 3) holds its GPU until 20: H is eligible and
    head at 8.6 with 3 idle GPUs, so it does not fit; at 20 it fits fragmented. Its budget (7.6,
    to 16.2) ran out while it waited, under either origin, so it starts at 20 (not 20 + 7.6)."""
    jobs = [fixed(f"k{k}", 0, 1, 20 if k == 7 else 1 if k % 2 else 100) for k in range(1, 9)]
    jobs.append(Job("H", 1.0, HEAVY, 100))
    predictions = {job.job_id: 0.0 for job in jobs}
    predictions["H"] = 100.0
    result = simulate(jobs, BANDWIDTH_CLUSTER, make_scheduler("asrpt", tau=1.0, delay_origin=origin), FIRST_FIT,
                      predictions=predictions)
    record = next(r for r in result.records if r.job_id == "H")
    assert record.eligible == pytest.approx(8.6)
    assert record.start == 20.0
    assert record.alpha == pytest.approx(0.5)


def test_dispatch_context_exposes_only_the_protocol():
    """The context a scheduler gets has no route to the true iterations or the future end times."""
    contexts, running = [], []

    class Spy:
        name, oracle = "spy", False

        def reset(self, cluster):
            self.queue = []

        def on_arrival(self, job, now):
            self.queue.append(job)

        def dispatch(self, ctx):
            contexts.append((ctx, ctx.now, ctx.idle_gpus, ctx.free))
            while self.queue and (proposal := ctx.propose(self.queue[0])) is not None:
                ctx.start(proposal, eligible=self.queue.pop(0).release)
            running.append(ctx.running)

        def next_timer(self):
            return None

    simulate([fixed("a", 0, 2, 7), fixed("b", 0, 2, 3)], Cluster(1, 3), Spy(), FIRST_FIT)
    # t=0: a starts, b (2 GPUs) waits; t=7: a ends, b starts; t=10: b ends
    assert [c[1:] for c in contexts] == [(0.0, 3, (3,)), (7.0, 3, (3,)), (10.0, 3, (3,))]
    ctx = contexts[0][0]
    public = {name for name in dir(ctx) if not name.startswith("_")}
    assert public == {"now", "free", "idle_gpus", "propose", "start", "running", "pool_idle", "restricted", "last_pool"}
    # running jobs: the scheduler's own view (no true iterations), start and alpha; no end time
    assert [[(r.job.job_id, r.start, r.alpha, r.job.iterations) for r in snapshot] for snapshot in running] == [
        [("a", 0.0, 1.0, None)], [("b", 7.0, 1.0, None)], []]


def test_records_and_views_built_without_init_equal_the_dataclass_built_ones():
    from dataclasses import fields

    from asrpt_bench.schedulers.views import JobView, new_view
    from asrpt_bench.sim.records import JobRecord, Segment, new_record, new_segment

    values = dict(job_id="a", release=0.0, eligible=0.5, start=1.0, end=2.0, gpus=2, model="m", config="c",
                  servers_used=1, alpha=1.0, alpha_min=1.0, alpha_max=1.5, iterations=1, predicted_iterations=1.0,
                  comm_ratio=1.5, placement=(0, 0), gpu_ids=(0, 1), preemptions=0, restore_s=0.0,
                  service_s=1.0, pool="v100")
    record = new_record(**values)
    assert record == JobRecord(**values) and hash(record) == hash(JobRecord(**values))
    assert [getattr(record, f.name) for f in fields(JobRecord)] == list(values.values())
    assert not hasattr(record, "__dict__")  # slots: no per-record dict (a few hundred bytes per job)
    with pytest.raises(AttributeError):
        record.start = 3.0
    view = dict(job_id="a", order=0, release=0.0, gpus=1, plan=TrainingPlan.fixed(1, 1.0), user=None, group=None,
                predicted_iterations=3.0, alpha_min=1.0, alpha_max=1.0, min_servers=1, iterations=None,
                pool_alpha_min=(1.0,))
    assert new_view(**view) == JobView(**view)
    segment = dict(job_id="a", start=0.0, end=2.0, restart_s=0.5, alpha=1.0, placement=(0,), gpu_ids=(0,))
    assert new_segment(**segment) == Segment(**segment)
    with pytest.raises(TypeError):
        new_record(**{**values, "pool": None, "extra": 1})


@pytest.mark.parametrize("scheduler", ["asrpt", "srtf_oracle"])
def test_record_table_reads_back_exactly_what_a_run_wrote(scheduler):
    """A run keeps its records as columns (RecordTable): indexing, iteration, columns and the frame give the
    values and types the records held, also where a hand-made job's numbers are ints (kept as given)."""
    from asrpt_bench.sim.records import RECORD_COLUMNS, RecordTable

    jobs = [fixed("a", 0, 1, 3, alpha=2), fixed("b", 1.5, 2, 4, alpha=0.5), fixed("c", 2.0, 1, 0, alpha=1.0),
            fixed("d", 2.0, 2, 5, alpha=0.25)]
    result = simulate(jobs, Cluster(1, 4), make_scheduler(scheduler), FirstFitPlacer())
    records = result.records
    assert isinstance(records, RecordTable) and len(records) == 4
    one_by_one = tuple(records)
    assert [r.job_id for r in one_by_one] == ["a", "b", "c", "d"] and records[-1] == one_by_one[-1]
    assert records[1:3] == one_by_one[1:3] and records == one_by_one and records == list(one_by_one)
    assert records != (*one_by_one[:3], dataclasses.replace(one_by_one[3], end=one_by_one[3].end + 1))  # every record
    assert type(records[0].release) is int and type(records[0].alpha) is int  # as the job gave them
    assert type(records[1].release) is float and type(records[1].gpus) is int
    by_table, by_records = result.frame(), records_frame(one_by_one)
    pd.testing.assert_frame_equal(by_table, by_records, check_exact=True)
    assert list(by_table.columns) == list(RECORD_COLUMNS)
    float_jobs = jobs[1:]
    floats = simulate(float_jobs, Cluster(1, 4), make_scheduler(scheduler), FirstFitPlacer())
    pd.testing.assert_frame_equal(floats.frame(), records_frame(tuple(floats.records)), check_exact=True)
    assert floats.frame()["release"].dtype == "float64" and floats.frame()["iterations"].dtype == "int64"


@pytest.mark.parametrize("scheduler", ["asrpt", "fifo+easy"])
def test_chunk_sizes_do_not_change_a_schedule(monkeypatch, scheduler):
    """Arrivals are read and records gathered a chunk at a time; chunks of 2 and 3 (so every boundary falls
    inside the run, also between jobs released at one instant) give the schedule of the default sizes."""
    from asrpt_bench.sim import engine, records as records_module

    jobs = [fixed(f"j{k}", float(k // 3), 1 + k % 4, 2 + (7 * k) % 5, alpha=0.5 + k % 3) for k in range(23)]
    jobs.reverse()  # the input order is not the release order
    expected = simulate(jobs, Cluster(2, 4), make_scheduler(scheduler), FirstFitPlacer()).frame()
    monkeypatch.setattr(engine, "ARRIVAL_CHUNK", 2)
    monkeypatch.setattr(records_module, "CHUNK_ROWS", 3)
    chunked = simulate(jobs, Cluster(2, 4), make_scheduler(scheduler), FirstFitPlacer()).frame()
    pd.testing.assert_frame_equal(chunked, expected, check_exact=True)


def test_record_table_gathers_rows_in_chunks_written_in_any_order(monkeypatch):
    """Rows wait in chunks before they reach the array: records written out of index order across several
    chunks, read while a chunk is still open, read back exactly, and a row of ints in a later chunk is kept as
    given (and only that row)."""
    from asrpt_bench.sim import records as records_module
    from asrpt_bench.sim.records import NUMBER_FIELDS, RecordTable

    monkeypatch.setattr(records_module, "CHUNK_ROWS", 3)
    table = RecordTable(8)
    order = [5, 0, 7, 2, 6, 1, 3, 4]

    def numbers(i: int) -> tuple:
        floats = tuple(float(i + k) / 4 for k in range(11))
        return (i, *floats[1:], i, 1, 10 * i, 0) if i == 6 else (*floats, i, 1, 10 * i, 0)

    for n, i in enumerate(order):
        table.put(i, f"j{i}", "m", "c", (0,), (i,), "v100", numbers(i))
        if n == 3:
            assert table[2].release == 0.5 and table.missing() == [1, 3, 4, 6]
    assert table.missing() == []
    for i in range(8):
        record = table[i]
        assert (record.job_id, record.gpu_ids) == (f"j{i}", (i,))
        assert tuple(getattr(record, name) for name in NUMBER_FIELDS) == numbers(i)
    assert type(table[6].release) is int and type(table[5].release) is float
    assert table.column("iterations").tolist() == [10 * i for i in range(8)]
    assert table.column("release")[6] == 6 and type(table.column("release")[6]) is int
    assert table.column("end").tolist() == [numbers(i)[3] for i in range(8)]


def test_record_table_columns_are_read_only_views_of_its_arrays():
    """A numeric column is the table's own array, not a copy (the audit and the metrics of a replay of millions of
    jobs read it as it is), and cannot be written through; ints stay int64. A frame copies the columns, unless
    it takes them: then the records give their numbers up to it (scoring's per-job table)."""
    import numpy as np

    records = simulate([fixed("a", 0, 1, 3, alpha=2.0), fixed("b", 1.5, 2, 4, alpha=0.5)], Cluster(1, 4),
                       make_scheduler("asrpt"), FirstFitPlacer()).records
    end, gpus = records.column("end"), records.column("gpus")
    assert np.shares_memory(end, records.column("end")) and np.shares_memory(gpus, records.column("gpus"))
    ends = [record.end for record in records]
    assert end.tolist() == ends and gpus.dtype == np.int64 and gpus.tolist() == [1, 2]
    with pytest.raises(ValueError, match="read-only"):
        end[0] = 0.0
    copied = records_frame(records, ["end", "gpus"])
    assert not np.shares_memory(copied["end"].to_numpy(), end)
    copied.loc[0, "end"] = -1.0
    assert records[0].end == ends[0] != -1.0 and records.column("end").tolist() == ends
    taken = records_frame(records, ["job_id", "end", "gpus", "jct"], take=True)
    assert np.shares_memory(taken["end"].to_numpy(), end) and np.shares_memory(taken["gpus"].to_numpy(), gpus)
    assert taken["end"].tolist() == ends and taken["jct"].tolist() == [e - r for e, r in zip(ends, [0, 1.5])]
    taken.loc[1, "gpus"] = 3  # the frame's own arrays now
    assert taken["gpus"].tolist() == [1, 3] and records.column("job_id") == ["a", "b"]
    handed = r"these records' numbers were handed over to a frame \(records_frame\(\.\.\., take=True\)\)"
    with pytest.raises(RuntimeError, match=handed):
        records.column("end")
    with pytest.raises(RuntimeError, match=handed):
        records[0]


@pytest.mark.parametrize("predictions", ["nope", [1.0, 2.0]])
def test_predictions_that_are_no_mapping_are_refused_naming_the_argument(predictions):
    jobs = [Job("a", 0.0, TrainingPlan.fixed(1, 1.0), 2)]
    with pytest.raises(ConfigError, match=r"^predictions must be a mapping job_id -> predicted iterations"):
        simulate(jobs, Cluster(1, 1), make_scheduler("fifo"), FirstFitPlacer(), predictions=predictions)


@pytest.mark.parametrize("scheduler", ["asrpt", "srtf_oracle"])
def test_the_audit_runs_without_the_job_views(monkeypatch, scheduler):
    """The event loop takes the prepared run's views and lets them go with its simulation: none is alive while
    the schedule is audited (a replay of millions of jobs holds one per job until then)."""
    import gc

    from asrpt_bench.schedulers.views import JobView
    from asrpt_bench.sim import engine, preemptive

    alive = []

    def counting(audit):
        def wrapped(*args, **kwargs):
            alive.append(sum(isinstance(item, JobView) and str(item.job_id).startswith("unviewed-")
                             for item in gc.get_objects()))  # this run's views (other tests' may linger)
            return audit(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(engine, "audit_schedule", counting(engine.audit_schedule))
    monkeypatch.setattr(preemptive, "audit_preemptive", counting(preemptive.audit_preemptive))
    jobs = [fixed(f"unviewed-{k}", float(k), 1 + k % 2, 3 + k, alpha=1.0) for k in range(6)]
    result = simulate(jobs, Cluster(1, 4), make_scheduler(scheduler), FirstFitPlacer())
    assert len(result.records) == 6 and alive == [0]


def test_a_prepared_run_hands_its_views_over_once():
    from asrpt_bench.sim.engine import prepare_run
    from asrpt_bench.timing import DEFAULT_TIMING

    prepared = prepare_run([fixed("a", 0, 1, 3)], Cluster(1, 4), make_scheduler("fifo"), FirstFitPlacer(), None,
                           DEFAULT_TIMING, False, None)
    assert [view.job_id for view in prepared.take_views()] == ["a"] and prepared.views is None
    with pytest.raises(RuntimeError, match="taken already"):
        prepared.take_views()
