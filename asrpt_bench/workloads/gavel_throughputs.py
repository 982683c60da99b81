"""Gavel's measured job throughputs on V100 (iterations per second), as a compact packaged table.

Gavel (Narayanan et al., OSDI'20) publishes `simulation_throughputs.json`: worker type -> job key
"('<job type>', <scale factor>)" -> "null" -> iterations/s of the job running alone. Its simulator
uses exactly these, independent of placement. The package ships the two V100 columns
(`data/profiles/gavel/v100_throughputs.csv`, derived by `derive_throughput_table`; source, commit
and licence in that folder's README): `v100` (consolidated) and `v100_unconsolidated` (the job's
GPUs spread over servers).

A job's alpha is 1 / throughput. Gavel measured scale factors 1, 2, 4, 8 (some job types only 1);
for a (job type, scale) it did not measure, `throughput` extrapolates from the largest measured
scale s <= g at that scale's per-GPU throughput (throughput(s) * g / s) and says so.
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

import pandas as pd

from ..core import ConfigError

PACKAGED_TABLE = ("data", "profiles", "gavel", "v100_throughputs.csv")
WORKER_TYPES = ("v100", "v100_unconsolidated")


def derive_throughput_table(json_path: str | Path) -> pd.DataFrame:
    """The packaged table from Gavel's simulation_throughputs.json: job_type, scale_factor, v100,
    v100_unconsolidated (iterations/s of the job alone), sorted by job type and scale factor."""
    try:
        raw = json.loads(Path(json_path).read_text())
        columns = {worker: {ast.literal_eval(key): value["null"] for key, value in raw[worker].items()}
                   for worker in WORKER_TYPES}
    except (OSError, ValueError, KeyError, TypeError, SyntaxError) as error:
        raise ConfigError(f"{json_path}: not a Gavel throughputs file ({type(error).__name__}: {error})") from None
    keys = sorted(columns["v100"])
    return pd.DataFrame({"job_type": [k[0] for k in keys], "scale_factor": [int(k[1]) for k in keys],
                         **{worker: [float(columns[worker][k]) for k in keys] for worker in WORKER_TYPES}})


@lru_cache(maxsize=1)
def packaged_throughputs() -> pd.DataFrame:
    """The packaged V100 table (see module doc)."""
    resource = resources.files("asrpt_bench").joinpath(*PACKAGED_TABLE)
    with resource.open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle, dtype={"job_type": str, "scale_factor": "int64"})


@lru_cache(maxsize=1)
def _lookup() -> dict[str, dict[int, tuple[float, float]]]:
    table = packaged_throughputs()
    lookup: dict[str, dict[int, tuple[float, float]]] = {}
    for row in table.itertuples(index=False):
        lookup.setdefault(row.job_type, {})[int(row.scale_factor)] = (float(row.v100), float(row.v100_unconsolidated))
    return lookup


def job_types() -> tuple[str, ...]:
    """The job types Gavel measured, sorted."""
    return tuple(sorted(_lookup()))


def throughput(job_type: str, scale_factor: int) -> tuple[float, float, bool]:
    """(consolidated, unconsolidated) iterations/s of `job_type` on `scale_factor` V100s, and whether
    they were extrapolated (module doc). KeyError for an unknown job type."""
    measured = _lookup()[job_type]
    if scale_factor in measured:
        return (*measured[scale_factor], False)
    base = max((s for s in measured if s <= scale_factor), default=min(measured))
    factor = scale_factor / base
    consolidated, spread = measured[base]
    return consolidated * factor, spread * factor, True
