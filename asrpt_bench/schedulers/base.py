"""The registry of schedulers and the one-queue scheduler every order builds on (the views a scheduler
sees and the Scheduler protocol are in views.py, re-exported here).

Schedulers decide *when and in which order* jobs start; placers decide *where*; the simulator
applies both and is the only code that mutates cluster state. A scheduler sees `JobView`s, which
carry true iterations only when the scheduler declares `oracle = True`, and asks the simulator
for placements through a `DispatchContext`.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from ..core import Cluster, ConfigError
from ..params import NoParams, Params, param
from ..registry import Entry as RegistryEntry
from ..registry import Registry
from ..rules import one_of, seconds
from .conservative import ConservativeFold
from .dispatch import DISPATCH_RULES, OVERRUN_POLICIES, Backfill, Candidates, Estimates
from .queues import CountQueue
from .views import (DURATION_SOURCES, DispatchContext, DurationSource, EventKind, JobView, Proposal,  # noqa: F401
                    RunningJob, Scheduler)


VARIANT_SEPARATOR = "+"


class SchedulerRegistry(Registry):
    """The scheduler registry; it also resolves `<name>+<dispatch>` (e.g. `asrpt+easy`): scheduler <name>
    with that dispatch rule and that name, so one compare run can hold several dispatch rules of one
    order side by side (`task.schedulers=[asrpt,asrpt+easy,spjf+easy]`). Variants are not listed
    (iteration yields the registered names only); their other parameters are their base's. The name's
    rule is the variant's dispatch: another `dispatch` given with it is refused as conflicting."""

    def __getitem__(self, name: str) -> RegistryEntry[Scheduler]:
        try:
            return super().__getitem__(name)
        except KeyError:
            variant = self._variant(name)
            if variant is None:
                raise
            return variant

    def unknown_hint(self) -> str:
        return f", or <name>{VARIANT_SEPARATOR}<dispatch> with dispatch one of {list(DISPATCH_RULES)}"

    def variant_rule(self, name: str) -> str | None:
        """The dispatch rule a variant's name sets (`fifo+easy`: easy); None for a registered name."""
        return None if self.is_known(name) or self._variant(name) is None else name.partition(VARIANT_SEPARATOR)[2]

    def parse(self, name: str, values: Mapping[str, Any] | None = None, prefix: str | None = None,
              acts: bool = True) -> Params:
        """As Registry.parse; a variant's dispatch is its name's rule (another one given is refused)."""
        rule = self.variant_rule(name)
        if rule is not None:
            values = dict(values or {})
            _require_rule(name, rule, values.setdefault("dispatch", rule), prefix or self.kind)
        return super().parse(name, values, prefix, acts)

    def _variant(self, name: object) -> RegistryEntry[Scheduler] | None:
        if not isinstance(name, str) or VARIANT_SEPARATOR not in name:
            return None
        base_name, _, rule = name.partition(VARIANT_SEPARATOR)
        if not self.is_known(base_name) or rule not in DISPATCH_RULES:
            return None
        base = super().__getitem__(base_name)
        if "dispatch" not in base.params.names():
            return None

        def variant(**values: object) -> Scheduler:
            _require_rule(name, rule, values.setdefault("dispatch", rule), self.kind)
            scheduler = base.factory(**values)
            scheduler.name = name
            return scheduler

        return dataclasses.replace(base, name=name, factory=variant)


def _require_rule(name: str, rule: str, given: object, prefix: str) -> None:
    if given != rule:
        raise ConfigError(f"{prefix}.dispatch={given!r} conflicts with scheduler {name!r}, whose name sets its "
                          f"dispatch rule {rule!r}")


SCHEDULERS: Registry[Scheduler] = SchedulerRegistry("scheduler")


def register_scheduler(name: str, params: type[Params] = NoParams, *, needs: tuple[str, ...] = (),
                       replace: bool = False) -> Callable:
    """Decorator: the scheduler is `scheduler=<name>`, with the keys of `params` (its constructor's keywords);
    `needs` names what the caller supplies."""
    return SCHEDULERS.register(name, params, needs=needs, replace=replace)


def make_scheduler(name: str, **params: object) -> Scheduler:
    """Scheduler `name` with these parameters (checked like `scheduler.<key>=...` on the command line)."""
    return SCHEDULERS.make_from_keywords(name, **params)


def predicted_duration(job: JobView, source: DurationSource) -> float:
    """Iterations (predicted or true) times the empty-cluster per-iteration time estimate."""
    return job.iterations_for(source) * job.alpha_min


JobKey = Callable[[JobView, DurationSource], float]


Entry = tuple[float, float, int, JobView]
"""A queued job: (key, release, input order, job). Input order is unique, so entries compare as tuples
without ever comparing two jobs."""


@dataclass(frozen=True)
class QueueParams(Params):
    """Parameters of a one-queue scheduler (fifo, spjf, spwf; the wcs_* subclass changes the default dispatch)."""

    dispatch: str = param("strict", one_of(*DISPATCH_RULES),
                          "which queued jobs may start: strict (the head only), easy, conservative, greedy (all fitting)")
    duration_source: str = param("predicted", one_of(*DURATION_SOURCES),
                                 "iterations the order and estimates use: predicted, or true (oracle)")
    overrun: str = param("none", one_of(*OVERRUN_POLICIES),
                         "a running job past its estimated end: ends now (none) or its estimate doubles (double)")
    min_estimate_s: float = param(0.0, seconds(),
                                  "floor of every backfilling estimate (jobs predicted at 0 iterations)")

    ORDER_READS_DURATIONS: ClassVar[bool] = True
    """False for an order by submission time: then durations matter only to backfilling estimates."""

    def inert_keys(self) -> list[str]:
        """overrun and min_estimate_s (and duration_source, for an order that reads no durations) act only on
        the estimates of easy and conservative backfilling: with strict or greedy dispatch they change nothing."""
        return inert_estimate_keys(self, ["overrun", "min_estimate_s"] + ([] if self.ORDER_READS_DURATIONS
                                                                          else ["duration_source"]))

    def inert_message(self, prefix: str, key: str) -> str:
        return backfilling_only(prefix, key, self.dispatch)


BACKFILLING = ("easy", "conservative")
"""The dispatch rules that estimate durations (and so read overrun and min_estimate_s)."""


def inert_estimate_keys(params: Params, keys: list[str]) -> list[str]:
    """Those of `keys` changed from their defaults, if `params`' dispatch rule does not backfill."""
    if getattr(params, "dispatch") in BACKFILLING:
        return []
    defaults = type(params)()
    return [key for key in keys if getattr(params, key) != getattr(defaults, key)]


def backfilling_only(prefix: str, key: str, dispatch: str) -> str:
    return (f"{prefix}.{key} acts only on backfilling estimates ({prefix}.dispatch=easy or conservative); with "
            f"{prefix}.dispatch={dispatch!r} it would change nothing")


NO_LENGTHS = (0.0,)
"""A queued job's lengths where no dispatch rule reads them (strict, greedy, conservative)."""


class QueueScheduler:
    """Non-preemptive dispatch from one queue ordered by (key, release, input order).

    `dispatch` (dispatch.py): "strict", only the head may start; "greedy" (work-conserving), scan the
    whole queue in key order and start every job that fits; "easy" and "conservative", backfilling
    that does not delay the head's shadow time / any earlier reservation. Jobs are eligible at release.
    `strict` is the plain constructor's spelling for a plugin's queue (True: "strict", False:
    "greedy"), used when `dispatch` is None; the `scheduler.dispatch` key always names a rule (null is
    refused like any value outside its rule).

    The queue is a queues.CountQueue keyed by the entries (A-SRPT's pending queue is one too): split by
    GPU count, each count in blocks that know their shortest estimated job, so a greedy or EASY scan
    behind a blocked head visits, in key order, only the jobs that may start (a GPU count that no longer
    fits the idle GPUs is dropped for the rest of the scan; an EASY block whose every job would end after
    the shadow time and needs more than the extra GPUs is skipped whole). The order of proposals and
    starts is exactly that of a scan over the whole queue.
    """

    oracle = False

    def __init__(self, name: str, key: JobKey, strict: bool | None = None,
                 duration_source: DurationSource = QueueParams.duration_source, dispatch: str | None = None,
                 overrun: str = QueueParams.overrun, min_estimate_s: float = QueueParams.min_estimate_s,
                 params_type: type[QueueParams] = QueueParams) -> None:
        if dispatch is None and strict is not None:  # the plain API: a strict or work-conserving queue
            dispatch = "strict" if strict else "greedy"
        params_type(dispatch=dispatch, duration_source=duration_source, overrun=overrun,
                    min_estimate_s=min_estimate_s).check("scheduler")
        self.name = name
        self.key = key
        self.dispatch_rule = dispatch
        self.strict = dispatch == "strict"
        self.duration_source = duration_source
        self.oracle = duration_source == "oracle"
        self.overrun = overrun
        self.min_estimate_s = float(min_estimate_s)
        self.queue_: CountQueue[Entry] = CountQueue()
        self.pooled_ = False
        self._clear()

    def _clear(self) -> None:
        self.queue_ = CountQueue(in_order=self.dispatch_rule == "conservative")
        self.backfill_ = Backfill(Estimates(lambda job: job.iterations_for(self.duration_source), self.overrun,
                                            self.min_estimate_s))
        if self.dispatch_rule == "easy":
            self.backfill_.candidates = Candidates()
        self.fold_: ConservativeFold[Entry] = ConservativeFold(self.backfill_)

    def reset(self, cluster: Cluster) -> None:
        self.pooled_ = cluster.pooled
        self._clear()

    def dispatch_counts(self) -> dict[str, float]:
        """Backfilled starts and reservation violations of the last run (dispatch.Backfill.counts)."""
        return self.backfill_.counts(self.dispatch_rule)

    def on_arrival(self, job: JobView, now: float) -> None:
        entry = (self.key(job, self.duration_source), job.release, job.order, job)
        backfilling = self.dispatch_rule in ("easy", "conservative")
        # read by the scans of EASY and conservative
        lengths = self.backfill_.queued_lengths(job) if backfilling else NO_LENGTHS
        self.queue_.insert(entry, job.gpus, lengths, key=entry)
        self.fold_.inserted(entry)
        candidates = self.backfill_.candidates
        if candidates is not None:
            candidates.add(job.gpus, self.backfill_.queued_duration(job))

    def dispatch(self, ctx: DispatchContext) -> None:
        rule = self.dispatch_rule
        if rule == "strict":
            self._start_heads(ctx)
        elif rule == "conservative":
            self._dispatch_conservative(ctx)
        else:
            self._dispatch_behind(ctx, rule)

    def _try_start(self, entry: Entry, ctx: DispatchContext) -> bool:
        job = entry[3]
        proposal = ctx.propose(job) if job.gpus <= ctx.idle_gpus else None
        if proposal is None:
            return False
        ctx.start(proposal, eligible=job.release)
        self.backfill_.running.add(job, ctx.now, proposal.alpha, proposal.pool)
        return True

    def on_completion(self, job: JobView, now: float) -> None:
        self.backfill_.running.remove(job)
        self.fold_.completed(job, now)

    def _leave(self, entry: Entry) -> None:
        """A started job leaves the queue (and EASY's candidates)."""
        self.queue_.remove(entry)
        candidates = self.backfill_.candidates
        if candidates is not None:
            candidates.remove(entry[3].gpus, self.backfill_.queued_duration(entry[3]))

    def _start_heads(self, ctx: DispatchContext) -> Entry | None:
        """Start the head while it may (strict); the head left blocked, None once the queue is empty."""
        queue = self.queue_
        while queue:
            head = queue.head()
            if not self._try_start(head, ctx):
                return head
            self.backfill_.note_start(head[3], ctx.now)
            self._leave(head)
        return None

    def _dispatch_behind(self, ctx: DispatchContext, rule: str) -> None:
        """Greedy or EASY: start the head while it may, then the jobs behind the blocked head that may start
        (dispatch.Backfill.behind, over the block queue)."""
        head = self._start_heads(ctx)
        if head is None:
            return
        now = ctx.now
        for entry in self.backfill_.behind(rule, self.queue_, head, ctx, _entry_job,
                                           lambda entry: self._try_start(entry, ctx), lambda entry: now):
            self._leave(entry)

    def _dispatch_conservative(self, ctx: DispatchContext) -> None:
        """Conservative backfilling: conservative.ConservativeFold, its reservations kept between instants; on
        a cluster of several pools the full pass of dispatch.Backfill (one profile per pool) over the queue."""
        now, queue = ctx.now, self.queue_
        if self.pooled_:
            ordered = list(queue)
            positions = self.backfill_.conservative(ordered, ctx, _entry_job, lambda entry: self._try_start(entry, ctx),
                                                    lambda entry: now) if ordered else []
            for position in positions:
                queue.remove(ordered[position])
            return
        for entry in self.fold_.decide(ctx, queue, _entry_job, lambda entry, at_head: self._try_start(entry, ctx),
                                       lambda entry: now):
            queue.remove(entry)

    def next_timer(self) -> tuple[float, EventKind] | None:
        return None


_entry_job: Callable[[Entry], JobView] = operator.itemgetter(3)


class OrderedQueue(QueueScheduler):
    """A queue scheduler that is its name, its order and its parameters' dataclass: subclasses set NAME,
    KEY (a staticmethod) and PARAMS, whose fields and defaults are the constructor's keywords."""

    NAME: ClassVar[str] = ""
    KEY: ClassVar[JobKey]
    PARAMS: ClassVar[type[QueueParams]] = QueueParams

    def __init__(self, **values: object) -> None:
        names = self.PARAMS.names()
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ConfigError(f"scheduler {self.NAME!r}: unknown parameter(s) {unknown}; its parameters: {names}")
        params = self.PARAMS(**values)  # type: ignore[arg-type]
        super().__init__(self.NAME, self.KEY, params_type=self.PARAMS, **params.values())


def duration_key(job: JobView, source: DurationSource) -> float:
    """Predicted duration n~ * alpha~min (SPJF, WCS-Duration)."""
    return predicted_duration(job, source)


def workload_key(job: JobView, source: DurationSource) -> float:
    """Predicted GPU-time g * n~ * alpha~min (SPWF, WCS-Workload)."""
    return job.gpus * predicted_duration(job, source)


def submission_key(job: JobView, source: DurationSource) -> float:
    """Submission (release) time (WCS-SubTime, FIFO)."""
    return job.release
