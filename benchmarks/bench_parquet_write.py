"""Memory the writing of jobs.parquet adds to a run, at millions of rows, against another copy of the code.

A child process simulates --base-jobs synthetic jobs (strict A-SRPT, 64 x 8 GPUs, Heavy-Edge, oracle
predictions), takes the run's per-job table (result.frame(), its own dtypes), repeats it to --rows rows, then
writes it as jobs.parquet with io.atomic_write_frame (into a temporary directory). It prints the peak of what
the write allocated as Python objects and NumPy arrays (tracemalloc's peak: the whole file's bytes, where a
writer builds them), then the RSS before the write and the peak RSS during it (Linux's VmHWM, reset through
/proc/self/clear_refs just before it; it also counts Arrow's buffers, which tracemalloc does not see, but
misses memory the process had freed and now reuses), the write's CPU seconds, the file's size and SHA-256. pyarrow.parquet is imported before the measure, as a run has (its workload tables). With
`--before DIR` the same child runs on the code in DIR (PYTHONPATH), alternated with this tree's, and the
after/before ratios of both peaks are printed; the load average is printed at the start and the end.

    python benchmarks/bench_parquet_write.py --rows 3e6 --before /work/main --repeat 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import gc, hashlib, json, re, sys, tempfile, time, tracemalloc
from pathlib import Path
import pandas as pd
import pyarrow
import pyarrow.parquet
from asrpt_bench import io
from asrpt_bench.cache import CacheSettings
from asrpt_bench.config import PredictorConfig, RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.prepare import load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate

def status_mb(key):
    return int(re.search(key + r":\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024

rows, base_jobs = int(sys.argv[1]), int(sys.argv[2])
config = RunConfig(workload=WorkloadConfig("synthetic", synthetic_jobs=base_jobs, train_fraction=0.0),
                   predictor=PredictorConfig(name="oracle"), cluster=Cluster(servers=64),
                   cache=CacheSettings(enabled=False)).validate()
workload = load_workload(config)
result = simulate(workload.jobs, workload.cluster, make_scheduler("asrpt"), HeavyEdgePlacer(),
                  predictions={job.job_id: float(job.iterations) for job in workload.jobs}, progress=False)
base = result.frame()
frame = pd.concat([base] * -(-rows // len(base)), ignore_index=True).iloc[:rows]
del base, result, workload
gc.collect()
before = status_mb("VmRSS")
Path("/proc/self/clear_refs").write_text("5")
tracemalloc.start()
started = time.process_time()
with tempfile.TemporaryDirectory() as folder:
    io.atomic_write_frame(Path(folder) / io.JOBS, frame)
    peak, seconds = status_mb("VmHWM"), time.process_time() - started
    python_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    digest, size = hashlib.sha256(), 0
    with open(Path(folder) / io.JOBS, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
print(json.dumps({"rows": len(frame), "rss_mb": before, "peak_mb": peak, "write_s": seconds,
                  "python_mb": python_peak,
                  "file_mb": size / 2**20, "sha256": digest.hexdigest()[:12]}))
"""


def load_average() -> str:
    return "load average %.2f %.2f %.2f (%d CPUs)" % (*os.getloadavg(), os.cpu_count())


def measure(tree: Path, rows: int, base_jobs: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(base_jobs)], capture_output=True, text=True,
                          env=env, cwd=tree)  # `python -c` imports from its working directory first
    if done.returncode != 0:
        sys.exit(f"bench_parquet_write: the child on {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="3e6", help="rows of the table written (3e6 or 3000000)")
    parser.add_argument("--base-jobs", default="1e5", help="jobs simulated; their table is repeated to --rows")
    parser.add_argument("--before", type=Path, help="another copy of the code (its root) to compare with")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each tree, alternated")
    args = parser.parse_args()
    rows, base_jobs = int(float(args.rows)), int(float(args.base_jobs))
    trees = [("after", Path(__file__).resolve().parents[1])]
    if args.before is not None:
        trees.insert(0, ("before", args.before.resolve()))
    print(f"jobs.parquet of {rows:,} rows (a {base_jobs:,}-job strict run's table, repeated); {load_average()} "
          "at the start", flush=True)
    print(f"{'tree':>6} {'Python MB':>9} {'RSS MB':>8} {'RSS peak MB':>11} {'RSS added':>9} "
          f"{'write CPU s':>11} {'file MB':>8} sha256", flush=True)
    added: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
    for _ in range(args.repeat):
        for name, tree in trees:
            row = measure(tree, rows, base_jobs)
            added[name].append((row["python_mb"], row["peak_mb"] - row["rss_mb"]))
            print(f"{name:>6} {row['python_mb']:9,.1f} {row['rss_mb']:8,.0f} {row['peak_mb']:11,.0f} "
                  f"{added[name][-1][1]:9,.0f} {row['write_s']:11.1f} {row['file_mb']:8.1f} "
                  f"{row['sha256']}", flush=True)
    if args.before is not None:
        for k, what in enumerate(("Python peak", "RSS added")):
            print(f"{what}, after / before: " + ", ".join(
                f"{after[k] / before[k]:.2f}" if before[k] > 0 else "n/a"
                for before, after in zip(added["before"], added["after"])))
    print(f"{load_average()} at the end")


if __name__ == "__main__":
    main()
