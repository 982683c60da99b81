"""`asrpt-bench-collect DIR... [--out FILE]`: run directories -> one tidy CSV.

One row per run (for `compare` runs, one row per run x scheduler). Columns: provenance and status
first (`status` is complete / failed / incomplete, so unfinished runs are flagged, never dropped),
then every config key as a dotted column (`scheduler.tau`, so every overridden key is there), the
raw `overrides`, and every scalar of summary.json (or of the scheduler's comparison.csv row).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from . import io

LEADING_COLUMNS = ("run_dir", "status", "task", "scheduler", "error", "config_hash", "package_version",
                   "git_revision", "overrides")


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


def run_rows(run_dir: Path) -> list[dict[str, Any]]:
    """The rows one run directory contributes."""
    status = io.run_status(run_dir)
    summary = io.read_summary(run_dir) if status == "complete" else {}
    config = io.read_config(run_dir)
    base: dict[str, Any] = {
        "run_dir": str(run_dir),
        "status": status,
        "task": summary.get("task", config.get("task", {}).get("name")),
        "error": _last_line(io.read_failure(run_dir)) if status == "failed" else "",
        "overrides": " ".join(io.read_overrides(run_dir)),
    }
    base.update(flatten(config))
    scalars = flatten({k: v for k, v in summary.items() if k != "per_scheduler"})
    comparison = io.read_comparison(run_dir) if status == "complete" else None
    if comparison is None:
        return [{**base, **scalars}]
    return [{**base, **scalars, **row} for row in comparison.to_dict(orient="records")]


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
    args = parser.parse_args(argv)
    try:
        table = collect(args.dirs)
    except FileNotFoundError as error:
        print(f"asrpt-bench-collect: {error}", file=sys.stderr)
        return 2
    if table.empty:
        print(f"asrpt-bench-collect: no run directories under {[str(d) for d in args.dirs]}", file=sys.stderr)
        return 1
    counts = table.drop_duplicates("run_dir")["status"].value_counts().to_dict()
    if args.out is None:
        table.to_csv(sys.stdout, index=False)
    else:
        io.atomic_write_frame(args.out, table)
        print(f"wrote {len(table)} rows from {sum(counts.values())} runs to {args.out}")
    flagged = {k: v for k, v in counts.items() if k != "complete"}
    if flagged:
        print(f"asrpt-bench-collect: not complete: {flagged} (see the status and error columns)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
