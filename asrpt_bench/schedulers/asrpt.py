"""A-SRPT (paper-notes 5, Algorithm 1).

Each job gets a virtual single-machine size p~_i = (g_i / G) * n~_i * alpha~min_i; preemptive SRPT
on those sizes decides when a job becomes eligible (its virtual completion) and the order of the
pending queue. Real dispatch is non-preemptive and strictly head-of-line: the head starts when it
fits, except that a communication-heavy head (alpha_max / alpha~min >= comm_heavy) whose current
placement is not consolidated enough may wait up to tau * p~_i for a better one.
Virtual work is never updated with real progress.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Hashable, Literal

from ..core import Cluster, ConfigError
from ..params import Params, param
from ..rules import flag, number, one_of
from .base import DispatchContext, EventKind, JobView, Proposal, register_scheduler
from .virtual_srpt import VirtualSRPT

ConsolidationTest = Literal["alpha", "servers", "ratio"]
DelayOrigin = Literal["enqueue", "head"]
SrptTiebreak = Literal["release_id", "id"]

CONSOLIDATION_TESTS = ("alpha", "servers", "ratio")
DELAY_ORIGINS = ("enqueue", "head")
SRPT_TIEBREAKS = ("release_id", "id")
ALPHA_TOLERANCE = 1e-9


@dataclass(frozen=True)
class ASRPTParams(Params):
    """A-SRPT's knobs: the paper's two (tau, COMM_HEAVY) and the choices it leaves open (paper-notes 10)."""

    tau: float = param(1.0, number(0), "a comm-heavy head may wait up to tau * p~_i for a consolidated placement")
    comm_heavy: float = param(1.5, number(1), "COMM_HEAVY: a job is comm-heavy when alpha_max / alpha~min >= it")
    consolidation_test: str = param("alpha", one_of(*CONSOLIDATION_TESTS),
                                    "what counts as consolidated: alpha~min reached, as few servers, or ratio")
    delay_origin: str = param("enqueue", one_of(*DELAY_ORIGINS),
                              "the delay budget runs from pending-queue entry or from reaching the head")
    srpt_tiebreak: str = param("release_id", one_of(*SRPT_TIEBREAKS),
                               "virtual SRPT ties by (release, input order) or input order only")
    backfill: bool = param(False, flag(), "EXTENSION: later pending jobs start when the head cannot")


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
    """Algorithm 1 with every open choice of paper-notes 5.3 / 10 as a parameter.

    consolidation_test: "alpha" (a <= alpha~min * (1 + 1e-9)), "servers" (no more servers than the
    empty-cluster placement) or "ratio" (a / alpha~min < comm_heavy).
    delay_origin: the delay budget runs from pending-queue entry ("enqueue") or from reaching the
    head ("head"). srpt_tiebreak: virtual ties by (release, input order) or input order only.
    backfill: a labelled EXTENSION, not the paper's algorithm: when the head cannot start, later
    pending jobs that can start do (this breaks the strict head-of-line proof argument).
    oracle: use true iterations instead of predictions (the perfect-prediction variant).
    """

    def __init__(self, tau: float = ASRPTParams.tau, comm_heavy: float = ASRPTParams.comm_heavy,
                 consolidation_test: ConsolidationTest = ASRPTParams.consolidation_test,
                 delay_origin: DelayOrigin = ASRPTParams.delay_origin,
                 srpt_tiebreak: SrptTiebreak = ASRPTParams.srpt_tiebreak, backfill: bool = ASRPTParams.backfill,
                 oracle: bool = False) -> None:
        ASRPTParams(tau, comm_heavy, consolidation_test, delay_origin, srpt_tiebreak, backfill).check("scheduler")
        if not isinstance(oracle, bool):
            raise ConfigError(f"asrpt: oracle must be true or false, got {oracle!r}")
        self.name = "asrpt_oracle" if oracle else "asrpt"
        self.tau = float(tau)
        self.comm_heavy = float(comm_heavy)
        self.consolidation_test = consolidation_test
        self.delay_origin = delay_origin
        self.srpt_tiebreak = srpt_tiebreak
        self.backfill = backfill
        self.oracle = oracle
        self._clear(total_gpus=0)

    def reset(self, cluster: Cluster) -> None:
        self._clear(cluster.total_gpus)

    def _clear(self, total_gpus: int) -> None:
        self.total_gpus_ = total_gpus
        self.virtual_ = VirtualSRPT()
        self.waiting_: dict[Hashable, _Pending] = {}
        self.pending_: deque[_Pending] = deque()
        self.delay_deadlines_: list[float] = []

    def is_comm_heavy(self, job: JobView) -> bool:
        """Line 8: alpha_max / alpha~min >= comm_heavy."""
        return job.comm_ratio >= self.comm_heavy

    def virtual_size(self, job: JobView) -> float:
        """p~_i = (g_i / G) * n~_i * alpha~min_i (true n_i for the oracle variant)."""
        iterations = job.iterations if self.oracle else job.predicted_iterations
        return job.gpus / self.total_gpus_ * iterations * job.alpha_min

    def on_arrival(self, job: JobView, now: float) -> None:
        size = self.virtual_size(job)
        self.waiting_[job.job_id] = _Pending(job, self.is_comm_heavy(job), size, enqueued=now)
        tiebreak = (job.release, job.order) if self.srpt_tiebreak == "release_id" else (job.order,)
        self._enqueue(self.virtual_.add(job.job_id, size, tiebreak, now))

    def _enqueue(self, completions: list[tuple[Hashable, float]]) -> None:
        for job_id, finish in completions:
            entry = self.waiting_.pop(job_id)
            entry.enqueued = finish
            if self.delay_origin == "enqueue":
                entry.deadline = finish + self.tau * entry.virtual_size
            self.pending_.append(entry)

    def _consolidated(self, entry: _Pending, proposal: Proposal) -> bool:
        job = entry.job
        if self.consolidation_test == "alpha":
            return proposal.alpha <= job.alpha_min * (1 + ALPHA_TOLERANCE)
        if self.consolidation_test == "servers":
            return proposal.placement.servers_used <= job.min_servers
        return proposal.alpha < self.comm_heavy * job.alpha_min

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
        return True

    def dispatch(self, ctx: DispatchContext) -> None:
        self._enqueue(self.virtual_.advance_to(ctx.now))
        self.delay_deadlines_ = []
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
        if self.backfill and len(pending) > 1 and ctx.idle_gpus > 0:
            head = pending.popleft()
            self.pending_ = deque(entry for entry in pending if not self._try_start(entry, ctx))
            self.pending_.appendleft(head)

    def next_timer(self) -> tuple[float, EventKind] | None:
        virtual = self.virtual_.next_completion()
        timer = None if virtual is None else (virtual, EventKind.VIRTUAL_COMPLETION)
        if self.delay_deadlines_:
            delay = (min(self.delay_deadlines_), EventKind.DELAY_EXPIRY)
            if timer is None or delay < timer:
                timer = delay
        return timer


@register_scheduler("asrpt_oracle", ASRPTParams)
def asrpt_oracle(tau: float = ASRPTParams.tau, comm_heavy: float = ASRPTParams.comm_heavy,
                 consolidation_test: ConsolidationTest = ASRPTParams.consolidation_test,
                 delay_origin: DelayOrigin = ASRPTParams.delay_origin,
                 srpt_tiebreak: SrptTiebreak = ASRPTParams.srpt_tiebreak,
                 backfill: bool = ASRPTParams.backfill) -> ASRPT:
    """A-SRPT fed true iterations (the perfect-prediction variant, paper-notes 10 item 32)."""
    return ASRPT(tau=tau, comm_heavy=comm_heavy, consolidation_test=consolidation_test, delay_origin=delay_origin,
                 srpt_tiebreak=srpt_tiebreak, backfill=backfill, oracle=True)
