"""`asrpt-bench-collect DIR... [--out FILE] [--allow-partial]`: run directories -> one tidy table.

One row per run (for `compare` runs, one row per run x scheduler). Columns: provenance and status
first (`status` is complete / failed / incomplete / corrupt, so unfinished runs are flagged, never
dropped), `experiment` (the named experiment the run belongs to, from its `experiment=` override;
figures check it), then every config key as a dotted column (`scheduler.tau`, so every overridden key
is there), the raw `overrides`, and every scalar of summary.json (or of the scheduler's comparison.csv
row). `--out` writes CSV (`.csv`), gzip-compressed CSV (`.csv.gz`) or Parquet (`.parquet`: nulls
as nulls, list-valued keys as lists).

A swept key whose values changed no schedule (runs that agree on every other override have the same
`schedule_fingerprint`) is named in a warning: `inert sweep: scheduler.tau took 4 values and changed no
schedule`, so a table is never read as an effect that was not there. Likewise the compare runs in which no
job waited under any scheduler (`no_job_waited`: the schedulers cannot differ there) are counted in a
warning: `no job waited in 3 of 40 runs (first: DIR): the schedulers cannot differ there`.

A run counts as complete only when every file it wrote is whole and agrees with the others
(`verify_run`): its COMPLETE checksum manifest holds, comparison.csv has every scheduler of the config
and the summary's values, every Parquet file opens. A run whose files do not is listed as `corrupt`,
with the reason in `error`. The staging directory a killed run left behind no longer counts once a
later complete run (or one of the same config) sits in its run directory (rundir.superseded).

Exit codes: 0 every run complete; 1 some run failed, is incomplete or corrupt (nothing is written
unless `--allow-partial`, which writes the table with those runs flagged); 2 no such directory, no
runs, or an output that cannot be written.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any, Iterable

import pandas as pd
import pyarrow as pa
import yaml

from . import io, rundir

LEADING_COLUMNS = ("run_dir", "status", "experiment", "task", "scheduler", "error", "config_hash", "package_version",
                   "git_revision", "overrides")
EXPERIMENT_OVERRIDE = "experiment="


def flatten(mapping: dict[str, Any], prefix: str = "", native: bool = False) -> dict[str, Any]:
    """Nested dicts -> dotted keys; lists become JSON text so every cell is a scalar (`native`: lists stay
    lists, for Parquet)."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}.", native))
        elif isinstance(value, (list, tuple)):
            flat[name] = list(value) if native else json.dumps(list(value))
        else:
            flat[name] = value
    return flat


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def experiment_of(overrides: list[str]) -> str:
    """The named experiment selected by `experiment=NAME` (or `+experiment=NAME`), else ''."""
    names = [item.split("=", 1)[1] for item in overrides if item.lstrip("+").startswith(EXPERIMENT_OVERRIDE)]
    return names[-1] if names else ""


CORRUPT = "corrupt"
JOB_COUNT_TASKS = ("simulate", "compare")
PARQUET = ".parquet"


def _check_rows(jobs: pd.DataFrame, summary: dict[str, Any]) -> str:
    """'' if jobs.parquet has the rows the summary counts (per scheduler for compare), else why not."""
    per_scheduler = summary.get("per_scheduler")
    if isinstance(per_scheduler, dict) and "scheduler" in jobs.columns:
        counts = jobs["scheduler"].value_counts()
        for name, scalars in per_scheduler.items():
            expected = (scalars or {}).get("num_jobs")
            if expected is not None and int(counts.get(name, 0)) != int(expected):
                return f"{io.JOBS}: {int(counts.get(name, 0))} rows of scheduler {name!r}, the summary says {expected}"
    elif summary.get("num_jobs") is not None and len(jobs) != int(summary["num_jobs"]):
        return f"{io.JOBS}: {len(jobs)} rows, the summary says num_jobs {summary['num_jobs']}"
    return ""


def _same(recorded: Any, written: Any) -> bool:
    """Whether a comparison.csv cell holds the summary's value (an empty cell is a null; numbers as read
    back from CSV, which writes floats exactly)."""
    def missing(value: Any) -> bool:
        return value is None or value == "" or (isinstance(value, float) and math.isnan(value))

    if missing(recorded) or missing(written):
        return missing(recorded) and missing(written)
    if isinstance(recorded, (bool, int, float)) and not isinstance(written, str):
        return math.isclose(float(recorded), float(written), rel_tol=1e-12, abs_tol=0.0)
    return str(recorded) == str(written)


def _check_comparison(comparison: pd.DataFrame, summary: dict[str, Any], config: dict[str, Any]) -> str:
    """'' if comparison.csv holds one row per scheduler of the summary, every scheduler the config lists
    among them, each row's values those of the summary's `per_scheduler` entry; else why not."""
    if "scheduler" not in comparison.columns:
        return f"{io.COMPARISON}: no 'scheduler' column"
    rows = [str(name) for name in comparison["scheduler"]]
    per_scheduler = summary.get("per_scheduler")
    if not isinstance(per_scheduler, dict):
        return f"{io.SUMMARY}: no per_scheduler entry for the schedulers of {io.COMPARISON}"
    task = config.get("task") if isinstance(config.get("task"), dict) else {}
    configured = task.get("schedulers") if isinstance(task.get("schedulers"), list) else []
    absent = [str(name) for name in [*configured, *per_scheduler] if str(name) not in rows]
    if absent:
        return f"{io.COMPARISON}: no row of scheduler {absent[0]!r}, which the run's config or summary lists"
    for name in rows:
        if rows.count(name) > 1 or name not in per_scheduler:
            problem = "appears more than once" if rows.count(name) > 1 else f"is not in {io.SUMMARY}"
            return f"{io.COMPARISON}: scheduler {name!r} {problem}"
    for row in comparison.to_dict(orient="records"):
        scalars = per_scheduler[str(row["scheduler"])] or {}
        for column, value in row.items():
            if column in scalars and not _same(scalars[column], value):
                return (f"{io.COMPARISON}: scheduler {row['scheduler']!r}, column {column!r} holds {value!r} but "
                        f"{io.SUMMARY} says {scalars[column]!r}")
    return ""


def schedule_fingerprint(jobs: pd.DataFrame) -> str:
    """SHA-256 of the schedule a run's jobs.parquet records (per scheduler, job: start and end), so runs
    whose schedules are identical are seen to be."""
    columns = [c for c in ("scheduler", "job_id", "start", "end") if c in jobs.columns]
    ordered = jobs[columns].sort_values([c for c in ("scheduler", "job_id") if c in columns], kind="stable")
    return hashlib.sha256(ordered.to_csv(index=False).encode("utf-8")).hexdigest()[:16]


def _read_parquet(path: Path) -> tuple[pd.DataFrame | None, str]:
    try:
        return pd.read_parquet(path), ""
    except Exception as error:  # pyarrow raises its own types for a truncated or foreign file
        return None, f"{path.name}: not a readable Parquet file ({type(error).__name__}; truncated?)"


def verify_run(run_dir: Path, config: dict[str, Any] | None = None) -> tuple[dict[str, Any], pd.DataFrame | None, str]:
    """(summary, comparison, '') of a complete run whose files hold up, else ({}, None, the reason); the
    summary gains `schedule_fingerprint` when the run has a jobs table.

    Holding up: every file of the COMPLETE manifest is there with its checksum (io.verify_manifest), and
    the manifest lists summary.json; summary.json is a JSON object; comparison.csv is there when the
    summary has per-scheduler results, parses, has a row for every scheduler of the config
    (`task.schedulers`) and of the summary, and agrees with the summary's values; every Parquet file of
    the run opens; jobs.parquet is there and has the rows the summary counts."""
    run_dir = Path(run_dir)
    problem = io.verify_manifest(run_dir)
    listed = io.listed_files(run_dir)
    if not problem and io.SUMMARY not in listed:
        problem = f"{io.COMPLETE}: does not list {io.SUMMARY}, which every run writes last"
    if problem:
        return {}, None, problem
    try:
        summary = io.read_summary(run_dir)
    except (ValueError, OSError) as error:
        return {}, None, f"{io.SUMMARY}: cannot be read ({_first(error)})"
    if not isinstance(summary, dict):
        return {}, None, f"{io.SUMMARY}: not a JSON object"
    try:
        comparison = io.read_comparison(run_dir)
    except (ValueError, OSError, pd.errors.ParserError) as error:
        return {}, None, f"{io.COMPARISON}: cannot be read ({_first(error)})"
    if comparison is None and "per_scheduler" in summary:
        return {}, None, f"{io.COMPARISON}: missing, while {io.SUMMARY} holds per_scheduler results"
    if comparison is not None:
        problem = _check_comparison(comparison, summary, config or {})
        if problem:
            return {}, None, problem
    counted = summary.get("task") in JOB_COUNT_TASKS and summary.get("num_jobs") is not None
    if counted and not (run_dir / io.JOBS).is_file():
        return {}, None, f"{io.JOBS}: missing, while {io.SUMMARY} counts {summary['num_jobs']} jobs"
    parquet = sorted({name for name in listed if name.endswith(PARQUET)}
                     | {name for name in (io.JOBS, io.SEGMENTS) if (run_dir / name).is_file()})
    for name in parquet:
        frame, problem = _read_parquet(run_dir / name)
        if problem:
            return {}, None, problem
        if name != io.JOBS or frame is None:
            continue
        if counted:
            problem = _check_rows(frame, summary)
            if problem:
                return {}, None, problem
        summary = {**summary, "schedule_fingerprint": schedule_fingerprint(frame)}
    return summary, comparison, ""


def _first(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _record(run_dir: Path) -> tuple[dict[str, Any], list[str], str, str]:
    """(config, overrides, failure text, problem) of a run directory; problem names a file that does not
    read as what it should be ('' when all do)."""
    config: Any = {}
    overrides: Any = []
    failure, problem = "", ""
    for name, read in ((io.CONFIG, io.read_config), (io.OVERRIDES, io.read_overrides), (io.FAILED, io.read_failure)):
        try:
            value = read(run_dir)
        except (ValueError, OSError, yaml.YAMLError) as error:
            problem = problem or f"{name}: cannot be read ({_first(error)})"
            continue
        if name == io.CONFIG:
            config = value
        elif name == io.OVERRIDES:
            overrides = value
        else:
            failure = value
    if not isinstance(config, dict):
        config, problem = {}, problem or f"{io.CONFIG}: not a JSON object"
    if not isinstance(overrides, list):
        overrides, problem = [], problem or f"{io.OVERRIDES}: not a JSON list"
    return config, [str(item) for item in overrides], failure, problem


def run_rows(run_dir: Path, native: bool = False) -> list[dict[str, Any]]:
    """The rows one run directory contributes; `native` keeps a config key's null as None and lists as
    lists (for Parquet), instead of the text a CSV cell needs."""
    status = io.run_status(run_dir)
    config, overrides, failure, record_problem = _record(run_dir)
    summary, comparison, problem = verify_run(run_dir, config) if status == "complete" else ({}, None, "")
    problem = problem or record_problem
    if problem:
        status = CORRUPT
    base: dict[str, Any] = {
        "run_dir": str(run_dir),
        "status": status,
        "experiment": experiment_of(overrides),
        "task": summary.get("task", (config.get("task") or {}).get("name")
                            if isinstance(config.get("task"), dict) else None),
        "error": _last_line(failure) if status == "failed" else problem,
        "overrides": " ".join(overrides),
    }
    null = None if native else NULL
    base.update({key: null if value is None else value for key, value in flatten(config, native=native).items()})
    scalars = flatten({k: v for k, v in summary.items() if k != "per_scheduler"}, native=native)
    if comparison is None:
        return [{**base, **scalars}]
    per_scheduler = summary.get("per_scheduler") or {}
    return [{**base, **scalars, **flatten(per_scheduler.get(row.get("scheduler"), {}), native=native), **row}
            for row in comparison.to_dict(orient="records")]


NULL = "null"
"""How a config key set to null is written: as on the command line, not as an empty cell, so a sweep's null
point keeps its row in an analysis (`pd.read_csv(path, keep_default_na=False, na_values=[""])` keeps it as
the text "null"; the default reading turns it into NaN, which `groupby` drops unless `dropna=False`)."""

def parquet_ready(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with every column Parquet can store as it is: nulls stay nulls (None and NaN alike), a
    column of lists stays a list column, and a column whose cells mix kinds (a key that was a number in
    one run and a name in another) holds each value's text."""
    ready = table.copy()
    for column in ready.columns:
        if ready[column].dtype != object:
            continue
        values = [None if _is_null(value) else value for value in ready[column]]
        try:
            pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            values = [None if value is None else json.dumps(value) if isinstance(value, list) else str(value)
                      for value in values]
        ready[column] = pd.Series(values, index=ready.index, dtype=object)
    return ready


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


NOT_SWEPT = ("seed", "experiment", "progress", "workers", "plugins")
"""Override keys whose values are not a knob under study (seeds vary schedules by design)."""


def swept_values(overrides: str) -> dict[str, str]:
    """key -> value of a run's `key=value` overrides."""
    pairs = (token.split("=", 1) for token in str(overrides).split() if "=" in token)
    return {key.lstrip("+~"): value for key, value in pairs}


def inert_sweeps(table: pd.DataFrame) -> list[str]:
    """One line per swept key that took several values and changed no schedule: among runs that agree
    on every other override, each of its values gave the very same schedule (schedule_fingerprint)."""
    if "schedule_fingerprint" not in table.columns or table.empty:
        return []
    runs = table.drop_duplicates("run_dir").dropna(subset=["schedule_fingerprint"])
    values = [swept_values(text) for text in runs["overrides"]]
    keys = sorted({key for run in values for key in run} - set(NOT_SWEPT))
    lines = []
    for key in keys:
        taken = {run.get(key) for run in values}
        if len(taken) < 2:
            continue
        groups: dict[tuple, set[str]] = {}
        compared: dict[tuple, set[str | None]] = {}
        for run, fingerprint in zip(values, runs["schedule_fingerprint"]):
            rest = tuple(sorted((k, v) for k, v in run.items() if k != key))
            groups.setdefault(rest, set()).add(fingerprint)
            compared.setdefault(rest, set()).add(run.get(key))
        tested = [rest for rest, seen in compared.items() if len(seen) >= 2]
        if tested and all(len(groups[rest]) == 1 for rest in tested):
            lines.append(f"inert sweep: {key} took {len(taken)} values and changed no schedule")
    return lines


def waitless_runs(table: pd.DataFrame) -> list[str]:
    """One line naming the compare runs in which no job waited under any scheduler (summary key
    `no_job_waited`), where the schedulers cannot differ, so a sweep's point there is not read as a tie
    the schedulers earned; no line when there is none."""
    if "no_job_waited" not in table.columns or table.empty:
        return []
    runs = table.drop_duplicates("run_dir")
    flags = runs["no_job_waited"].map(lambda value: str(value).strip().lower() == "true")
    if not flags.any():
        return []
    first = runs.loc[flags, "run_dir"].iloc[0]
    return [f"no job waited in {int(flags.sum())} of {len(runs)} runs (first: {first}): the schedulers cannot "
            "differ there"]


def run_directories(roots: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """(the run directories below `roots`, the staging directories of killed runs that a later complete
    run in the same directory superseded: rundir.superseded), each sorted."""
    found = io.find_run_dirs(roots)
    superseded = [path for path in found if rundir.is_staging(path) and rundir.superseded(path)]
    return [path for path in found if path not in superseded], superseded


def collect(roots: Iterable[Path], native: bool = False) -> pd.DataFrame:
    """The tidy table of every run directory below `roots` (a superseded staging directory is none);
    `native` as `run_rows`."""
    return table_of(run_directories(roots)[0], native)


def table_of(run_dirs: Iterable[Path], native: bool = False) -> pd.DataFrame:
    """The tidy table of these run directories; `native` as `run_rows`."""
    rows = [row for run_dir in run_dirs for row in run_rows(run_dir, native)]
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    leading = [c for c in LEADING_COLUMNS if c in table.columns]
    return table[leading + [c for c in table.columns if c not in leading]]


OUT_FORMATS = (".csv", ".csv.gz", ".parquet")
"""What `--out` may name: CSV, gzip-compressed CSV, Parquet (nulls as nulls, lists as lists)."""


def out_problem(out: Path) -> str:
    """'' if a table can be written to `out`, else why not (checked before any run is read)."""
    problem = io.output_file_problem(out)
    if problem:
        return f"--out {problem}"
    if not out.name.endswith(OUT_FORMATS):
        return f"--out {out}: give a file ending in {', '.join(OUT_FORMATS)} (the name says the format)"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="asrpt-bench-collect", description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="run or sweep directories to scan")
    parser.add_argument("--out", type=Path, default=None,
                        help="file to write: .csv, .csv.gz or .parquet (default: CSV on stdout)")
    parser.add_argument("--allow-partial", action="store_true",
                        help="write the table even if some runs failed or are incomplete (flagged in `status`)")
    args = parser.parse_args(argv)
    problem = out_problem(args.out) if args.out is not None else ""
    if problem:
        print(f"asrpt-bench-collect: error: {problem}", file=sys.stderr)
        return 2
    try:
        runs, superseded = run_directories(args.dirs)
    except FileNotFoundError as error:
        print(f"asrpt-bench-collect: error: {error}", file=sys.stderr)
        return 2
    if superseded:
        print(f"asrpt-bench-collect: note: {len(superseded)} staging director{'y' if len(superseded) == 1 else 'ies'} "
              f"of killed runs superseded by a later complete run, not counted (first: {superseded[0]})",
              file=sys.stderr)
    parquet = args.out is not None and args.out.suffix == PARQUET
    table = table_of(runs, native=parquet)
    if table.empty:
        print(f"asrpt-bench-collect: error: no run directories under {[str(d) for d in args.dirs]}", file=sys.stderr)
        return 2
    counts = table.drop_duplicates("run_dir")["status"].value_counts().to_dict()
    flagged = {k: v for k, v in counts.items() if k != "complete"}
    if flagged and not args.allow_partial:
        first = table[table["status"] != "complete"].iloc[0]
        print(f"asrpt-bench-collect: error: runs not complete: {flagged} (first: {first['run_dir']}"
              f"{': ' + first['error'] if first['error'] else ''}); nothing written, pass --allow-partial to "
              "write the table with them flagged", file=sys.stderr)
        return 1
    if args.out is None:
        table.to_csv(sys.stdout, index=False)
    else:
        try:
            io.atomic_write_frame(args.out, parquet_ready(table) if parquet else table)
        except OSError as error:
            print(f"asrpt-bench-collect: error: cannot write {args.out}: {error}", file=sys.stderr)
            return 2
        print(f"wrote {len(table)} rows from {sum(counts.values())} runs to {args.out}")
    if flagged:
        print(f"asrpt-bench-collect: warning: not complete: {flagged} (see the status and error columns)",
              file=sys.stderr)
    for line in inert_sweeps(table) + waitless_runs(table):
        print(f"asrpt-bench-collect: warning: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
