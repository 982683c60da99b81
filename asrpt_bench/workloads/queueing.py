"""Single-GPU queueing workloads: Poisson arrivals of 1-GPU jobs with i.i.d. sizes, the M/G/1 queue whose
mean response times have closed forms (theory/queueing.py), so the simulator can be checked against
results it was not written with (docs/queueing-theory.md).

Sizes follow the balanced two-phase hyperexponential of a given squared coefficient of variation C^2:
the exponential at C^2 = 1, and above it many short jobs and a few long ones, the textbook model of job
sizes more variable than exponential. It knows its density,
distribution function and partial moments, which the M/G/1 formulas integrate. Sizes are drawn
continuous and simulated as whole iterations of a fixed per-iteration time, the quantum
`QUANTUM_SHARE` x E[S] (iterations = size / quantum rounded, at least 1), so every job shares one plan.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import ConfigError
from .schema import validate_job_table
from .seeding import component_rng

QUANTUM_SHARE = 1e-4
"""The per-iteration time as a share of the mean size: rounding moves a mean size by at most half of it."""


@dataclass(frozen=True)
class SizeDistribution:
    """Job sizes (seconds): exponential of mean `means[k]` with probability `weights[k]`."""

    name: str
    means: tuple[float, ...]
    weights: tuple[float, ...]

    @property
    def mean(self) -> float:
        return self.partial_moment(math.inf, 1)

    @property
    def second_moment(self) -> float:
        return self.partial_moment(math.inf, 2)

    @property
    def scv(self) -> float:
        """The squared coefficient of variation Var[S] / E[S]^2."""
        return self.second_moment / self.mean ** 2 - 1.0

    def pdf(self, x: float) -> float:
        return sum(w / m * math.exp(-x / m) for m, w in zip(self.means, self.weights)) if x >= 0 else 0.0

    def cdf(self, x: float) -> float:
        return sum(w * -math.expm1(-x / m) for m, w in zip(self.means, self.weights)) if x > 0 else 0.0

    def partial_moment(self, x: float, k: int) -> float:
        """E[S^k; S <= x] = integral_0^x t^k f(t) dt in closed form: an exponential of mean m gives
        m^k k! P(Gamma(k + 1, 1) <= x / m)."""
        from scipy import special  # imported here: only the queueing study needs it, and SciPy loads slowly

        return sum(w * m ** k * math.factorial(k) * (1.0 if math.isinf(x) else float(special.gammainc(k + 1, x / m)))
                   for m, w in zip(self.means, self.weights))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        phase = np.searchsorted(np.cumsum(self.weights)[:-1], rng.random(size), side="right")
        return rng.exponential(1.0, size) * np.asarray(self.means)[phase]


def size_distribution(mean: float, scv: float = 1.0) -> SizeDistribution:
    """Sizes of mean `mean` (seconds) and squared coefficient of variation `scv` >= 1: the balanced-means
    two-phase hyperexponential (Harchol-Balter, Performance Modeling and Design of Computer Systems, 2013,
    ch. 21), phase 1 with probability p = (1 + sqrt((C^2 - 1) / (C^2 + 1))) / 2 and mean mean / (2p),
    phase 2 with mean mean / (2 (1 - p)); at C^2 = 1 both phases have the mean: the exponential."""
    if not scv >= 1:
        raise ConfigError(f"workload.size_scv must be a number >= 1, got {scv!r}")
    if scv == 1:
        return SizeDistribution("exponential", (mean,), (1.0,))
    p = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
    return SizeDistribution("hyperexponential", (mean / (2 * p), mean / (2 * (1.0 - p))), (p, 1.0 - p))


def mg1_workload(num_jobs: int, seed: int, load: float, distribution: SizeDistribution) -> pd.DataFrame:
    """`num_jobs` 1-GPU jobs with Poisson arrivals at rate load / E[S] (the first at 0) and i.i.d. sizes
    from `distribution`, as iterations of alpha = the quantum (columns job_id, release, gpus, iterations,
    alpha), in release order."""
    rng = component_rng(seed, "mg1_workload")
    quantum = QUANTUM_SHARE * distribution.mean
    gaps = rng.exponential(distribution.mean / load, num_jobs)
    sizes = distribution.sample(rng, num_jobs)
    table = pd.DataFrame({
        "job_id": [f"q{i:07d}" for i in range(num_jobs)],
        "release": np.concatenate([[0.0], np.cumsum(gaps[1:])]),
        "gpus": 1,
        "iterations": np.maximum(1, np.rint(sizes / quantum)).astype(np.int64),
        "alpha": quantum,
    })
    validated = validate_job_table(table, "mg1 workload")
    validated.attrs.update({"source": f"M/G/1 workload ({distribution.name} sizes, load {load})",
                            "recurrence_keys": "none"})
    return validated
