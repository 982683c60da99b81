"""Mean response times of the M/G/1 queue under FCFS, non-preemptive SJF, preemptive SJF and SRPT
(Harchol-Balter, Performance Modeling and Design of Computer Systems, 2013, ch. 23, 29-33), the closed
forms the simulator is checked against (docs/queueing-theory.md).

With arrival rate lambda, sizes S with density f and distribution F, load rho = lambda E[S] < 1 and the
load of the jobs of size at most x, rho(x) = lambda E[S; S <= x]:

- FCFS (Pollaczek-Khinchine): E[T] = E[S] + lambda E[S^2] / (2 (1 - rho)).
- non-preemptive SJF: E[T(x)] = x + (lambda E[S^2] / 2) / (1 - rho(x))^2.
- preemptive SJF: E[T(x)] = x / (1 - rho(x)) + (lambda / 2) E[S^2; S <= x] / (1 - rho(x))^2.
- SRPT: E[T(x)] = integral_0^x dt / (1 - rho(t)) + (lambda / 2) (E[S^2; S <= x] + x^2 (1 - F(x))) / (1 - rho(x))^2.

The mean over sizes, E[T] = integral E[T(x)] f(x) dx, is computed with scipy's adaptive quadrature;
SRPT's nested integral is swapped (Fubini) into integral_0^inf (1 - F(t)) / (1 - rho(t)) dt.
"""

from __future__ import annotations

import math
from typing import Callable

from ..core import ConfigError
from ..workloads.queueing import SizeDistribution

POLICIES = ("fcfs", "sjf", "psjf", "srpt")
"""The disciplines with a closed form here (FCFS, non-preemptive SJF, preemptive SJF, SRPT)."""


def _integral(function: Callable[[float], float], distribution: SizeDistribution) -> float:
    """integral_0^inf of `function`, split at multiples of the phases' means so the quadrature sees where
    the mass lies."""
    from scipy import integrate  # imported here: only the queueing study needs it, and SciPy loads slowly

    points = sorted({0.0, *(k * m for m in distribution.means for k in (1, 10, 50))}) + [math.inf]
    return sum(integrate.quad(function, a, b, limit=500, epsabs=0.0, epsrel=1e-10)[0]
               for a, b in zip(points, points[1:]))


def mean_response_time(policy: str, distribution: SizeDistribution, load: float) -> float:
    """E[T] of the M/G/1 queue at load rho = `load` (arrival rate rho / E[S]) under `policy` (POLICIES)."""
    if policy not in POLICIES:
        raise ConfigError(f"policy {policy!r} unknown; known: {list(POLICIES)}")
    if not 0 < load < 1:
        raise ConfigError(f"load must be in (0, 1) for a stable M/G/1 queue, got {load!r}")
    rate = load / distribution.mean
    second = distribution.second_moment
    if policy == "fcfs":
        return distribution.mean + rate * second / (2.0 * (1.0 - load))

    def busy(x: float) -> float:
        return 1.0 - rate * distribution.partial_moment(x, 1)

    def weighted(per_size: Callable[[float], float]) -> float:
        return _integral(lambda x: per_size(x) * distribution.pdf(x), distribution)

    if policy == "sjf":
        return distribution.mean + weighted(lambda x: rate * second / 2.0 / busy(x) ** 2)
    if policy == "psjf":
        return weighted(lambda x: x / busy(x) + rate / 2.0 * distribution.partial_moment(x, 2) / busy(x) ** 2)
    residence = _integral(lambda t: (1.0 - distribution.cdf(t)) / busy(t), distribution)
    waiting = weighted(lambda x: rate / 2.0 * (distribution.partial_moment(x, 2) + x * x * (1.0 - distribution.cdf(x)))
                       / busy(x) ** 2)
    return residence + waiting

