"""Regenerate `fixed_jobs.csv`, the frozen job table of tests/test_schedule_checksums.py.

400 Philly jobs with models assigned (seed 0), drawn with 30% single-GPU jobs so that multi-GPU and
communication-heavy jobs make placement and A-SRPT's delay budget matter, and arrival slots of the
first 400 jobs compressed 4x so that jobs queue. The CSV is committed: the checksum test reads it, it
never calls this script (a change in loaders or model assignment must not move the checksums).

    python tests/data/make_fixed_jobs.py
"""

from __future__ import annotations

from pathlib import Path

from asrpt_bench.config import RunConfig
from asrpt_bench.io import atomic_write_frame
from asrpt_bench.prepare import load_workload
from asrpt_bench.workloads.schema import COLUMNS

OUT = Path(__file__).resolve().parent / "fixed_jobs.csv"


def main() -> None:
    config = RunConfig()
    config.workload.num_jobs = 400
    config.workload.single_gpu_share = 0.3
    config.workload.resample_replace = True
    config.workload.time_compression = 4.0
    table = load_workload(config.validate()).table
    columns = [c.name for c in COLUMNS if c.name in table.columns and table[c.name].notna().any()]
    table = table[columns].astype({"gpus": "int64", "iterations": "int64"})
    atomic_write_frame(OUT, table)
    print(f"wrote {OUT} ({len(table)} jobs)")


if __name__ == "__main__":
    main()
