"""The preemptive audit's vectorised passes against the plain one: segment by segment, then job by job.

`audit_preemptive` flags suspect segments and jobs in one numpy pass each and checks only those again one by
one; it must raise exactly what checking every segment and every job one by one raises (the same first
violation, the same message) and pass exactly what that passes. Schedules of srtf and las2d (with
suspensions, restarts and multi-server placements) are corrupted one field at a time, on one pool and on
three pools of GPU types.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections import defaultdict
from operator import attrgetter

import numpy as np
import pytest

from asrpt_bench.cluster import Cluster, Pool
from asrpt_bench.core import GB, Job, PreemptionPrice, Stage, TrainingPlan
from asrpt_bench.placement import make_placer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.timing import DEFAULT_TIMING, TimingModel
from asrpt_bench.sim.audit import (AlphaByShape, ScheduleAuditError, _check_job_segments, _check_jobs_once,
                                   _check_occupancy, _check_segment, _field, _flat, _suspect_jobs,
                                   _suspect_segments, audit_preemptive)

RESTART_S = 3.0
ONE_POOL = Cluster(2, 4, b_intra=100.0, b_inter=10.0)
POOLS = Cluster(pools=[Pool("v100", 1, 3), Pool("p100", 1, 3), Pool("k80", 1, 4)])


def reference_audit(records, segments, cluster, jobs, restart_s):
    """Every segment, then every job, checked one by one; then the GPUs."""
    by_id = _check_jobs_once(records, jobs)
    alphas = [AlphaByShape(DEFAULT_TIMING, pool.cluster) for pool in cluster.pool_list]
    per_job = defaultdict(list)
    for segment in segments:
        job = by_id.get(segment.job_id)
        if job is None:
            raise ScheduleAuditError(f"job {segment.job_id!r} has a segment but is not in the workload")
        _check_segment(segment, job, cluster, alphas)
        per_job[segment.job_id].append(segment)
    for record in records:
        own = sorted(per_job.get(record.job_id, []), key=attrgetter("start", "end"))
        _check_job_segments(record, by_id[record.job_id], own, restart_s, cluster)
    if segments:
        widths = np.array([len(s.gpu_ids) for s in segments])
        _check_occupancy(segments, np.repeat(np.arange(len(segments)), widths), _flat(segments, "gpu_ids"),
                         _field(segments, "start", float), _field(segments, "end", float))


def verdict(audit, records, segments, cluster, jobs) -> str | None:
    try:
        audit(records, segments, cluster, jobs, restart_s=RESTART_S)
    except ScheduleAuditError as error:
        return str(error)
    return None


def suspects(records, segments, cluster, jobs) -> np.ndarray:
    """The segments and then the jobs that the audit's vectorised passes flag for a check one by one."""
    by_id = {job.job_id: job for job in jobs}
    alphas = [AlphaByShape(DEFAULT_TIMING, pool.cluster) for pool in cluster.pool_list]
    segment_jobs = [by_id[s.job_id] for s in segments]
    row_of = {record.job_id: r for r, record in enumerate(records)}
    row = np.array([row_of[s.job_id] for s in segments])
    flagged, *_ = _suspect_jobs(records, [by_id[r.job_id] for r in records], segments, row, RESTART_S, cluster)
    return np.concatenate([_suspect_segments(segments, segment_jobs, cluster, alphas), flagged])


def graph_jobs(rng: np.random.Generator, n: int) -> list[Job]:
    """Jobs of one or two pipeline stages with data-parallel replicas (alpha depends on the placement's shape)
    and fixed-alpha jobs, released close together so that srtf suspends some."""
    jobs = []
    for k in range(n):
        if rng.random() < 0.3:
            plan = TrainingPlan.fixed(int(rng.integers(1, 5)), float(rng.choice([0.5, 1.0, 2.0])))
        else:
            stages = tuple(Stage(float(rng.choice([0.1, 0.3])), float(rng.choice([0.0, 0.4, 4.0])) * GB,
                                 float(rng.choice([0.0, 0.1])) * GB, int(rng.integers(1, 3)))
                           for _ in range(int(rng.integers(1, 3))))
            plan = TrainingPlan("random", f"p{k}", stages)
        jobs.append(Job(f"j{k}", float(rng.integers(0, 40)), plan, int(rng.integers(5, 120))))
    return jobs


def typed_jobs(rng: np.random.Generator, n: int) -> list[Job]:
    jobs = []
    for k in range(n):
        gpus = int(rng.choice([1, 1, 2, 3]))
        plans = tuple((t, TrainingPlan.fixed(gpus, float(rng.integers(1, 5)))) for t in ("v100", "p100", "k80"))
        jobs.append(Job(f"t{k}", float(rng.integers(0, 40)), TrainingPlan.fixed(gpus, 1.0), int(rng.integers(2, 30)),
                        type_plans=plans))
    return jobs


def schedule(cluster: Cluster, jobs: list[Job], scheduler: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = simulate(jobs, cluster, make_scheduler(scheduler), make_placer("heavy_edge"),
                          predictions={job.job_id: float(job.iterations) for job in jobs},
                          preemption=PreemptionPrice(restart_s=RESTART_S))
    assert sum(r.preemptions for r in result.records) > 0, "the schedule should suspend some jobs"
    return list(result.records), list(result.segments)


def corrupted(rng: np.random.Generator, records: list, segments: list, cluster: Cluster):
    """One field of one segment or record changed (or a segment dropped or repeated)."""
    records, segments = list(records), list(segments)
    if rng.random() < 0.55:
        k = int(rng.integers(len(segments)))
        s = segments[k]
        choice = str(rng.choice(["start", "end", "restart_s", "alpha", "placement", "gpu_ids", "job_id", "drop",
                                 "repeat", "tiny", "shift", "move", "extend"]))
        if choice == "shift":  # the same stretch, moved to begin before the job's previous one ends
            before = [other.end for other in segments if other.job_id == s.job_id and other.end <= s.start]
            delta = max(before) - s.start - 0.5 if before else float(rng.choice([-1.0, 0.5]))
            segments[k] = dataclasses.replace(s, start=s.start + delta, end=s.end + delta)
        elif choice == "move":  # one GPU moved, with its server, to another server (of another pool, maybe)
            server = int(rng.integers(cluster.server_count))
            free = [gpu for gpu in cluster.gpu_ids(server) if gpu not in s.gpu_ids]
            if free:
                i = len(s.gpu_ids) - 1  # not the first GPU, where it can: the pool is read from the first
                placement, gpu_ids = list(s.placement), list(s.gpu_ids)
                placement[i], gpu_ids[i] = server, free[0]
                segments[k] = dataclasses.replace(s, placement=tuple(placement), gpu_ids=tuple(gpu_ids))
        elif choice == "extend":  # a job's last segment runs on, its record agreeing: only the progress is off
            last = max((j for j, other in enumerate(segments) if other.job_id == s.job_id), key=lambda j: segments[j].end)
            delta = float(rng.choice([0.5, 1e-7]))
            segments[last] = dataclasses.replace(segments[last], end=segments[last].end + delta)
            r = next(r for r, record in enumerate(records) if record.job_id == s.job_id)
            records[r] = dataclasses.replace(records[r], end=records[r].end + delta,
                                             service_s=records[r].service_s + delta)
        elif choice == "drop":
            del segments[k]
        elif choice == "repeat":
            segments.insert(int(rng.integers(len(segments))), s)
        elif choice == "tiny":  # within or just past the audit's rounding allowance
            field = str(rng.choice(["end", "alpha", "restart_s"]))
            value = getattr(s, field)
            segments[k] = dataclasses.replace(s, **{field: value * (1 + float(rng.choice([3e-10, 2e-9, -2e-9])))})
        elif choice in ("placement", "gpu_ids"):
            values = list(getattr(s, choice))
            values[int(rng.integers(len(values)))] += int(rng.choice([-1, 1, cluster.gpus_per_server]))
            segments[k] = dataclasses.replace(s, **{choice: tuple(values)})
        elif choice == "job_id":
            segments[k] = dataclasses.replace(s, job_id=str(rng.choice([records[0].job_id, "stranger"])))
        else:
            segments[k] = dataclasses.replace(s, **{choice: getattr(s, choice) + float(rng.choice([-1.0, -0.5, 0.5, 4.0]))})
    else:
        r = int(rng.integers(len(records)))
        record = records[r]
        field = str(rng.choice(["release", "start", "end", "alpha", "placement", "gpu_ids", "pool", "preemptions",
                                "restore_s", "service_s", "iterations", "gpus"]))
        value = getattr(record, field)
        if field == "pool":
            value = "k80" if value != "k80" else "v100"
        elif field in ("placement", "gpu_ids"):
            value = tuple(value[::-1]) if len(set(value)) > 1 else tuple(v + 1 for v in value)
        elif field in ("preemptions", "iterations", "gpus"):
            value += int(rng.choice([-1, 1]))
        else:
            value += float(rng.choice([-1.0, 0.5, 1e-12, 1e-6]))
        records[r] = dataclasses.replace(record, **{field: value})
    return records, segments


CASES = [(ONE_POOL, graph_jobs, "srtf"), (ONE_POOL, graph_jobs, "las2d"), (POOLS, typed_jobs, "srtf_oracle")]


@pytest.mark.parametrize("cluster, make_jobs, scheduler", CASES, ids=["one-pool-srtf", "one-pool-las2d", "pools-srtf"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_vectorised_audit_raises_what_the_plain_one_raises(cluster, make_jobs, scheduler, seed):
    rng = np.random.default_rng(seed)
    jobs = make_jobs(rng, 40)
    records, segments = schedule(cluster, jobs, scheduler)
    assert verdict(audit_preemptive, records, segments, cluster, jobs) is None
    assert not suspects(records, segments, cluster, jobs).any()  # a valid schedule never takes the slow path
    caught = 0
    for _ in range(150):
        bad_records, bad_segments = corrupted(rng, records, segments, cluster)
        expected = verdict(reference_audit, bad_records, bad_segments, cluster, jobs)
        assert verdict(audit_preemptive, bad_records, bad_segments, cluster, jobs) == expected
        caught += expected is not None
    assert caught > 100  # the corruptions mostly break a rule, so both audits are exercised


def test_a_job_without_segments_and_a_run_without_any():
    rng = np.random.default_rng(3)
    jobs = graph_jobs(rng, 20)
    records, segments = schedule(ONE_POOL, jobs, "srtf")
    last = records[-1].job_id
    without = [s for s in segments if s.job_id != last]
    message = f"job {last!r} completed without running"
    assert verdict(audit_preemptive, records, without, ONE_POOL, jobs) == message
    first = records[0].job_id
    assert verdict(audit_preemptive, records, [], ONE_POOL, jobs) == f"job {first!r} completed without running"


def test_a_segment_over_two_pools_is_named():
    """A gang's second GPU moved, with its server, into the next pool: the segment spans two GPU types."""
    jobs = typed_jobs(np.random.default_rng(0), 40)
    records, segments = schedule(POOLS, jobs, "srtf_oracle")
    k = next(k for k, s in enumerate(segments) if len(s.gpu_ids) == 2 and s.placement == (0, 0))
    bad = list(segments)
    bad[k] = dataclasses.replace(segments[k], placement=(0, 1), gpu_ids=(segments[k].gpu_ids[0], POOLS.gpu_ids(1)[0]))
    message = verdict(audit_preemptive, records, bad, POOLS, jobs)
    assert message == (f"job {segments[k].job_id!r}, segment [{segments[k].start}, {segments[k].end}): placement (0, 1) "
                       f"spans pools ['p100', 'v100']; a gang runs inside one pool")
    assert message == verdict(reference_audit, records, bad, POOLS, jobs)


@pytest.mark.parametrize("field", ["alpha", "pool"])
def test_a_record_whose_alpha_or_pool_is_not_its_last_segments_is_caught(field):
    """Checked against the segments themselves, not only against the plain loop (which shares the per-job
    check): a job record's alpha and GPU type are those of its last segment."""
    rng = np.random.default_rng(4)
    jobs = typed_jobs(rng, 30)
    records, segments = schedule(POOLS, jobs, "srtf_oracle")
    record = records[-1]
    value = record.alpha * 1.5 if field == "alpha" else ("k80" if record.pool != "k80" else "v100")
    bad = records[:-1] + [dataclasses.replace(record, **{field: value})]
    found = verdict(audit_preemptive, bad, segments, POOLS, jobs)
    assert found is not None and repr(record.job_id) in found


@pytest.mark.parametrize("scheduler", ["fifo", "srtf"])
def test_a_run_is_audited_under_its_own_timing_model(scheduler):
    """Placement-dependent jobs under a timing model other than the default: the run's own audit passes (it
    checks each alpha with the run's model), while the same schedule fails an audit under the default one."""
    from asrpt_bench.sim import audit_preemptive, audit_schedule

    jobs = graph_jobs(np.random.default_rng(0), 30)
    timing = TimingModel(allreduce="tree", tree_latency_s=0.05, pipeline_mode="sync", microbatches=4)
    result = simulate(jobs, ONE_POOL, make_scheduler(scheduler), make_placer("heavy_edge"), timing=timing)
    with pytest.raises(ScheduleAuditError, match=r"alpha [0-9.]+ but its placement gives"):
        if scheduler == "fifo":
            audit_schedule(list(result.records), ONE_POOL, jobs)
        else:
            audit_preemptive(list(result.records), list(result.segments), ONE_POOL, jobs)
