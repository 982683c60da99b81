"""simulate(): one run of a scheduler and a placer on jobs, by the event loop the scheduler needs (the
non-preemptive engine, sim/preemptive.py for a scheduler that declares `preemptive = True`, or the
replay of a log's own start times, sim/replay.py, for one that declares `replays_log = True`)."""

from __future__ import annotations

from typing import Hashable, Mapping, Sequence

from ..core import Cluster, Job, PreemptionPrice
from ..placement.base import Placer
from ..rules import instance_of
from ..schedulers.views import Scheduler
from ..timing import DEFAULT_TIMING, TimingModel
from .engine import SimulationResult, prepare_run, simulate_nonpreemptive
from .preemptive import simulate_preemptive
from .replay import simulate_replay

PRICE = instance_of(PreemptionPrice, "a PreemptionPrice (the preemption group)")


def simulate(jobs: Sequence[Job], cluster: Cluster, scheduler: Scheduler, placer: Placer,
             predictions: Mapping[Hashable, float] | None = None, timing: TimingModel = DEFAULT_TIMING,
             drop_oversize: bool = False, progress: bool = False,
             estimate_placer: Placer | None = None,
             preemption: PreemptionPrice = PreemptionPrice()) -> SimulationResult:
    """Simulate `jobs` on `cluster`; the schedule is audited before it is returned.

    predictions: job_id -> predicted iterations, computed before the run (None = perfect).
    estimate_placer: the placer whose empty-cluster placement gives alpha~min (default: Heavy-Edge
    with `timing`, as in the paper); estimates are cached per plan.
    preemption: what each resumption of a suspended job costs (the run's `preemption` group); only a
    preemptive scheduler suspends jobs, so only its schedule depends on it.
    """
    PRICE.require("preemption", preemption)
    kept, dropped, views, estimates = prepare_run(jobs, cluster, scheduler, placer, predictions, timing,
                                                  drop_oversize, estimate_placer)
    if getattr(scheduler, "replays_log", False):
        return simulate_replay(kept, dropped, views, cluster, scheduler, placer, timing, estimates, progress)
    if getattr(scheduler, "preemptive", False):
        return simulate_preemptive(kept, dropped, views, cluster, scheduler, placer, timing, estimates, progress,
                                   preemption)
    return simulate_nonpreemptive(kept, dropped, views, cluster, scheduler, placer, timing, estimates, progress)
