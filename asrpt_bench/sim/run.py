"""simulate(): one run of a scheduler and a placer on jobs, by the event loop the scheduler needs (the
non-preemptive engine, sim/preemptive.py for a scheduler that declares `preemptive = True`, or the
replay of a log's own start times, sim/replay.py, for one that declares `replays_log = True`)."""

from __future__ import annotations

from typing import Hashable, Mapping, Sequence

from ..core import Cluster, Job
from ..placement.base import Placer
from ..schedulers.views import Scheduler
from ..timing import DEFAULT_TIMING, TimingModel
from .engine import SimulationResult, prepare_run, simulate_nonpreemptive
from .preemptive import simulate_preemptive
from .replay import simulate_replay


def simulate(jobs: Sequence[Job], cluster: Cluster, scheduler: Scheduler, placer: Placer,
             predictions: Mapping[Hashable, float] | None = None, timing: TimingModel = DEFAULT_TIMING,
             drop_oversize: bool = False, progress: bool = False,
             estimate_placer: Placer | None = None) -> SimulationResult:
    """Simulate `jobs` on `cluster`; the schedule is audited before it is returned.

    predictions: job_id -> predicted iterations, computed before the run (None = perfect).
    estimate_placer: the placer whose empty-cluster placement gives alpha~min (default: Heavy-Edge
    with `timing`, as in the paper); estimates are cached per plan.
    """
    kept, dropped, views, estimates = prepare_run(jobs, cluster, scheduler, placer, predictions, timing,
                                                  drop_oversize, estimate_placer)
    run = simulate_preemptive if getattr(scheduler, "preemptive", False) else simulate_nonpreemptive
    if getattr(scheduler, "replays_log", False):
        run = simulate_replay
    return run(kept, dropped, views, cluster, scheduler, placer, timing, estimates, progress)
