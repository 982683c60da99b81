"""The preemptive run of srtf, srtf_oracle, psjf, psjf_oracle and las2d through the compiled loop
(preemptive_jit.py): which runs it takes (`compiled_rule`), the arrays it works on, and the placer's answers it
asks for on placement states it has not met (`run_compiled`).

The compiled loop makes exactly the decisions of sim/preemptive.py with AdmissionScheduler's walk (the same
floats, events and tie-breaks; tests/test_preemptive_compiled.py compares whole runs), at a few microseconds a
decision. It takes a run whose scheduler is one of those five classes itself (a subclass may change any
method), with `preempt_rule="always"` and, for las2d, no starvation guard; on a one-pool cluster of at most
64 GPUs per server; and whose releases are floats (an int release would make an int instant in the Python
loop, which its records keep as given). Any other run goes through the Python loop, with the same schedule.
numba is imported only when a run takes the compiled loop.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from tqdm.autonotebook import tqdm

from ..core import Cluster, Job, PreemptionPrice
from ..placement.base import Placer
from ..schedulers.views import JobView
from ..timing import AlphaByShape, TimingModel
from .engine import checked_place
from .pooled import EmptyClusterEstimate
from .records import RecordTable, SegmentTable, put_preempted

MAX_GPUS_PER_SERVER = 64
"""A server's free GPUs are one 64-bit mask in the compiled loop."""
REPORT_EVERY = 4096
"""Completions between two updates of the progress bar."""
ZOBRIST_SEED = 25
"""Seed of the hash of free-GPU states (any seed gives the same runs: every hit is checked against the state)."""
ENTRIES = 1024
"""Placement memo entries room is made for at first (doubled as needed)."""
SEGMENTS_PER_JOB = 2
"""Run segments per job room is made for at first (doubled as needed; srtf on Philly has about 4.4)."""


def compiled_rule(scheduler: Any, cluster: Cluster, jobs: Sequence[Job]) -> str | None:
    """'remaining' (srtf, srtf_oracle), 'fixed' (psjf, psjf_oracle) or 'las' (las2d) when this run can take the
    compiled loop (module doc), else None."""
    from ..schedulers.las2d import LAS2D
    from ..schedulers.psjf import PSJF, PSJFOracle
    from ..schedulers.srtf import SRTF, SRTFOracle

    rule = {SRTF: "remaining", SRTFOracle: "remaining", PSJF: "fixed", PSJFOracle: "fixed", LAS2D: "las"}.get(
        type(scheduler))
    if rule is None or scheduler.preempt_rule != "always" or (rule == "las" and scheduler.promote_knob is not None):
        return None
    if cluster.pooled or cluster.gpus_per_server > MAX_GPUS_PER_SERVER:
        return None
    if not all(type(job.release) is float for job in jobs):
        return None
    return rule


class _Output:
    """The kernel's growable output: run segments (job, numbers, memo entry, GPU ids) and the memo's entries."""

    def __init__(self, segments: int, gpus: int, servers: int, entries: int) -> None:
        self.seg_job = np.zeros(segments, dtype=np.int64)
        self.seg_num = np.zeros((segments, 4))
        self.seg_entry = np.zeros(segments, dtype=np.int64)
        self.seg_goff = np.zeros(segments, dtype=np.int64)
        self.seg_gpus = np.zeros(gpus, dtype=np.int64)
        self.e_key = np.zeros(entries, dtype=np.int64)
        self.e_plan = np.zeros(entries, dtype=np.int64)
        self.e_free = np.zeros((entries, servers), dtype=np.int16)
        self.e_fits = np.zeros(entries, dtype=np.int8)
        self.e_alpha = np.zeros(entries)
        self.e_off = np.zeros(entries, dtype=np.int64)
        self.e_servers = np.zeros(8 * entries, dtype=np.int64)
        self.mkeys, self.mvals = np.zeros(2 * entries, dtype=np.int64), np.full(2 * entries, -1, dtype=np.int64)

    def grow_segments(self, segments: int, gpus: int) -> None:
        """Room for at least `segments` segments and `gpus` GPU ids (doubling)."""
        if segments > len(self.seg_job):
            size = max(segments, 2 * len(self.seg_job))
            for name in ("seg_job", "seg_entry", "seg_goff", "seg_num"):
                setattr(self, name, _grown(getattr(self, name), size))
        if gpus > len(self.seg_gpus):
            self.seg_gpus = _grown(self.seg_gpus, max(gpus, 2 * len(self.seg_gpus)))

    def grow_entries(self, entries: int, servers: int, rehash: Any) -> None:
        """Room for at least `entries` memo entries and `servers` placement vertices (doubling), and a table of
        keys at most half full with them (filled again by `rehash`)."""
        if entries > len(self.e_plan):
            count = len(self.e_plan)
            size = max(entries, 2 * count)
            for name in ("e_key", "e_plan", "e_free", "e_fits", "e_alpha", "e_off"):
                setattr(self, name, _grown(getattr(self, name), size))
            self.mkeys, self.mvals = np.zeros(2 * size, dtype=np.int64), np.full(2 * size, -1, dtype=np.int64)
            rehash(self.mkeys, self.mvals, self.e_key, count)
        if servers > len(self.e_servers):
            self.e_servers = _grown(self.e_servers, max(servers, 2 * len(self.e_servers)))


def zobrist(servers: int, gps: int, plans: int) -> tuple[np.ndarray, np.ndarray]:
    """Random 64-bit keys per (server, free GPUs on it) and per plan: a state's hash is the XOR of its servers' keys
    and its plan's."""
    rng = np.random.default_rng(ZOBRIST_SEED)
    low, high = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    return (rng.integers(low, high, size=(servers, gps + 1), dtype=np.int64),
            rng.integers(low, high, size=plans, dtype=np.int64))


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    grown = np.zeros((size, *array.shape[1:]), dtype=array.dtype)
    grown[:len(array)] = array
    return grown


def run_compiled(jobs: list[Job], views: list[JobView], cluster: Cluster, scheduler: Any, placer: Placer,
                 timing: TimingModel, estimates: list[EmptyClusterEstimate], progress: bool,
                 preemption: PreemptionPrice, rule: str) -> tuple[RecordTable, SegmentTable]:
    """The records and run segments of the preemptive run, by the compiled loop (compiled_rule gave `rule`)."""
    from ..schedulers.las2d import ATTAINED_TOLERANCE, BOUND_MARGIN_S
    from . import preemptive_jit as jit

    scheduler.reset(cluster)
    n, total, gps, servers = len(jobs), cluster.total_gpus, cluster.gpus_per_server, cluster.server_count
    plans: dict[int, int] = {}
    plan_of = np.fromiter((plans.setdefault(id(job.plan), len(plans)) for job in jobs), np.int64, n)
    gpus = np.fromiter((job.plan.gpus for job in jobs), np.int64, n)
    sizes, size_class, per_size = np.unique(gpus, return_inverse=True, return_counts=True)
    jobf = np.array([[job.release for job in jobs], [float(job.iterations) for job in jobs],
                     [float(scheduler.known_iterations(view)) for view in views], [view.alpha_min for view in views]],
                    dtype=float).reshape(4, n).T.copy()
    jobi = np.stack([gpus, plan_of, size_class.astype(np.int64), np.cumsum(gpus) - gpus], axis=1).reshape(n, 4)
    arrival = np.argsort(jobf[:, 0], kind="stable").astype(np.int64)
    thresholds = np.array(scheduler.thresholds if rule == "las" else (), dtype=float)
    kind = {"remaining": jit.REMAINING, "fixed": jit.FIXED, "las": jit.LAS}[rule]
    pf = np.array([preemption.restart_s, preemption.min_run_s, ATTAINED_TOLERANCE, BOUND_MARGIN_S], dtype=float)
    pi = np.array([kind, total, gps, REPORT_EVERY if progress else 0], dtype=np.int64)

    jf = np.zeros((n, jit.JOB_FLOATS))
    jf[:, jit.F_FIRST_START] = jf[:, jit.F_END] = math.nan
    ji = np.zeros((n, jit.JOB_INTS), dtype=np.int64)
    job_gpu = np.zeros(int(gpus.sum()), dtype=np.int64)
    free = np.full(servers, gps, dtype=np.int64)
    mask = np.full(servers, np.uint64((1 << gps) - 1), dtype=np.uint64)
    zob, pz = zobrist(servers, gps, len(plans))
    S = np.zeros(jit.INT_SLOTS, dtype=np.int64)
    S[jit.HASH] = np.bitwise_xor.reduce(zob[:, gps])
    S[jit.PENDING] = -1
    T = np.array([0.0, math.nan, math.nan])
    running = np.zeros(total + 1, dtype=np.int64)
    row_of = np.zeros(n, dtype=np.int64)
    rows = np.zeros((jit.ROW_FIELDS, total + 1))
    wprio, wx = np.zeros(n), np.zeros((n, 2), dtype=np.int64)
    wbase = (np.cumsum(per_size) - per_size).astype(np.int64)
    wcnt = np.zeros(len(sizes), dtype=np.int64)
    cgpus = sizes.astype(np.int64)
    events = 16 * total + 256
    ht, hx = np.zeros(events), np.zeros((events, 4), dtype=np.int64)
    crossings = 8 * total + 256 if rule == "las" else 1
    ct, cx = np.zeros(crossings), np.zeros((crossings, 2), dtype=np.int64)
    answer, answer_servers = np.zeros(2), np.zeros(total, dtype=np.int64)
    admitted, scratch_f = np.zeros(total + 1, dtype=np.int64), np.zeros(total + 1)
    scratch_i = np.zeros((5, max(total, len(sizes)) + 1), dtype=np.int64)
    out = _Output(SEGMENTS_PER_JOB * n + total + 1, SEGMENTS_PER_JOB * int(gpus.sum()) + total, servers, ENTRIES)
    entries: list[tuple[int, ...] | None] = []  # each memo entry's servers per vertex (None: did not fit)
    alphas = AlphaByShape(timing, cluster.pool_list[0].cluster)
    bar = tqdm(total=n, disable=not progress, desc=f"simulate {scheduler.name}", unit="job")
    def bound() -> tuple:
        """The kernel's arguments (again after an output array grew)."""
        return (jobf, jobi, arrival, thresholds, pf, pi, jf, ji, job_gpu, free, mask, zob, pz, running, rows, row_of,
                wprio, wx, wbase, wcnt, cgpus, ht, hx, ct, cx, out.mkeys, out.mvals, out.e_key, out.e_plan,
                out.e_free, out.e_fits, out.e_alpha, out.e_off, out.e_servers, answer, answer_servers, out.seg_job,
                out.seg_num, out.seg_entry, out.seg_goff, out.seg_gpus, admitted, scratch_f, scratch_i, S, T)

    arguments, run = bound(), jit.run
    while True:
        if S[jit.NENTRY] >= len(out.e_plan) or S[jit.ENTRY_SERVERS] + total > len(out.e_servers):
            out.grow_entries(int(S[jit.NENTRY]) + 1, int(S[jit.ENTRY_SERVERS]) + total, jit.rehash)
            arguments = bound()
        status = run(*arguments)
        if status == jit.DONE:
            break
        if status == jit.MISS:
            i = int(S[jit.PENDING])
            found = checked_place(placer, alphas, cluster, views[i], tuple(free.tolist()))
            answer[0] = 0.0 if found is None else 1.0
            if found is not None:
                answer[1] = found[1]
                answer_servers[:len(found[0].servers)] = found[0].servers
            entries.append(None if found is None else found[0].servers)
        elif status == jit.GROW:
            out.grow_segments(int(S[jit.NSEG] + S[jit.NRUN]) + 1, int(S[jit.SEG_GPUS]) + total)
            arguments = bound()
        else:
            bar.update(int(S[jit.COMPLETED] - S[jit.REPORTED]))
            S[jit.REPORTED] = S[jit.COMPLETED]
    bar.update(int(S[jit.COMPLETED] - S[jit.REPORTED]))
    bar.close()
    never = np.flatnonzero(np.isnan(jf[:, jit.F_END]))
    if len(never):
        raise RuntimeError(f"scheduler {scheduler.name!r} with placer {placer.name!r} never finished "
                           f"{len(never)} job(s), first {jobs[int(never[0])].job_id!r}")
    gpu_ids = _gpu_lists(out, int(S[jit.NSEG]), int(S[jit.SEG_GPUS]))
    return (_records(jobs, views, cluster, estimates, jf, ji, entries, gpu_ids, jit),
            _segments(jobs, entries, out, gpu_ids, int(S[jit.NSEG])))


def _gpu_lists(out: _Output, count: int, used: int) -> list[tuple[int, ...]]:
    """The GPU ids of every segment, as tuples (a record shares its last segment's)."""
    ids = out.seg_gpus[:used].tolist()
    starts = out.seg_goff[:count].tolist()
    return [tuple(ids[a:b]) for a, b in zip(starts, starts[1:] + [used])]


def _segments(jobs: list[Job], entries: list[tuple[int, ...] | None], out: _Output, gpu_ids: list[tuple[int, ...]],
              count: int) -> SegmentTable:
    table = SegmentTable()
    table.extend([jobs[i].job_id for i in out.seg_job[:count].tolist()], out.seg_num[:count],
                 [entries[e] for e in out.seg_entry[:count].tolist()], gpu_ids)
    return table


def _records(jobs: list[Job], views: list[JobView], cluster: Cluster, estimates: list[EmptyClusterEstimate],
             jf: np.ndarray, ji: np.ndarray, entries: list[tuple[int, ...] | None], gpu_ids: list[tuple[int, ...]],
             jit: Any) -> RecordTable:
    records = RecordTable(len(jobs))
    pool = cluster.pool_list[0].name
    first_start, end, alpha, restarted, ran = (jf[:, column].tolist() for column in (
        jit.F_FIRST_START, jit.F_END, jit.F_ALPHA, jit.F_RESTARTED, jit.F_RAN))
    preemptions, entry, last = (ji[:, column].tolist() for column in (jit.I_PREEMPTIONS, jit.I_ENTRY,
                                                                     jit.I_LAST_SEGMENT))
    for i, (job, view, estimate) in enumerate(zip(jobs, views, estimates)):
        put_preempted(records, i, job, view, estimate, entries[entry[i]], gpu_ids[last[i]], pool, first_start[i],
                      end[i], alpha[i], restarted[i], ran[i], preemptions[i])
    return records
