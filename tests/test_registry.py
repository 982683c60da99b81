"""Every component registry rejects unknown names and parameters the same way, naming the key."""

import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.placement import PLACERS, make_placer
from asrpt_bench.prediction import PREDICTORS
from asrpt_bench.registry import Registry
from asrpt_bench.schedulers import SCHEDULERS
from asrpt_bench.workloads import WORKLOAD_LOADERS


def test_registries_hold_the_design_option_names():
    assert set(PLACERS) == {"heavy_edge", "ilp", "first_fit", "random"}
    assert {"asrpt", "asrpt_oracle", "spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime",
            "fifo", "srtf", "srtf_oracle", "las2d"} == set(SCHEDULERS)
    assert {"forest", "oracle", "noisy"} == set(PREDICTORS)
    assert {"philly", "pai2020", "csv", "synthetic"} == set(WORKLOAD_LOADERS)


@pytest.mark.parametrize("registry", [PLACERS, SCHEDULERS, PREDICTORS, WORKLOAD_LOADERS])
def test_unknown_name_lists_the_known_ones(registry: Registry):
    with pytest.raises(ConfigError, match=rf"unknown {registry.kind} 'nope'; known: \["):
        registry.make("nope")


def test_unknown_parameter_is_named_with_the_accepted_ones():
    with pytest.raises(ConfigError, match=r"placement 'heavy_edge': unknown parameter\(s\) \['modee'\]; "
                                          r"known: \['mode', 'timing', 'allreduce_edges'\]"):
        make_placer("heavy_edge", modee="contract")


def test_register_and_make():
    registry: Registry[tuple] = Registry("widget")

    @registry.register("pair")
    def pair(left: int = 0, right: int = 0) -> tuple:
        return (left, right)

    assert registry.make("pair", right=2) == (0, 2) and registry.parameters("pair") == ["left", "right"]
