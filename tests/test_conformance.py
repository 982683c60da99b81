"""The plugin authors' conformance kit (asrpt_bench.testing) on every built-in component, and on a
component that breaks each rule, so the kit is known to catch it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from asrpt_bench.params import Params, param
from asrpt_bench.placement import PLACERS
from asrpt_bench.prediction import PREDICTORS
from asrpt_bench.registry import Registry
from asrpt_bench.rules import integer
from asrpt_bench.schedulers import FIFO, SCHEDULERS
from asrpt_bench.testing import (check_parameter_refusals, check_placer, check_predictor, check_scheduler,
                                 check_workload)
from asrpt_bench.workloads.sources import WORKLOADS

pytestmark = pytest.mark.usefixtures("forget_new_registries")


@pytest.mark.parametrize("name", sorted(set(SCHEDULERS) - {"recorded"}))  # replays a log: test_recorded.py
def test_every_built_in_scheduler_conforms(name: str) -> None:
    check_scheduler(name)


@pytest.mark.parametrize("name", sorted(set(PLACERS) - {"ilp"}))
def test_every_built_in_placer_conforms(name: str) -> None:
    check_placer(name)


def test_the_ilp_placer_conforms() -> None:
    check_placer("ilp", {"objective": "alpha"})


@pytest.mark.parametrize("name", sorted(set(PREDICTORS) - {"walltime"}))  # reads a log's limits: test_walltime.py
def test_every_built_in_predictor_conforms(name: str) -> None:
    check_predictor(name)


def test_the_synthetic_source_conforms() -> None:
    check_workload("synthetic", {"synthetic_jobs": 80})


def test_the_mg1_source_conforms() -> None:
    check_workload("mg1", {"arrivals": 80})


LOGS = Path(__file__).parent / "data" / "joblogs"


@pytest.mark.parametrize("name, fixture", [("slurm", "sacct.txt"), ("swf", "small.swf"),
                                           ("helios", "cluster_log.csv"), ("acme", "trace_seren.csv")])
def test_every_job_log_source_conforms(name: str, fixture: str) -> None:
    check_workload(name, {"path": str(LOGS / fixture), "train_fraction": 0.5})


def test_every_trace_source_is_covered_by_a_conformance_test() -> None:
    traces = {name for name in WORKLOADS if WORKLOADS.entry(name).meta["kind"] == "trace"}
    assert traces == {"philly", "gavel", "pai2020", "csv", "synthetic", "memory",  # tests/test_workloads_*, test_api
                      "slurm", "swf", "helios", "acme", "mg1"}  # above


@dataclass(frozen=True)
class DepthParams(Params):
    depth: int = param(1, integer(1), "how far the head may look")


def test_the_kit_catches_a_parameter_that_is_never_checked() -> None:
    registry: Registry[object] = Registry("scheduler_kit_test")
    registry.register("lax", DepthParams)(lambda depth=1: FIFO())  # never checks depth itself
    with pytest.raises(AssertionError, match=r"\(constructed directly\): depth=None was accepted, but its rule "
                                             r"refuses it"):
        check_parameter_refusals("scheduler_kit_test", "lax", lambda values: registry.make("lax", values),
                                 lambda values: registry.entry("lax").factory(**values))


def test_the_kit_catches_a_nondeterministic_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from asrpt_bench.schedulers.base import QueueScheduler, register_scheduler

    @register_scheduler("coin_kit_test")
    class Coin(QueueScheduler):
        def __init__(self) -> None:
            super().__init__("coin_kit_test", lambda job, source: random.random(), strict=True)

    try:
        with pytest.raises(AssertionError, match="two runs on the same jobs gave different schedules"):
            check_scheduler("coin_kit_test")
    finally:
        del SCHEDULERS["coin_kit_test"]
