"""Placers behind one protocol; importing this package registers every built-in placer."""

from .base import PLACERS, Placer, make_placer, register_placer
from .bruteforce import optimal_placement
from .estimates import alpha_min_estimate, empty_cluster_placement, is_comm_heavy
from .first_fit import FirstFitPlacer
from .heavy_edge import HeavyEdgePlacer
from .ilp import ILPPlacer, alpha_min_exact
from .patterns import fragmentation_patterns
from .pools import POOL_CHOICES, PooledPlacer, make_pool_choice, register_pool_choice
from .random_fit import RandomPlacer

__all__ = ["PLACERS", "Placer", "make_placer", "register_placer", "optimal_placement", "alpha_min_estimate",
           "empty_cluster_placement", "is_comm_heavy", "FirstFitPlacer", "HeavyEdgePlacer",
           "fragmentation_patterns", "RandomPlacer", "ILPPlacer", "alpha_min_exact", "POOL_CHOICES", "PooledPlacer",
           "make_pool_choice", "register_pool_choice"]
