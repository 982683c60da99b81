"""Placers behind one protocol; importing this package registers every built-in placer."""

from .base import PLACERS, Placer, make_placer, register_placer
from .first_fit import FirstFitPlacer

__all__ = ["PLACERS", "Placer", "make_placer", "register_placer", "FirstFitPlacer"]
