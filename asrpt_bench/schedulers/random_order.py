"""Random order: a queue in an order that carries no information, the reference a scheduler's use of
durations is measured against (`random_order+easy` is EASY backfilling over it).

A job's key is a hash of the run's scheduler seed and its id, uniform in [0, 1): the order is a random
permutation of the jobs, fixed for the run, the same at every decision instant and independent of
release, size and GPU count; another run seed draws another permutation. Ties (a 2^-64 chance) break by
release, then input order. By default strict (the head blocks while it does not fit), as FIFO.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import partial

from .base import QueueParams, QueueScheduler, register_scheduler
from .views import DurationSource, JobView


@dataclass(frozen=True)
class RandomOrderParams(QueueParams):
    """QueueParams of an order that reads no durations: duration_source acts only on backfilling estimates."""

    ORDER_READS_DURATIONS = False


def random_key(seed: int, job: JobView, source: DurationSource) -> float:
    """A uniform draw in [0, 1) from (seed, job id): BLAKE2b, stable across runs and platforms (a CRC would
    not do: it is linear, so two seeds would give related orders)."""
    digest = hashlib.blake2b(f"{seed}:{job.job_id}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0 ** 64


@register_scheduler("random_order", RandomOrderParams, needs=("seed",))
class RandomOrder(QueueScheduler):
    """Jobs in a random order fixed for the run (the run's seed draws it); any dispatch rule."""

    def __init__(self, dispatch: str = RandomOrderParams.dispatch,
                 duration_source: DurationSource = RandomOrderParams.duration_source,
                 overrun: str = RandomOrderParams.overrun, min_estimate_s: float = RandomOrderParams.min_estimate_s,
                 seed: int = 0) -> None:
        super().__init__("random_order", partial(random_key, int(seed)), duration_source=duration_source,
                         dispatch=dispatch, overrun=overrun, min_estimate_s=min_estimate_s,
                         params_type=RandomOrderParams)
