"""A-SRPT (Algorithm 1; docs/paper.md, section 5).

Each job gets a virtual single-machine size p~_i = (g_i / G) * n~_i * alpha~min_i; preemptive SRPT
(or, with virtual="psjf", preemptive shortest job first) on those sizes decides when a job becomes eligible (its virtual completion) and the order of the
pending queue. Real dispatch is non-preemptive and strictly head-of-line: the head starts when it
fits, except that a communication-heavy head (alpha_max / alpha~min >= comm_heavy) whose current
placement is not consolidated enough may wait up to tau * p~_i for a better one.
Virtual work is never updated with real progress.
"""

from __future__ import annotations

import operator
from collections import deque
from dataclasses import dataclass
from typing import Callable, Hashable, Literal

from ..core import Cluster, ConfigError
from ..params import Params, param
from ..rules import flag, number, one_of, seconds
from .base import (DispatchContext, EventKind, JobView, Proposal, backfilling_only, inert_estimate_keys,
                   register_scheduler)
from .conservative import ConservativeFold
from .dispatch import DISPATCH_RULES, OVERRUN_POLICIES, Backfill, Candidates, Estimates
from .queues import CountQueue
from .virtual_psjf import VirtualPSJF
from .virtual_srpt import VirtualSRPT

ConsolidationTest = Literal["alpha", "servers", "ratio"]
DelayOrigin = Literal["enqueue", "head"]
SrptTiebreak = Literal["release_id", "id"]

CONSOLIDATION_TESTS = ("alpha", "servers", "ratio")
DELAY_ORIGINS = ("enqueue", "head")
SRPT_TIEBREAKS = ("release_id", "id")
ELIGIBILITY_RULES = ("virtual", "release", "reservation")
VIRTUAL_MACHINES = {"srpt": VirtualSRPT, "psjf": VirtualPSJF}
VIRTUAL_GPUS = ("speed_weighted", "count")
ALPHA_TOLERANCE = 1e-9
DEFAULT_COMM_HEAVY = 1.5
DEFAULT_TAU = 1.0


@dataclass(frozen=True)
class ASRPTParams(Params):
    """A-SRPT's parameters (asrpt and asrpt_oracle); docs/paper.md sections 5 and 10 for the open choices."""

    tau: float = param(DEFAULT_TAU, number(0), "delay budget tau * p~_i of a comm-heavy job (line 16)")
    comm_heavy: float = param(DEFAULT_COMM_HEAVY, number(1), "comm-heavy when alpha_max / alpha~min >= this (line 8)")
    consolidation_test: str = param("alpha", one_of(*CONSOLIDATION_TESTS),
                                    "when a comm-heavy job may start: alpha, servers or ratio")
    delay_origin: str = param("enqueue", one_of(*DELAY_ORIGINS),
                              "the delay budget runs from pending-queue entry (enqueue) or from reaching the head")
    srpt_tiebreak: str = param("release_id", one_of(*SRPT_TIEBREAKS),
                               "virtual SRPT ties by (release, input order) or input order only")
    backfill: bool = param(False, flag(), "older spelling of dispatch=greedy (an extension, not the paper's)")
    dispatch: str = param("strict", one_of(*DISPATCH_RULES),
                          "which pending jobs may start: strict (the paper's), easy, conservative, greedy")
    eligibility: str = param("virtual", one_of(*ELIGIBILITY_RULES),
                             "a job is dispatchable at its virtual completion (the paper's), at release, or "
                             "before its virtual completion where it delays no virtually completed job's "
                             "reservation")
    overrun: str = param("none", one_of(*OVERRUN_POLICIES),
                         "a running job past its estimated end: ends now (none) or its estimate doubles (double)")
    min_estimate_s: float = param(0.0, seconds(),
                                  "floor of every duration estimate, virtual sizes included (jobs predicted at 0)")
    virtual: str = param("srpt", one_of(*VIRTUAL_MACHINES),
                         "the virtual single machine's order: preemptive SRPT (the paper's) or PSJF (rank fixed "
                         "at arrival)")
    virtual_gpus: str = param("speed_weighted", one_of(*VIRTUAL_GPUS),
                              "a typed cluster's virtual machine: its GPUs in GPUs of its fastest type "
                              "(speed_weighted) or all counted alike (count, as if types were equal)")

    def inert_keys(self) -> list[str]:
        """overrun acts only on backfilling estimates (min_estimate_s also floors the virtual sizes)."""
        return inert_estimate_keys(self, ["overrun"])

    def inert_message(self, prefix: str, key: str) -> str:
        return backfilling_only(prefix, key, self.dispatch)

    def check_together(self, prefix: str) -> None:
        if self.backfill and self.dispatch not in ("strict", "greedy"):
            raise ConfigError(f"{prefix}.backfill=true means {prefix}.dispatch=greedy; it cannot be combined "
                              f"with {prefix}.dispatch={self.dispatch!r}")


@dataclass
class _Pending:
    """A job in the pending queue: when it became eligible and when its delay budget runs out."""

    job: JobView
    heavy: bool
    virtual_size: float
    enqueued: float
    deadline: float | None = None


@register_scheduler("asrpt", ASRPTParams)
class ASRPT:
    """Algorithm 1 with every open choice (docs/paper.md, sections 5 and 10) as a parameter (ASRPTParams).

    consolidation_test: "alpha" (a <= alpha~min * (1 + 1e-9)), "servers" (no more servers than the
    empty-cluster placement) or "ratio" (a / alpha~min < comm_heavy).
    delay_origin: the delay budget runs from pending-queue entry ("enqueue") or from reaching the
    head ("head"). srpt_tiebreak: virtual ties by (release, input order) or input order only.
    dispatch: "strict" is the paper's head-of-line rule; "greedy" (the older `backfill=True`), "easy"
    and "conservative" are EXTENSIONS (dispatch.py) that break the strict head-of-line proof argument.
    eligibility: "virtual" (the paper's): a job enters the pending queue at its virtual completion;
    "release": at its release, the queue then ordered by remaining virtual work (virtually finished
    jobs first, in virtual completion order); "reservation": as "virtual", and then a virtually
    unfinished job (in virtual rank order) may start at once if, by the estimates, it fits now and
    beside the running jobs and the conservative reservations of every pending job (`_start_in_holes`).
    overrun, min_estimate_s: estimates of the backfilling rules; min_estimate_s also floors the
    virtual duration n~ * alpha~min behind p~_i.
    virtual: the virtual machine's discipline, "srpt" (the paper's) or "psjf" (preemptive shortest job
    first on p~_i: a job's virtual rank is its size, fixed at arrival, so a partly served virtual job
    does not move ahead of a smaller later arrival as its remaining work shrinks).
    oracle: use true iterations instead of predictions (the perfect-prediction variant).
    """

    def __init__(self, tau: float = ASRPTParams.tau, comm_heavy: float = ASRPTParams.comm_heavy,
                 consolidation_test: ConsolidationTest = ASRPTParams.consolidation_test,
                 delay_origin: DelayOrigin = ASRPTParams.delay_origin,
                 srpt_tiebreak: SrptTiebreak = ASRPTParams.srpt_tiebreak, backfill: bool = ASRPTParams.backfill,
                 dispatch: str = ASRPTParams.dispatch, eligibility: str = ASRPTParams.eligibility,
                 overrun: str = ASRPTParams.overrun, min_estimate_s: float = ASRPTParams.min_estimate_s,
                 virtual: str = ASRPTParams.virtual, virtual_gpus: str = ASRPTParams.virtual_gpus,
                 oracle: bool = False) -> None:
        ASRPTParams(tau=tau, comm_heavy=comm_heavy, consolidation_test=consolidation_test, delay_origin=delay_origin,
                    srpt_tiebreak=srpt_tiebreak, backfill=backfill, dispatch=dispatch, eligibility=eligibility,
                    overrun=overrun, min_estimate_s=min_estimate_s, virtual=virtual,
                    virtual_gpus=virtual_gpus).check("scheduler")
        if not isinstance(oracle, bool):
            raise ConfigError(f"asrpt: oracle must be true or false, got {oracle!r}")
        self.name = "asrpt_oracle" if oracle else "asrpt"
        self.tau = float(tau)
        self.comm_heavy = float(comm_heavy)
        self.consolidation_test = consolidation_test
        self.delay_origin = delay_origin
        self.srpt_tiebreak = srpt_tiebreak
        self.dispatch_rule = "greedy" if backfill else dispatch
        self.backfill = self.dispatch_rule == "greedy"
        self.eligibility = eligibility
        self.overrun = overrun
        self.min_estimate_s = float(min_estimate_s)
        self.virtual = virtual
        self.virtual_gpus = virtual_gpus
        self.oracle = oracle
        # virtual (and reservation) eligibility: the pending queue is the whole dispatch queue, in virtual
        # completion order
        pending_only = eligibility in ("virtual", "reservation")
        if pending_only and self.dispatch_rule == "strict":
            self._dispatch = self._dispatch_strict
        elif pending_only and self.dispatch_rule in ("easy", "greedy"):
            self._dispatch = self._dispatch_indexed
        elif eligibility == "virtual":
            self._dispatch = self._dispatch_folded
        else:
            self._dispatch = self._dispatch_ordered
        self.one_pool_dispatch_ = self._dispatch
        self._clear(total_gpus=0)

    def reset(self, cluster: Cluster) -> None:
        if self.virtual_gpus != ASRPTParams.virtual_gpus and len(cluster.types) == 1:
            raise ConfigError(f"scheduler.virtual_gpus={self.virtual_gpus} acts on a cluster of several GPU types; "
                              f"this cluster has one ({cluster.describe()})")
        # conservative on several pools: the full pass of dispatch.Backfill (one profile per pool), not the fold
        folded = self.one_pool_dispatch_ == self._dispatch_folded
        self._dispatch = self._dispatch_ordered if folded and cluster.pooled else self.one_pool_dispatch_
        self._clear(cluster.speed_weighted_gpus if self.virtual_gpus == "speed_weighted" else cluster.total_gpus)

    def _clear(self, total_gpus: int) -> None:
        self.total_gpus_ = total_gpus
        self.virtual_: VirtualSRPT | VirtualPSJF = VIRTUAL_MACHINES[self.virtual]()
        self.waiting_: dict[Hashable, _Pending] = {}
        in_order = self.dispatch_rule == "conservative"
        self.pending_: deque[_Pending] | CountQueue[_Pending] = (
            deque() if self._dispatch == self._dispatch_strict else CountQueue(in_order=in_order))
        self.delay_deadlines_: list[float] = []
        self.backfill_ = Backfill(Estimates(self._iterations, self.overrun, self.min_estimate_s))
        if self.dispatch_rule == "easy":
            self.backfill_.candidates = Candidates()
        self.fold_: ConservativeFold[_Pending] = ConservativeFold(self.backfill_)

    def _iterations(self, job: JobView) -> float:
        return job.iterations if self.oracle else job.predicted_iterations

    def dispatch_counts(self) -> dict[str, float]:
        """Backfilled starts and reservation violations of the last run (dispatch.Backfill.counts)."""
        return self.backfill_.counts(self.dispatch_rule)

    def is_comm_heavy(self, job: JobView) -> bool:
        """Line 8: alpha_max / alpha~min >= comm_heavy."""
        return job.comm_ratio >= self.comm_heavy

    def virtual_size(self, job: JobView) -> float:
        """p~_i = (g_i / G) * n~_i * alpha~min_i (true n_i for the oracle variant); with min_estimate_s > 0
        the duration n~_i * alpha~min_i is floored at it first. On a cluster of several GPU types alpha~min is
        the job's fastest pool's and G the cluster's GPUs in GPUs of its fastest type (virtual_gpus=
        speed_weighted) or its GPU count (count; docs/theory.md, "A-SRPT on typed clusters")."""
        duration = (job.iterations if self.oracle else job.predicted_iterations) * job.alpha_min
        if self.min_estimate_s > 0:
            duration = max(duration, self.min_estimate_s)
        return job.gpus / self.total_gpus_ * duration

    def _tiebreak(self, job: JobView) -> tuple:
        return (job.release, job.order) if self.srpt_tiebreak == "release_id" else (job.order,)

    def on_arrival(self, job: JobView, now: float) -> None:
        size = self.virtual_size(job)
        entry = _Pending(job, self.is_comm_heavy(job), size, enqueued=now)
        if self.eligibility == "release" and self.delay_origin == "enqueue":
            entry.deadline = now + self.tau * size
        self.waiting_[job.job_id] = entry
        if self.eligibility == "release" and self.backfill_.candidates is not None:
            self._note_candidate(job)
        tiebreak = (job.release, job.order) if self.srpt_tiebreak == "release_id" else (job.order,)
        self._enqueue(self.virtual_.add(job.job_id, size, tiebreak, now))

    def _note_candidate(self, job: JobView) -> None:
        """A job joins the dispatch queue: EASY's candidates learn its GPU count and estimate."""
        candidates = self.backfill_.candidates
        if candidates is not None:
            candidates.add(job.gpus, self.backfill_.queued_duration(job))

    def _enqueue(self, completions: list[tuple[Hashable, float]]) -> None:
        """Move virtually completed jobs to the pending queue, in virtual completion order. Under
        eligibility "release" a job may have started before its virtual completion (then it is gone)
        and keeps its release as its enqueue time."""
        if not completions:
            return
        release = self.eligibility == "release"
        candidates = self.backfill_.candidates is not None
        for job_id, finish in completions:
            entry = self.waiting_.pop(job_id, None)
            if entry is None:
                continue
            if not release:
                entry.enqueued = finish
                if self.delay_origin == "enqueue":
                    entry.deadline = finish + self.tau * entry.virtual_size
                if candidates:
                    self._note_candidate(entry.job)
            if isinstance(self.pending_, CountQueue):
                self.pending_.append(entry, entry.job.gpus, self.backfill_.queued_lengths(entry.job))
            else:
                self.pending_.append(entry)

    def _consolidated(self, entry: _Pending, proposal: Proposal) -> bool:
        """Whether a comm-heavy job's placement is consolidated, judged in the pool it is in (its alpha~min
        there; on one pool, alpha~min)."""
        job = entry.job
        alpha_min = job.pool_alpha_min[proposal.pool] if len(job.pool_alpha_min) > 1 else job.alpha_min
        if self.consolidation_test == "alpha":
            return proposal.alpha <= alpha_min * (1 + ALPHA_TOLERANCE)
        if self.consolidation_test == "servers":
            return proposal.placement.servers_used <= job.min_servers
        return proposal.alpha < self.comm_heavy * alpha_min

    def _try_start(self, entry: _Pending, ctx: DispatchContext) -> bool:
        """Lines 14-17: start `entry` now unless it does not fit or waits for consolidation.

        A comm-heavy job whose budget has not started (delay_origin="head", a job behind the head
        under backfill) does not take an unconsolidated placement.
        """
        job = entry.job
        if job.gpus > ctx.idle_gpus:
            return False
        proposal = ctx.propose(job)
        if proposal is None:
            return False
        if entry.heavy and not self._consolidated(entry, proposal):
            if entry.deadline is None:
                return False
            if ctx.now < entry.deadline:
                self.delay_deadlines_.append(entry.deadline)
                return False
        ctx.start(proposal, eligible=entry.enqueued)
        if self.dispatch_rule in ("easy", "conservative") or self.eligibility == "reservation":
            self.backfill_.running.add(job, ctx.now, proposal.alpha, proposal.pool)
        return True

    def on_completion(self, job: JobView, now: float) -> None:
        self.backfill_.running.remove(job)
        self.fold_.completed(job, now)

    def dispatch(self, ctx: DispatchContext) -> None:
        self._enqueue(self.virtual_.advance_to(ctx.now))
        self.delay_deadlines_ = []
        self._dispatch(ctx)
        if self.eligibility == "reservation" and self.waiting_ and ctx.idle_gpus > 0:
            self._start_in_holes(ctx)

    def _start_in_holes(self, ctx: DispatchContext) -> None:
        """eligibility "reservation": after the dispatch rule's pass, every pending (virtually completed)
        job reserves, in queue order, the earliest interval of the GPU-count profile where it fits beside
        the running jobs and the earlier reservations (as conservative backfilling does); then each
        virtually unfinished job, in virtual rank order, starts now if it fits now and its estimated run
        fits beside all of them, so it delays no pending job's reservation. A comm-heavy one takes only
        a consolidated placement (its delay budget starts at its virtual completion)."""
        now, backfill = ctx.now, self.backfill_
        profile, hold_until = backfill.profile(ctx), self._hold_until(now)
        for entry in self.pending_:
            length = backfill.queued_duration(entry.job)
            profile.reserve(profile.earliest(entry.job.gpus, length, hold_until(entry)), length, entry.job.gpus)
        ranks = self.virtual_.ranks(now)
        for entry in sorted(self.waiting_.values(), key=lambda entry: (ranks[entry.job.job_id],
                                                                       self._tiebreak(entry.job))):
            job = entry.job
            if job.gpus > ctx.idle_gpus:
                continue
            length = backfill.queued_duration(job)
            if profile.earliest(job.gpus, length, now) > now:
                continue
            entry.enqueued = now
            if self._try_start(entry, ctx):
                del self.waiting_[job.job_id]
                profile.reserve(now, length, job.gpus)
                backfill.backfilled += bool(self.pending_)
                if ctx.idle_gpus == 0:
                    break

    def _dispatch_strict(self, ctx: DispatchContext) -> None:
        """The paper's strict dispatch from the pending queue: the head starts while it may."""
        pending = self.pending_
        while pending:
            head = pending[0]
            if head.deadline is None:
                # delay_origin="head": the budget runs from the instant the job reaches the head,
                # whether or not it fits then (dispatch runs at every instant the head changes).
                head.deadline = ctx.now + self.tau * head.virtual_size
            if not self._try_start(head, ctx):
                break
            pending.popleft()

    def _dispatch_indexed(self, ctx: DispatchContext) -> None:
        """EASY or greedy over the pending queue kept by GPU count (queues.CountQueue): the same starts, in
        the same order, as the rule over the whole queue in virtual completion order, but the scan behind
        the blocked head visits only jobs that may start."""
        pending, backfill, now = self.pending_, self.backfill_, ctx.now
        assert isinstance(pending, CountQueue)
        while pending:
            head = pending.head()
            if head.deadline is None:
                head.deadline = now + self.tau * head.virtual_size  # delay_origin="head", as in strict
            if not self._try_start(head, ctx):
                break
            backfill.note_start(head.job, now)
            self._leave(head)
        if not pending:
            return
        for entry in backfill.behind(self.dispatch_rule, pending, pending.head(), ctx, _pending_job,
                                     lambda entry: self._try_start(entry, ctx), self._hold_until(now)):
            self._leave(entry)

    def _dispatch_folded(self, ctx: DispatchContext) -> None:
        """Conservative backfilling over the pending queue (virtual completion order) with its reservations
        kept between instants (conservative.ConservativeFold): the full pass's starts, decision by decision."""
        now = ctx.now

        def try_start(entry: _Pending, at_head: bool) -> bool:
            if at_head and entry.deadline is None:
                entry.deadline = now + self.tau * entry.virtual_size  # delay_origin="head", as in strict
            return self._try_start(entry, ctx)

        pending = self.pending_
        assert isinstance(pending, CountQueue)
        for entry in self.fold_.decide(ctx, pending, _pending_job, try_start, self._hold_until(now)):
            self._leave(entry)

    def _leave(self, entry: _Pending) -> None:
        """A started job leaves the pending queue (and EASY's candidates)."""
        self.pending_.remove(entry)  # type: ignore[arg-type]
        candidates = self.backfill_.candidates
        if candidates is not None:
            candidates.remove(entry.job.gpus, self.backfill_.queued_duration(entry.job))

    def _hold_until(self, now: float) -> Callable[[_Pending], float]:
        def hold_until(entry: _Pending) -> float:
            """A comm-heavy job within its delay budget takes only a consolidated placement before its
            deadline, so its reservation starts no earlier than that."""
            return entry.deadline if entry.heavy and entry.deadline is not None and entry.deadline > now else now
        return hold_until

    def queue(self, now: float) -> list[_Pending]:
        """The dispatch order now: the pending queue (virtual completion order), then, under eligibility
        "release", the virtually unfinished jobs by (virtual rank now, tiebreak): remaining virtual work
        under virtual SRPT, virtual size under virtual PSJF."""
        ordered = list(self.pending_)
        if self.eligibility == "release" and self.waiting_:
            ranks = self.virtual_.ranks(now)
            waiting = self.waiting_
            ordered.extend(sorted(waiting.values(),
                                  key=lambda entry: (ranks[entry.job.job_id], self._tiebreak(entry.job))))
        return ordered

    def _dispatch_ordered(self, ctx: DispatchContext) -> None:
        """Any dispatch rule over `queue(now)`; started jobs leave the pending queue or the waiting set."""
        queue = self.queue(ctx.now)
        if not queue:
            return
        now, head = ctx.now, [0]

        def try_start(entry: _Pending) -> bool:
            at_head = entry is queue[head[0]]
            if at_head and entry.deadline is None:
                entry.deadline = now + self.tau * entry.virtual_size  # delay_origin="head", as in strict
            if not self._try_start(entry, ctx):
                return False
            if at_head:
                head[0] += 1
            return True

        passes = {"strict": self.backfill_.strict, "greedy": self.backfill_.greedy, "easy": self.backfill_.easy,
                  "conservative": self.backfill_.conservative}[self.dispatch_rule]
        started = passes(queue, ctx, _pending_job, try_start, self._hold_until(now))
        if not started:
            return
        in_pending = len(self.pending_)  # the queue is the pending queue, then (eligibility "release") the waiting jobs
        for position in sorted(started, reverse=True):
            entry = queue[position]
            if position < in_pending:
                self._leave(entry)
            else:
                del self.waiting_[entry.job.job_id]
                candidates = self.backfill_.candidates
                if candidates is not None:
                    candidates.remove(entry.job.gpus, self.backfill_.queued_duration(entry.job))

    def next_timer(self) -> tuple[float, EventKind] | None:
        virtual = self.virtual_.next_completion()
        timer = None if virtual is None else (virtual, EventKind.VIRTUAL_COMPLETION)
        if self.delay_deadlines_:
            delay = (min(self.delay_deadlines_), EventKind.DELAY_EXPIRY)
            if timer is None or delay < timer:
                timer = delay
        return timer


_pending_job: Callable[[_Pending], JobView] = operator.attrgetter("job")


@register_scheduler("asrpt_oracle", ASRPTParams)
def asrpt_oracle(tau: float = ASRPTParams.tau, comm_heavy: float = ASRPTParams.comm_heavy,
                 consolidation_test: ConsolidationTest = ASRPTParams.consolidation_test,
                 delay_origin: DelayOrigin = ASRPTParams.delay_origin,
                 srpt_tiebreak: SrptTiebreak = ASRPTParams.srpt_tiebreak, backfill: bool = ASRPTParams.backfill,
                 dispatch: str = ASRPTParams.dispatch, eligibility: str = ASRPTParams.eligibility,
                 overrun: str = ASRPTParams.overrun, min_estimate_s: float = ASRPTParams.min_estimate_s,
                 virtual: str = ASRPTParams.virtual, virtual_gpus: str = ASRPTParams.virtual_gpus) -> ASRPT:
    """A-SRPT fed true iterations (the paper's perfect-prediction variant)."""
    return ASRPT(tau=tau, comm_heavy=comm_heavy, consolidation_test=consolidation_test, delay_origin=delay_origin,
                 srpt_tiebreak=srpt_tiebreak, backfill=backfill, dispatch=dispatch, eligibility=eligibility,
                 overrun=overrun, min_estimate_s=min_estimate_s, virtual=virtual, virtual_gpus=virtual_gpus,
                 oracle=True)
