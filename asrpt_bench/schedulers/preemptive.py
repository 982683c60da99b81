"""What a preemptive scheduler is: the context it decides in, and the admission walk that srtf, psjf and
las2d share (the price of a suspension is the simulator's: core.PreemptionPrice), with the cost-aware
preemption rule of the size-based ones (`preempt_rule`).

A scheduler with `preemptive = True` is run by sim/preemptive.py. At every decision instant it sees
every released unfinished job, may suspend running jobs (`ctx.suspend`) and start waiting ones
(`ctx.propose` / `ctx.start`); the simulator alone changes cluster state and keeps each job's progress.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from typing import ClassVar, Mapping, Protocol, Sequence

import numpy as np

from ..core import Cluster
from ..params import Params, param
from ..rules import one_of
from .bounds import BoundEntry, RunningBounds
from .views import JobView, Proposal

PREEMPT_RULES = ("always", "net_gain")


@dataclass(frozen=True)
class PreemptRuleParams(Params):
    """When a size-based preemptive scheduler (srtf, srtf_oracle, psjf, psjf_oracle) suspends a running job."""

    preempt_rule: str = param("always", one_of(*PREEMPT_RULES),
                              "always: whenever the walk ranks it out; net_gain: only when its estimated remaining "
                              "seconds exceed those of every job admitted in its stead plus the restart price")

class PreemptiveContext(Protocol):
    """The simulator's side of one preemptive decision at `now`."""

    now: float
    total_gpus: int
    restart_s: float
    """Seconds a resumed job holds its GPUs before it progresses again (the run's preemption price)."""

    def progress(self, job: JobView) -> float:
        """Iterations done so far (fluid: fractions count)."""
        ...

    def run_seconds(self, job: JobView) -> float:
        """Seconds the job has run making progress so far (restarts excluded)."""
        ...

    def running_states(self, jobs: list[JobView]) -> list[tuple[bool, float, float]]:
        """(suspendable, progress, run_seconds) of each of these running jobs, in one pass; suspendable
        means past its protected window (restart, then min_run_s of progress)."""
        ...

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(input orders, suspendable, progress, run_seconds) of every running job, as four arrays."""
        ...

    def running_states_of(self, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(progress, run_seconds) of the running jobs with these input orders, as two arrays in that order."""
        ...

    def protected_until(self, job: JobView) -> float:
        """When a running job's protected window ends: it is suspendable at instants >= this one."""
        ...

    def protection_ended(self) -> list[JobView]:
        """The running jobs whose protected window ended at this instant."""
        ...

    def suspend(self, job: JobView) -> None:
        ...

    def propose(self, job: JobView) -> Proposal | None:
        """The placer's placement on the free GPUs now (on a cluster of pools, in the pool its pool choice
        picks), or None."""
        ...

    def propose_in(self, job: JobView, pool: int) -> Proposal | None:
        """The placer's placement in pool `pool` (its index) only, or None (on one pool: `propose`)."""
        ...

    def choose_pool(self, job: JobView, room: list[int]) -> int | None:
        """The pool the run's pool choice picks for `job` if pool p had `room[p]` GPUs, judging pools by the
        job's empty-pool estimates (placement.pool; no placement is made), or None if none can take it."""
        ...

    def start(self, proposal: Proposal) -> None:
        ...


class PreemptiveScheduler(Protocol):
    name: str
    oracle: bool
    preemptive: bool

    def reset(self, cluster: Cluster) -> None:
        ...

    def on_arrival(self, job: JobView, now: float) -> None:
        ...

    def on_completion(self, job: JobView, now: float) -> None:
        ...

    def decide(self, ctx: PreemptiveContext) -> None:
        """Suspend and start jobs at ctx.now."""
        ...

    def next_timer(self) -> float | None:
        """The next instant this scheduler needs a decision without any other event, if any."""
        ...


ONE_BY_ONE = 8
"""A bounded walk recomputes up to this many running jobs' priorities one by one, more in one vectorised step."""

Entry = tuple[float, float, int, JobView]
"""(priority, release, input order, job): lower first; input order is unique, so jobs never compare."""


class JobColumns:
    """Numbers per job, indexed by input order, in numpy arrays that grow as jobs arrive, so a decision
    reads those of all running jobs in one step. Each column's dtype is that of its default."""

    def __init__(self, **defaults: float) -> None:
        self._defaults = defaults
        self.arrays = {name: np.full(0, value) for name, value in defaults.items()}

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    def set(self, order: int, **values: float) -> None:
        size = len(self.arrays[next(iter(self.arrays))])
        if order >= size:
            grown = max(2 * size, order + 1, 64)
            for name, array in self.arrays.items():
                self.arrays[name] = np.concatenate([array, np.full(grown - size, self._defaults[name])])
        for name, value in values.items():
            self.arrays[name][order] = value


def admission_walk(running: Sequence[BoundEntry], waiting: dict[int, list[Entry]], rank_of: Mapping[int, int],
                   idle: int) -> tuple[list[int], list[JobView]]:
    """The walk over suspendable running jobs (entries (priority, rank, input order, GPUs) sorted by (priority,
    rank); a job's rank is its place in (release, input order), `rank_of[order]`) and waiting entries (sorted
    lists per GPU count) with a budget of the `idle` GPUs and those of the walked running jobs: the places of
    the running jobs not kept (ascending) and the waiting jobs admitted, in walk order. Between two waiting
    entries the walk keeps, with one bisection on the GPU prefix sums, the longest run of running jobs that
    fits and skips the one after it, so its Python steps grow with the waiting jobs it admits and the running
    jobs it skips, not with the running jobs it keeps; it reads the running entries as they are sorted (no
    columns built)."""
    count = len(running)
    prefix = list(accumulate(map(itemgetter(3), running), initial=0))
    budget = idle + prefix[-1]
    dropped: list[int] = []
    heads = [(queue[0], size, 0) for size, queue in waiting.items() if queue and size <= budget]
    heapq.heapify(heads)
    admitted: list[JobView] = []
    r = 0
    while budget > 0:
        while heads and heads[0][1] > budget:
            heapq.heappop(heads)
        # how many running jobs come before the best waiting head in (priority, rank): a (priority, rank)
        # pair sorts before the entries it begins, and ranks are unique
        end = bisect.bisect_left(running, (heads[0][0][0], rank_of[heads[0][0][2]]), r) if heads else count
        if end > r:
            while r < end and budget > 0:
                stop = bisect.bisect_right(prefix, prefix[r] + budget, r, end + 1) - 1
                budget -= prefix[stop] - prefix[r]
                r = stop
                if r < end and budget > 0:  # the job at r needs more than what is left: skipped
                    dropped.append(r)
                    r += 1
            continue
        if not heads:
            break
        entry, size, position = heapq.heappop(heads)
        admitted.append(entry[3])
        budget -= size
        queue = waiting[size]
        if position + 1 < len(queue):
            heapq.heappush(heads, (queue[position + 1], size, position + 1))
    dropped.extend(range(r, count))
    return dropped, admitted


class AdmissionScheduler:
    """Gang admission by priority: at each decision, walk the released unfinished jobs in (priority,
    release, input order) with all G GPUs as the budget and admit each job whose GPU count fits in what
    is left (skip, do not block). Running jobs inside their protected window are admitted first and
    consume budget whatever their priority. Running jobs not admitted are suspended; admitted running
    jobs keep their GPUs; admitted waiting jobs are then placed in walk order (one the placer cannot
    place waits for the next decision).

    Subclasses give `priority(job, progress, run_seconds)`, its vectorised form `priorities` over the
    running jobs and the per-job numbers it reads (`job_columns`). Waiting jobs sit in one sorted list per
    GPU count with the priority they had when they stopped, so a walk visits only waiting jobs that fit;
    running jobs are ranked in one vectorised step per decision, and the walk keeps each run of them
    between two admitted waiting jobs at once (admission_walk).
    """

    oracle = False
    preemptive = True
    preempt_rule = "always"
    settles: ClassVar[bool] = False
    """True when, between decisions, no running job's priority grows and no waiting job's changes (srtf:
    remaining time only shrinks while a job runs; las2d: constant between its own timers). Then a decision
    whose only news is that some protected windows ended changes nothing unless one of those jobs ranks
    after a waiting job (the walk is skipped): while nothing else happens, a waiting job that lost the last
    walk can only lose again."""

    bounded: ClassVar[bool] = False
    """True when `bound_until` says how long a running job's priority, computed at one instant, bounds its
    later ones from above: the walk then looks only at the running jobs whose bound does not rank them
    before the best waiting job (`_bounded_walk`)."""

    exact_bounds: ClassVar[bool] = False
    """True when, moreover, a running job's priority stays equal to its bound until the bound expires
    (psjf: fixed at arrival; las2d: its queue until it nears the next threshold), so a walk recomputes only
    the expired bounds; srtf's remaining time shrinks below its bound, so it recomputes every bound that does
    not rank its job before the best waiting job."""

    def __init__(self, name: str, preempt_rule: str = PreemptRuleParams.preempt_rule) -> None:
        PreemptRuleParams(preempt_rule=preempt_rule).check("scheduler")
        self.name = name
        self.preempt_rule = preempt_rule
        self._clear()

    def _clear(self) -> None:
        self.waiting_: dict[int, list[Entry]] = {}
        self.running_: dict[int, JobView] = {}
        self.entries_: dict[int, Entry] = {}
        self.settled_ = False  # the last walk was applied whole and only protection windows ended since
        # known: the iterations the scheduler knows (predicted, or true for an oracle); placed_alpha: the
        # per-iteration time of a running job's current placement (what net_gain prices its rest in)
        self.columns_ = JobColumns(gpus=0, rank=0, known=0.0, alpha_min=0.0, placed_alpha=0.0,
                                   **self.column_defaults())
        self.ranks_: dict[int, int] = {}  # input order -> rank, as `columns_["rank"]` (read one job at a time)
        self.last_arrival_: tuple[float, int] | None = None
        self.arrivals_ = 0
        self.bounded_ = self.bounded and self.preempt_rule == "always"
        # bounds that hold for as long as their job runs (srtf, psjf): no expiry to compute or book
        self.forever_ = (type(self).bound_until is AdmissionScheduler.bound_until
                         and type(self).bounds_until is AdmissionScheduler.bounds_until)
        self.bounds_ = RunningBounds()

    def known_iterations(self, job: JobView) -> float:
        """The iterations the scheduler knows: predicted, or true for an oracle."""
        return job.iterations if self.oracle else job.predicted_iterations  # type: ignore[return-value]

    def reset(self, cluster: Cluster) -> None:
        self._clear()

    def column_defaults(self) -> dict[str, float]:
        """The per-job numbers `priorities` reads, with their defaults (and so dtypes)."""
        return {}

    def job_columns(self, job: JobView) -> dict[str, float]:
        """This job's values of column_defaults' columns, set at its arrival."""
        return {}

    def priority(self, job: JobView, progress: float, run_seconds: float) -> float:
        raise NotImplementedError

    def bound_until(self, job: JobView, run_seconds: float, now: float) -> float:
        """Until when the priority of a running job that has run `run_seconds` by `now` bounds its priority
        from above while it keeps running (math.inf: for as long as it runs)."""
        return math.inf

    def bounds_until(self, orders: np.ndarray, run_seconds: np.ndarray, now: float) -> np.ndarray:
        """`bound_until` of the running jobs with these input orders, elementwise (the same floats): infinite
        for the default `bound_until`; a subclass that bounds for less gets it job by job unless it gives its own
        vectorised form (as las2d does)."""
        if type(self).bound_until is AdmissionScheduler.bound_until:
            return np.full(len(orders), math.inf)
        running = self.running_
        return np.array([self.bound_until(running[order], seconds, now)
                         for order, seconds in zip(orders.tolist(), run_seconds.tolist())], dtype=float)

    def priorities(self, orders: np.ndarray, progress: np.ndarray, run_seconds: np.ndarray) -> np.ndarray:
        """`priority` of the running jobs with these input orders, elementwise (the same floats)."""
        raise NotImplementedError

    def on_arrival(self, job: JobView, now: float) -> None:
        """Queue the job. Its rank, which breaks priority ties, is its place among the arrivals: they come in
        (release, input order), as the simulator delivers them."""
        self.settled_ = False
        arrival = (job.release, job.order)
        if self.last_arrival_ is not None and not arrival > self.last_arrival_:
            raise RuntimeError(f"scheduler {self.name!r}: job {job.job_id!r} arrived out of (release, input order)")
        self.last_arrival_ = arrival
        self.arrivals_ += 1
        self.ranks_[job.order] = self.arrivals_
        self.columns_.set(job.order, gpus=job.gpus, rank=self.arrivals_, known=self.known_iterations(job),
                          alpha_min=job.alpha_min, **self.job_columns(job))
        self._enqueue(job, self.priority(job, 0.0, 0.0))

    def on_completion(self, job: JobView, now: float) -> None:
        self.settled_ = False
        del self.running_[job.order]
        if self.bounded_:
            self.bounds_.remove(job)

    def next_timer(self) -> float | None:
        return None

    def _enqueue(self, job: JobView, priority: float) -> None:
        entry = (priority, job.release, job.order, job)
        self.entries_[job.order] = entry
        bisect.insort(self.waiting_.setdefault(job.gpus, []), entry)

    def _dequeue(self, job: JobView) -> None:
        queue = self.waiting_[job.gpus]
        del queue[bisect.bisect_left(queue, self.entries_.pop(job.order))]

    def decide(self, ctx: PreemptiveContext) -> None:
        if self.settles and self.settled_ and not self._may_gain(ctx):
            return
        self.settled_ = self._walk(ctx)

    def _may_gain(self, ctx: PreemptiveContext) -> bool:
        """After a settled walk: whether a job whose protected window just ended ranks after some waiting job
        (only then can the walk change anything)."""
        ended = ctx.protection_ended()
        heads = [queue[0] for queue in self.waiting_.values() if queue]
        if not ended or not heads:
            return False
        worst = max((self.priority(job, progress, run_seconds), job.release, job.order)
                    for job, (_, progress, run_seconds) in zip(ended, ctx.running_states(ended)))
        return min(heads)[:3] < worst

    def _walk(self, ctx: PreemptiveContext) -> bool:
        """The admission walk, applied; whether every admitted job was placed (the walk then settled).

        Under `preempt_rule="net_gain"` a running job the walk would suspend keeps its GPUs, as a protected
        one does, unless its estimated remaining seconds on its current placement exceed, by more than the
        restart price, the estimated remaining seconds (at alpha~min) of every waiting job the walk admits;
        the walk is repeated with the jobs so kept until every job it suspends passes that test (the kept
        set only grows, so this ends)."""
        if self.bounded_:
            return self._bounded_walk(ctx)
        orders, suspendable, progress, run_seconds = ctx.running_arrays()
        gpus, rank_of = self.columns_["gpus"], self.columns_["rank"]
        held = ~suspendable
        while True:
            budget = ctx.total_gpus - (int(np.add.reduce(gpus[orders[held]])) if np.logical_or.reduce(held) else 0)
            if not any(queue and size <= budget for size, queue in self.waiting_.items()):
                return True  # no waiting job fits even in the whole budget; the running jobs, which do, all stay
            free = ~held
            candidates = orders[free]
            priority = self.priorities(candidates, progress[free], run_seconds[free])
            rank = rank_of[candidates]
            ranked = np.lexsort((rank, priority))
            candidates = candidates[ranked]
            walked = gpus[candidates]
            dropped, admitted = admission_walk(list(zip(priority[ranked].tolist(), rank[ranked].tolist(),
                                                        candidates.tolist(), walked.tolist())),
                                               self.waiting_, self.ranks_, budget - int(np.add.reduce(walked)))
            if self.preempt_rule == "always" or not dropped or not admitted:
                break
            losing = self._no_net_gain(ctx, candidates[dropped], progress[free][ranked][dropped], admitted)
            if not losing.any():
                break
            held |= np.isin(orders, candidates[dropped][losing])
        for order in candidates[dropped].tolist():
            self._suspend(self.running_[order], ctx)
        return self._admit(admitted, ctx)

    def _bounded_walk(self, ctx: PreemptiveContext) -> bool:
        """The walk of a scheduler that bounds its running jobs' priorities (`bounded`), on the bounds kept in
        `bounds_` (schedulers/bounds.py): the running jobs whose valid bound ranks them before the best
        waiting job that fits are kept without a look (only their GPUs count); the others get their exact
        priority now and are walked with the waiting jobs as by `_walk` (the same decisions)."""
        bounds, running, now = self.bounds_, self.running_, ctx.now
        due = bounds.unhold_due(now)
        if due:
            self._bound(due, ctx)
        budget = ctx.total_gpus - bounds.held_gpus
        heads = [queue[0] for size, queue in self.waiting_.items() if queue and size <= budget]
        if not heads:
            return True  # no waiting job fits even in the whole budget; the running jobs, which do, all stay
        best = min(heads)
        first = (best[0], self.ranks_[best[2]])
        stale = bounds.take(first, now, self.exact_bounds)
        if len(stale) > ONE_BY_ONE:
            self._bound_all(stale, ctx)
        elif stale:
            self._bound([running[order] for order in stale], ctx)
        ranked = bounds.after(first)
        dropped, admitted = admission_walk(ranked, self.waiting_, self.ranks_, budget - bounds.suspendable_gpus)
        for place in dropped:
            self._suspend(running[ranked[place][2]], ctx)
        return self._admit(admitted, ctx)

    def _bound(self, jobs: list[JobView], ctx: PreemptiveContext) -> None:
        """Sort suspendable running jobs into `bounds_` one by one, each with its exact priority now."""
        put, priority, ranks, now = self.bounds_.put, self.priority, self.ranks_, ctx.now
        for job, (_, progress, run_seconds) in zip(jobs, ctx.running_states(jobs)):
            put((priority(job, progress, run_seconds), ranks[job.order], job.order, job.gpus),
                math.inf if self.forever_ else self.bound_until(job, run_seconds, now))

    def _bound_all(self, orders: list[int], ctx: PreemptiveContext) -> None:
        """`_bound` for many running jobs: their states read from their rows of the running table and their
        priorities in one vectorised step each (`priorities` gives the same floats as `priority`)."""
        columns = self.columns_
        picked = np.array(orders, dtype=np.intp)
        progress, run_seconds = ctx.running_states_of(picked)
        priority, rank = self.priorities(picked, progress, run_seconds), columns["rank"][picked]
        ranked = np.lexsort((rank, priority))  # sorted here, the entries merge into the list as one run
        picked, priority, rank = picked[ranked], priority[ranked], rank[ranked]
        untils = None if self.forever_ else self.bounds_until(picked, run_seconds[ranked], ctx.now)
        self.bounds_.put_all(list(zip(priority.tolist(), rank.tolist(), picked.tolist(),
                                      columns["gpus"][picked].tolist())), untils)

    def _suspend(self, job: JobView, ctx: PreemptiveContext) -> None:
        ctx.suspend(job)
        del self.running_[job.order]
        if self.bounded_:
            self.bounds_.remove(job)
        self.on_suspend(job, ctx)

    def _admit(self, admitted: list[JobView], ctx: PreemptiveContext) -> bool:
        """Place and start the admitted waiting jobs in walk order; whether every one was placed."""
        placed = True
        for job in admitted:
            proposal = ctx.propose(job)
            if proposal is None:
                placed = False
                continue
            ctx.start(proposal)
            if self.preempt_rule == "net_gain":
                self.columns_.set(job.order, placed_alpha=proposal.alpha)
            self._dequeue(job)
            self.running_[job.order] = job
            if self.bounded_:
                self.bounds_.hold(job, ctx.protected_until(job))
            self.on_start(job, ctx)
        return placed

    def _no_net_gain(self, ctx: PreemptiveContext, displaced: np.ndarray, progress: np.ndarray,
                     admitted: list[JobView]) -> np.ndarray:
        """Per displaced running job: whether suspending it gains nothing against the admitted waiting jobs,
        i.e. its estimated remaining seconds on its current placement are at most the restart price plus the
        largest estimated remaining seconds of an admitted job. On one GPU this is the exchange argument:
        suspending j for k ends the two jobs at rem_k and rem_k + restart + rem_j instead of rem_j and
        rem_j + rem_k, so it lowers their sum of completion times only if rem_j > rem_k + restart."""
        columns = self.columns_
        rest = np.maximum(columns["known"][displaced] - progress, 0.0) * columns["placed_alpha"][displaced]
        longest = max(max(self.known_iterations(job) - ctx.progress(job), 0.0) * job.alpha_min for job in admitted)
        return rest <= longest + ctx.restart_s

    def on_suspend(self, job: JobView, ctx: PreemptiveContext) -> None:
        """Back to the waiting lists with the priority it stopped at (subclasses may also book it)."""
        self._enqueue(job, self.priority(job, ctx.progress(job), ctx.run_seconds(job)))

    def on_start(self, job: JobView, ctx: PreemptiveContext) -> None:
        """Hook for subclasses that book when a job runs again."""
