"""Tiresias' discretized two-dimensional least-attained-service scheduler (`las2d`; Gu et al., NSDI'19).

A job's attained service is GPUs x seconds it has run (restarts excluded: a job must not be demoted
while it restores its checkpoint, or short thresholds could pass jobs around forever without progress). K queues split attained service at `queue_thresholds` (K - 1 of them): queue k holds the
jobs with thresholds[k-1] <= attained < thresholds[k]. Jobs are walked by (queue, release, input
order) -- FIFO within a queue -- and admitted by AdmissionScheduler's walk. A running job that crosses
a threshold is demoted at that instant (a timer). No predictions are used.

Defaults follow the Tiresias simulator (SymbioticLab/Tiresias, simulator/jobs.py: `num_queue = 3`,
`queue_limit = [3250, 7200, 18000]`, of which the first K - 1 apply; `dlas-gpu` counts GPU time).
Optional starvation guard (`promote_knob`, Tiresias' PROMOTEKNOB, off by default as in its `dlas-gpu`):
a waiting job outside queue 0 whose time waiting since its last promotion reaches promote_knob x the
seconds it ran since then goes back to queue 0 with its attained service reset (simulator/run_sim.py,
`dlas_sim_jobs(..., solve_starvation)`).

One difference from the Tiresias simulator: it keeps running jobs ahead of waiting ones within a queue;
here a queue is FIFO by release (the plain rule of a 2D-LAS reference).
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..params import Params, param
from ..rules import MAX_SECONDS, Rule, number, plain, seconds
from .base import register_scheduler
from .views import JobView
from .preemptive import AdmissionScheduler, PreemptiveContext

QUEUE_THRESHOLDS = (3250.0, 7200.0)
ATTAINED_TOLERANCE = 1e-3
"""GPU-seconds of slack when placing attained service in a queue, so a job whose crossing instant was
computed in floating point lands in its new queue exactly at that instant."""
BOUND_MARGIN_S = 1.0
"""Seconds before a running job's attained service (with the tolerance) reaches its next threshold at which
the walk stops trusting the queue it computed earlier (far more than any rounding of that instant)."""


def _increasing_positive(value: Any) -> bool:
    value = plain(value)
    if not isinstance(value, (list, tuple)) or not value:
        return False
    positive = seconds(strict=True)
    return all(positive.accepts(v) for v in value) and all(a < b for a, b in zip(value, value[1:]))


THRESHOLDS_RULE = Rule(f"a non-empty increasing list of positive GPU-seconds <= {MAX_SECONDS:.0e}", _increasing_positive)
KNOB_RULE = Rule("null (no starvation guard) or a number > 0",
                 lambda v: v is None or number(0, strict=True).accepts(v))


@dataclass(frozen=True)
class LAS2DParams(Params):
    """las2d's parameters: its queues and its starvation guard (the run's `preemption` group prices its
    suspensions)."""

    queue_thresholds: tuple[float, ...] = param(QUEUE_THRESHOLDS, THRESHOLDS_RULE,
                                                "attained GPU-seconds where each queue ends (K - 1 values)")
    promote_knob: float | None = param(None, KNOB_RULE,
                                       "back to queue 0 after waiting promote_knob x the seconds run; null: off")


@register_scheduler("las2d", LAS2DParams)
class LAS2D(AdmissionScheduler):
    """Discretized 2D-LAS with FIFO queues, gang admission and an optional starvation guard."""

    settles = True  # priorities change only at its own timers (demotions, promotions)
    bounded = True  # a running job's queue holds until it nears the next threshold (bound_until)
    exact_bounds = True  # and the bound is the priority itself until then

    def __init__(self, queue_thresholds: tuple[float, ...] = LAS2DParams.queue_thresholds,
                 promote_knob: float | None = LAS2DParams.promote_knob) -> None:
        params = LAS2DParams(queue_thresholds=plain(queue_thresholds), promote_knob=promote_knob)
        params.check("scheduler")
        self.thresholds = tuple(float(t) for t in params.queue_thresholds)
        self.promote_knob = None if promote_knob is None else float(promote_knob)
        super().__init__("las2d")

    def _clear(self) -> None:
        super()._clear()
        self.pending_: dict[int, float] = {}       # seconds waited since the last promotion, before this wait
        self.waiting_since_: dict[int, float] = {}
        self.promotions_: list[tuple[float, int, int]] = []  # (instant, input order, token)
        self.token_: dict[int, int] = {}
        self.crossings_: list[tuple[float, int, int]] = []   # running jobs' next threshold crossing
        self.segment_: dict[int, int] = {}         # a running job's segment count: tokens of its crossings
        self.timer_: float | None = None
        self.offsets_: dict[int, float] = {}       # `columns_["offset"]` of the promoted jobs, read one at a time

    def column_defaults(self) -> dict[str, float]:
        return {"offset": 0.0}  # seconds run at the last promotion

    def attained(self, job: JobView, run_seconds: float) -> float:
        """GPU-seconds run since the job's last promotion (since arrival without one)."""
        return job.gpus * (run_seconds - self.offsets_.get(job.order, 0.0))

    def priority(self, job: JobView, progress: float, run_seconds: float) -> float:
        return float(bisect.bisect_right(self.thresholds, self.attained(job, run_seconds) + ATTAINED_TOLERANCE))

    def bound_until(self, job: JobView, run_seconds: float, now: float) -> float:
        """A running job's queue holds until its attained service, growing by its GPUs each second, comes
        within the tolerance of the next threshold (less a margin for rounding); the last queue holds."""
        attained = self.attained(job, run_seconds)
        queue = bisect.bisect_right(self.thresholds, attained + ATTAINED_TOLERANCE)
        if queue == len(self.thresholds):
            return math.inf
        return now + (self.thresholds[queue] - ATTAINED_TOLERANCE - attained) / job.gpus - BOUND_MARGIN_S

    def bounds_until(self, orders: np.ndarray, run_seconds: np.ndarray, now: float) -> np.ndarray:
        gpus = self.columns_["gpus"][orders]
        attained = gpus * (run_seconds - self.columns_["offset"][orders])
        queue = np.searchsorted(self.thresholds, attained + ATTAINED_TOLERANCE, "right")
        ends = np.append(self.thresholds, math.inf)[queue]  # the next threshold; none in the last queue
        return np.where(queue == len(self.thresholds), math.inf,
                        now + (ends - ATTAINED_TOLERANCE - attained) / gpus - BOUND_MARGIN_S)

    def priorities(self, orders: np.ndarray, progress: np.ndarray, run_seconds: np.ndarray) -> np.ndarray:
        attained = self.columns_["gpus"][orders] * (run_seconds - self.columns_["offset"][orders])
        return np.searchsorted(self.thresholds, attained + ATTAINED_TOLERANCE, "right").astype(float)

    def decide(self, ctx: PreemptiveContext) -> None:
        if self.timer_ is not None and self.timer_ <= ctx.now:
            self.settled_ = False  # a demotion or promotion is due: priorities changed
        self._promote(ctx)
        super().decide(ctx)
        self._book_crossings(ctx)
        self.timer_ = self._next_instant(ctx.now)

    def next_timer(self) -> float | None:
        return self.timer_

    def on_completion(self, job: JobView, now: float) -> None:
        super().on_completion(job, now)
        self.segment_.pop(job.order, None)

    def on_suspend(self, job: JobView, ctx: PreemptiveContext) -> None:
        super().on_suspend(job, ctx)
        self.segment_[job.order] += 1
        if self.promote_knob is None:
            return
        order, now = job.order, ctx.now
        self.waiting_since_[order] = now
        ran = ctx.run_seconds(job) - self.offsets_.get(order, 0.0)
        if self.entries_[order][0] > 0 and ran > 0:
            token = self.token_.get(order, 0) + 1
            self.token_[order] = token
            due = now + self.promote_knob * ran - self.pending_.get(order, 0.0)
            heapq.heappush(self.promotions_, (max(due, now), order, token))

    def on_start(self, job: JobView, ctx: PreemptiveContext) -> None:
        resumed = job.order in self.segment_
        segment = self.segment_[job.order] = self.segment_.get(job.order, 0) + 1
        runs_from = ctx.now + (ctx.restart_s if resumed else 0.0)
        self._push_crossing(job, runs_from, self.attained(job, ctx.run_seconds(job)), segment)
        since = self.waiting_since_.pop(job.order, None)
        if since is not None:
            self.pending_[job.order] = self.pending_.get(job.order, 0.0) + ctx.now - since
            self.token_[job.order] = self.token_.get(job.order, 0) + 1

    def _promote(self, ctx: PreemptiveContext) -> None:
        """Back to queue 0: every waiting job whose promotion instant has come."""
        promotions, now = self.promotions_, ctx.now
        while promotions and promotions[0][0] <= now:
            _, order, token = heapq.heappop(promotions)
            if self.token_.get(order) != token:
                continue
            job = self.entries_[order][3]
            self._dequeue(job)
            self.offsets_[order] = ctx.run_seconds(job)
            self.columns_.set(order, offset=self.offsets_[order])
            self.pending_[order] = 0.0
            self.waiting_since_[order] = now
            self._enqueue(job, self.priority(job, 0.0, ctx.run_seconds(job)))

    def _push_crossing(self, job: JobView, runs_from: float, attained: float, segment: int) -> None:
        """Book the instant a job running from `runs_from` with `attained` GPU-seconds crosses its next
        threshold (none in the last queue)."""
        queue = bisect.bisect_right(self.thresholds, attained + ATTAINED_TOLERANCE)
        if queue < len(self.thresholds):
            heapq.heappush(self.crossings_, (runs_from + (self.thresholds[queue] - attained) / job.gpus, job.order,
                                             segment))

    def _book_crossings(self, ctx: PreemptiveContext) -> None:
        """Jobs that crossed a threshold now and still run: book their next crossing."""
        crossings, now, due = self.crossings_, ctx.now, []
        while crossings and crossings[0][0] <= now:
            _, order, segment = heapq.heappop(crossings)
            if self.segment_.get(order) == segment and order in self.running_:
                due.append((self.running_[order], segment))
        states = ctx.running_states([job for job, _ in due])
        for (job, segment), (_, _, run_seconds) in zip(due, states):
            self._push_crossing(job, now, self.attained(job, run_seconds), segment)

    def _next_instant(self, now: float) -> float | None:
        """The earliest booked threshold crossing of a running job or promotion after now (a promotion
        already due when its job was suspended waits for the next decision)."""
        crossings = self.crossings_
        while crossings and not (self.segment_.get(crossings[0][1]) == crossings[0][2]
                                 and crossings[0][1] in self.running_):
            heapq.heappop(crossings)
        promotions, token_of, due_now = self.promotions_, self.token_, []
        while promotions and (promotions[0][0] <= now or token_of.get(promotions[0][1]) != promotions[0][2]):
            entry = heapq.heappop(promotions)  # a stale booking goes; a valid one due now waits aside
            if token_of.get(entry[1]) == entry[2]:
                due_now.append(entry)
        instants = [crossings[0][0]] if crossings else []
        if promotions:
            instants.append(promotions[0][0])
        for entry in due_now:
            heapq.heappush(promotions, entry)
        return min(instants) if instants else None
