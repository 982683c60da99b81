"""The audit accepts real schedules and catches corrupted ones, naming the job and the rule."""

from __future__ import annotations

from dataclasses import replace

import pytest

from asrpt_bench.core import Cluster, Job, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import ScheduleAuditError, audit_schedule, simulate

CLUSTER = Cluster(2, 2)


def fixed(job_id: str, release: float, gpus: int, iterations: int) -> Job:
    return Job(job_id, release, TrainingPlan.fixed(gpus, 1.0), iterations)


JOBS = [fixed("a", 0, 2, 4), fixed("b", 1, 2, 3), fixed("c", 2, 2, 2)]


@pytest.fixture()
def records():
    """FIFO, first fit on 2x2: a 0-4 on GPUs 0,1; b 1-4 on GPUs 2,3; c waits for a: 4-6 on GPUs 0,1."""
    result = simulate(JOBS, CLUSTER, make_scheduler("fifo"), FirstFitPlacer())
    got = {r.job_id: (r.start, r.end, r.gpu_ids) for r in result.records}
    assert got == {"a": (0.0, 4.0, (0, 1)), "b": (1.0, 4.0, (2, 3)), "c": (4.0, 6.0, (0, 1))}
    return list(result.records)


def corrupt(records, job_id, **changes):
    return [replace(r, **changes) if r.job_id == job_id else r for r in records]


def test_valid_schedule_passes(records):
    assert audit_schedule(records, CLUSTER, JOBS) is None


def test_an_end_within_rounding_of_s_plus_n_alpha_passes(records):
    """Ends are compared with S + n * alpha to 1e-9 of their magnitude (float rounding): c's end 6 off by
    2e-9 passes, off by 1e-7 is caught."""
    for off, passes in ((2e-9, True), (1e-7, False)):
        moved = corrupt(records, "c", end=6.0 + off, service_s=6.0 + off - 4.0)
        if passes:
            assert audit_schedule(moved, CLUSTER, JOBS) is None
        else:
            with pytest.raises(ScheduleAuditError, match=r"job 'c' ends at 6.0000001, expected S \+ n \* alpha = 6.0"):
                audit_schedule(moved, CLUSTER, JOBS)


def test_overlapping_gpus_are_caught(records):
    """c moved to start at 3 on a's GPUs (still ends S + n * alpha): GPU 0 is held twice at 3."""
    bad = corrupt(records, "c", start=3.0, end=5.0)
    with pytest.raises(ScheduleAuditError, match=r"GPU 0 is held by jobs 'a' and 'c' at time 3.0"):
        audit_schedule(bad, CLUSTER, JOBS)


def test_start_before_release_is_caught(records):
    bad = corrupt(records, "b", start=0.5, end=3.5, eligible=0.5)
    with pytest.raises(ScheduleAuditError, match=r"job 'b' starts at 0.5 before its release 1"):
        audit_schedule(bad, CLUSTER, JOBS)


def test_start_before_eligibility_is_caught(records):
    bad = corrupt(records, "c", eligible=5.0)
    with pytest.raises(ScheduleAuditError, match=r"job 'c' starts at 4.0, eligible at 5.0"):
        audit_schedule(bad, CLUSTER, JOBS)


def test_wrong_completion_time_is_caught(records):
    bad = corrupt(records, "a", end=4.5)
    with pytest.raises(ScheduleAuditError, match=r"job 'a' ends at 4.5, expected S \+ n \* alpha = 4.0"):
        audit_schedule(bad, CLUSTER, JOBS)


def test_records_in_another_order_are_matched_to_their_jobs(records):
    assert audit_schedule(records[::-1], CLUSTER, JOBS) is None
    with pytest.raises(ScheduleAuditError, match=r"GPU 0 is held by jobs 'a' and 'c' at time 3.0"):
        audit_schedule(corrupt(records, "c", start=3.0, end=5.0)[::-1], CLUSTER, JOBS)


def test_a_repeated_id_is_caught_even_with_the_records_in_input_order(records):
    """Records matching the jobs one by one still fail when an id repeats in both (the in-order path checks it)."""
    with pytest.raises(ScheduleAuditError, match=r"job 'a' completed 2 times"):
        audit_schedule(records + records[:1], CLUSTER, JOBS + JOBS[:1])


def test_missing_and_repeated_jobs_are_caught(records):
    with pytest.raises(ScheduleAuditError, match=r"job 'c' completed 0 times"):
        audit_schedule(records[:2], CLUSTER, JOBS)
    with pytest.raises(ScheduleAuditError, match=r"job 'a' completed 2 times"):
        audit_schedule(records + records[:1], CLUSTER, JOBS)



def test_a_record_of_a_job_not_in_the_workload_is_caught_with_as_many_records_as_jobs(records):
    """As many records as jobs, but one names a job the workload does not have (and misses one it has)."""
    with pytest.raises(ScheduleAuditError, match=r"job 'x' has a record but is not in the workload"):
        audit_schedule([replace(r, job_id="x") if r.job_id == "c" else r for r in records], CLUSTER, JOBS)

def test_gpus_inconsistent_with_placement_are_caught(records):
    with pytest.raises(ScheduleAuditError, match=r"job 'b': GPUs \(0, 3\) do not match placement \(1, 1\)"):
        audit_schedule(corrupt(records, "b", gpu_ids=(0, 3)), CLUSTER, JOBS)
    with pytest.raises(ScheduleAuditError, match=r"job 'b' needs 2 distinct GPUs"):
        audit_schedule(corrupt(records, "b", gpu_ids=(2, 2)), CLUSTER, JOBS)
    # a record holding fewer GPUs and servers than its job has vertices: the one-record-at-a-time path names it
    with pytest.raises(ScheduleAuditError, match=r"^job 'b' needs 2 distinct GPUs, holds \(2,\)$"):
        audit_schedule(corrupt(records, "b", gpu_ids=(2,), placement=(1,)), CLUSTER, JOBS)


def test_wrong_alpha_is_caught(records):
    bad = corrupt(records, "a", alpha=2.0, end=8.0)
    with pytest.raises(ScheduleAuditError, match=r"job 'a': recorded alpha 2.0 but its placement gives 1.0"):
        audit_schedule(bad, CLUSTER, JOBS)


def test_gpu_of_another_server_is_caught(records):
    """b's GPUs 2, 3 sit on server 1; recording server 0 for them breaks the placement rule."""
    with pytest.raises(ScheduleAuditError, match=r"job 'b': GPUs \(2, 3\) do not match placement \(0, 0\)"):
        audit_schedule(corrupt(records, "b", placement=(0, 0)), CLUSTER, JOBS)


def test_earliest_of_several_clashes_is_reported(records):
    """b moved onto a's GPUs at 1 and c onto them at 3: the clash at time 1 is named first."""
    bad = corrupt(corrupt(records, "c", start=3.0, end=5.0), "b", gpu_ids=(0, 1), placement=(0, 0))
    with pytest.raises(ScheduleAuditError, match=r"GPU 0 is held by jobs 'a' and 'b' at time 1.0"):
        audit_schedule(bad, CLUSTER, JOBS)


def test_zero_length_job_on_a_busy_gpu_holds_nothing():
    """A job of 0 iterations starts and ends at once; it never holds a GPU, so it cannot clash."""
    jobs = [fixed("long", 0, 2, 10), fixed("empty", 2, 2, 0)]
    result = simulate(jobs, CLUSTER, make_scheduler("fifo"), FirstFitPlacer())
    on_busy_gpus = dict(start=2.0, end=2.0, gpu_ids=(0, 1), placement=(0, 0))
    records = [replace(r, **on_busy_gpus) if r.job_id == "empty" else r for r in result.records]
    assert [r.gpu_ids for r in records] == [(0, 1), (0, 1)]
    assert audit_schedule(records, CLUSTER, jobs) is None


def test_wrong_completion_time_is_caught_at_two_seconds_an_iteration():
    jobs = [Job("a", 0.0, TrainingPlan.fixed(1, 2.0), 3)]
    (record,) = simulate(jobs, Cluster(1, 1), make_scheduler("fifo"), FirstFitPlacer()).records
    assert (record.start, record.end) == (0.0, 6.0)
    audit_schedule([record], Cluster(1, 1), jobs)
    with pytest.raises(ScheduleAuditError, match=r"^job 'a' ends at 7.0, expected S \+ n \* alpha = 6.0$"):
        audit_schedule([replace(record, end=7.0)], Cluster(1, 1), jobs)


def test_distinct_per_row_counts_each_rows_distinct_values():
    """The in-place key sort of the vectorised pass: per row, the number of distinct values (clipped into
    [0, width)), rows without values counting 0."""
    import numpy as np
    from asrpt_bench.sim.audit import _distinct_per_row

    rng = np.random.default_rng(7)
    counts = rng.integers(0, 6, size=300)
    rows = np.repeat(np.arange(300), counts)
    values = rng.integers(-2, 12, size=len(rows))
    expected = [len({min(max(v, 0), 9) for v in values[rows == k]}) for k in range(300)]
    assert _distinct_per_row(rows, values, 10, 300).tolist() == expected
    assert _distinct_per_row(rows[:0], values[:0], 10, 3).tolist() == [0, 0, 0]
