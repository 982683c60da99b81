"""Schedule validator run after every simulation: a broken schedule raises, it is never reported.

Checks: every job completed exactly once; no start before release or eligibility; one
contiguous interval on a fixed set of distinct GPUs matching the recorded placement
(non-preemption); C_i = S_i + n_i * alpha_i with alpha recomputed from the placement; no GPU held by
two jobs at once (so, as every GPU belongs to its recorded server, no server runs over capacity). On a
cluster given as pools also: every job's servers lie in one pool, the recorded pool is theirs, and its
alpha is its pool's (the job's plan on that pool's type, on the pool's links).

The checks run as one vectorised (numpy) pass over all records, cheap enough to stay on for every
run; the first record it flags is checked again one rule at a time, which names the job and the rule.

Preemptive runs (sim/preemptive.py) are audited per run segment instead (`audit_preemptive`): no
segment starts before its job's release, each holds distinct GPUs matching its placement at the alpha
of that placement, a job's segments follow each other and restart exactly when resumed, its progress
adds up to its iterations, and no GPU holds two segments at once.
"""

from __future__ import annotations

import operator
import sys
from collections import defaultdict
from itertools import chain
from operator import attrgetter
from typing import Hashable, Sequence

import numpy as np

from ..cluster import ClusterPool
from ..core import Cluster, Job, Placement, TrainingPlan, pool_plans_of
from ..timing import DEFAULT_TIMING, AlphaByShape, TimingModel
from .records import JobRecord, Segment, record_column

RELATIVE_TOLERANCE = 1e-9


class ScheduleAuditError(AssertionError):
    """The simulated schedule violates the model; the message names the job(s) and the rule."""


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= RELATIVE_TOLERANCE * max(1.0, abs(a), abs(b))


def _close_all(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """_close elementwise, with the same float operations (so the same verdict on every pair)."""
    return np.abs(a - b) <= RELATIVE_TOLERANCE * np.maximum(np.maximum(1.0, np.abs(a)), np.abs(b))


def _check_jobs_once(records: Sequence[JobRecord], jobs: Sequence[Job]) -> dict[Hashable, Job]:
    by_id = {job.job_id: job for job in jobs}
    ids = record_column(records, "job_id")
    if len(ids) == len(by_id) and set(ids) == by_id.keys():
        return by_id
    counts: dict[Hashable, int] = defaultdict(int)
    for job_id in ids:
        if job_id not in by_id:
            raise ScheduleAuditError(f"job {job_id!r} has a record but is not in the workload")
        counts[job_id] += 1
    for job_id in by_id:
        if counts[job_id] != 1:
            raise ScheduleAuditError(f"job {job_id!r} completed {counts[job_id]} times, expected exactly once")
    return by_id


def _pool_and_plan(record: JobRecord | Segment, job: Job, cluster: Cluster, name: str
                   ) -> tuple[ClusterPool, TrainingPlan, Placement]:
    """The pool holding every server of the placement, the job's plan on its type and the placement in the
    pool's numbering; a placement over several pools, a pool whose type cannot run the job and a recorded
    pool other than the placement's raise."""
    pools = {cluster.pool_of(h).index for h in record.placement if 0 <= h < cluster.server_count}
    if len(pools) != 1:
        raise ScheduleAuditError(f"{name}: placement {record.placement} spans pools "
                                 f"{sorted(cluster.pool_list[p].name for p in pools)}; a gang runs inside one pool")
    pool = cluster.pool_list[pools.pop()]
    if not cluster.pooled:  # the one-pool shorthand: the simulator ran each job's plan on the cluster's type
        return pool, job.plan, Placement(record.placement)
    if isinstance(record, JobRecord) and record.pool != pool.name:
        raise ScheduleAuditError(f"{name}: recorded pool {record.pool!r} but its placement is in pool {pool.name!r}")
    plan = job.plan_on(pool.type)
    if plan is None:
        raise ScheduleAuditError(f"{name} ran in pool {pool.name!r}, whose type {pool.type} cannot run it")
    return pool, plan, Placement(pool.to_local(record.placement))


def _check_job(record: JobRecord, job: Job, cluster: Cluster, timing: TimingModel) -> None:
    name = f"job {record.job_id!r}"
    if record.start < record.release or record.release != job.release:
        raise ScheduleAuditError(f"{name} starts at {record.start} before its release {job.release}")
    if record.start < record.eligible or record.eligible < record.release:
        raise ScheduleAuditError(f"{name} starts at {record.start}, eligible at {record.eligible}, "
                                 f"released at {record.release}")
    if record.gpus != job.gpus or len(record.gpu_ids) != job.gpus or len(set(record.gpu_ids)) != job.gpus:
        raise ScheduleAuditError(f"{name} needs {job.gpus} distinct GPUs, holds {record.gpu_ids}")
    if len(record.placement) != job.gpus or any(not 0 <= gpu < cluster.total_gpus or cluster.server_of_gpu(gpu) != h
                                                for gpu, h in zip(record.gpu_ids, record.placement)):
        raise ScheduleAuditError(f"{name}: GPUs {record.gpu_ids} do not match placement {record.placement}")
    placement = Placement(record.placement)
    if record.servers_used != placement.servers_used:
        raise ScheduleAuditError(f"{name}: servers_used {record.servers_used} but the placement uses "
                                 f"{placement.servers_used}")
    pool, plan, local = _pool_and_plan(record, job, cluster, name)
    alpha = timing.alpha(plan, local, pool.cluster)
    if not _close(alpha, record.alpha):
        raise ScheduleAuditError(f"{name}: recorded alpha {record.alpha} but its placement gives {alpha} in pool "
                                 f"{pool.name!r}")
    if record.iterations != job.iterations:
        raise ScheduleAuditError(f"{name}: recorded {record.iterations} iterations, true {job.iterations}")
    expected_end = record.start + job.iterations * alpha
    if not _close(record.end, expected_end):
        raise ScheduleAuditError(f"{name} ends at {record.end}, expected S + n * alpha = {expected_end}")
    if record.service_s != record.end - record.start or record.restore_s != 0 or record.preemptions != 0:
        raise ScheduleAuditError(f"{name}: service {record.service_s} s, restore {record.restore_s} s and "
                                 f"{record.preemptions} preemption(s) do not describe one uninterrupted run "
                                 f"from {record.start} to {record.end}")


def _jobs_of_records(records: Sequence[JobRecord], jobs: Sequence[Job]) -> Sequence[Job]:
    """The job of every record, in record order, once each job is known to have exactly one record
    (_check_jobs_once). When the records are the jobs' in input order (as the event loops write them) and no
    id repeats, that is `jobs` itself: no job_id -> job dict is held through the rest of the audit (a replay
    of millions of jobs)."""
    ids = record_column(records, "job_id")
    if (len(ids) == len(jobs) and all(map(operator.eq, ids, map(attrgetter("job_id"), jobs)))
            and len(set(ids)) == len(ids)):
        return jobs
    return list(map(_check_jobs_once(records, jobs).__getitem__, ids))


def _field(items: Sequence[object], name: str, dtype: type) -> np.ndarray:
    """Attribute `name` (dotted names allowed) of every item (job or segment) as one array."""
    return np.fromiter(map(attrgetter(name), items), dtype=dtype, count=len(items))


def _column(records: Sequence[JobRecord] | Sequence[Segment], name: str, dtype: type) -> np.ndarray:
    """Field `name` of every record (or segment) as one array."""
    return np.asarray(record_column(records, name), dtype=dtype)


def _flat(records: Sequence[JobRecord] | Sequence[Segment], name: str) -> np.ndarray:
    """The tuples in field `name` of every record (or segment), concatenated."""
    return np.fromiter(chain.from_iterable(record_column(records, name)), dtype=np.int64)  # type: ignore[arg-type]


def _distinct_per_row(rows: np.ndarray, values: np.ndarray, width: int, n: int) -> np.ndarray:
    """Number of distinct `values` (each in [0, width)) per row, by sorting row-major keys (built and sorted in
    place: one array of keys at a time, on a replay's millions of GPUs)."""
    keys = rows * width
    keys += np.clip(values, 0, width - 1)
    keys.sort()
    first = np.ones(len(keys), dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    keys = keys[first]
    del first
    keys //= width
    return np.bincount(keys, minlength=n)


def _expected_alpha(records: Sequence[JobRecord], jobs: Sequence[Job], single: np.ndarray, cluster: Cluster,
                    timing: TimingModel) -> np.ndarray:
    """alpha of every record's placement: per plan for single-server placements, else per plan and shape."""
    identity = np.fromiter(map(id, map(attrgetter("plan"), jobs)), dtype=np.int64, count=len(jobs))
    _, first, code = np.unique(identity, return_index=True, return_inverse=True)
    plans = [jobs[k].plan for k in first]
    consolidated = np.array([timing.alpha(plan, Placement((0,) * plan.gpus), cluster) for plan in plans])
    expected = consolidated[code]
    shapes = AlphaByShape(timing, cluster)
    placements = record_column(records, "placement")
    for k in np.flatnonzero(~single):
        expected[k] = shapes.alpha(jobs[k].plan, Placement(placements[k]))
    return expected


def _expected_pooled_alpha(records: Sequence[JobRecord], jobs: Sequence[Job], single: np.ndarray, first_pool: np.ndarray,
                           cluster: Cluster, timing: TimingModel) -> np.ndarray:
    """alpha of every record's placement in its pool (`first_pool`: the pool of its first server), for the
    job's plan on that pool's type (NaN where the type cannot run it, which then fails): per pool and plan
    for single-server placements, else per plan and shape."""
    pools = cluster.pool_list
    shapes = [AlphaByShape(timing, pool.cluster) for pool in pools]
    consolidated: dict[tuple[int, int], float] = {}
    expected = np.empty(len(records))
    for k, (placement, plans, index, alone) in enumerate(zip(record_column(records, "placement"),
                                                             pool_plans_of(jobs, cluster), first_pool.tolist(),
                                                             single.tolist())):
        plan = plans[index]
        if plan is None:
            expected[k] = np.nan
        elif alone:
            value = consolidated.get((index, id(plan)))
            if value is None:
                value = consolidated[index, id(plan)] = timing.alpha(plan, Placement((0,) * plan.gpus),
                                                                     pools[index].cluster)
            expected[k] = value
        else:
            expected[k] = shapes[index].alpha(plan, Placement(pools[index].to_local(placement)))
    return expected


def _lengths_match(records: Sequence[JobRecord], job_gpus: np.ndarray) -> bool:
    """Every record holds one GPU and one server per vertex of its job (else the slow path runs)."""
    return all(np.array_equal(job_gpus, np.fromiter(map(len, record_column(records, name)), dtype=np.int64,
                                                    count=len(records))) for name in ("placement", "gpu_ids"))


def _first_failing_record(records: Sequence[JobRecord], jobs: Sequence[Job], job_gpus: np.ndarray, cluster: Cluster,
                          timing: TimingModel) -> int | None:
    """Index of the first record that breaks a rule of _check_job, in one vectorised pass (records
    whose GPU and server lists have their job's length); the no-double-booking sweep comes after it."""
    n = len(records)
    release, start, eligible = (_column(records, name, float) for name in ("release", "start", "eligible"))
    bad = (start < release) | (release != _field(jobs, "release", float))
    bad |= (start < eligible) | (eligible < release)
    del release, start, eligible  # each array let go once checked (start read again with end for the last
    # checks): the pass holds a few of a replay's millions of rows at once
    bad |= _column(records, "gpus", np.int64) != job_gpus
    rows = np.repeat(np.arange(n), job_gpus)
    gpu, server = _flat(records, "gpu_ids"), _flat(records, "placement")
    total = cluster.total_gpus
    mismatch = (gpu < 0) | (gpu >= total) | (cluster.server_of_gpus(gpu) != server)
    bad |= np.bincount(rows[mismatch], minlength=n) > 0
    del mismatch
    bad |= _distinct_per_row(rows, gpu, total, n) != job_gpus
    del gpu
    servers_used = _distinct_per_row(rows, server, cluster.server_count, n)
    bad |= _column(records, "servers_used", np.int64) != servers_used
    if cluster.pooled:
        outside = (server < 0) | (server >= cluster.server_count)
        bad |= np.bincount(rows[outside], minlength=n) > 0
        if bad.any():
            return int(np.flatnonzero(bad)[0])
        pool = cluster.pool_of_server[server]
        bad |= _distinct_per_row(rows, pool, len(cluster.pool_list), n) != 1
        names = {p.name: p.index for p in cluster.pool_list}
        recorded = np.array([names.get(pool, -1) for pool in record_column(records, "pool")], dtype=np.int64)
        bad |= np.bincount(rows[pool != recorded[rows]], minlength=n) > 0
        if bad.any():
            return int(np.flatnonzero(bad)[0])
        first = np.cumsum(job_gpus) - job_gpus
        alpha = _expected_pooled_alpha(records, jobs, servers_used == 1, pool[first], cluster, timing)
    else:
        del rows, server
        alpha = _expected_alpha(records, jobs, servers_used == 1, cluster, timing)
    iterations = _field(jobs, "iterations", np.int64)
    start, end = (_column(records, name, float) for name in ("start", "end"))
    bad |= ~_close_all(alpha, _column(records, "alpha", float))
    bad |= _column(records, "iterations", np.int64) != iterations
    bad |= ~_close_all(end, start + iterations * alpha)
    bad |= _column(records, "service_s", float) != end - start
    bad |= (_column(records, "restore_s", float) != 0) | (_column(records, "preemptions", np.int64) != 0)
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def _check_occupancy(records: Sequence[JobRecord] | Sequence[Segment], rows: np.ndarray, gpu: np.ndarray,
                     start: np.ndarray, end: np.ndarray) -> None:
    """No GPU held by two jobs at once: per GPU, intervals sorted by start must not overlap (an
    interval may start when the previous one ends). Zero-length intervals hold nothing.
    `rows`/`gpu`: record index and GPU of every held GPU; `start`/`end` per record."""
    held = (end > start)[rows]
    if not held.all():  # else no copies of the two longest arrays
        rows, gpu = rows[held], gpu[held]
    del held
    begins = start[rows]
    order = np.lexsort((rows, begins, gpu))
    begins = begins[order]  # each array sorted in turn, its unsorted copy let go before the next is made
    ends = end[rows[order]]
    gpu = gpu[order]
    clash = np.flatnonzero((gpu[1:] == gpu[:-1]) & (begins[1:] < ends[:-1]))
    if clash.size:
        k = clash[np.argmin(begins[clash + 1])]
        holder, other = records[rows[order[k]]], records[rows[order[k + 1]]]
        raise ScheduleAuditError(f"GPU {gpu[k]} is held by jobs {holder.job_id!r} and {other.job_id!r} "
                                 f"at time {float(begins[k + 1])}")


def audit_schedule(records: Sequence[JobRecord], cluster: Cluster, jobs: Sequence[Job],
                   timing: TimingModel = DEFAULT_TIMING) -> None:
    """Raise ScheduleAuditError naming the first violated rule; return None for a valid schedule."""
    job_of = _jobs_of_records(records, jobs)
    job_gpus = _field(job_of, "plan.gpus", np.int64)
    if not _lengths_match(records, job_gpus):
        for record, job in zip(records, job_of):
            _check_job(record, job, cluster, timing)
    failing = _first_failing_record(records, job_of, job_gpus, cluster, timing) if records else None
    if failing is not None:
        _check_job(records[failing], job_of[failing], cluster, timing)
        raise ScheduleAuditError(f"job {records[failing].job_id!r} breaks a rule of the schedule audit")
    if records:  # after the per-record pass has let go of its arrays (a replay of millions of jobs)
        _check_occupancy(records, np.repeat(np.arange(len(records)), job_gpus), _flat(records, "gpu_ids"),
                         _column(records, "start", float), _column(records, "end", float))


def _check_segment(segment: Segment, job: Job, cluster: Cluster, alphas: list[AlphaByShape]) -> None:
    name = f"job {job.job_id!r}, segment [{segment.start}, {segment.end})"
    if segment.start < job.release:
        raise ScheduleAuditError(f"{name} starts before the job's release {job.release}")
    if not (segment.start <= segment.end and 0 <= segment.restart_s <= segment.end - segment.start):
        raise ScheduleAuditError(f"{name}: restart part {segment.restart_s} does not fit in the segment")
    if len(segment.gpu_ids) != job.gpus or len(set(segment.gpu_ids)) != job.gpus or len(segment.placement) != job.gpus \
            or any(not 0 <= gpu < cluster.total_gpus or cluster.server_of_gpu(gpu) != h
                   for gpu, h in zip(segment.gpu_ids, segment.placement)):
        raise ScheduleAuditError(f"{name}: needs {job.gpus} distinct GPUs on placement {segment.placement}, "
                                 f"holds {segment.gpu_ids}")
    pool, plan, local = _pool_and_plan(segment, job, cluster, name)
    alpha = alphas[pool.index].alpha(plan, local)
    if not _close(alpha, segment.alpha):
        raise ScheduleAuditError(f"{name}: alpha {segment.alpha} but its placement gives {alpha} in pool "
                                 f"{pool.name!r}")


def _check_job_segments(record: JobRecord, job: Job, own: list[Segment], restart_s: float, cluster: Cluster) -> None:
    """One job's segments in time order: they follow each other, the first pays no restart and every
    later one `restart_s` (or all of it, if shorter), progress sums to the iterations, and the record
    agrees with them."""
    name = f"job {job.job_id!r}"
    if not own:
        raise ScheduleAuditError(f"{name} completed without running")
    for k, segment in enumerate(own):
        if k and segment.start < own[k - 1].end:
            raise ScheduleAuditError(f"{name}: segment at {segment.start} starts before the previous one ends")
        expected = 0.0 if k == 0 else min(restart_s, segment.end - segment.start)
        if not _close(segment.restart_s, expected):
            raise ScheduleAuditError(f"{name}: segment at {segment.start} restarts for {segment.restart_s} s, "
                                     f"expected {expected}")
    done = sum(segment.iterations for segment in own)
    # a segment's iterations come from timestamps of months of trace in seconds, each exact only to a few
    # units in the last place: allow 64 of them per segment, over its alpha
    slack = 64 * sys.float_info.epsilon * sum(max(1.0, abs(segment.end)) / segment.alpha
                                              for segment in own if segment.alpha > 0)
    if abs(done - job.iterations) > RELATIVE_TOLERANCE * max(1.0, job.iterations) + slack:
        raise ScheduleAuditError(f"{name}: its segments do {done} iterations, expected {job.iterations}")
    last = own[-1]
    if (record.release != job.release or record.iterations != job.iterations or record.gpus != job.gpus
            or record.start != own[0].start or record.end != last.end or record.placement != last.placement
            or record.gpu_ids != last.gpu_ids or record.alpha != last.alpha
            or (cluster.pooled and record.pool != cluster.pool_of(last.placement[0]).name)
            or record.preemptions != len(own) - 1
            or not _close(record.restore_s, sum(segment.restart_s for segment in own))
            or not _close(record.service_s, sum(segment.end - segment.start - segment.restart_s for segment in own))):
        raise ScheduleAuditError(f"{name}: its record does not match its {len(own)} segment(s)")


def _suspect_segments(segments: Sequence[Segment], jobs: Sequence[Job], cluster: Cluster,
                      alphas: list[AlphaByShape]) -> np.ndarray:
    """Per segment, whether it may break a rule of `_check_segment`, in one vectorised pass with the same float
    operations (and the same memoised alphas): every segment that breaks one is flagged, and the flagged ones
    are checked again one by one, which names the rule. Each column is read when a check needs it and let go
    after it (a replay has millions of segments; a SegmentTable reads a column as one copy)."""
    n = len(segments)
    job_gpus = _field(jobs, "plan.gpus", np.int64)
    if not _lengths_match(segments, job_gpus):  # type: ignore[arg-type]
        return np.ones(n, dtype=bool)
    start, end, restart = (_column(segments, name, float) for name in ("start", "end", "restart_s"))
    bad = start < _field(jobs, "release", float)
    bad |= ~((start <= end) & (0 <= restart) & (restart <= end - start))
    del start, end, restart
    rows = np.repeat(np.arange(n), job_gpus)
    gpu, server = _flat(segments, "gpu_ids"), _flat(segments, "placement")
    total = cluster.total_gpus
    bad |= np.bincount(rows[(gpu < 0) | (gpu >= total) | (cluster.server_of_gpus(gpu) != server)], minlength=n) > 0
    bad |= _distinct_per_row(rows, gpu, total, n) != job_gpus
    del gpu
    single = _distinct_per_row(rows, server, cluster.server_count, n) == 1
    if cluster.pooled:
        pool = cluster.pool_of_server[np.clip(server, 0, cluster.server_count - 1)]
        bad |= _distinct_per_row(rows, pool, len(cluster.pool_list), n) != 1
        del pool
    del rows, server
    expected = _segment_alphas(segments, jobs, ~bad, single, cluster, alphas)
    return bad | ~_close_all(expected, _column(segments, "alpha", float))


def _segment_alphas(segments: Sequence[Segment], jobs: Sequence[Job], valid: np.ndarray, single: np.ndarray,
                    cluster: Cluster, alphas: list[AlphaByShape]) -> np.ndarray:
    """The alpha `_check_segment` expects of every valid segment (its GPUs match its one pool's servers), NaN
    elsewhere: on one pool, once per plan for single-server placements (AlphaByShape keys them by plan and GPU
    count) and per segment for the others; on several, per segment in its pool for the job's plan on its type."""
    expected = np.full(len(segments), np.nan)
    placements = record_column(segments, "placement")  # type: ignore[arg-type]
    if cluster.pooled:
        rows = np.flatnonzero(valid).tolist()
        for k, plans in zip(rows, pool_plans_of([jobs[k] for k in rows], cluster)):
            pool = cluster.pool_of(placements[k][0])
            plan = plans[pool.index]
            if plan is not None:
                expected[k] = alphas[pool.index].alpha(plan, Placement(pool.to_local(placements[k])))
        return expected
    shapes = alphas[0]
    alone = valid & single
    identity = np.fromiter(map(id, map(attrgetter("plan"), jobs)), dtype=np.int64, count=len(jobs))
    picked = np.flatnonzero(alone)
    if picked.size:
        _, first, code = np.unique(identity[picked], return_index=True, return_inverse=True)
        per_plan = np.array([shapes.alpha(jobs[k].plan, Placement(placements[k])) for k in picked[first].tolist()])
        expected[picked] = per_plan[code]
    for k in np.flatnonzero(valid & ~single).tolist():
        expected[k] = shapes.alpha(jobs[k].plan, Placement(placements[k]))
    return expected


def _suspect_jobs(records: Sequence[JobRecord], jobs: Sequence[Job], segments: Sequence[Segment], row: np.ndarray,
                  restart_s: float, cluster: Cluster) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per record (its job `jobs[r]`), whether it may break a rule of `_check_job_segments`, in one vectorised
    pass over the segments sorted by (record `row`, start, end) with the same float operations (a job's sums
    add its segments in that order, as the check does); and the sort, each record's first sorted segment and
    its count, from which the flagged ones are checked again one by one. Each sorted column is let go once
    its checks are done."""
    n = len(records)
    if not segments:  # every job completed without running
        nothing = np.zeros(n, dtype=np.int64)
        return np.ones(n, dtype=bool), nothing[:0], nothing, nothing
    start, end = _column(segments, "start", float), _column(segments, "end", float)
    order = np.lexsort((end, start, row))
    start, end, row = start[order], end[order], row[order]
    count = np.bincount(row, minlength=n)
    first = np.cumsum(count) - count
    bad = count == 0
    ran = count > 0
    last = np.where(ran, first + count - 1, 0)
    head = np.zeros(len(order), dtype=bool)
    head[first[ran]] = True
    bad[row[1:][~head[1:] & (start[1:] < end[:-1])]] = True
    restart = _column(segments, "restart_s", float)[order]
    bad[row[~_close_all(restart, np.where(head, 0.0, np.minimum(restart_s, end - start)))]] = True
    del head
    running = end - start - restart
    restored = np.bincount(row, restart, minlength=n)
    del restart
    served = np.bincount(row, running, minlength=n)
    alpha = _column(segments, "alpha", float)[order]
    with np.errstate(divide="ignore", invalid="ignore"):
        done = np.bincount(row, np.where(running > 0, running / alpha, 0.0), minlength=n)
        del running
        slack = 64 * sys.float_info.epsilon * np.bincount(row, np.where(alpha > 0, np.fmax(1.0, np.abs(end)) / alpha, 0.0),
                                                          minlength=n)
    del row
    bad |= (_column(records, "start", float) != start[np.where(ran, first, 0)]) | \
        (_column(records, "end", float) != end[last]) | (_column(records, "alpha", float) != alpha[last])
    del start, end, alpha
    iterations = _field(jobs, "iterations", float)
    bad |= np.abs(done - iterations) > RELATIVE_TOLERANCE * np.fmax(1.0, iterations) + slack
    bad |= _column(records, "release", float) != _field(jobs, "release", float)
    bad |= _column(records, "iterations", float) != iterations
    bad |= _column(records, "gpus", np.int64) != _field(jobs, "plan.gpus", np.int64)
    bad |= _column(records, "preemptions", np.int64) != count - 1
    bad |= ~_close_all(_column(records, "restore_s", float), restored)
    bad |= ~_close_all(_column(records, "service_s", float), served)
    finals = order[last].tolist()  # each record's last segment
    for name in ("placement", "gpu_ids"):
        lists = record_column(segments, name)
        bad |= np.fromiter(map(operator.ne, record_column(records, name), map(lists.__getitem__, finals)),
                           dtype=bool, count=n)
    if cluster.pooled:
        placements = record_column(segments, "placement")
        bad |= np.fromiter((pool != cluster.pool_of(placements[k][0]).name
                            for pool, k in zip(record_column(records, "pool"), finals)), dtype=bool, count=n)
    return bad, order, first, count


def audit_preemptive(records: Sequence[JobRecord], segments: Sequence[Segment], cluster: Cluster,
                     jobs: Sequence[Job], timing: TimingModel = DEFAULT_TIMING, restart_s: float = 0.0) -> None:
    """Raise ScheduleAuditError naming the first violated rule of a preemptive schedule; None if valid.

    `restart_s`: the price every resumed segment must pay. Segments are checked in their order, then jobs in
    record order, each by a vectorised pass whose flagged rows are checked again one by one (the first that
    breaks a rule raises, with its message), then the GPUs for double booking."""
    by_id = _check_jobs_once(records, jobs)
    alphas = [AlphaByShape(timing, pool.cluster) for pool in cluster.pool_list]
    ids = record_column(segments, "job_id")
    segment_jobs = list(map(by_id.get, ids))
    if None in segment_jobs:
        unknown = segment_jobs.index(None)
        for k in range(unknown):
            _check_segment(segments[k], segment_jobs[k], cluster, alphas)  # type: ignore[arg-type]
        raise ScheduleAuditError(f"job {ids[unknown]!r} has a segment but is not in the workload")
    if segments:
        for k in np.flatnonzero(_suspect_segments(segments, segment_jobs, cluster, alphas)).tolist():  # type: ignore[arg-type]
            _check_segment(segments[k], segment_jobs[k], cluster, alphas)  # type: ignore[arg-type]
    record_ids = record_column(records, "job_id")
    row_of = {job_id: r for r, job_id in enumerate(record_ids)}
    row = np.fromiter(map(row_of.__getitem__, ids), dtype=np.int64, count=len(ids))
    job_of = [by_id[job_id] for job_id in record_ids]
    suspects, order, first, count = _suspect_jobs(records, job_of, segments, row, restart_s, cluster)
    for r in np.flatnonzero(suspects).tolist():
        own = [segments[k] for k in order[first[r]:first[r] + count[r]].tolist()]
        _check_job_segments(records[r], job_of[r], own, restart_s, cluster)
    del row, order
    if segments:  # after the passes above have let go of their arrays
        widths = np.fromiter(map(len, record_column(segments, "gpu_ids")), dtype=np.int64, count=len(segments))
        _check_occupancy(segments, np.repeat(np.arange(len(segments)), widths), _flat(segments, "gpu_ids"),
                         _column(segments, "start", float), _column(segments, "end", float))
