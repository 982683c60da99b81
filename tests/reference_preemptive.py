"""Plain preemptive schedulers written from the rules in docs/simulator.md ("The admission walk"), for
tests/test_preemptive_reference.py: at every decision instant the simulator gives them, every released
unfinished job's priority is read afresh through the context's scalar reads, all of them are sorted by
(priority, release, input order), protected running jobs keep their GPUs first, each other job whose GPUs
fit in what is left is admitted, running jobs not admitted are suspended and admitted waiting jobs are
placed in walk order. No waiting lists, no columns, no skipped decisions: the library's AdmissionScheduler
must give the same schedule with its fast structures."""

from __future__ import annotations

import bisect

from asrpt_bench.schedulers.las2d import ATTAINED_TOLERANCE, QUEUE_THRESHOLDS


class PlainAdmission:
    """The admission walk of docs/simulator.md; subclasses give `priority`."""

    preemptive = True
    oracle = False

    def __init__(self, name: str) -> None:
        self.name = name

    def reset(self, cluster) -> None:
        self.released: dict[int, object] = {}
        self.running: set[int] = set()

    def on_arrival(self, job, now: float) -> None:
        self.released[job.order] = job

    def on_completion(self, job, now: float) -> None:
        del self.released[job.order]
        self.running.discard(job.order)

    def next_timer(self) -> float | None:
        return None

    def known(self, job) -> float:
        return job.iterations if self.oracle else job.predicted_iterations

    def priority(self, job, ctx) -> float:
        raise NotImplementedError

    def decide(self, ctx) -> None:
        running = [self.released[order] for order in sorted(self.running)]
        states = {job.order: state for job, state in zip(running, ctx.running_states(running))}
        protected = {job.order for job in running if not states[job.order][0]}
        budget = ctx.total_gpus - sum(self.released[order].gpus for order in protected)
        walk = sorted((job for job in self.released.values() if job.order not in protected),
                      key=lambda job: (self.priority(job, ctx), job.release, job.order))
        admitted = []
        for job in walk:
            if job.gpus <= budget:
                budget -= job.gpus
                admitted.append(job)
        chosen = {job.order for job in admitted}
        for job in walk:
            if job.order in self.running and job.order not in chosen:
                ctx.suspend(job)
                self.running.discard(job.order)
                self.on_suspend(job, ctx)
        for job in admitted:
            if job.order in self.running:
                continue
            proposal = ctx.propose(job)
            if proposal is not None:
                ctx.start(proposal)
                self.running.add(job.order)
                self.on_start(job, ctx)

    def on_suspend(self, job, ctx) -> None:
        pass

    def on_start(self, job, ctx) -> None:
        pass


class PlainSRTF(PlainAdmission):
    """Remaining time: (known iterations - progress) x alpha~min, floored at 0."""

    def priority(self, job, ctx) -> float:
        remaining = self.known(job) - ctx.progress(job)
        return remaining * job.alpha_min if remaining > 0 else 0.0


class PlainPSJF(PlainAdmission):
    """Total size: known iterations x alpha~min."""

    def priority(self, job, ctx) -> float:
        return self.known(job) * job.alpha_min


class PlainLAS2D(PlainAdmission):
    """Tiresias' 2D-LAS without the starvation guard: the queue of a job's attained GPU-seconds (restarts
    excluded), FIFO within a queue; a running job is demoted the instant it crosses a threshold, an instant
    worked out when its segment starts (from when it progresses: after the restart of a resumption) and
    again from each crossing."""

    def __init__(self, name: str, thresholds: tuple[float, ...] = QUEUE_THRESHOLDS) -> None:
        super().__init__(name)
        self.thresholds = thresholds

    def reset(self, cluster) -> None:
        super().reset(cluster)
        self.crossing: dict[int, float] = {}
        self.started: set[int] = set()
        self.now = 0.0

    def queue(self, attained: float) -> int:
        return bisect.bisect_right(self.thresholds, attained + ATTAINED_TOLERANCE)

    def priority(self, job, ctx) -> float:
        return float(self.queue(job.gpus * ctx.run_seconds(job)))

    def book(self, job, runs_from: float, attained: float) -> None:
        queue = self.queue(attained)
        if queue < len(self.thresholds):
            self.crossing[job.order] = runs_from + (self.thresholds[queue] - attained) / job.gpus
        else:
            self.crossing.pop(job.order, None)

    def decide(self, ctx) -> None:
        self.now = ctx.now
        super().decide(ctx)
        for order in sorted(self.running):
            if order in self.crossing and self.crossing[order] <= ctx.now:
                job = self.released[order]
                self.book(job, ctx.now, job.gpus * ctx.run_seconds(job))

    def on_suspend(self, job, ctx) -> None:
        self.crossing.pop(job.order, None)

    def on_start(self, job, ctx) -> None:
        runs_from = ctx.now + (ctx.restart_s if job.order in self.started else 0.0)
        self.started.add(job.order)
        self.book(job, runs_from, job.gpus * ctx.run_seconds(job))

    def on_completion(self, job, now: float) -> None:
        super().on_completion(job, now)
        self.crossing.pop(job.order, None)

    def next_timer(self) -> float | None:
        later = [instant for instant in self.crossing.values() if instant > self.now]
        return min(later) if later else None
