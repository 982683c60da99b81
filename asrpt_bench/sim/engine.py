"""The event-driven, non-preemptive cluster simulator (design.md 3); `prepare_run` checks a run's arguments
and builds the views and estimates both event loops use (run.py picks the loop).

Events ordered by time, then kind: real completions (in start order), arrivals (in input order), then the
scheduler's timer (a virtual-SRPT completion or a delay expiry), handled in that order at one instant, followed
by one dispatch decision. Completions are kept in a heap, arrivals are read in release order beside it and the
scheduler's one live timer is held beside both (a timer it moves is replaced, never an event). A started job
holds its GPUs until
S_i + n_i * alpha_i(placement) with the TRUE n_i.
The simulator is the only code that mutates cluster state; schedulers and placers see views.
"""

from __future__ import annotations

import gc
import heapq
import itertools
import math
import os
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from collections import abc
from typing import Any, Hashable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm.autonotebook import tqdm

from ..adjustments import adjust
from ..core import CLUSTER, Cluster, ConfigError, Job, Placement, TrainingPlan, pool_plans_of
from ..placement.base import Placer
from ..rules import MAX_SECONDS, instance_of
from ..schedulers.base import JobView, Proposal, RunningJob, Scheduler
from ..schedulers.views import new_view
from ..timing import AlphaByShape, TimingModel
from .audit import audit_schedule
from .metrics import dispatch_counts, schedule_metrics, type_metrics
from .placement_memo import MISSING, PlacementMemo
from .pooled import EmptyClusterEstimate, PoolPlacement, check_pools, empty_cluster_estimate, pooled_estimate
from .records import JobRecord, RecordTable, Segment, records_frame, segments_frame
from .state import ClusterState


_new_tuple = tuple.__new__
ARRIVAL_CHUNK = 4096
"""Arrival indices converted to Python ints at a time."""


@dataclass(frozen=True)
class SimulationResult:
    records: Sequence[JobRecord]
    """One per job, in input order (a RecordTable from the event loops)."""
    metrics: dict[str, float | int]
    dropped: tuple[Hashable, ...]
    scheduler: str
    placer: str
    segments: Sequence[Segment] = ()
    """Every run segment of a preemptive run (a SegmentTable, sim/preemptive.py); empty without preemption."""

    def frame(self) -> pd.DataFrame:
        return records_frame(self.records)

    def segments_frame(self) -> pd.DataFrame:
        return segments_frame(self.segments)


def _caller_outside_sim() -> int:
    """The stacklevel, for a warning issued by the caller of this function, of the first frame outside
    asrpt_bench/sim/: the line that called simulate(), however many of the package's frames lie between."""
    frame, level, here = sys._getframe(1), 1, os.path.dirname(__file__)
    while frame.f_back is not None and os.path.dirname(frame.f_code.co_filename) == here:
        frame, level = frame.f_back, level + 1
    return level


def _check_jobs(jobs: Sequence[Job], cluster: Cluster, drop_oversize: bool) -> tuple[list[Job], list[Hashable]]:
    """Reject duplicate ids and negative values; drop (or reject) jobs larger than the cluster (on a cluster
    given as pools: than every pool that runs them)."""
    seen: set[Hashable] = set()
    kept, dropped = [], []
    total = cluster.total_gpus
    full = []
    fits = check_pools(jobs, cluster) if cluster.pooled else None
    for k, job in enumerate(jobs):
        if job.job_id in seen:
            raise ConfigError(f"job {job.job_id!r}: duplicate job id")
        seen.add(job.job_id)
        if not (math.isfinite(job.release) and job.release >= 0):
            raise ConfigError(f"job {job.job_id!r}: release must be >= 0, got {job.release}")
        if job.iterations < 0:
            raise ConfigError(f"job {job.job_id!r}: iterations must be >= 0, got {job.iterations}")
        if job.gpus > total if fits is None else not fits[k]:
            if not drop_oversize:
                where = f"the cluster has {total}" if fits is None else "no pool that runs it holds them"
                raise ConfigError(f"job {job.job_id!r} needs {job.gpus} GPUs but {where}; "
                                  "drop such jobs with workload.drop_oversize=true "
                                  "(in Python: simulate(..., drop_oversize=True))")
            dropped.append(job.job_id)
            continue
        if job.gpus == total and fits is None:
            full.append(job.job_id)
        kept.append(job)
    larger = f"the cluster's {total} GPUs" if fits is None else "the GPUs of every pool that runs them"
    if dropped and not kept:
        raise ConfigError(f"every job ({len(dropped)}) needs more than {larger} (first: {dropped[0]!r}), so nothing "
                          "is left to simulate; use a larger cluster (cluster.servers, cluster.gpus_per_server"
                          f"{', cluster.pools' if fits is not None else ''})")
    if dropped:
        adjust("dropped_oversize_jobs", len(dropped),
               f"dropped {len(dropped)} job(s) needing more than {larger} "
               f"(first: {dropped[0]!r}; workload.drop_oversize=true)", stacklevel=_caller_outside_sim())
    if full:
        warnings.warn(f"{len(full)} job(s) need all {total} GPUs (first: {full[0]!r}); the A-SRPT bound "
                      "assumes g_max < G", stacklevel=_caller_outside_sim())
    return kept, dropped


JOBS = instance_of((list, tuple), "a list of Job")
JOB = instance_of(Job, "a list of Job (one element is not)")
PREDICTIONS = instance_of(abc.Mapping, "a mapping job_id -> predicted iterations (e.g. a dict) or None")


def _check_arguments(jobs: Any, cluster: Any, scheduler: Any, placer: Any, predictions: Any) -> None:
    """simulate()'s arguments are of the types it needs; each refusal names the argument."""
    JOBS.require("jobs", jobs)
    for job in jobs:
        JOB.require("jobs", job)
    CLUSTER.require("cluster", cluster)
    decision = "decide" if getattr(scheduler, "preemptive", False) else "dispatch"
    if not getattr(scheduler, "replays_log", False):
        _require_component("scheduler", scheduler, decision)
    _require_component("placer", placer, "place")
    if predictions is not None:
        PREDICTIONS.require("predictions", predictions)


def _require_component(name: str, value: Any, method: str) -> None:
    if not callable(getattr(value, method, None)):
        raise ConfigError(f"{name} must be a {name} object with a {method}() method (e.g. from make_{name}), got "
                          f"{type(value).__name__} {value!r}"[:300])


def _predicted(jobs: Sequence[Job], predictions: Mapping[Hashable, float] | None) -> list[float]:
    """Predicted iterations per job; None means perfect predictions. A mapping that holds its values in its jobs'
    order (prediction.by_job.JobPredictions) gives them whole when these are its jobs."""
    if predictions is None:
        return [float(job.iterations) for job in jobs]
    aligned = getattr(predictions, "aligned_values", None)
    values = aligned(jobs) if callable(aligned) else None
    if values is not None:
        array = np.asarray(values, dtype=float)
        bad = ~(np.isfinite(array) & (array >= 0))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise _refused_prediction(jobs[k], values[k])
        return values
    values = []
    for job in jobs:
        if job.job_id not in predictions:
            raise ConfigError(f"job {job.job_id!r}: no predicted iterations given")
        try:
            value = float(predictions[job.job_id])
        except (TypeError, ValueError):
            value = math.nan
        if not (math.isfinite(value) and value >= 0):
            raise _refused_prediction(job, predictions[job.job_id])
        values.append(value)
    return values


def _refused_prediction(job: Job, value: object) -> ConfigError:
    """The one refusal of a prediction, whichever way the predictions were given."""
    return ConfigError(f"job {job.job_id!r}: predicted iterations must be finite and >= 0, got {value!r}")


def _check_predicted_work(jobs: Sequence[Job], predicted: Sequence[float],
                          estimates: Sequence[EmptyClusterEstimate]) -> None:
    """A prediction becomes a time once the schedulers multiply it by alpha~min: capped at MAX_SECONDS as
    every time is (a job table's iterations x alpha, every time-valued key), so estimated ends stay exact."""
    for job, iterations, estimate in zip(jobs, predicted, estimates):
        if iterations * estimate.alpha_min > MAX_SECONDS:
            raise ConfigError(f"job {job.job_id!r}: predicted iterations x alpha~min must be <= {MAX_SECONDS:.0e} s "
                              f"(larger times lose precision in float64 arithmetic), got {iterations:g} x "
                              f"{estimate.alpha_min:g} s")


def checked_place(placer: Placer, alphas: AlphaByShape, cluster: Cluster, job: JobView,
                  free: tuple[int, ...]) -> tuple[Placement, float] | None:
    """The placer's placement of `job` on `free` (checked) and its alpha, or None if the job does not fit."""
    placement = placer.place(job.plan, free, cluster)
    if placement is None:
        return None
    try:
        placement.validate(job.plan, free)
    except ValueError as error:
        raise RuntimeError(f"placer {placer.name!r} returned an invalid placement for job {job.job_id!r}: "
                           f"{error}") from error
    return placement, alphas.alpha(job.plan, placement)


class _Context:
    """The DispatchContext a scheduler gets: now, free GPUs, propose and start, and nothing else.

    The simulation itself holds the true iterations (`jobs`) and end times (`records`), so it is
    never handed to a scheduler; this keeps the oracle boundary enforced, not just documented.
    """

    __slots__ = ("_simulation", "_state", "_only", "_exclude")

    def __init__(self, simulation: "_Simulation") -> None:
        self._simulation = simulation
        self._state = simulation.state
        self._only: int | None = None
        self._exclude: int | None = None

    @property
    def now(self) -> float:
        return self._simulation.now

    @property
    def free(self) -> tuple[int, ...]:
        return self._state.free_view()

    @property
    def idle_gpus(self) -> int:
        return self._state.idle

    @property
    def running(self) -> tuple[RunningJob, ...]:
        return tuple(self._simulation.running.values())

    def propose(self, job: JobView) -> Proposal | None:
        if self._only is None and self._exclude is None:
            return self._simulation.propose(job)
        return self._simulation.propose(job, self._only, self._exclude)

    def start(self, proposal: Proposal, eligible: float) -> None:
        self._simulation.start(proposal, eligible)

    @property
    def pool_idle(self) -> tuple[int, ...]:
        return self._state.pool_idle_view()

    @contextmanager
    def restricted(self, only: int | None = None, exclude: int | None = None) -> Iterator[None]:
        self._only, self._exclude = only, exclude
        try:
            yield
        finally:
            self._only = self._exclude = None

    @property
    def last_pool(self) -> int:
        return self._simulation.last_pool


class _Simulation:
    """One run: the event heap, the cluster state and the records."""

    def __init__(self, jobs: list[Job], views: list[JobView], cluster: Cluster, scheduler: Scheduler,
                 placer: Placer, timing: TimingModel, estimates: list[EmptyClusterEstimate], progress: bool):
        self.jobs = jobs
        self.views = views
        self.cluster = cluster
        self.scheduler = scheduler
        self.placer = placer
        self.timing = timing
        self.estimates = estimates
        self.state = ClusterState(cluster)
        self.alphas = AlphaByShape(timing, cluster.pool_list[0].cluster)
        self.pools = PoolPlacement(cluster, placer, timing, jobs) if cluster.pooled else None
        self.pool_names = [pool.name for pool in cluster.pool_list]
        self.last_pool = 0
        self.index = {job.job_id: i for i, job in enumerate(jobs)}
        self.records = RecordTable(len(jobs))
        self.heap: list[tuple[float, int, int]] = []  # (end, start sequence, job index) of every running job
        self.sequence = itertools.count()
        self.now = 0.0
        self.checked: tuple[Proposal, int] | None = None
        self.placements = PlacementMemo()  # on one pool: the placer's answers by (plan, free GPUs per server)
        self.running: dict[int, RunningJob] = {}  # job index -> what its scheduler may know of it, in start order
        self.bar = tqdm(total=len(jobs), disable=not progress, desc=f"simulate {scheduler.name}", unit="job")

    def pool_idle(self) -> tuple[int, ...]:
        """Idle GPUs per pool."""
        return self.state.pool_idle_view()

    def propose(self, job: JobView, pool: int | None = None, exclude: int | None = None) -> Proposal | None:
        """The placer's proposal for `job` now (on a cluster of pools through the pool choice, in pool `pool`
        only, or anywhere but pool `exclude`), or None. On one pool a state met before (the same plan on the
        same free GPUs per server) gets the answer the placer gave then (placement_memo)."""
        free = self.state.free_view()
        if self.pools is not None:
            proposal = self.pools.propose(self.index[job.job_id], job, free, self.state.pool_idle_view(), only=pool,
                                          exclude=exclude)
            if proposal is not None:
                self.checked = (proposal, self.state.version)
            return proposal
        key = (id(job.plan), free)
        found = self.placements.get(key)
        if found is MISSING:
            found = self._place(job, free)
            self.placements.put(key, found)
        if found is None:
            return None
        proposal = Proposal(job.job_id, found[0], found[1])
        self.checked = (proposal, self.state.version)
        return proposal

    def _place(self, job: JobView, free: tuple[int, ...]) -> tuple[Placement, float] | None:
        return checked_place(self.placer, self.alphas, self.cluster, job, free)

    def checked_placement(self, job: Job, proposal: Proposal) -> Placement:
        """The proposal's placement, checked again unless it is the placer's own answer for this very state."""
        placement = proposal.placement
        if self.checked is None or self.checked[0] is not proposal or self.checked[1] != self.state.version:
            placement.validate(job.plan, self.state.free_view())
            if self.pools is not None:
                try:
                    self.pools.check(self.index[job.job_id], proposal)
                except RuntimeError as error:  # name the scheduler, as the one-pool refusal below does
                    raise RuntimeError(f"scheduler {self.scheduler.name!r}: {error}") from None
            elif proposal.alpha != self.alphas.alpha(job.plan, placement):
                raise RuntimeError(f"scheduler {self.scheduler.name!r}: proposal for job {job.job_id!r} "
                                   "carries a wrong alpha")
        return placement

    def start(self, proposal: Proposal, eligible: float) -> None:
        i = self.index[proposal.job_id]
        job, view = self.jobs[i], self.views[i]
        if self.records.written(i):
            raise RuntimeError(f"scheduler {self.scheduler.name!r} started job {job.job_id!r} twice")
        if not job.release <= eligible <= self.now:
            raise RuntimeError(f"scheduler {self.scheduler.name!r}: job {job.job_id!r} eligible at {eligible}, "
                               f"released {job.release}, started {self.now}")
        placement = self.checked_placement(job, proposal)
        gpu_ids = self.state.allocate(job.job_id, placement)
        self.last_pool = proposal.pool
        now, plan, estimate = self.now, job.plan, self.estimates[i]
        end = now + job.iterations * proposal.alpha
        self.records.put(i, job.job_id, plan.model, plan.config, placement.servers, gpu_ids,
                         self.pool_names[proposal.pool],
                         (job.release, eligible, now, end, proposal.alpha, estimate.alpha_min, estimate.alpha_max,
                          view.predicted_iterations, view.comm_ratio, 0.0, end - now, plan.gpus,
                          len(set(placement.servers)), job.iterations, 0))
        # RunningJob(view, now, alpha) without the NamedTuple's Python-level __new__ (every start pays it)
        self.running[i] = _new_tuple(RunningJob, (view, now, proposal.alpha))
        heapq.heappush(self.heap, (end, next(self.sequence), i))

    def arrival_order(self) -> Iterator[int]:
        """The jobs' indices in (release, input order), as Python ints converted a chunk at a time (indexing with
        numpy integers is slower; a list of every index would hold an int object per job)."""
        jobs = self.jobs
        order = np.argsort(np.fromiter((job.release for job in jobs), dtype=float, count=len(jobs)), kind="stable")
        return itertools.chain.from_iterable(order[k:k + ARRIVAL_CHUNK].tolist()
                                             for k in range(0, len(order), ARRIVAL_CHUNK))

    def run(self) -> RecordTable:
        scheduler = self.scheduler
        scheduler.reset(self.cluster)
        # arrivals read in turn beside the heap of completions (a heap of every arrival would hold a tuple and
        # two ints per job from the start)
        jobs = self.jobs
        arrivals = self.arrival_order()
        upcoming = next(arrivals, None)
        next_arrival = math.inf if upcoming is None else jobs[upcoming].release
        # the scheduler's one live timer, held beside the heap (a newer one replaces it, so a timer the scheduler
        # moved is never an event)
        timer: float | None = None
        heap, views, release, running = self.heap, self.views, self.state.release, self.running
        heappop = heapq.heappop
        on_arrival, dispatch, next_timer = scheduler.on_arrival, scheduler.dispatch, scheduler.next_timer
        on_completion = getattr(scheduler, "on_completion", None)
        progress = None if self.bar.disable else self.bar.update
        context = _Context(self)
        while heap or next_arrival != math.inf or timer is not None:
            # the instant is that of its first event (an int or a float as given): completions come before
            # arrivals at one instant, the timer after them
            now = next_arrival
            if heap and heap[0][0] <= now:
                now = heap[0][0]
            if timer is not None and timer < now:
                now = timer
            self.now = now
            while heap and heap[0][0] == now:
                i = heappop(heap)[2]
                release(jobs[i].job_id)
                del running[i]
                if on_completion is not None:
                    on_completion(views[i], now)
                if progress is not None:
                    progress(1)
            while next_arrival == now:
                i, upcoming = upcoming, next(arrivals, None)
                next_arrival = math.inf if upcoming is None else jobs[upcoming].release
                on_arrival(views[i], now)
            dispatch(context)
            wanted = next_timer()
            if wanted is not None and not wanted[0] > now:
                raise RuntimeError(f"scheduler {scheduler.name!r} asked for a timer at {wanted[0]} <= now {now}")
            timer = None if wanted is None else wanted[0]
        self.bar.close()
        never = self.records.missing()
        if never:
            raise RuntimeError(f"scheduler {scheduler.name!r} with placer {self.placer.name!r} never started "
                               f"{len(never)} job(s), first {self.jobs[never[0]].job_id!r}")
        return self.records


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the event loop runs: it allocates about a dozen
    objects per job, none in reference cycles, and each automatic full collection walks every live
    object of the caller too (about a fifth of a full-trace run). Reference counting still frees
    everything; the previous collector state is restored afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class PreparedRun:
    """The checked arguments of a run (prepare_run): the kept and dropped jobs, the views the scheduler sees and
    each job's empty-cluster estimate. The event loop takes the views (`take_views`), so that they go with its
    simulation, before the audit: a replay of millions of jobs never audits while holding a view per job."""

    kept: list[Job]
    dropped: list[Hashable]
    views: list[JobView] | None
    estimates: list[EmptyClusterEstimate]

    def take_views(self) -> list[JobView]:
        """The views, once: the run holds them no longer."""
        views, self.views = self.views, None
        if views is None:
            raise RuntimeError("the views of a prepared run were taken already")
        return views


def prepare_run(jobs: Sequence[Job], cluster: Cluster, scheduler: Scheduler, placer: Placer,
                predictions: Mapping[Hashable, float] | None, timing: TimingModel, drop_oversize: bool,
                estimate_placer: Placer | None) -> PreparedRun:
    """The checked arguments of a run: kept and dropped jobs, the views the scheduler sees and each job's
    empty-cluster estimate (cached per plan), for the non-preemptive and the preemptive loop alike."""
    _check_arguments(jobs, cluster, scheduler, placer, predictions)
    kept, dropped = _check_jobs(jobs, cluster, drop_oversize)
    predicted = _predicted(kept, predictions)
    estimates = _pooled_estimates(kept, cluster, timing, estimate_placer) if cluster.pooled else \
        _estimates(kept, cluster, timing, estimate_placer)
    _check_predicted_work(kept, predicted, estimates)
    oracle = bool(getattr(scheduler, "oracle", False))
    views = [new_view(
                 job_id=job.job_id, order=k, release=float(job.release), gpus=job.plan.gpus,
                 plan=job.plan, user=job.user, group=job.group, predicted_iterations=predicted[k],
                 alpha_min=estimates[k].alpha_min, alpha_max=estimates[k].alpha_max,
                 min_servers=estimates[k].min_servers, iterations=job.iterations if oracle else None,
                 pool_alpha_min=estimates[k].pool_alpha_min)
             for k, job in enumerate(kept)]
    return PreparedRun(kept, dropped, views, estimates)


def _estimates(kept: list[Job], cluster: Cluster, timing: TimingModel,
               estimate_placer: Placer | None) -> list[EmptyClusterEstimate]:
    """Each job's empty-cluster estimate on a one-pool cluster, computed once per plan."""
    cache: dict[TrainingPlan, EmptyClusterEstimate] = {}
    by_identity: dict[int, EmptyClusterEstimate] = {}  # jobs of one table share plan objects; hashing a plan is slow
    estimates = []
    for job in kept:
        estimate = by_identity.get(id(job.plan))
        if estimate is None:
            if job.plan not in cache:
                cache[job.plan] = empty_cluster_estimate(job.plan, cluster, timing, estimate_placer)
            estimate = by_identity[id(job.plan)] = cache[job.plan]
        estimates.append(estimate)
    return estimates


def _pooled_estimates(kept: list[Job], cluster: Cluster, timing: TimingModel,
                      estimate_placer: Placer | None) -> list[EmptyClusterEstimate]:
    """Each job's estimate on a cluster given as pools (its fastest pool's, and one per pool), computed once
    per set of plans."""
    cache: dict[int, EmptyClusterEstimate] = {}  # by identity of the shared plans (hashing plans is slow)
    estimates = []
    for plans in pool_plans_of(kept, cluster):
        estimate = cache.get(id(plans))
        if estimate is None:
            estimate = cache[id(plans)] = pooled_estimate(plans, cluster, timing, estimate_placer)
        estimates.append(estimate)
    return estimates


def simulate_nonpreemptive(prepared: PreparedRun, cluster: Cluster, scheduler: Scheduler, placer: Placer,
                           timing: TimingModel, progress: bool) -> SimulationResult:
    """The non-preemptive run of prepared jobs, audited once the simulation (its views, job index and cluster
    state) is gone."""
    kept, dropped = prepared.kept, prepared.dropped
    with _cyclic_gc_paused():
        records = _Simulation(kept, prepared.take_views(), cluster, scheduler, placer, timing, prepared.estimates,
                              progress).run()
        audit_schedule(records, cluster, kept, timing)
    metrics = schedule_metrics(records, cluster, dropped=len(dropped))
    metrics.update(dispatch_counts(scheduler))
    metrics.update(type_metrics(records, cluster, metrics))
    return SimulationResult(records, metrics, tuple(dropped), scheduler.name, placer.name)
