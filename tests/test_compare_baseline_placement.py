"""task.baseline_placement: the baselines of `compare` can use another placer than A-SRPT, so a
comparison separates scheduling gains from placement gains."""

from __future__ import annotations

import pytest

from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import ConfigError
from asrpt_bench.experiment import run_experiment

SMALL = ["debug=tiny", "workload=synthetic", "predictor=oracle", "progress=false",
         "task.schedulers=[asrpt,asrpt_oracle,spjf,fifo]"]


def placers(overrides: list[str]) -> dict[str, str]:
    comparison = run_experiment(compose_run_config(SMALL + overrides)).comparison
    return dict(zip(comparison["scheduler"], comparison["placer"]))


def test_default_places_every_scheduler_like_asrpt() -> None:
    assert set(placers([]).values()) == {"heavy_edge"}


def test_baselines_use_the_named_placer_and_asrpt_keeps_its_own() -> None:
    chosen = placers(["task.baseline_placement=first_fit"])
    assert chosen == {"asrpt": "heavy_edge", "asrpt_oracle": "heavy_edge", "spjf": "first_fit", "fifo": "first_fit"}


def test_baseline_placement_changes_only_the_baselines_schedules() -> None:
    same = run_experiment(compose_run_config(SMALL)).jobs
    other = run_experiment(compose_run_config(SMALL + ["task.baseline_placement=first_fit"])).jobs
    for name in ("asrpt", "asrpt_oracle"):
        left, right = (frame[frame["scheduler"] == name].reset_index(drop=True) for frame in (same, other))
        assert left.equals(right), name


def test_unknown_baseline_placement_is_refused_before_any_work() -> None:
    with pytest.raises(ConfigError, match="unknown placement 'nearest'"):
        run_experiment(compose_run_config(SMALL + ["task.baseline_placement=nearest"]))
