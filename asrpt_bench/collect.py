"""`asrpt-bench-collect DIR... [--out FILE] [--allow-partial]`: run directories -> one tidy CSV.

One row per run (for `compare` runs, one row per run x scheduler). Columns: provenance and status
first (`status` is complete / failed / incomplete, so unfinished runs are flagged, never dropped),
`experiment` (the named experiment the run belongs to, from its `experiment=` override; figures
check it), then every config key as a dotted column (`scheduler.tau`, so every overridden key is
there), the raw `overrides`, and every scalar of summary.json (or of the scheduler's comparison.csv row).

A swept key whose values changed no schedule (runs that agree on every other override have the same
`schedule_fingerprint`) is named in a warning: `inert sweep: scheduler.tau took 4 values and changed no
schedule`, so a table is never read as an effect that was not there. Likewise the compare runs in which no
job waited under any scheduler (`no_job_waited`: the schedulers cannot differ there) are counted in a
warning: `no job waited in 3 of 40 runs (first: DIR): the schedulers cannot differ there`.

A run counts as complete only when its files hold what its COMPLETE marker says: every listed file
exists, summary.json and comparison.csv parse, jobs.parquet reads, and its rows match the summary's
`num_jobs` (per scheduler for `compare`). A run whose files do not is listed as `corrupt`, with the
reason in `error`.

Exit codes: 0 every run complete; 1 some run failed, is incomplete or corrupt (nothing is written
unless `--allow-partial`, which writes the table with those runs flagged); 2 no such directory, no
runs, or an output that cannot be written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Iterable

import pandas as pd
import yaml

from . import io

LEADING_COLUMNS = ("run_dir", "status", "experiment", "task", "scheduler", "error", "config_hash", "package_version",
                   "git_revision", "overrides")
EXPERIMENT_OVERRIDE = "experiment="


def flatten(mapping: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts -> dotted keys; lists become JSON text so every cell is a scalar."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, (list, tuple)):
            flat[name] = json.dumps(list(value))
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


def schedule_fingerprint(jobs: pd.DataFrame) -> str:
    """SHA-256 of the schedule a run's jobs.parquet records (per scheduler, job: start and end), so runs
    whose schedules are identical are seen to be."""
    columns = [c for c in ("scheduler", "job_id", "start", "end") if c in jobs.columns]
    ordered = jobs[columns].sort_values([c for c in ("scheduler", "job_id") if c in columns], kind="stable")
    return hashlib.sha256(ordered.to_csv(index=False).encode("utf-8")).hexdigest()[:16]


def verify_run(run_dir: Path) -> tuple[dict[str, Any], pd.DataFrame | None, str]:
    """(summary, comparison, '') of a complete run whose files hold up, else ({}, None, the reason); the
    summary gains `schedule_fingerprint` when the run has a jobs table."""
    try:
        listed = (Path(run_dir) / io.COMPLETE).read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError as error:
        return {}, None, f"{io.COMPLETE}: cannot be read ({_first(error)})"
    missing = [name for name in listed if name and not (Path(run_dir) / name).is_file()]
    if missing:
        return {}, None, f"{missing[0]}: listed in COMPLETE but missing"
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
    if (Path(run_dir) / io.JOBS).exists():
        try:
            jobs = io.read_jobs(run_dir)
        except Exception as error:  # pyarrow raises its own types for a truncated or foreign file
            return {}, None, f"{io.JOBS}: not a readable Parquet file ({type(error).__name__}; truncated?)"
        if summary.get("task") in JOB_COUNT_TASKS:
            problem = _check_rows(jobs, summary)
            if problem:
                return {}, None, problem
        summary = {**summary, "schedule_fingerprint": schedule_fingerprint(jobs)}
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


def run_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The rows one run directory contributes."""
    status = io.run_status(run_dir)
    summary, comparison, problem = verify_run(run_dir) if status == "complete" else ({}, None, "")
    config, overrides, failure, record_problem = _record(run_dir)
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
    base.update({key: NULL if value is None else value for key, value in flatten(config).items()})
    scalars = flatten({k: v for k, v in summary.items() if k != "per_scheduler"})
    if comparison is None:
        return [{**base, **scalars}]
    per_scheduler = summary.get("per_scheduler") or {}
    return [{**base, **scalars, **flatten(per_scheduler.get(row.get("scheduler"), {})), **row}
            for row in comparison.to_dict(orient="records")]


NULL = "null"
"""How a config key set to null is written: as on the command line, not as an empty cell, so a sweep's null
point keeps its row in an analysis (`pd.read_csv(path, keep_default_na=False, na_values=[""])` keeps it as
the text "null"; the default reading turns it into NaN, which `groupby` drops unless `dropna=False`)."""

NOT_SWEPT = ("seed", "experiment", "progress", "plugins")
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


def collect(roots: Iterable[Path]) -> pd.DataFrame:
    """The tidy table of every run directory below `roots`."""
    rows = [row for run_dir in io.find_run_dirs(roots) for row in run_rows(run_dir)]
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    leading = [c for c in LEADING_COLUMNS if c in table.columns]
    return table[leading + [c for c in table.columns if c not in leading]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="asrpt-bench-collect", description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path, help="run or sweep directories to scan")
    parser.add_argument("--out", type=Path, default=None, help="CSV to write (default: print to stdout)")
    parser.add_argument("--allow-partial", action="store_true",
                        help="write the table even if some runs failed or are incomplete (flagged in `status`)")
    args = parser.parse_args(argv)
    try:
        table = collect(args.dirs)
    except FileNotFoundError as error:
        print(f"asrpt-bench-collect: error: {error}", file=sys.stderr)
        return 2
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
        if args.out.is_dir():
            print(f"asrpt-bench-collect: error: --out {args.out} is a directory; give the CSV file to write",
                  file=sys.stderr)
            return 2
        try:
            io.atomic_write_frame(args.out, table)
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
