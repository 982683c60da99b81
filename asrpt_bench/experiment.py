"""run_experiment(RunConfig) -> RunResult: the composition root of one run.

Knows nothing of Hydra. It validates the config, builds every named component once (so a bad
parameter fails before any data is read: build.py), loads the workload and its history (prepare.py:
the pipeline of workloads/, the predictions of prediction/), then runs the task registered under
config.task.name (tasks/) with the run's provenance (provenance.py). Every distinct warning of the run is shown once and listed in the
summary (`warnings`), and what was adjusted to go on is counted there (`adjustments`, adjustments.py).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from .adjustments import RunNotes
from .adjustments import adjust
from .build import build_placer, build_predictor, build_scheduler
from .config import RunConfig
from .io import RunResult
from .placement.heavy_edge import bandwidth_regime
from .prepare import load_workload
from .provenance import config_hash, git_revision, versions
from .solvers import report_fallback, resolve_solver
from .registry import REPLACED
from .tasks import Context, needs_workload, placer_name, run_task, scheduler_names


def check_components(config: RunConfig) -> None:
    """Build every named component once so bad names and parameters fail before data is read."""
    for name in scheduler_names(config):
        build_scheduler(config, name)
        build_placer(config, placer_name(config, name))
    build_predictor(config)


def uses_solver(config: RunConfig) -> bool:
    """Whether the run solves MILPs through the solver layer (so a fallback can happen)."""
    return (config.placement.name == "ilp" or config.task.name == "placement"
            or config.theory.alpha_min_source == "exact")


def run_experiment(config: RunConfig) -> RunResult:
    """Validate, build, load, run the task named by config.task.name; summary gains provenance,
    `adjustments` and `warnings`."""
    with RunNotes() as notes:
        for message in REPLACED:
            adjust("replaced_components", 1, message)
        result = _run(config)
    result.summary.update(notes.summary())
    return result


def _run(config: RunConfig) -> RunResult:
    config.validate()
    check_components(config)
    started = time.perf_counter()
    workload = load_workload(config) if needs_workload(config.task.name) else None
    provenance: dict[str, Any] = {
        "config_hash": config_hash(config),
        "package_version": versions()["asrpt_bench"],
        "git_revision": git_revision(),
        "versions": versions(),
        "seed": config.seed,
        "bandwidth_regime": bandwidth_regime(config.cluster),
    }
    if provenance["bandwidth_regime"] == "spread":
        warnings.warn(f"cluster.b_inter ({config.cluster.b_inter:g} GB/s) > cluster.b_intra "
                      f"({config.cluster.b_intra:g} GB/s): Heavy-Edge spreads jobs across servers instead of "
                      "consolidating them", stacklevel=2)
    if uses_solver(config):
        used = resolve_solver(config.solver.name)
        if used != config.solver.name:
            report_fallback(config.solver.name)
        provenance.update(solver=config.solver.name, solver_used=used,
                          solver_fallback=int(used != config.solver.name))
    if workload is not None:
        provenance.update(workload_source=workload.source, recurrence_keys=workload.recurrence_keys,
                          workload_jobs=len(workload.jobs), history_jobs=len(workload.history),
                          cluster_gpus=workload.cluster.total_gpus, **workload.scalars)
    result = run_task(Context(config, workload, provenance))
    if workload is not None:
        result.summary["cache"] = dict(workload.cache_status)
    result.summary["wall_time_s"] = time.perf_counter() - started
    return result
