"""The cluster: pools of identical servers, each pool of one GPU type with its own links (the config group
`cluster`), and the GPU numbering every layer shares.

A pool is `servers` x `gpus_per_server` GPUs of one type (GPU_TYPES) with two bandwidth classes: b_intra
between GPUs of one server, b_inter between servers. A cluster is a list of pools (`cluster.pools`); the
flat keys (`cluster.servers`, `cluster.gpus_per_server`, `cluster.b_intra`, `cluster.b_inter`,
`cluster.type`) are the one-pool shorthand. A job runs inside one pool: a gang never spans pools.

Servers and GPUs are numbered across the cluster, pool after pool: server h of pool p is global server
`pool.first_server + h`, and GPU k of a server is `first GPU of its server + k`. On a one-pool cluster this
is the historical numbering `server * gpus_per_server + k`. The cluster owns that numbering (`server_of_gpu`,
`gpu_ids`, `pool_of_server`, `free_slice`), so the simulator's state, the audit and the records never do
arithmetic on `gpus_per_server` themselves. Placers and the timing model see one pool at a time, as a
one-pool Cluster (`ClusterPool.cluster`), with server indices local to it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .errors import ConfigError
from .params import Params, param
from .rules import Rule, instance_of, integer, number, one_of


@dataclass(frozen=True)
class GPUType:
    """A GPU type's compute speed relative to a V100 (the zoo's per-layer times are V100 seconds,
    docs/profiles.md), and where that factor comes from."""

    name: str
    compute_speed: float
    source: str


ZOO_SPEED_FAMILIES = ("ResNet-18", "ResNet-50", "Transformer", "LM")
"""The Gavel job families of the zoo's model kinds (CNNs: vgg19, resnet50, inception_v3; transformers:
bert24, xlnet24, t5; a recurrent language model: gnmt)."""

_SPEED_SOURCE = ("geometric mean, over Gavel's single-GPU job types of the families " + ", ".join(ZOO_SPEED_FAMILIES)
                 + ", of the measured isolated throughput on this type over that on V100 (Gavel's "
                   "simulation_throughputs.json; tests/test_cluster_pools.py recomputes it)")
GPU_TYPES: dict[str, GPUType] = {
    "k80": GPUType("k80", 0.2064, _SPEED_SOURCE),
    "p100": GPUType("p100", 0.7869, _SPEED_SOURCE),
    "v100": GPUType("v100", 1.0, "the reference: the zoo's per-layer profiles are calibrated to V100 seconds"),
}
REFERENCE_TYPE = "v100"
"""The type whose compute speed is 1: a zoo plan's stage times are this type's."""

MAX_SERVERS = 100_000
MAX_GPUS_PER_SERVER = 1_024
"""Far beyond any cluster studied, and small enough that per-server state stays in memory (a billion
servers made a run build its free-GPU list without end)."""

GPU_TYPE = one_of(*GPU_TYPES)


def _bandwidth(default: float, doc: str) -> Any:
    return param(default, number(0, strict=True, what="a bandwidth in GB/s"), doc)


def _servers(doc: str) -> Any:
    return param(8, integer(1, MAX_SERVERS), doc)


def _gpus_per_server() -> Any:
    return param(8, integer(1, MAX_GPUS_PER_SERVER), "GPUs per server")


POOL_NAME = Rule("null (the pool's type) or a non-empty name",
                 lambda v: v is None or (isinstance(v, str) and v.strip() == v and v != ""))


@dataclass(frozen=True)
class Pool(Params):
    """One entry of `cluster.pools`: `servers` x `gpus_per_server` GPUs of one type and their links."""

    type: str = param(REFERENCE_TYPE, GPU_TYPE, f"GPU type, one of {list(GPU_TYPES)}")
    servers: int = _servers("servers of this pool")
    gpus_per_server: int = _gpus_per_server()
    b_intra: float = _bandwidth(300.0, "GB/s between two GPUs of one server (NVLink class)")
    b_inter: float = _bandwidth(12.5, "GB/s between GPUs of different servers (100 Gb/s)")
    name: Optional[str] = param(None, POOL_NAME, "the pool's name in records and summaries (null: its type)")

    @property
    def label(self) -> str:
        return self.name if self.name is not None else self.type


POOLS = Rule("a list of pools ({type, servers, gpus_per_server, b_intra, b_inter, name})",
             lambda v: isinstance(v, tuple) and all(isinstance(p, Pool) for p in v))
SHORTHAND = ("servers", "gpus_per_server", "b_intra", "b_inter", "type")
"""The flat keys: the one-pool shorthand, refused beside `pools`."""


@dataclass(frozen=True)
class Cluster(Params):
    """A list of pools of identical servers (module doc); the config group `cluster`. Default: one pool of
    64 V100 GPUs, 8 servers x 8, NVLink-class links inside a server and 100 Gb/s between."""

    servers: int = _servers("servers, each with gpus_per_server GPUs (the one-pool shorthand)")
    gpus_per_server: int = _gpus_per_server()
    b_intra: float = _bandwidth(300.0, "GB/s between two GPUs of one server (NVLink class)")
    b_inter: float = _bandwidth(12.5, "GB/s between GPUs of different servers (100 Gb/s)")
    type: str = param(REFERENCE_TYPE, GPU_TYPE, f"GPU type of the one-pool shorthand, one of {list(GPU_TYPES)}")
    pools: tuple[Pool, ...] = param((), POOLS, "the pools, in order (empty: one pool from the flat keys)")

    def __post_init__(self) -> None:
        if isinstance(self.pools, (list, tuple)):  # a list, or mappings, from Python: the pools as written
            object.__setattr__(self, "pools", tuple(
                Pool.parse(p, f"cluster.pools[{k}]", "cluster") if isinstance(p, Mapping) else p
                for k, p in enumerate(self.pools)))
        self.check("cluster")

    def check_together(self, prefix: str) -> None:
        if not self.pools:
            return
        default = Cluster()
        for key in SHORTHAND:
            if getattr(self, key) != getattr(default, key):
                raise ConfigError(f"{prefix}.{key} is the one-pool shorthand; with {prefix}.pools give every pool "
                                  f"its own {key}")
        seen: dict[str, int] = {}
        for k, pool in enumerate(self.pools):
            if pool.label in seen:
                raise ConfigError(f"{prefix}.pools[{k}]: pool name {pool.label!r} is taken by {prefix}.pools"
                                  f"[{seen[pool.label]}]; give pools of one type distinct names (name: ...)")
            seen[pool.label] = k

    # -- pools -------------------------------------------------------------------------------------------

    @cached_property
    def pool_list(self) -> tuple["ClusterPool", ...]:
        """Every pool with its place in the cluster's numbering; a one-pool cluster's pool is the cluster."""
        if not self.pools:
            return (ClusterPool(0, self.type, self.type, 0, 0, self),)
        pools, server, gpu = [], 0, 0
        for k, pool in enumerate(self.pools):
            alone = Cluster(servers=pool.servers, gpus_per_server=pool.gpus_per_server, b_intra=pool.b_intra,
                            b_inter=pool.b_inter, type=pool.type)
            pools.append(ClusterPool(k, pool.label, pool.type, server, gpu, alone))
            server += pool.servers
            gpu += alone.total_gpus
        return tuple(pools)

    @property
    def pooled(self) -> bool:
        """Whether the cluster is given as pools (then the simulator places through a pool choice and the
        summaries report per GPU type); the flat shorthand is one pool without that machinery."""
        return bool(self.pools)


    @cached_property
    def types(self) -> tuple[str, ...]:
        """The GPU types of the pools, each once, in pool order."""
        return tuple(dict.fromkeys(pool.type for pool in self.pool_list))

    @cached_property
    def total_gpus(self) -> int:
        if not self.pools:
            return self.servers * self.gpus_per_server
        return sum(pool.total_gpus for pool in self.pool_list)

    @cached_property
    def server_count(self) -> int:
        """Servers of every pool."""
        if not self.pools:
            return self.servers
        return sum(pool.servers for pool in self.pool_list)

    @cached_property
    def speed_weighted_gpus(self) -> float:
        """The GPU count in GPUs of the cluster's fastest type: sum over pools of GPUs x the type's compute
        speed over the fastest type's (GPU_TYPES). The capacity of the offered load and of A-SRPT's virtual
        single machine on a typed cluster (docs/theory.md); the GPU count itself when every pool has one type."""
        if len(self.types) == 1:
            return self.total_gpus
        fastest = max(GPU_TYPES[t].compute_speed for t in self.types)
        return sum(pool.total_gpus * GPU_TYPES[pool.type].compute_speed for pool in self.pool_list) / fastest

    def empty_free(self) -> tuple[int, ...]:
        """Free GPUs per server (every pool, in the cluster's numbering) on an empty cluster."""
        if not self.pools:
            return (self.gpus_per_server,) * self.servers
        return tuple(pool.gpus_per_server for pool in self.pool_list for _ in range(pool.servers))

    def describe(self) -> str:
        """'8 x 8 v100' or '9 x 4 v100 + 9 x 4 p100 + ...', for messages."""
        return " + ".join(f"{p.servers} x {p.gpus_per_server} {p.type}"
                          + (f" ({p.name})" if p.name != p.type else "") for p in self.pool_list)

    # -- numbering ---------------------------------------------------------------------------------------

    @cached_property
    def server_first_gpu(self) -> np.ndarray:
        """First GPU id of every server, and the total number of GPUs last (length server_count + 1)."""
        sizes = np.asarray(self.empty_free(), dtype=np.int64)
        return np.concatenate([[0], np.cumsum(sizes)])

    @cached_property
    def pool_of_server(self) -> np.ndarray:
        """Pool index of every server."""
        return np.repeat(np.arange(len(self.pool_list)), [p.servers for p in self.pool_list])

    def server_of_gpus(self, gpus: np.ndarray) -> np.ndarray:
        """Server of every GPU id (ids outside the cluster map to -1 or server_count)."""
        if not self.pools:
            return np.where(gpus < 0, -1, gpus // self.gpus_per_server)
        return np.searchsorted(self.server_first_gpu, gpus, side="right") - 1

    def server_of_gpu(self, gpu: int) -> int:
        if not self.pools:
            return gpu // self.gpus_per_server
        return bisect.bisect_right(self.server_first_gpu.tolist(), gpu) - 1

    def gpu_ids(self, server: int) -> range:
        """The GPU ids of one server."""
        if not self.pools:
            return range(server * self.gpus_per_server, (server + 1) * self.gpus_per_server)
        first = self.server_first_gpu
        return range(int(first[server]), int(first[server + 1]))

    def pool_of(self, server: int) -> "ClusterPool":
        """The pool holding a server."""
        return self.pool_list[int(self.pool_of_server[server])] if self.pools else self.pool_list[0]



@dataclass(frozen=True)
class ClusterPool:
    """A pool in its cluster: its index and name, its GPU type, its first server and GPU in the cluster's
    numbering, and `cluster`, the pool alone as a one-pool Cluster (what placers and timing see)."""

    index: int
    name: str
    type: str
    first_server: int
    first_gpu: int
    cluster: Cluster

    @property
    def servers(self) -> int:
        return self.cluster.servers

    @property
    def gpus_per_server(self) -> int:
        return self.cluster.gpus_per_server

    @property
    def total_gpus(self) -> int:
        return self.cluster.total_gpus

    def free_slice(self, free: Sequence[int]) -> tuple[int, ...]:
        """This pool's part of the cluster's free GPUs per server (its servers, locally numbered)."""
        return tuple(free[self.first_server:self.first_server + self.servers])

    def to_global(self, servers: Sequence[int]) -> tuple[int, ...]:
        """Local server indices of this pool as the cluster's server indices."""
        first = self.first_server
        return tuple(servers) if first == 0 else tuple(h + first for h in servers)

    def to_local(self, servers: Sequence[int]) -> tuple[int, ...]:
        first = self.first_server
        return tuple(servers) if first == 0 else tuple(h - first for h in servers)


def one_pool(cluster: Cluster) -> Cluster:
    """`cluster` itself when it has one pool: the timing model and the placers take a pool's cluster."""
    if len(cluster.pools) > 1:
        raise ConfigError(f"this call takes one pool's cluster (ClusterPool.cluster), got a cluster of "
                          f"{len(cluster.pools)} pools ({cluster.describe()})")
    return cluster.pool_list[0].cluster


CLUSTER = instance_of(Cluster, "a Cluster")
