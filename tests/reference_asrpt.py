"""A plain, independent A-SRPT simulator that decides only at the documented decision instants
(docs/simulator.md, "Decision instants"): arrivals, real completions, real virtual completions, and
the delay expiry of a job the last decision held back for a consolidated placement.

It shares the placer, the timing model and the empty-cluster estimate with the simulator (they are not
what it checks) and nothing else: the virtual SRPT, the queue, the four dispatch rules and the event
loop are written here from their definitions, recomputed from scratch at every instant, for clarity
rather than speed (O(jobs) per instant). Tests compare its schedules with `simulate` record for record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Hashable

from asrpt_bench.core import Cluster, Job
from asrpt_bench.placement.base import Placer
from asrpt_bench.sim import empty_cluster_estimate
from asrpt_bench.timing import DEFAULT_TIMING, TimingModel


@dataclass(frozen=True)
class Options:
    """A-SRPT's parameters, as in ASRPTParams (`oracle`: true iterations instead of predictions)."""

    tau: float = 1.0
    comm_heavy: float = 1.5
    consolidation_test: str = "alpha"
    delay_origin: str = "enqueue"
    srpt_tiebreak: str = "release_id"
    dispatch: str = "strict"
    eligibility: str = "virtual"
    overrun: str = "none"
    min_estimate_s: float = 0.0
    oracle: bool = False


@dataclass
class _Job:
    job: Job
    order: int
    known: float          # iterations the scheduler knows (predicted, or true for the oracle)
    alpha_min: float
    alpha_max: float
    min_servers: int
    size: float           # virtual size p~
    enqueued: float = math.nan
    deadline: float | None = None
    start: float | None = None
    end: float = math.nan
    alpha: float = math.nan
    placement: tuple[int, ...] = ()
    virtual_done: float | None = None
    virtual_rank: int = -1

    @property
    def gpus(self) -> int:
        return self.job.plan.gpus


class _VirtualSRPT:
    """Single-machine preemptive SRPT on the virtual sizes, advanced event by event: remaining work is
    booked at arrivals (the running job's progress since the last virtual event) and completions."""

    def __init__(self, jobs: list[_Job], tiebreak) -> None:
        self.arrivals = sorted(jobs, key=lambda j: (j.job.release, j.order))
        self.next_arrival = 0
        self.remaining: dict[int, float] = {}
        self.by_order = {j.order: j for j in jobs}
        self.anchor = 0.0
        self.tiebreak = tiebreak
        self.completed: list[tuple[_Job, float]] = []

    def running(self) -> int | None:
        if not self.remaining:
            return None
        return min(self.remaining, key=lambda o: (self.remaining[o], self.tiebreak(self.by_order[o])))

    def next_completion(self) -> float | None:
        top = self.running()
        return None if top is None else self.anchor + self.remaining[top]

    def advance(self, now: float) -> None:
        """Every virtual event up to `now` (completions before arrivals at one instant)."""
        while True:
            finish = self.next_completion()
            arrival = self.arrivals[self.next_arrival] if self.next_arrival < len(self.arrivals) else None
            if arrival is not None and arrival.job.release > now:
                arrival = None
            if finish is not None and finish <= now and (arrival is None or finish <= arrival.job.release):
                top = self.running()
                del self.remaining[top]
                self.anchor = finish
                self.completed.append((self.by_order[top], finish))
            elif arrival is not None:
                t = arrival.job.release
                top = self.running()
                if top is not None and t > self.anchor:
                    left = self.remaining[top] - (t - self.anchor)
                    if t + left <= t:
                        del self.remaining[top]
                        self.completed.append((self.by_order[top], t))
                    else:
                        self.remaining[top] = left
                self.anchor = t
                self.remaining[arrival.order] = arrival.size
                self.next_arrival += 1
            else:
                return

    def remaining_at(self, now: float) -> dict[int, float]:
        left = dict(self.remaining)
        top = self.running()
        if top is not None:
            left[top] = max(left[top] - (now - self.anchor), 0.0)
        return left


@dataclass
class _Instant:
    """One decision: the time, the idle GPUs per server, the running jobs and who was held back."""

    now: float
    free: list[int]
    running: list[_Job]
    held: list[float] = field(default_factory=list)


def simulate_reference(jobs: list[Job], cluster: Cluster, placer: Placer, options: Options = Options(),
                       predictions: dict[Hashable, float] | None = None,
                       timing: TimingModel = DEFAULT_TIMING) -> dict[Hashable, tuple[float, float, float, tuple]]:
    """job_id -> (eligible, start, end, placement servers) of A-SRPT with `options` on `jobs`."""
    G = cluster.total_gpus
    state: list[_Job] = []
    for order, job in enumerate(jobs):
        estimate = empty_cluster_estimate(job.plan, cluster, timing)
        known = float(job.iterations) if options.oracle or predictions is None else float(predictions[job.job_id])
        duration = known * estimate.alpha_min
        if options.min_estimate_s > 0:
            duration = max(duration, options.min_estimate_s)
        state.append(_Job(job, order, known, estimate.alpha_min, estimate.alpha_max, estimate.min_servers,
                          job.plan.gpus / G * duration))

    def tiebreak(j: _Job) -> tuple:
        return (j.job.release, j.order) if options.srpt_tiebreak == "release_id" else (j.order,)

    def heavy(j: _Job) -> bool:
        ratio = (math.inf if j.alpha_max > 0 else 1.0) if j.alpha_min == 0 else j.alpha_max / j.alpha_min
        return ratio >= options.comm_heavy

    def consolidated(j: _Job, alpha: float, servers: tuple[int, ...]) -> bool:
        if options.consolidation_test == "alpha":
            return alpha <= j.alpha_min * (1 + 1e-9)
        if options.consolidation_test == "servers":
            return len(set(servers)) <= j.min_servers
        return alpha < options.comm_heavy * j.alpha_min

    def estimated(j: _Job) -> float:
        return max(j.known * j.alpha_min, options.min_estimate_s)

    def estimated_end(j: _Job, now: float) -> float:
        length = max(j.known * j.alpha, options.min_estimate_s)
        if j.start + length >= now:
            return j.start + length
        if options.overrun == "double" and length > 0:
            while j.start + length < now:
                length *= 2
            return j.start + length
        return now

    virtual = _VirtualSRPT(state, tiebreak)
    releases = sorted({j.job.release for j in state})
    free = [cluster.gpus_per_server] * cluster.servers
    running: list[_Job] = []
    pending: list[_Job] = []       # virtually finished, not started, in virtual completion order
    held: list[float] = []
    now = -math.inf
    while any(j.start is None for j in state) or running:
        candidates = [t for t in releases if t > now][:1] + [j.end for j in running]
        upcoming = virtual.next_completion()
        if upcoming is not None:
            candidates.append(upcoming)
        candidates += [d for d in held if d > now]
        now = min(candidates)
        for j in [j for j in running if j.end <= now]:
            running.remove(j)
            for h in j.placement:
                free[h] += 1
        arrived = [j for j in state if j.job.release == now]
        seen = len(virtual.completed)
        virtual.advance(now)
        for rank, (j, finish) in enumerate(virtual.completed[seen:], seen):
            j.virtual_done, j.virtual_rank = finish, rank
            if options.eligibility == "virtual" and j.start is None:
                j.enqueued = finish
                if options.delay_origin == "enqueue":
                    j.deadline = finish + options.tau * j.size
                pending.append(j)
        for j in arrived:
            if options.eligibility == "release":
                j.enqueued = now
                if options.delay_origin == "enqueue":
                    j.deadline = now + options.tau * j.size
        instant = _Instant(now, free, running)
        queue = _queue(state, pending, virtual, now, options, tiebreak)
        _dispatch(queue, instant, options, cluster, placer, timing, heavy, consolidated, estimated, estimated_end)
        for j in queue:
            if j.start == now and j in pending:
                pending.remove(j)
        held = instant.held
    return {j.job.job_id: (j.enqueued, j.start, j.end, j.placement) for j in state}


def _queue(state: list[_Job], pending: list[_Job], virtual: _VirtualSRPT, now: float, options: Options,
           tiebreak) -> list[_Job]:
    """The dispatch order now: the virtually finished jobs in virtual completion order, then (eligibility
    release) the released, virtually unfinished ones by (remaining virtual work now, tiebreak)."""
    if options.eligibility == "virtual":
        return list(pending)
    finished = sorted((j for j in state if j.start is None and j.virtual_done is not None),
                      key=lambda j: j.virtual_rank)
    left = virtual.remaining_at(now)
    unfinished = sorted((j for j in state if j.start is None and j.virtual_done is None and j.job.release <= now),
                        key=lambda j: (left[j.order], tiebreak(j)))
    return finished + unfinished


def _dispatch(queue: list[_Job], instant: _Instant, options: Options, cluster: Cluster, placer: Placer,
              timing: TimingModel, heavy, consolidated, estimated, estimated_end) -> None:
    now, free = instant.now, instant.free

    def idle() -> int:
        return sum(free)

    def try_start(j: _Job, at_head: bool) -> bool:
        if at_head and j.deadline is None:
            j.deadline = now + options.tau * j.size
        if j.gpus > idle():
            return False
        placement = placer.place(j.job.plan, tuple(free), cluster)
        if placement is None:
            return False
        alpha = timing.alpha(j.job.plan, placement, cluster)
        if heavy(j) and not consolidated(j, alpha, placement.servers):
            if j.deadline is None:
                return False
            if now < j.deadline:
                instant.held.append(j.deadline)
                return False
        for h in placement.servers:
            free[h] -= 1
        j.start, j.alpha, j.placement = now, alpha, tuple(placement.servers)
        j.end = now + j.job.iterations * alpha
        instant.running.append(j)
        return True

    def hold_until(j: _Job) -> float:
        return j.deadline if heavy(j) and j.deadline is not None and j.deadline > now else now

    k = 0
    while k < len(queue) and try_start(queue[k], at_head=True):
        k += 1
    if k == len(queue) or options.dispatch == "strict":
        return
    head, rest = queue[k], queue[k + 1:]
    if options.dispatch == "greedy":
        for j in rest:
            if idle() == 0:
                return
            try_start(j, at_head=False)
    elif options.dispatch == "easy":
        if not rest or idle() == 0:
            return
        ends = sorted((estimated_end(r, now), r.gpus) for r in instant.running)
        available, shadow = idle(), hold_until(head)
        for end, gpus in ends:
            if available >= head.gpus and end > shadow:
                break
            available, shadow = available + gpus, max(shadow, end)
        extra = available - head.gpus
        for j in rest:
            if idle() == 0:
                return
            if j.gpus > idle():
                continue
            by_shadow = now + estimated(j) <= shadow
            if (by_shadow or j.gpus <= extra) and try_start(j, at_head=False) and not by_shadow:
                extra -= j.gpus
    else:
        _conservative(queue[k:], instant, estimated, estimated_end, hold_until, try_start)


def _conservative(queue: list[_Job], instant: _Instant, estimated, estimated_end, hold_until, try_start) -> None:
    """Each job in order takes the earliest interval where the free-GPU count (idle now, plus running
    jobs at their estimated ends, minus earlier reservations) covers it; a job whose interval starts now
    starts now (the blocked head excepted); the pass stops once no GPU is idle."""
    now, free = instant.now, instant.free
    idle_now = sum(free)
    changes: dict[float, int] = {now: 0}   # time -> change of the free-GPU count there
    for r in instant.running:
        end = estimated_end(r, now)
        changes[end] = changes.get(end, 0) + r.gpus
    for position, j in enumerate(queue):
        length = estimated(j)
        begin = _earliest(changes, idle_now, j.gpus, length, hold_until(j))
        if position > 0 and begin <= now and j.gpus <= sum(free):
            try_start(j, at_head=False)
        if sum(free) == 0:
            return
        if length > 0 and j.gpus > 0:
            changes[begin] = changes.get(begin, 0) - j.gpus
            changes[begin + length] = changes.get(begin + length, 0) + j.gpus


def _earliest(changes: dict[float, int], idle_now: int, gpus: int, length: float, not_before: float) -> float:
    """The earliest t >= not_before such that at least `gpus` are free from t to t + length (at t when
    length is 0): a sweep over the steps of the free-GPU count."""
    times = sorted(changes)
    level, run_start = idle_now, None
    for k, t in enumerate(times):
        level += changes[t]
        if k + 1 < len(times) and times[k + 1] <= not_before:
            continue   # this step ends before not_before
        if level >= gpus:
            if run_start is None:
                run_start = max(t, not_before)
        elif run_start is not None:
            if t >= run_start + length:
                return run_start
            run_start = None
    assert run_start is not None, "the last step holds every GPU"
    return run_start
