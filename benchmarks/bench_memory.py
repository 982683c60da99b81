"""Peak memory and speed of a large replay: jobs/s and peak RSS at growing job counts, with growth exponents.

Each size runs in a fresh process (so its peak RSS is its own): the synthetic workload of N jobs, all of them
simulated (`workload=synthetic workload.synthetic_jobs=N workload.train_fraction=0`, the one command the CLI
spells the same way), on 64 x 8 GPUs, Heavy-Edge, oracle predictions, audit on, the workload cache off (so
every size builds its jobs). It prints the CPU seconds of building the jobs and of simulate(), jobs per
CPU-second of simulate(), the child's peak RSS (ru_maxrss) and RSS per job, then the exponents b of
peak RSS ~ N^b and simulate() CPU time ~ N^b, fitted in log-log over the sizes, with the load average.
With --write the child then builds the run's per-job table (result.frame()) and writes it as jobs.parquet
the way a run does (io.atomic_write_frame, into a temporary directory), and also prints the RSS once the table
is built, the peak RSS during the write (Linux's VmHWM, reset through /proc/self/clear_refs just before it),
what the write added to the RSS before it (after a replay the write reuses memory the replay freed, so this
misses most of it), the peak of what the write allocated as Python objects and NumPy arrays (tracemalloc:
the whole file's bytes, where a writer builds them) and the CPU seconds of the write.

    python benchmarks/bench_memory.py                                  # 1e5, 1e6, 3e6 jobs, strict A-SRPT
    python benchmarks/bench_memory.py --sizes 1e5,3e5 --scheduler srtf_oracle
    python benchmarks/bench_memory.py --sizes 1e5,1e6 --write               # and the jobs.parquet write
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

CHILD = """
import json, re, resource, sys, tempfile, time, tracemalloc
from pathlib import Path
from asrpt_bench import io
from asrpt_bench.cache import CacheSettings
from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.prepare import load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def status_mb(key):
    return int(re.search(key + r":\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024

jobs, scheduler, write = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "write"
config = RunConfig(workload=WorkloadConfig("synthetic", synthetic_jobs=jobs, train_fraction=0.0),
                   cluster=Cluster(servers=64), cache=CacheSettings(enabled=False)).validate()
started = time.process_time()
workload = load_workload(config)
built = time.process_time() - started
predictions = {job.job_id: float(job.iterations) for job in workload.jobs}
started = time.process_time()
result = simulate(workload.jobs, workload.cluster, make_scheduler(scheduler), HeavyEdgePlacer(),
                  predictions=predictions, progress=False)
simulated = time.process_time() - started
row = {"jobs": len(result.records), "build_s": built, "simulate_s": simulated, "peak_mb": peak_mb()}
if write:
    frame = result.frame()
    row["table_mb"] = status_mb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    tracemalloc.start()
    started = time.process_time()
    with tempfile.TemporaryDirectory() as folder:
        io.atomic_write_frame(Path(folder) / io.JOBS, frame)
    row["write_s"], row["write_peak_mb"] = time.process_time() - started, status_mb("VmHWM")
    row["write_python_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
print(json.dumps(row))
"""


def load_average() -> str:
    return "load average %.2f %.2f %.2f (%d CPUs)" % (*os.getloadavg(), os.cpu_count())


def exponent(sizes: list[int], values: list[float]) -> float:
    """b of values ~ sizes^b, least squares in log-log."""
    return float(np.polyfit(np.log(sizes), np.log(values), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1e5,1e6,3e6", help="comma-separated job counts (1e5 or 100000)")
    parser.add_argument("--scheduler", default="asrpt", help="the scheduler replayed (default: strict A-SRPT)")
    parser.add_argument("--write", action="store_true", help="also build the per-job table and write jobs.parquet")
    args = parser.parse_args()
    sizes = [int(float(size)) for size in args.sizes.split(",")]
    print(f"synthetic workload, 64 x 8 GPUs, Heavy-Edge, oracle predictions, audit on, {args.scheduler}; "
          f"{load_average()} at the start", flush=True)
    print(f"{'jobs':>10} {'build CPU s':>11} {'simulate CPU s':>14} {'jobs/CPU-s':>10} {'peak RSS MB':>11} "
          f"{'KB/job':>7}" + (f" {'table RSS MB':>12} {'write peak MB':>13} {'added MB':>8} {'Python MB':>9} {'write CPU s':>11}"
                              if args.write else ""),
          flush=True)
    rows = []
    for size in sizes:
        done = subprocess.run([sys.executable, "-c", CHILD, str(size), args.scheduler,
                               "write" if args.write else "-"], capture_output=True, text=True,
                              cwd=tempfile.gettempdir())  # `python -c` imports from its working directory first:
        # run from a checkout, the child would measure that checkout rather than what PYTHONPATH names
        if done.returncode != 0:
            sys.exit(f"bench_memory: the run of {size:,} jobs failed:\n{done.stderr[-2000:]}")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"{row['jobs']:>10,} {row['build_s']:11.1f} {row['simulate_s']:14.1f} "
              f"{row['jobs'] / row['simulate_s']:10,.0f} {row['peak_mb']:11,.0f} "
              f"{row['peak_mb'] * 1024 / row['jobs']:7.2f}" +
              (f" {row['table_mb']:12,.0f} {row['write_peak_mb']:13,.0f} "
               f"{row['write_peak_mb'] - row['table_mb']:8,.0f} {row['write_python_mb']:9,.1f} "
               f"{row['write_s']:11.1f}"
               if args.write else ""), flush=True)
    if len(rows) > 1:
        jobs = [row["jobs"] for row in rows]
        print(f"growth exponents: peak RSS ~ N^{exponent(jobs, [row['peak_mb'] for row in rows]):.2f}, "
              f"simulate CPU ~ N^{exponent(jobs, [row['simulate_s'] for row in rows]):.2f}")
    print(f"{load_average()} at the end")


if __name__ == "__main__":
    main()
