"""Pool choice: in which pool of a typed cluster a job runs (a gang never spans pools); the placer then
places it inside that pool. `placement.pool` names the choice; it wraps any placer (`PooledPlacer`).

- `fastest_fit` (default): the pool where the job's per-iteration time (of the placer's placement there)
  is lowest, among the pools of a type that runs the job and with enough free GPUs; ties by pool order.
- `first_fit`: the first such pool, in pool order.
- `type_agnostic`: as if every type were equal: a seeded random draw among those pools (what Gavel's plain
  FIFO intends), the same draw for the same run seed, job and pools.

A choice sees a `PoolQuery`: the candidate pools (index, name, type, free GPUs, the job's empty-pool
estimate there, a lower bound on its alpha in that pool) and, on demand, the placer's placement and alpha
in one of them. It returns the chosen pool's index, or None to leave the job queued. Its answer depends on
the query alone: fifo_replan, which asks again for the same jobs at every plan, gives a job the answer to
its last query again while the query is the same.

    @register_pool_choice("most_free")
    class MostFree:
        name = "most_free"
        def choose(self, query: PoolQuery) -> int | None:
            return max(query.options, key=lambda option: (option.free_gpus, -option.index)).index
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Callable, Hashable, NamedTuple, Protocol, Sequence, runtime_checkable

from ..core import Cluster, Placement, TrainingPlan
from ..params import NoParams
from ..registry import Registry


class PoolOption(NamedTuple):
    """A pool that could take the job now: its type runs the job and it has enough free GPUs."""

    index: int
    name: str
    type: str
    free_gpus: int
    alpha_lower: float
    """The job's empty-pool alpha~min there: no placement in that pool gives a lower alpha than the best
    empty-pool placement, so fastest_fit may skip pools whose estimate exceeds the best alpha found."""


Placed = tuple[Placement, float]


class PoolQuery:
    """One job's pool choice at one instant: `options` in pool order, and `placed(index)` / `alpha(index)`,
    the placer's placement (in the cluster's server numbering) and its alpha in that pool, computed on
    first request (None: the placer did not place it there)."""

    __slots__ = ("job_id", "options", "_place", "_placed")

    def __init__(self, job_id: Hashable, options: tuple[PoolOption, ...], place: Callable[[int], Placed | None]):
        self.job_id = job_id
        self.options = options
        self._place = place
        self._placed: dict[int, Placed | None] = {}

    def placed(self, index: int) -> Placed | None:
        if index not in self._placed:
            self._placed[index] = self._place(index)
        return self._placed[index]

    def alpha(self, index: int) -> float | None:
        placed = self.placed(index)
        return None if placed is None else placed[1]


@runtime_checkable
class PoolChoice(Protocol):
    name: str

    def choose(self, query: PoolQuery) -> int | None:
        """The index of the pool the job starts in now (one of query.options), or None."""
        ...


POOL_CHOICES: Registry[PoolChoice] = Registry("pool_choice")


def register_pool_choice(name: str, *, needs: tuple[str, ...] = (), replace: bool = False) -> Callable:
    """Decorator: `placement.pool=<name>` chooses pools with this class; `needs`: `seed` (an int from the run
    seed) if it draws at random."""
    return POOL_CHOICES.register(name, NoParams, needs=needs, replace=replace)


def make_pool_choice(name: str, seed: int = 0) -> PoolChoice:
    """Pool choice `name`, given the seed if it declared it needs one."""
    entry = POOL_CHOICES.entry(name)
    return POOL_CHOICES.make(name, None, **({"seed": seed} if "seed" in entry.needs else {}))


_BY_LOWER_BOUND = attrgetter("alpha_lower", "index")


@register_pool_choice("fastest_fit")
@dataclass(frozen=True)
class FastestFit:
    """The pool with the lowest alpha of the placer's placement; ties by pool order. Pools are tried in
    order of their lower bound, and no pool whose bound exceeds the best alpha found is placed."""

    name: str = "fastest_fit"

    def choose(self, query: PoolQuery) -> int | None:
        best: tuple[float, int] | None = None
        for option in sorted(query.options, key=_BY_LOWER_BOUND):
            if best is not None and (option.alpha_lower, option.index) > best:
                break
            alpha = query.alpha(option.index)
            if alpha is not None and (best is None or (alpha, option.index) < best):
                best = (alpha, option.index)
        return None if best is None else best[1]


@register_pool_choice("first_fit")
@dataclass(frozen=True)
class FirstFitPool:
    """The first pool, in pool order, where the placer places the job."""

    name: str = "first_fit"

    def choose(self, query: PoolQuery) -> int | None:
        for option in query.options:
            if query.placed(option.index) is not None:
                return option.index
        return None


@register_pool_choice("type_agnostic", needs=("seed",))
@dataclass(frozen=True)
class TypeAgnostic:
    """A uniformly random pool among the options, as if the types did not differ; the draw is a hash of
    (seed, job id, the options' indices), so a run is reproducible and a job's draw changes only when the
    pools it could take do. A pool where the placer places nothing passes to the next in the drawn order."""

    seed: int = 0
    name: str = "type_agnostic"

    def choose(self, query: PoolQuery) -> int | None:
        options = list(query.options)
        key = repr((self.seed, query.job_id, [o.index for o in options])).encode()
        word = int.from_bytes(hashlib.sha256(key).digest()[:8], "little")
        first = word % len(options)
        for option in options[first:] + options[:first]:
            if query.placed(option.index) is not None:
                return option.index
        return None


@dataclass(frozen=True)
class PooledPlacer:
    """A placer behind a pool choice: on a one-pool cluster it is the placer itself (`place`); on a typed
    cluster `propose` chooses the pool and places the job inside it."""

    placer: Any
    choice: PoolChoice

    @property
    def name(self) -> str:
        return self.placer.name

    def place(self, plan: TrainingPlan, free: Sequence[int], cluster: Cluster) -> Placement | None:
        return self.placer.place(plan, free, cluster)

    def propose(self, job_id: Hashable, plans: Sequence[TrainingPlan | None], lower: Sequence[float],
                free: Sequence[int], cluster: Cluster, alpha: Callable[[int, TrainingPlan, Placement], float],
                only: int | None = None, exclude: int | None = None,
                idle: Sequence[int] | None = None) -> tuple[int, Placement, float] | None:
        """(pool index, placement in the cluster's numbering, alpha) for a job with `plans[p]` its plan in pool
        p (None: its type cannot run it) and `lower[p]` its empty-pool estimate there; None if it does not
        start now. `alpha(p, plan, local placement)` is the per-iteration time in pool p. `only`: place in
        that pool or not at all (a scheduler that plans pools itself, fifo_replan; a conservative reservation),
        without the choice; `exclude`: anywhere but that pool (EASY's reserved pool). `idle[p]`: pool p's free
        GPUs (summed from `free` when None)."""
        pools = cluster.pool_list
        options = []
        for pool, plan, low in zip(pools, plans, lower):
            if plan is None or (only is not None and pool.index != only) or pool.index == exclude:
                continue
            room = sum(free[pool.first_server:pool.first_server + pool.servers]) if idle is None else idle[pool.index]
            if room >= plan.gpus:
                options.append(PoolOption(pool.index, pool.name, pool.type, room, low))
        if not options:
            return None

        def place(index: int) -> Placed | None:
            pool, plan = pools[index], plans[index]
            assert plan is not None
            local_free = pool.free_slice(free)
            placement = self.placer.place(plan, local_free, pool.cluster)
            if placement is None:
                return None
            try:
                placement.validate(plan, local_free)
            except ValueError as error:
                raise RuntimeError(f"placer {self.name!r} returned an invalid placement for job {job_id!r} in pool "
                                   f"{pool.name!r}: {error}") from error
            return Placement(pool.to_global(placement.servers)), alpha(index, plan, placement)

        query = PoolQuery(job_id, tuple(options), place)
        index = only if only is not None else self.choice.choose(query)
        if index is None:
            return None
        placed = query.placed(index) if any(option.index == index for option in options) else None
        if placed is None:
            if only is not None:
                return None
            raise RuntimeError(f"pool choice {self.choice.name!r} chose pool {index!r} for job {job_id!r}, which is "
                               f"not a pool where the placer placed it (options: {[o.index for o in options]})")
        return index, *placed
