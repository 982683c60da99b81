"""Reading a committed results/ table for a report, refusing one that cannot be trusted.

A table is trusted when it exists, every run in it completed, all its runs belong to the named
experiment, and it covers exactly the sweep that conf/experiment/<name>.yaml declares (every swept
key with every declared value, seeds included): a table collected before the experiment's sweep
changed is stale, and a report built from it would describe runs that the recipe no longer makes.
Its cells must then pass table_check: numbers where numbers are read, derived columns that follow
from the raw ones (an edited total_jct is caught), every point with every seed.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import yaml

from ..core import ConfigError
from ..conf import CONFIG_DIR
from .table_check import check_table, read_table, recorded_experiments, table_path


def sweep_params(name: str) -> dict[str, list[str]]:
    """The swept keys of experiment `name` and their values, as its yaml declares them."""
    path = CONFIG_DIR / "experiment" / f"{name}.yaml"
    if not path.exists():
        raise ConfigError(f"{path}: no such experiment")
    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    params = ((config.get("hydra") or {}).get("sweeper") or {}).get("params") or {}
    return {str(key): [value.strip() for value in str(values).split(",")] for key, values in params.items()}


def normalised(value: object) -> str:
    """One spelling per value, so yaml text ('0.50', 'null', 'true') and table cells (0.5, NaN, True) compare."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "null"
    text = str(value).strip()
    if text.lower() in ("null", "none", "nan", ""):
        return "null"
    if text.lower() in ("true", "false"):
        return text.lower()
    try:
        number = float(text)
    except ValueError:
        return text
    return repr(int(number)) if number.is_integer() else repr(number)


def column_of(key: str, table: pd.DataFrame) -> str:
    """The table column a swept key lands in (`workload` -> `workload.name`)."""
    return key if key in table.columns else f"{key}.name"


def load_result(results: Path, name: str) -> pd.DataFrame:
    """results/<name>.csv, checked as the module docstring says; errors name the file and the key."""
    path = table_path(results, f"{name}.csv")
    if not path.exists():
        raise ConfigError(f"{path}: missing; make it with experiments/run_all.sh --publish "
                          f"(or asrpt-bench -m experiment={name} and asrpt-bench-collect)")
    table = read_table(path)
    if recorded_experiments(table) != {name}:
        raise ConfigError(f"{path}: expected runs of experiment {name!r}, found {sorted(recorded_experiments(table))}")
    if "status" in table.columns and (table["status"] != "complete").any():
        raise ConfigError(f"{path}: {int((table['status'] != 'complete').sum())} run(s) did not complete; rerun "
                          "the sweep (completed points are skipped) and collect again")
    check_sweep(table, name, path)
    return table


def check_sweep(table: pd.DataFrame, name: str, path: Path, read: tuple[str, ...] = (),
                partial: bool = False) -> None:
    """The table covers exactly the sweep of conf/experiment/<name>.yaml, every point with every seed,
    and its cells pass table_check (numbers where numbers are read, derived columns consistent).
    `partial` accepts a table of part of the sweep (a quick run), still checking seeds and cells."""
    keys = []
    for key, declared in sweep_params(name).items():
        column = column_of(key, table)
        if partial:
            keys += [column] if column in table.columns else []
            continue
        if column not in table.columns:
            raise ConfigError(f"{path}: stale against conf/experiment/{name}.yaml: no column for swept key {key!r}")
        found = {normalised(value) for value in table[column]}
        wanted = {normalised(value) for value in declared}
        if found != wanted:
            raise ConfigError(f"{path}: stale against conf/experiment/{name}.yaml: {key} has {sorted(found)} "
                              f"but the experiment sweeps {sorted(wanted)}")
        keys.append(column)
    check_table(table, path, read=read, keys=keys)
