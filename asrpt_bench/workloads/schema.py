"""The one job-table schema every loader produces (design.md section 4), with units and validation.

A job table is a pandas DataFrame, one row per job. Either `model` + `config` describe the job
(its per-iteration time then follows from the profiles and the placement) or `alpha` gives a fixed
per-iteration time for every placement, with optional `alpha_max` (theory instances).

`validate_job_table` checks and types the schema's columns of any table (a trace loader's may carry
more); `check_given_table` is the one door for a table given from outside, whichever way it comes: a
CSV file (`workload=csv`), a DataFrame from Python (`api.compare`), a plugin source's table. It also
refuses columns outside the schema (a misspelt `alpha_mx`, a second `gpus`), an empty table, unknown
models, a configuration whose GPUs differ from the row's, and rows a drawn model would change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core import MAX_COUNT, MIN_ALPHA, ConfigError
from ..profiles import model_names
from ..profiles.configs import ParallelConfig
from ..profiles.zoo import DEFAULT_GPU_COUNTS
from ..rules import MAX_SECONDS, shown
from .parsing import check_columns, location, require_columns


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # "int", "float" or "str"
    unit: str
    required: bool
    description: str


COLUMNS: tuple[Column, ...] = (
    Column("job_id", "str", "-", True, "unique job identifier"),
    Column("release", "float", "s", True, "arrival time, >= 0 (trace submit time shifted to 0)"),
    Column("gpus", "int", "GPUs", True, "GPUs the job holds while it runs, >= 1"),
    Column("iterations", "int", "iterations", False, "true training iterations n_i, >= 0"),
    Column("model", "str", "-", False, "zoo model name (with `config`)"),
    Column("config", "str", "-", False, "parallel configuration name such as p2xd4 (with `model`)"),
    Column("alpha", "float", "s/iteration", False, "fixed per-iteration time (instead of model+config)"),
    Column("alpha_max", "float", "s/iteration", False, "declared worst-case per-iteration time"),
    Column("alpha_spread", "float", "s/iteration", False, "with alpha: the per-iteration time on placements "
           "spanning several servers (default: alpha everywhere)"),
    Column("user", "str", "-", False, "recurrence key: user (synthetic for Philly)"),
    Column("group", "str", "-", False, "recurrence key: job group / recurring template"),
    Column("duration", "float", "s", False, "trace run time, used to derive iterations"),
    Column("partition", "str", "-", False, "the log's partition, queue or virtual cluster"),
    Column("state", "str", "-", False, "the log's final job state (COMPLETED, FAILED, ...)"),
    Column("recorded_wait", "float", "s", False, "the log's own queueing delay, start - submit "
           "(scheduler=recorded replays start = release + recorded_wait)"),
    Column("time_limit", "float", "s", False, "the run time the job requested (predictor=walltime)"),
)
COLUMN_BY_NAME = {c.name: c for c in COLUMNS}

MAX_GPUS = 1_000_000
"""Largest `gpus` of one job (larger values overflow nothing, but no cluster here comes near)."""


def _where(source: str, row: int, column: str) -> str:
    """'source: row r (line r+1), column c' for 0-based row `row` of a table read with one header line."""
    return location(source, row, column, header_lines=1)


def _is_text(value: object) -> bool:
    """A cell a text column takes: a string, or a number written as one (an integer job id)."""
    return isinstance(value, (str, int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _coerce(table: pd.DataFrame, column: Column, source: str) -> pd.Series:
    values = table[column.name]
    present = values.notna()
    mixed = values.dtype == object or pd.api.types.is_bool_dtype(values)  # cells of any Python type
    if column.kind == "str":
        if mixed:
            _first_bad(present & ~values.map(_is_text), table, column.name, source, "must be a text value")
        return values.where(~present, values.astype(str))
    if mixed:  # true/false is no number, though pandas would read it as 1/0
        _first_bad(present & values.map(lambda v: isinstance(v, (bool, np.bool_))), table, column.name, source,
                   "not a number")
    numeric = pd.to_numeric(values, errors="coerce")
    bad = numeric.isna() & values.notna() & (values.astype(str).str.strip() != "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ConfigError(f"{_where(source, row, column.name)}: not a number: {shown(values.iloc[row])}")
    infinite = np.isinf(numeric.to_numpy(dtype=float))
    if infinite.any():
        row = int(np.flatnonzero(infinite)[0])
        raise ConfigError(f"{_where(source, row, column.name)}: not a finite number: {shown(values.iloc[row])}")
    if column.kind == "int":
        finite = numeric.dropna()
        fractional = finite[finite != np.floor(finite)]
        if len(fractional):
            row = int(table.index.get_loc(fractional.index[0]))
            raise ConfigError(f"{_where(source, row, column.name)}: not an integer: {shown(values.iloc[row])}")
    return numeric.astype(float)


def _check_bounds(table: pd.DataFrame, raw: pd.DataFrame, source: str) -> None:
    """Refuse numbers beyond what float64 time arithmetic keeps exact (MAX_SECONDS, MAX_COUNT, MAX_GPUS),
    showing the value as written."""
    exact = "larger times lose precision in float64 arithmetic"
    limits = (("release", MAX_SECONDS, "s", exact), ("duration", MAX_SECONDS, "s", exact),
              ("alpha", MAX_SECONDS, "s", exact), ("alpha_max", MAX_SECONDS, "s", exact),
              ("alpha_spread", MAX_SECONDS, "s", exact), ("recorded_wait", MAX_SECONDS, "s", exact),
              ("time_limit", MAX_SECONDS, "s", exact),
              ("iterations", MAX_COUNT, "iterations", exact), ("gpus", MAX_GPUS, "GPUs", "no cluster comes near"))
    for name, limit, unit, reason in limits:
        _first_bad(table[name] > limit, raw, name, source, f"must be <= {limit:.0e} {unit} ({reason})")
    _first_bad(table["alpha"] < MIN_ALPHA, raw, "alpha", source,
               f"must be >= {MIN_ALPHA:g} s (no training iteration is shorter than a microsecond)")
    work = table["iterations"] * table["alpha"]
    _first_bad(work > MAX_SECONDS, raw, "iterations", source,
               f"iterations x alpha must be <= {MAX_SECONDS:.0e} s ({exact})", also="alpha")


def _first_bad(bad: pd.Series, raw: pd.DataFrame, name: str, source: str, problem: str, also: str = "") -> None:
    bad_rows = bad.fillna(False).to_numpy(dtype=bool)
    if bad_rows.any():
        row = int(np.flatnonzero(bad_rows)[0])
        written = shown(raw[name].iloc[row]) + (f" x {shown(raw[also].iloc[row])}" if also else "")
        raise ConfigError(f"{_where(source, row, name)}: {problem}, got {written}")


def validate_job_table(table: pd.DataFrame, source: str) -> pd.DataFrame:
    """Check and normalise a job table; errors name the source, the row and the column.

    Returns a copy with a fresh RangeIndex, typed columns and all optional columns present.
    """
    table = table.reset_index(drop=True).copy()
    raw = table.copy()
    require_columns(table, [c.name for c in COLUMNS if c.required], source)
    for column in COLUMNS:
        if column.name not in table.columns:
            table[column.name] = pd.NA if column.kind == "str" else np.nan
            continue
        table[column.name] = _coerce(table, column, source)
    for name in ("job_id", "release", "gpus"):
        empty = table[name].isna()
        if empty.any():
            raise ConfigError(f"{_where(source, int(np.flatnonzero(empty)[0]), name)}: value is missing")
    checks = (
        ("release", table["release"] < 0, "must be >= 0"),
        ("gpus", table["gpus"] < 1, "must be >= 1"),
        ("iterations", table["iterations"] < 0, "must be >= 0"),
        ("alpha", table["alpha"] <= 0, "must be > 0"),
        ("alpha_max", table["alpha_max"] < table["alpha"], "must be >= alpha"),
        ("alpha_spread", table["alpha_spread"] < table["alpha"], "must be >= alpha"),
        ("alpha_spread", table["alpha_spread"].notna() & table["alpha"].isna(),
         "needs alpha (it is the spread-placement time of a fixed-alpha job)"),
        ("duration", table["duration"] < 0, "must be >= 0"),
        ("recorded_wait", table["recorded_wait"] < 0, "must be >= 0"),
        ("time_limit", table["time_limit"] <= 0, "must be > 0"),
    )
    for name, bad, problem in checks:
        bad = bad.fillna(False).to_numpy(dtype=bool)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ConfigError(f"{_where(source, row, name)}: {problem}, got {shown(table[name].iloc[row])}")
    _check_bounds(table, raw, source)
    has_model = table["model"].notna() & table["config"].notna()
    has_alpha = table["alpha"].notna()
    neither = ~(has_model | has_alpha)
    if neither.any() and table["duration"].isna().to_numpy()[neither.to_numpy()].any():
        row = int(np.flatnonzero((neither & table["duration"].isna()).to_numpy())[0])
        raise ConfigError(f"{_where(source, row, 'model')}: a job needs model+config, alpha, "
                          "or a duration to assign a model from")
    duplicated = table["job_id"].duplicated()
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise ConfigError(f"{_where(source, row, 'job_id')}: duplicate job id {shown(table['job_id'].iloc[row])}")
    table["gpus"] = table["gpus"].astype("int64")
    return table


def check_given_table(table: object, source: str) -> pd.DataFrame:
    """A job table given from outside, checked and typed (module doc); errors name `source`, the row and
    the column."""
    if not isinstance(table, pd.DataFrame):
        raise ConfigError(f"{source}: a job table must be a pandas DataFrame, got {type(table).__name__}")
    names = [str(name) for name in table.columns]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f"{source}: column {repeated[0]!r} appears more than once")
    check_columns(table, [column.name for column in COLUMNS], source, "the job table's")
    checked = validate_job_table(table, source)
    if checked.empty:
        raise ConfigError(f"{source}: no job rows")
    _check_models(checked, source)
    _check_iterations_kept(checked, source)
    return checked


def _check_iterations_kept(table: pd.DataFrame, source: str) -> None:
    """A row whose model is to be drawn from its duration (no model+config, no alpha) may not carry
    iterations (the drawn model's would replace them) nor a GPU count no zoo configuration has (it would
    be rounded): either would change the row without a word."""
    drawn = (table["model"].isna() & table["alpha"].isna() & table["duration"].notna()).to_numpy()
    with_iterations = drawn & table["iterations"].notna().to_numpy()
    if with_iterations.any():
        row = int(np.flatnonzero(with_iterations)[0])
        raise ConfigError(f"{_where(source, row, 'iterations')}: a row with iterations needs model+config or "
                          "alpha; without them a model is drawn from its duration, which would replace these "
                          "iterations (leave iterations empty to derive them from the duration)")
    odd = drawn & ~table["gpus"].isin(DEFAULT_GPU_COUNTS).to_numpy()
    if odd.any():
        row = int(np.flatnonzero(odd)[0])
        raise ConfigError(f"{_where(source, row, 'gpus')}: a model drawn from a duration runs on one of "
                          f"{list(DEFAULT_GPU_COUNTS)} GPUs, so gpus {int(table['gpus'].iloc[row])} would be changed; "
                          "give model+config or alpha for other sizes")


def _check_models(table: pd.DataFrame, source: str) -> None:
    """model and config come together, name a zoo model and a p<s>xd<r> configuration, and the
    configuration's GPUs equal the row's `gpus`."""
    has_model, has_config = table["model"].notna().to_numpy(), table["config"].notna().to_numpy()
    for column, lonely in (("config", has_model & ~has_config), ("model", has_config & ~has_model)):
        if lonely.any():
            row = int(np.flatnonzero(lonely)[0])
            other = "model" if column == "config" else "config"
            raise ConfigError(f"{_where(source, row, column)}: value is missing (a row with a {other} needs both "
                              "model and config)")
    known = set(model_names())
    for row in np.flatnonzero(has_model & has_config):
        model, config, gpus = table["model"].iloc[row], table["config"].iloc[row], int(table["gpus"].iloc[row])
        if model not in known:
            raise ConfigError(f"{_where(source, row, 'model')}: unknown model {model!r}; known: {sorted(known)}")
        try:
            parsed = ParallelConfig.parse(config)
        except ConfigError as error:
            raise ConfigError(f"{_where(source, row, 'config')}: {error}") from None
        if parsed.gpus != gpus:
            raise ConfigError(f"{source}: row {row + 1} (line {row + 2}), columns 'gpus' and 'config': {config} uses "
                              f"{parsed.gpus} GPUs ({parsed.stages} stages x {parsed.replicas} replicas) but gpus is "
                              f"{gpus}")
