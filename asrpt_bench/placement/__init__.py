"""Placers behind one protocol. A built-in placer's module is imported when its name is first looked up
(its registry's `declare` below) or a name of it first read here (exports.py), not by importing this package."""

from __future__ import annotations

from ..exports import lazy_exports
from .base import PLACERS, Placer, make_placer, register_placer

PLACERS.declare({  # the built-ins: each module is imported when one of its names is first looked up
    "heavy_edge": "asrpt_bench.placement.heavy_edge",
    "first_fit": "asrpt_bench.placement.first_fit",
    "ilp": "asrpt_bench.placement.ilp",
    "random": "asrpt_bench.placement.random_fit",
})

__getattr__, __dir__ = lazy_exports(__name__, {
    "optimal_placement": "asrpt_bench.placement.bruteforce",
    "alpha_min_estimate": "asrpt_bench.placement.estimates",
    "empty_cluster_placement": "asrpt_bench.placement.estimates",
    "is_comm_heavy": "asrpt_bench.placement.estimates",
    "FirstFitPlacer": "asrpt_bench.placement.first_fit",
    "HeavyEdgePlacer": "asrpt_bench.placement.heavy_edge",
    "ILPPlacer": "asrpt_bench.placement.ilp",
    "alpha_min_exact": "asrpt_bench.placement.ilp",
    "fragmentation_patterns": "asrpt_bench.placement.patterns",
    "POOL_CHOICES": "asrpt_bench.placement.pools",
    "PooledPlacer": "asrpt_bench.placement.pools",
    "make_pool_choice": "asrpt_bench.placement.pools",
    "register_pool_choice": "asrpt_bench.placement.pools",
    "RandomPlacer": "asrpt_bench.placement.random_fit",
})

__all__ = ["PLACERS", "Placer", "make_placer", "register_placer", "optimal_placement", "alpha_min_estimate",
           "empty_cluster_placement", "is_comm_heavy", "FirstFitPlacer", "HeavyEdgePlacer",
           "fragmentation_patterns", "RandomPlacer", "ILPPlacer", "alpha_min_exact", "POOL_CHOICES", "PooledPlacer",
           "make_pool_choice", "register_pool_choice"]
