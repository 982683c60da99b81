"""Compare a run of Gavel's own simulator with ours on the same trace: mean JCT, makespan, per-job JCT.

Gavel's `scripts/drivers/simulate_scheduler_with_trace.py` prints `Total duration: X seconds`, one
`Job N: JCT` line per job (N counts the trace's lines from 0) and `Average job completion time: X
seconds`; our `jobs.parquet` names job N `...-{N+1:05d}`. Used for the side-by-side checks of
docs/workloads.md:

    python tools/gavel_side_by_side.py GAVEL_STDOUT RUN_DIR/jobs.parquet [--scheduler fifo_replan]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

JOB_LINE = re.compile(r"Job (\d+): ([0-9.]+)$")
TOTAL = re.compile(r"Total duration: ([0-9.]+) seconds")
AVERAGE = re.compile(r"Average job completion time: ([0-9.]+) seconds")


def read_gavel(path: Path) -> tuple[pd.Series, float, float]:
    """Per-job JCTs (indexed by Gavel's job id), printed mean JCT and makespan of one Gavel stdout."""
    jcts: dict[int, float] = {}
    total = average = None
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if match := JOB_LINE.match(line):
            jcts[int(match[1])] = float(match[2])
        elif match := TOTAL.match(line):
            total = float(match[1])
        elif match := AVERAGE.match(line):
            average = float(match[1])
    if not jcts or total is None or average is None:
        raise SystemExit(f"{path}: no 'Job N:', 'Total duration' or 'Average job completion time' line "
                         "(not the stdout of Gavel's simulate_scheduler_with_trace.py)")
    return pd.Series(jcts).sort_index(), average, total


def read_ours(path: Path, scheduler: str | None) -> tuple[pd.Series, float]:
    """Per-job JCTs indexed like Gavel's (trace line from 0) and the makespan of one jobs.parquet."""
    table = pd.read_parquet(path)
    if "scheduler" in table.columns:
        names = sorted(table["scheduler"].unique())
        if scheduler is None and len(names) > 1:
            raise SystemExit(f"{path}: holds schedulers {names}: give --scheduler")
        if scheduler is not None:
            if scheduler not in names:
                raise SystemExit(f"{path}: no scheduler {scheduler!r} (it holds {names})")
            table = table[table["scheduler"] == scheduler]
    index = table["job_id"].str.rsplit("-", n=1).str[1].astype(int) - 1
    jcts = pd.Series(table["jct"].to_numpy(), index=index.to_numpy()).sort_index()
    return jcts, float(table["end"].max() - table["release"].min())


def compare(gavel: pd.Series, gavel_mean: float, gavel_makespan: float, ours: pd.Series,
            ours_makespan: float) -> dict[str, float]:
    """Aggregates and per-job agreement over the jobs Gavel reports a JCT for. Gavel prints none for a job
    it gave up on (MAX_FAILED_ATTEMPTS in its scheduler.py) and leaves it out of its mean, so ours is taken
    over the same jobs and the count left out is reported; a job Gavel has and we lack is refused."""
    missing = set(gavel.index) - set(ours.index)
    if missing:
        raise SystemExit(f"{len(missing)} Gavel jobs are not in ours (first: {min(missing)}): not the same trace")
    left_out = len(ours) - len(gavel)
    ours = ours.loc[gavel.index]
    gap = gavel.to_numpy() - ours.to_numpy()
    return {"jobs": len(gavel), "ours_without_gavel_jct": left_out,
            "gavel_mean_jct_s": gavel_mean, "ours_mean_jct_s": float(ours.mean()),
            "mean_jct_gavel_over_ours": gavel_mean / float(ours.mean()),
            "gavel_makespan_s": gavel_makespan, "ours_makespan_s": ours_makespan,
            "makespan_gavel_over_ours": gavel_makespan / ours_makespan,
            "median_abs_job_gap_s": float(np.median(np.abs(gap))),
            "pearson_job_jct": float(np.corrcoef(gavel.to_numpy(), ours.to_numpy())[0, 1])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gavel_stdout", type=Path)
    parser.add_argument("jobs_parquet", type=Path)
    parser.add_argument("--scheduler", help="which scheduler of a task=compare jobs.parquet")
    args = parser.parse_args(argv)
    gavel, gavel_mean, gavel_makespan = read_gavel(args.gavel_stdout)
    ours, ours_makespan = read_ours(args.jobs_parquet, args.scheduler)
    for key, value in compare(gavel, gavel_mean, gavel_makespan, ours, ours_makespan).items():
        print(f"{key}: {value:.10g}" if isinstance(value, float) else f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
