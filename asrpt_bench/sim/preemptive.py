"""The event-driven preemptive simulator, for schedulers that declare `preemptive = True`.

It extends the non-preemptive engine's `_Simulation` (same job views, estimates, cluster state,
placer protocol and records) with suspension: a running job can be suspended at a decision instant
and keeps its progress (fluid: fractional iterations count). When it runs again, possibly elsewhere
with alpha from its new placement, it first holds its GPUs for `restart_s` seconds without progress;
after each (re)start it cannot be suspended until it has made `min_run_s` seconds of progress.

Decision instants: arrivals, completions, ends of restarts, ends of min-run windows and the
scheduler's own timers. Events of one instant are handled completions first, then arrivals (read in
release order beside the event heap), then the others in the order of `Event`, and the scheduler
decides once. Every run segment is recorded and the schedule is audited (audit.audit_preemptive).

Runs of srtf, srtf_oracle, psjf, psjf_oracle and las2d take the compiled copy of this loop and of their walk
(preemptive_compiled.py, which says which runs; the same schedules); every other run takes this one.
"""

from __future__ import annotations

import heapq
import math
from enum import IntEnum
from operator import itemgetter
from typing import Sequence

import numpy as np

from ..core import Cluster, Job, PreemptionPrice
from ..placement.base import Placer
from ..schedulers.base import JobView, Proposal
from ..schedulers.preemptive import PreemptiveScheduler
from ..timing import TimingModel
from .audit import audit_preemptive
from .engine import EmptyClusterEstimate, PreparedRun, SimulationResult, _cyclic_gc_paused, _Simulation
from .metrics import busy_share, preemption_counts, schedule_metrics, type_metrics
from .preemptive_compiled import compiled_rule, run_compiled
from .records import JobRecord, RecordTable, Segment, SegmentTable, put_preempted, record_column
from .running import RunningTable


EVENTS_PER_RUNNING = 3
"""A running job has at most three live events: its completion, the end of its restart and of its min-run window."""
COMPACT_SLACK = 64
"""The event heap is compacted when it holds more than twice the live events a run can have plus this."""


class Event(IntEnum):
    """Event kinds in the order they are handled at one instant."""

    COMPLETION = 0
    ARRIVAL = 1  # arrivals are read beside the heap, in this place of the order
    RESTART_END = 2
    MIN_RUN_END = 3
    TIMER = 4


COMPLETION, RESTART_END, MIN_RUN_END = int(Event.COMPLETION), int(Event.RESTART_END), int(Event.MIN_RUN_END)


class _PreemptiveContext:
    """What a preemptive scheduler gets at one decision: never the true iterations or end times."""

    __slots__ = ("_simulation", "total_gpus", "restart_s")

    def __init__(self, simulation: "_PreemptiveSimulation") -> None:
        self._simulation = simulation
        self.total_gpus = simulation.cluster.total_gpus
        self.restart_s = simulation.restart_s

    @property
    def now(self) -> float:
        return self._simulation.now

    def progress(self, job: JobView) -> float:
        return self._simulation.progress(job.order)

    def run_seconds(self, job: JobView) -> float:
        simulation, i = self._simulation, job.order
        current = simulation.now - simulation.run_start[i] if simulation.running[i] else 0.0
        return simulation.ran[i] + max(0.0, current)

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(input orders, suspendable, progress, run_seconds) of every running job, in one vectorised step."""
        return self._simulation.table.states(self._simulation.now)

    def running_states_of(self, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(progress, run_seconds) of the running jobs with these input orders, as two arrays in that order."""
        return self._simulation.table.states_of(orders, self._simulation.now)

    def protected_until(self, job: JobView) -> float:
        return self._simulation.protected_until[job.order]

    def protection_ended(self) -> list[JobView]:
        """The running jobs whose protected window ended at this instant."""
        return [self._simulation.views[i] for i in self._simulation.unprotected]

    def running_states(self, jobs: list[JobView]) -> list[tuple[bool, float, float]]:
        """(suspendable, progress, run_seconds) of each running job, in one pass."""
        simulation, now = self._simulation, self._simulation.now
        done, ran, run_start, alpha = simulation.done, simulation.ran, simulation.run_start, simulation.alpha
        protected, iterations = simulation.protected_until, simulation.iterations
        states = []
        for job in jobs:
            i = job.order
            running = now - run_start[i]
            if running > 0:
                states.append((now >= protected[i], min(iterations[i], done[i] + running / alpha[i]), ran[i] + running))
            else:
                states.append((now >= protected[i], done[i], ran[i]))
        return states

    def suspend(self, job: JobView) -> None:
        self._simulation.suspend(job.order)

    def propose(self, job: JobView) -> Proposal | None:
        return self._simulation.propose(job)

    def propose_in(self, job: JobView, pool: int) -> Proposal | None:
        return self._simulation.propose(job, pool if self._simulation.pools is not None else None)

    def choose_pool(self, job: JobView, room: list[int]) -> int | None:
        pools = self._simulation.pools
        if pools is None:
            return 0 if room[0] >= job.gpus else None
        return pools.plan_pool(job, room)

    def start(self, proposal: Proposal) -> None:
        self._simulation.resume(proposal)


class _PreemptiveSimulation(_Simulation):
    """One preemptive run: the engine's state plus each job's progress, segments and protection."""

    def __init__(self, jobs: list[Job], views: list[JobView], cluster: Cluster, scheduler: PreemptiveScheduler,
                 placer: Placer, timing: TimingModel, estimates: list[EmptyClusterEstimate], progress: bool,
                 preemption: PreemptionPrice) -> None:
        super().__init__(jobs, views, cluster, scheduler, placer, timing, estimates, progress)  # type: ignore[arg-type]
        self.restart_s, self.min_run_s = float(preemption.restart_s), float(preemption.min_run_s)
        n = len(jobs)
        self.done = [0.0] * n             # iterations banked by earlier segments
        self.iterations = [float(job.iterations) for job in jobs]
        self.running = [False] * n
        self.segment_start = [0.0] * n
        self.run_start = [0.0] * n        # progress accrues from here (segment start + restart)
        self.protected_until = [0.0] * n
        self.alpha = [0.0] * n
        self.pool = [0] * n
        self.placement: list[tuple[int, ...]] = [()] * n
        self.gpu_ids: list[tuple[int, ...]] = [()] * n
        self.epoch = [0] * n              # bumps on suspension and completion: older events are stale
        self.ran = [0.0] * n              # seconds of progress (restarts excluded) in finished segments
        self.first_start = [math.nan] * n
        self.preemptions = [0] * n
        self.restarted = [0.0] * n
        self.segments = SegmentTable()
        self.timer: float | None = None
        self.table = RunningTable(cluster.total_gpus)
        self.unprotected: list[int] = []  # jobs whose protected window ended at the current instant

    def _compact(self) -> None:
        """Drop the heap's dead events once they outnumber the live ones: a suspended or finished job's events
        (its epoch moved on) and timers the scheduler replaced. Read only as they come due, a dead event is
        skipped there, but every suspension leaves its job's completion in the heap until that time passes.
        A live event belongs to a running job (at most EVENTS_PER_RUNNING each) or is the timer, so each
        compaction at least halves the heap; the live events come due as before."""
        epoch, timer = self.epoch, self.timer
        self.heap[:] = [event for event in self.heap if (event[4] == epoch[event[3]] if event[3] >= 0 else event[0] == timer)]
        heapq.heapify(self.heap)

    def schedule(self, time: float, kind: Event, i: int) -> None:
        heapq.heappush(self.heap, (time, int(kind), next(self.sequence), i, self.epoch[i] if i >= 0 else 0))

    def progress(self, i: int) -> float:
        done = self.done[i]
        if self.running[i] and self.now > self.run_start[i]:
            done = min(float(self.jobs[i].iterations), done + (self.now - self.run_start[i]) / self.alpha[i])
        return done

    def resume(self, proposal: Proposal) -> None:
        """Start or resume a job on the proposed placement now (a resumption pays the restart)."""
        i = self.index[proposal.job_id]
        job = self.jobs[i]
        if self.running[i] or self.records.written(i):
            raise RuntimeError(f"scheduler {self.scheduler.name!r} started job {job.job_id!r}, which is "
                               f"{'running' if self.running[i] else 'finished'}")
        placement = self.checked_placement(job, proposal)
        now = self.now
        self.gpu_ids[i] = self.state.allocate(job.job_id, placement)
        self.placement[i] = placement.servers
        self.alpha[i] = proposal.alpha
        self.pool[i] = proposal.pool
        fresh = math.isnan(self.first_start[i])
        if fresh:
            self.first_start[i] = now
        restart = 0.0 if fresh else self.restart_s
        self.running[i] = True
        self.segment_start[i] = now
        self.run_start[i] = run_start = now + restart
        self.protected_until[i] = run_start + self.min_run_s
        self.table.add(i, self.done[i], self.ran[i], run_start, proposal.alpha, self.iterations[i],
                       self.protected_until[i])
        # `schedule` for each of the job's events, inline (every segment pays it)
        heap, sequence, epoch = self.heap, self.sequence, self.epoch[i]
        heapq.heappush(heap, (run_start + (job.iterations - self.done[i]) * proposal.alpha, COMPLETION, next(sequence),
                              i, epoch))
        if restart > 0:
            heapq.heappush(heap, (run_start, RESTART_END, next(sequence), i, epoch))
        if self.min_run_s > 0:
            heapq.heappush(heap, (run_start + self.min_run_s, MIN_RUN_END, next(sequence), i, epoch))

    def _end_segment(self, i: int) -> None:
        now, start, run_start = self.now, self.segment_start[i], self.run_start[i]
        restarted = min(run_start, now) - start
        self.segments.append(self.jobs[i].job_id, start, now, restarted, self.alpha[i], self.placement[i],
                             self.gpu_ids[i])
        self.restarted[i] += restarted
        self.ran[i] += max(0.0, now - run_start)
        self.running[i] = False
        self.table.remove(i)
        self.epoch[i] += 1
        self.state.release(self.jobs[i].job_id)

    def suspend(self, i: int) -> None:
        job = self.jobs[i]
        if not self.running[i] or self.now < self.protected_until[i]:
            raise RuntimeError(f"scheduler {self.scheduler.name!r} suspended job {job.job_id!r}, which is "
                               f"{'inside its protected window' if self.running[i] else 'not running'}")
        self.done[i] = self.progress(i)
        self.preemptions[i] += 1
        self._end_segment(i)

    def complete(self, i: int) -> None:
        job, view, estimate = self.jobs[i], self.views[i], self.estimates[i]
        self._end_segment(i)
        self.done[i] = float(job.iterations)
        placement = self.placement[i]
        put_preempted(self.records, i, job, view, estimate, placement, self.gpu_ids[i], self.pool_names[self.pool[i]],
                      self.first_start[i], self.now, self.alpha[i], self.restarted[i], self.ran[i], self.preemptions[i])
        self.scheduler.on_completion(view, self.now)  # type: ignore[attr-defined]

    def run(self) -> RecordTable:
        scheduler: PreemptiveScheduler = self.scheduler  # type: ignore[assignment]
        scheduler.reset(self.cluster)
        # arrivals read beside the heap as the engine's loop reads them (a heap of every arrival would hold a
        # tuple and three ints per job from the start); at one instant completions come before them and the
        # other kinds after them, as Event orders them
        jobs = self.jobs
        arrivals = self.arrival_order()
        upcoming = next(arrivals, None)
        next_arrival = math.inf if upcoming is None else jobs[upcoming].release
        heap, views, epoch = self.heap, self.views, self.epoch
        completion, timer_kind = int(Event.COMPLETION), int(Event.TIMER)
        progress = None if self.bar.disable else self.bar.update
        context = _PreemptiveContext(self)
        while heap or next_arrival != math.inf:
            now = next_arrival
            if heap and heap[0][0] <= now:
                now = heap[0][0]
            self.now = now
            decide = False
            self.unprotected = unprotected = []
            while heap and heap[0][0] == now and heap[0][1] == completion:
                _, _, _, i, stamp = heapq.heappop(heap)
                if stamp == epoch[i]:
                    self.complete(i)
                    if progress is not None:
                        progress(1)
                    decide = True
            while next_arrival == now:
                i, upcoming = upcoming, next(arrivals, None)
                next_arrival = math.inf if upcoming is None else jobs[upcoming].release
                scheduler.on_arrival(views[i], now)
                decide = True
            while heap and heap[0][0] == now:
                _, kind, _, i, stamp = heapq.heappop(heap)
                if kind == timer_kind:
                    if now != self.timer:
                        continue
                    self.timer = None
                elif stamp != epoch[i]:
                    continue
                elif now >= self.protected_until[i]:  # the end of a restart or min-run window that ends protection
                    unprotected.append(i)
                decide = True
            if not decide:
                continue
            scheduler.decide(context)
            timer = scheduler.next_timer()
            if timer is not None and timer != self.timer:
                if not timer > now:
                    raise RuntimeError(f"scheduler {scheduler.name!r} asked for a timer at {timer} <= now {now}")
                self.timer = timer
                self.schedule(timer, Event.TIMER, -1)
            if len(heap) > 2 * EVENTS_PER_RUNNING * self.table.size + COMPACT_SLACK:
                self._compact()
        self.bar.close()
        never = self.records.missing()
        if never:
            raise RuntimeError(f"scheduler {scheduler.name!r} with placer {self.placer.name!r} never finished "
                               f"{len(never)} job(s), first {self.jobs[never[0]].job_id!r}")
        return self.records


def preemptive_metrics(records: Sequence[JobRecord], segments: Sequence[Segment], cluster: Cluster,
                       dropped: int) -> dict[str, float | int]:
    """schedule_metrics, with utilization and busy_share from the segments (busy GPU-seconds, restarts
    included, over G x (makespan - first release), and over the release span), the total number of
    suspensions as `preemptions` and their distribution over jobs (metrics.preemption_counts). On a cluster
    given as pools also the per-type metrics (metrics.type_metrics), busy time from the segments."""
    metrics = schedule_metrics(records, cluster, dropped=dropped)
    if records:
        release = np.asarray(record_column(records, "release"), dtype=float)
        first, last = float(release.min()), float(release.max())
        span = metrics["makespan"] - first
        starts, ends = (np.asarray(record_column(segments, name), dtype=float) for name in ("start", "end"))
        widths = np.fromiter(map(len, record_column(segments, "gpu_ids")), float, len(segments))
        busy = math.fsum((widths * (ends - starts)).tolist())
        metrics["utilization"] = busy / (cluster.total_gpus * span) if span > 0 else 0.0
        metrics["busy_share"] = busy_share(starts, ends, widths, first, last, cluster.total_gpus)
    metrics["preemptions"] = int(np.sum(record_column(records, "preemptions"), dtype=np.int64))
    metrics.update(preemption_counts(records))
    if cluster.pooled:
        metrics.update(type_metrics(records, cluster, metrics, _busy_by_type(segments, cluster)))
    return metrics


def _busy_by_type(segments: Sequence[Segment], cluster: Cluster) -> dict[str, float]:
    """GPU-seconds the segments held on each GPU type (a segment runs in the pool of its first server), each
    type's sum taken in segment order."""
    types = list(cluster.types)
    type_of_pool = np.array([types.index(pool.type) for pool in cluster.pool_list], dtype=np.int64)
    count = len(segments)
    first_server = np.fromiter(map(itemgetter(0), record_column(segments, "placement")), np.int64, count)
    held = np.fromiter(map(len, record_column(segments, "gpu_ids")), float, count)
    held *= np.asarray(record_column(segments, "end"), dtype=float) - np.asarray(record_column(segments, "start"), dtype=float)
    busy = np.bincount(type_of_pool[cluster.pool_of_server[first_server]], weights=held, minlength=len(types))
    return dict(zip(types, busy.tolist()))


def simulate_preemptive(prepared: PreparedRun, cluster: Cluster, scheduler: PreemptiveScheduler, placer: Placer,
                        timing: TimingModel, progress: bool, preemption: PreemptionPrice) -> SimulationResult:
    """The preemptive run of prepared jobs (engine.prepare_run checks them and builds views and estimates),
    each resumption charged `preemption`; audited once the simulation (its views, job index and state) is
    gone."""
    kept, dropped = prepared.kept, prepared.dropped
    rule = compiled_rule(scheduler, cluster, kept)
    with _cyclic_gc_paused():
        if rule is not None:
            records, segments = run_compiled(kept, prepared.take_views(), cluster, scheduler, placer, timing,
                                             prepared.estimates, progress, preemption, rule)
        else:
            simulation = _PreemptiveSimulation(kept, prepared.take_views(), cluster, scheduler, placer, timing,
                                               prepared.estimates, progress, preemption)
            records, segments = simulation.run(), simulation.segments
            del simulation
        audit_preemptive(records, segments, cluster, kept, timing, float(preemption.restart_s))
    metrics = preemptive_metrics(records, segments, cluster, len(dropped))
    return SimulationResult(records, metrics, tuple(dropped), scheduler.name, placer.name, segments)
