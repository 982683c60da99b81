"""The CLI (typed configs) and the API (registries, components) share one set of checks (rules.py):
a value one refuses the other refuses too, with the very same message."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.config import RunConfig
from asrpt_bench.core import Cluster, ConfigError
from asrpt_bench.placement import make_placer
from asrpt_bench.prediction import make_predictor
from asrpt_bench.params import Params
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.solvers import SolverSettings
from asrpt_bench.timing import TimingModel

SAME_REFUSAL: list[tuple[str, Callable[[], Any]]] = [
    ("scheduler.comm_heavy=0.5", lambda: make_scheduler("asrpt", comm_heavy=0.5)),
    ("scheduler.tau=-1", lambda: make_scheduler("asrpt_oracle", tau=-1.0)),
    ("scheduler.delay_origin=start", lambda: make_scheduler("asrpt", delay_origin="start")),
    ("scheduler=spjf scheduler.duration_source=true_value", lambda: make_scheduler("spjf", duration_source="true_value")),
    ("predictor=noisy predictor.epsilon=-0.1", lambda: make_predictor("noisy", epsilon=-0.1)),
    ("predictor.n_estimators=0", lambda: make_predictor("forest", n_estimators=0)),
    ("predictor.unseen=median", lambda: make_predictor("forest", unseen="median")),
    ("predictor=noisy predictor.mode=sideways", lambda: make_predictor("noisy", mode="sideways")),
    ("placement.allreduce_edges=star", lambda: make_placer("heavy_edge", allreduce_edges="star")),
    ("solver.time_limit_s=0", lambda: SolverSettings(time_limit_s=0.0)),
    ("solver.mip_gap=1.5", lambda: SolverSettings(mip_gap=1.5)),
    ("solver.name=glpk", lambda: SolverSettings("glpk")),
    ("cluster.servers=0", lambda: Cluster(0, 8)),
    ("cluster.b_inter=-12.5", lambda: Cluster(8, 8, b_inter=-12.5)),
    ("timing.microbatches=0", lambda: TimingModel(microbatches=0)),
    ("timing.allreduce=butterfly", lambda: TimingModel(allreduce="butterfly")),
]


@pytest.mark.parametrize(("override", "api_call"), SAME_REFUSAL, ids=[o for o, _ in SAME_REFUSAL])
def test_cli_and_api_refuse_with_the_same_message(override: str, api_call: Callable[[], Any]) -> None:
    with pytest.raises(ConfigError) as cli:
        compose_run_config(override.split())
    with pytest.raises(ConfigError) as api:
        api_call()
    assert str(api.value) == str(cli.value)
    assert str(cli.value).startswith(override.split()[-1].split("=")[0])


def test_the_issue_example_reads_as_on_the_command_line() -> None:
    with pytest.raises(ConfigError, match=r"^scheduler\.comm_heavy must be a number >= 1, got 0\.5$"):
        make_scheduler("asrpt", comm_heavy=0.5)


def test_numpy_values_are_shown_as_plain_numbers() -> None:
    with pytest.raises(ConfigError, match=r"^scheduler\.tau must be a number >= 0, got -4\.0$"):
        make_scheduler("asrpt", tau=np.float64(-4.0))
    assert make_scheduler("asrpt", tau=np.float64(0.5)).tau == 0.5


def test_every_value_type_group_is_the_type_the_code_uses() -> None:
    """A value-type group is the object itself (no mirror to convert), and every one of its keys has a rule."""
    from asrpt_bench.cache import CacheSettings
    from asrpt_bench.core import PreemptionPrice
    from asrpt_bench.theory.settings import TheorySettings

    kinds = {name: kind for name, kind in RunConfig.group_types().items() if issubclass(kind, Params)}
    assert kinds == {"cluster": Cluster, "timing": TimingModel, "solver": SolverSettings,
                     "preemption": PreemptionPrice, "theory": TheorySettings, "cache": CacheSettings}
    for kind in kinds.values():
        assert all(item.metadata.get("rule") is not None for item in dataclasses.fields(kind)), kind


def every_parameter_class() -> set[type[Params]]:
    """The value-type groups, every registered component's parameters, and the Params nested in them."""
    from asrpt_bench.config import component_registry
    from asrpt_bench.registry import REGISTRIES

    found = {kind for kind in RunConfig.group_types().values() if issubclass(kind, Params)}
    for kind in ("workload", "predictor", "scheduler", "placement", "task"):
        component_registry(kind)
    for registry in REGISTRIES.values():
        found |= {registry.params_type(name) for name in registry}
    nested = {inner for cls in found for inner in cls.nested().values()}
    return found | nested


def test_every_time_valued_key_is_capped_where_a_job_table_is() -> None:
    """A key in seconds (its name ends in _s, or its rule speaks of seconds) refuses 1e13 s and names the cap,
    so no key holds a time the simulator's float64 event arithmetic would not keep exact."""
    ruled = [(cls, item) for cls in every_parameter_class() for item in dataclasses.fields(cls)
             if item.metadata.get("rule") is not None]
    timed = [(cls, item) for cls, item in ruled
             if item.name.endswith(("_s", "_duration")) or "second" in item.metadata["rule"].describe()]
    assert len(timed) >= 9, timed
    for cls, item in timed:
        rule = item.metadata["rule"]
        assert "1e+12" in rule.describe(), (cls.__name__, item.name)
        assert not rule.accepts(1e13) and not rule.accepts([1e13]), (cls.__name__, item.name)
