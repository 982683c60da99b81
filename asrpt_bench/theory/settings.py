"""The config group `theory`: which reconstruction of the Theorem 1 symbols and of alpha_min a run's
reported bounds use (paper-notes 7.4; docs/theory.md)."""

from __future__ import annotations

from dataclasses import dataclass

from ..params import Params, param
from ..rules import one_of
from .bound import EPS_BAR_DEFINITIONS, RHO_BAR_DEFINITIONS
from .lower_bounds import ALPHA_MIN_SOURCES


@dataclass(frozen=True)
class TheorySettings(Params):
    """Which reconstruction of the Theorem 1 symbols and of alpha_min the reported bounds use (docs/paper.md,
    section 8).

    Checked when the config is, not where the symbols are computed: a run reports NaN symbols when the
    bound is undefined (g_max = G), which must not also swallow a misspelt definition."""

    rho_bar_definition: str = param("alpha_min_spread", one_of(*sorted(RHO_BAR_DEFINITIONS)),
                                    "the reconstruction of rho-bar in the Theorem 1 bound")
    eps_bar_definition: str = param("per_smallest_job", one_of(*sorted(EPS_BAR_DEFINITIONS)),
                                    "the reconstruction of epsilon-bar in the Theorem 1 bound")
    alpha_min_source: str = param("consolidated", one_of(*sorted(ALPHA_MIN_SOURCES)),
                                  "alpha_min of the lower bound: consolidated (no solver) or exact (the solver "
                                  "group's ILP)")

    def __post_init__(self) -> None:
        self.check("theory")
