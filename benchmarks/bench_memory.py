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

With --cli each size is instead the whole one-command replay, `asrpt-bench task=simulate` (CLI_COMMAND): load,
simulate, audit, score, write the run directory (jobs.parquet, users.csv, summary.json), run in a child process
(from a temporary directory, into a temporary run directory) whose peak RSS, user + system CPU seconds and wall
seconds come from the kernel when it exits (wait4, as /usr/bin/time -v reports them), with jobs per wall second,
the replay's own jobs per second (the jobs over summary.json's sim_wall_time_s: simulate, audit and scoring) and
the load average before and after each run, on the code of the tree this script is in; with --before DIR each
size also runs on the code in DIR (PYTHONPATH), alternated with this tree's, --repeat times, and the tables of
the two trees (jobs.parquet, users.csv, segments.parquet) are compared by SHA-256.

    python benchmarks/bench_memory.py                                  # 1e5, 1e6, 3e6 jobs, strict A-SRPT
    python benchmarks/bench_memory.py --sizes 1e5,3e5 --scheduler srtf_oracle
    python benchmarks/bench_memory.py --sizes 1e5,1e6 --write               # and the jobs.parquet write
    python benchmarks/bench_memory.py --cli --sizes 1e6,3e6 --before /work/main   # the one command, both trees
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


CLI_COMMAND = ("task=simulate workload=synthetic workload.synthetic_jobs={jobs} workload.train_fraction=0 "
               "cluster=large predictor=oracle scheduler={scheduler} cache.enabled=false progress=false")
"""The one command of a large replay, as the in-process child above runs it: every job simulated, 64 x 8 GPUs,
Heavy-Edge (the default placement), perfect predictions, the audit on, the workload cache off."""
CLI_OUTPUTS = ("jobs.parquet", "users.csv", "segments.parquet")
"""The run's tables, hashed to show that two trees wrote the same bytes (summary.json holds wall times)."""


def cli_run(jobs: int, scheduler: str, tree: Path) -> dict:
    """The one-command replay in a child process on the code in `tree`: its peak RSS, CPU and wall seconds
    from wait4, the load average around it, the hashes of its tables."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryDirectory() as folder:
        run_dir = Path(folder) / "run"
        command = [sys.executable, "-m", "asrpt_bench.cli", *CLI_COMMAND.format(jobs=jobs, scheduler=scheduler).split(),
                   f"hydra.run.dir={run_dir}"]
        load = os.getloadavg()[0]
        started = time.perf_counter()
        with open(Path(folder) / "stderr", "w+") as errors:
            child = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=errors)
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - started
            child.returncode = os.waitstatus_to_exitcode(status)
            if child.returncode != 0:
                errors.seek(0)
                sys.exit(f"bench_memory: the CLI run of {jobs:,} jobs failed:\n{errors.read()[-2000:]}")
        summary = json.loads((run_dir / "summary.json").read_text())
        hashes = {name: hashlib.sha256((run_dir / name).read_bytes()).hexdigest()[:12]
                  for name in CLI_OUTPUTS if (run_dir / name).exists()}
    return {"jobs": summary["num_jobs"], "peak_mb": usage.ru_maxrss / 1024, "cpu_s": usage.ru_utime + usage.ru_stime,
            "wall_s": wall, "replay_s": summary["sim_wall_time_s"], "load": (load, os.getloadavg()[0]),
            "hashes": hashes}


def cli_main(sizes: list[int], scheduler: str, before: Path | None, repeat: int) -> None:
    """Each size's one-command replay (alternated with the code in `before`, when given), one line per run."""
    print(f"asrpt-bench {CLI_COMMAND.format(jobs='N', scheduler=scheduler)}, each run in its own process; "
          f"{load_average()} at the start", flush=True)
    print(f"{'tree':>6} {'jobs':>10} {'peak RSS MB':>11} {'KB/job':>7} {'wall s':>7} {'CPU s':>7} {'jobs/s':>7} "
          f"{'replay jobs/s':>13} {'load':>9}  tables (sha256)", flush=True)
    here = Path(__file__).resolve().parents[1]
    trees = [("after", here)] if before is None else [("before", before.resolve()), ("after", here)]
    for size in sizes:
        hashes = {}
        for _ in range(repeat):
            for name, tree in trees:
                row = cli_run(size, scheduler, tree)
                hashes.setdefault(name, row["hashes"])
                print(f"{name:>6} {row['jobs']:>10,} {row['peak_mb']:11,.0f} {row['peak_mb'] * 1024 / row['jobs']:7.2f} "
                      f"{row['wall_s']:7.1f} {row['cpu_s']:7.1f} {row['jobs'] / row['wall_s']:7,.0f} "
                      f"{row['jobs'] / row['replay_s']:13,.0f} {row['load'][0]:4.2f}-{row['load'][1]:4.2f}  "
                      + " ".join(f"{key} {value}" for key, value in row["hashes"].items()), flush=True)
        if before is not None:
            print(f"{size:,} jobs: the two trees' tables are " +
                  ("the same bytes" if hashes["before"] == hashes["after"] else "NOT the same bytes"), flush=True)
    print(f"{load_average()} at the end")


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
    parser.add_argument("--cli", action="store_true", help="the whole one-command CLI replay (task=simulate) per size")
    parser.add_argument("--before", type=Path, help="with --cli: another copy of the code (its root) to alternate with")
    parser.add_argument("--repeat", type=int, default=1, help="with --cli: runs of each tree per size, alternated")
    args = parser.parse_args()
    sizes = [int(float(size)) for size in args.sizes.split(",")]
    if (args.before is not None or args.repeat != 1) and not args.cli:
        parser.error("--before and --repeat measure the CLI replay: add --cli")
    if args.cli and args.write:
        parser.error("--write measures the write after simulate() alone; the --cli run writes its tables itself")
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.cli:
        cli_main(sizes, args.scheduler, args.before, args.repeat)
        return
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
