"""The only mutable cluster state: which concrete GPUs are free and which job holds which GPUs."""

from __future__ import annotations

import bisect
from typing import Hashable

from ..core import Cluster, Placement


class ClusterState:
    """Free GPU ids per server, in the cluster's numbering (Cluster.gpu_ids: on one pool, GPU id = server *
    gpus_per_server + local index), and the idle GPUs of every pool.

    `allocate` gives each vertex the lowest free GPU id on its server, so runs are deterministic.
    `version` changes whenever the free GPUs change, so a placement checked at one version stays valid.
    """

    def __init__(self, cluster: Cluster) -> None:
        servers = range(cluster.server_count)
        self._free_ids: list[list[int]] = [list(cluster.gpu_ids(h)) for h in servers]
        self._free = [len(ids) for ids in self._free_ids]
        self._server_of = [h for h in servers for _ in self._free_ids[h]]
        self._pool_of: list[int] = cluster.pool_of_server.tolist()
        self._pool_idle = [pool.total_gpus for pool in cluster.pool_list]
        self._held: dict[Hashable, tuple[int, ...]] = {}
        self.idle = cluster.total_gpus
        self.version = 0
        self._view: tuple[int, ...] | None = None
        self._pool_view: tuple[int, ...] | None = None

    def free_view(self) -> tuple[int, ...]:
        """Free GPUs per server (an immutable snapshot, built once per version)."""
        if self._view is None:
            self._view = tuple(self._free)
        return self._view

    def pool_idle_view(self) -> tuple[int, ...]:
        """Idle GPUs per pool (an immutable snapshot, built once per version)."""
        if self._pool_view is None:
            self._pool_view = tuple(self._pool_idle)
        return self._pool_view

    def allocate(self, job_id: Hashable, placement: Placement) -> tuple[int, ...]:
        """Give `job_id` one free GPU per placement vertex; returns the GPU ids in vertex order."""
        if job_id in self._held:
            raise RuntimeError(f"job {job_id!r} already holds GPUs")
        gpu_ids = []
        pool_of, pool_idle = self._pool_of, self._pool_idle
        for h in placement.servers:
            free_ids = self._free_ids[h]
            if not free_ids:
                raise RuntimeError(f"job {job_id!r}: no free GPU left on server {h}")
            gpu_ids.append(free_ids.pop(0))
            self._free[h] -= 1
            pool_idle[pool_of[h]] -= 1
        held = tuple(gpu_ids)
        self._held[job_id] = held
        self.idle -= len(held)
        self.version += 1
        self._view = self._pool_view = None
        return held

    def release(self, job_id: Hashable) -> None:
        """Return the GPUs of a finished job."""
        held = self._held.pop(job_id)
        server_of, pool_of, pool_idle = self._server_of, self._pool_of, self._pool_idle
        for gpu in held:
            h = server_of[gpu]
            bisect.insort(self._free_ids[h], gpu)
            self._free[h] += 1
            pool_idle[pool_of[h]] += 1
        self.idle += len(held)
        self.version += 1
        self._view = self._pool_view = None
