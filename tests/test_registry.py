"""One registry type serves every kind of component; each refuses unknown names, unknown parameters
and taken names the same way, naming them."""

from dataclasses import dataclass

import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.params import Params, param
from asrpt_bench.placement import PLACERS, make_placer
from asrpt_bench.prediction import PREDICTORS
from asrpt_bench.registry import REGISTRIES, REPLACED, Registry
from asrpt_bench.rules import integer
from asrpt_bench.schedulers import SCHEDULERS
from asrpt_bench.tasks import TASKS
from asrpt_bench.workloads.sources import WORKLOADS

pytestmark = pytest.mark.usefixtures("forget_new_registries")


def test_registries_hold_the_design_option_names():
    assert set(PLACERS) == {"heavy_edge", "ilp", "first_fit", "random"}
    assert {"asrpt", "asrpt_oracle", "spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime",
            "fifo", "fifo_replan", "srtf", "srtf_oracle", "psjf", "psjf_oracle", "las2d", "random_order", "recorded"} == set(SCHEDULERS)
    assert {"forest", "oracle", "noisy", "walltime"} == set(PREDICTORS)
    assert {"philly", "gavel", "pai2020", "csv", "synthetic", "mg1", "slurm", "swf", "helios", "acme",
            "lemma2_reviewer", "head_of_line", "memory"} == set(WORKLOADS)
    assert {"compare", "simulate", "placement", "predictor", "theory", "adversarial"} <= set(TASKS)


def test_one_registry_type_for_every_kind():
    assert all(isinstance(registry, Registry) for registry in REGISTRIES.values())
    assert {"scheduler", "placement", "predictor", "workload", "task"} <= set(REGISTRIES)


@pytest.mark.parametrize("registry", [PLACERS, SCHEDULERS, PREDICTORS, WORKLOADS, TASKS])
def test_unknown_name_lists_the_known_ones(registry: Registry):
    with pytest.raises(ConfigError, match=rf"unknown {registry.kind} 'nope'; known: \["):
        registry.make("nope")


def test_unknown_parameter_is_named_with_the_accepted_ones():
    with pytest.raises(ConfigError, match=r"^placement\.modee: placement 'heavy_edge' has no parameter 'modee'; "
                                          r"its parameters: \['allreduce_edges', 'mode', 'pool'\]$"):
        make_placer("heavy_edge", modee="contract")


@dataclass(frozen=True)
class PairParams(Params):
    left: int = param(0, integer(0), "the left one")
    right: int = param(0, integer(0), "the right one")


def test_register_parse_and_make():
    registry: Registry[tuple] = Registry("widget_test")

    @registry.register("pair", PairParams, needs=("scale",))
    def pair(left: int = PairParams.left, right: int = PairParams.right, scale: int = 1) -> tuple:
        return (left * scale, right * scale)

    assert registry.make("pair", {"right": 2}, scale=3) == (0, 6)
    assert registry.parse("pair", {"left": 1}) == PairParams(left=1)
    with pytest.raises(ConfigError, match=r"^widget_test\.right must be an integer >= 0, got -1$"):
        registry.make("pair", {"right": -1}, scale=1)
    with pytest.raises(ConfigError, match=r"unknown argument\(s\) \['shift'\]"):
        registry.make("pair", None, shift=1)


def test_a_factory_must_accept_its_parameters():
    registry: Registry[tuple] = Registry("widget_test_2")
    with pytest.raises(ConfigError, match=r"does not accept parameter\(s\) \['right'\] of PairParams"):
        registry.register("pair", PairParams)(lambda left=0: (left,))


def test_a_taken_name_is_refused_unless_replaced_with_a_warning():
    registry: Registry[int] = Registry("widget_test_3")
    registry.register("one")(lambda: 1)
    with pytest.raises(ConfigError, match=r"^widget_test_3 'one' is already registered by .*; register it under "
                                          r"another name, or pass replace=True to replace it$"):
        registry.register("one")(lambda: 2)
    before = len(REPLACED)
    with pytest.warns(UserWarning, match=r"widget_test_3 'one' of .* replaced by the one of"):
        registry.register("one", replace=True)(lambda: 3)
    assert registry.make("one") == 3 and len(REPLACED) == before + 1
    REPLACED.pop()
