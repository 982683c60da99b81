"""Gavel's measured job throughputs on K80, P100 and V100 (iterations per second), as a compact packaged table.

Gavel (Narayanan et al., OSDI'20) publishes `simulation_throughputs.json`: worker type -> job key
"('<job type>', <scale factor>)" -> "null" -> iterations/s of the job running alone. Its simulator
uses exactly these, independent of placement. The package ships the isolated columns of every worker
type (`data/profiles/gavel/throughputs.csv`, derived by `derive_throughput_table`; source, commit and
licence in that folder's README): `<type>` (consolidated) and `<type>_unconsolidated` (the job's GPUs
spread over servers; empty where Gavel measured none) for type k80, p100 and v100.

A job's alpha on a type is 1 / throughput there. A measured 0 means the job cannot run on that type
(K80 cannot hold ResNet-50 at batch size 128 on 2 or more GPUs). Gavel measured scale factors 1, 2, 4,
8 (some job types only 1); for a (job type, scale) it did not measure, `throughput` extrapolates from
the largest measured scale s <= g at that scale's per-GPU throughput (throughput(s) * g / s) and says
so; a type that cannot run the job at s cannot run it at g either.
"""

from __future__ import annotations

import ast
import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ..core import ConfigError

PACKAGED_TABLE = ("data", "profiles", "gavel", "throughputs.csv")
GAVEL_TYPES = ("k80", "p100", "v100")
"""The GPU types Gavel measured (cluster.GPU_TYPES names them alike)."""
WORKER_TYPES = tuple(f"{gpu}{suffix}" for gpu in GAVEL_TYPES for suffix in ("", "_unconsolidated"))


def derive_throughput_table(json_path: str | Path) -> pd.DataFrame:
    """The packaged table from Gavel's simulation_throughputs.json: job_type, scale_factor, then per type
    `<type>` and `<type>_unconsolidated` (iterations/s of the job alone; NaN where Gavel has no entry),
    sorted by job type and scale factor."""
    try:
        raw = json.loads(Path(json_path).read_text())
        columns = {worker: {ast.literal_eval(key): value["null"] for key, value in raw[worker].items()}
                   for worker in WORKER_TYPES}
    except (OSError, ValueError, KeyError, TypeError, SyntaxError) as error:
        raise ConfigError(f"{json_path}: not a Gavel throughputs file ({type(error).__name__}: {error})") from None
    keys = sorted(columns["v100"])
    return pd.DataFrame({"job_type": [k[0] for k in keys], "scale_factor": [int(k[1]) for k in keys],
                         **{worker: [float(columns[worker].get(k, math.nan)) for k in keys]
                            for worker in WORKER_TYPES}})


@lru_cache(maxsize=1)
def packaged_throughputs() -> pd.DataFrame:
    """The packaged table (see module doc)."""
    resource = resources.files("asrpt_bench").joinpath(*PACKAGED_TABLE)
    with resource.open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle, dtype={"job_type": str, "scale_factor": "int64"})


class Throughput(NamedTuple):
    """Iterations/s of a job alone on one GPU type: consolidated, spread over servers (NaN: not measured),
    and whether both were extrapolated from a smaller scale. consolidated == 0: cannot run on the type."""

    consolidated: float
    spread: float
    extrapolated: bool


@lru_cache(maxsize=1)
def _lookup() -> dict[tuple[str, str], dict[int, tuple[float, float]]]:
    table = packaged_throughputs()
    lookup: dict[tuple[str, str], dict[int, tuple[float, float]]] = {}
    for gpu in GAVEL_TYPES:
        for job_type, scale, consolidated, spread in zip(table["job_type"], table["scale_factor"], table[gpu],
                                                         table[f"{gpu}_unconsolidated"]):
            lookup.setdefault((job_type, gpu), {})[int(scale)] = (float(consolidated), float(spread))
    return lookup


def job_types() -> tuple[str, ...]:
    """The job types Gavel measured, sorted."""
    return tuple(sorted({job_type for job_type, _ in _lookup()}))


def throughput(job_type: str, scale_factor: int, gpu_type: str = "v100") -> Throughput:
    """The throughputs of `job_type` on `scale_factor` GPUs of `gpu_type` (module doc). KeyError for an
    unknown job type or GPU type."""
    measured = _lookup()[(job_type, gpu_type)]
    if scale_factor in measured:
        return Throughput(*measured[scale_factor], False)
    base = max((s for s in measured if s <= scale_factor), default=min(measured))
    factor = scale_factor / base
    consolidated, spread = measured[base]
    return Throughput(consolidated * factor, spread * factor, True)
