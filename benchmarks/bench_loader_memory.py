"""Peak memory of loading a trace, per job: the job table alone and the whole workload build.

Each step runs in a fresh process, after the package and its libraries are imported: `table` reads the packaged
Philly trace into its validated job table (workloads.philly.load_philly); `workload` builds the run's workload
from it (`workload=philly workload.num_jobs=null workload.train_fraction=0`, oracle predictions, 64 x 8 GPUs,
cache off: the table, models assigned, `Job`s). It prints the jobs, the RSS the step added at its peak (Linux's VmHWM, reset through
/proc/self/clear_refs just before the step) and once done, each also per job, and its CPU seconds, with the
load average.

    python benchmarks/bench_loader_memory.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import gc, json, re, sys, time
from pathlib import Path
import pandas, pyarrow.parquet
from asrpt_bench.cache import CacheSettings
from asrpt_bench.config import PredictorConfig, RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.prepare import load_workload
from asrpt_bench.workloads.philly import load_philly

def status_mb(key):
    return int(re.search(key + r":\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024

step = sys.argv[1]
config = RunConfig(workload=WorkloadConfig("philly", num_jobs=None, train_fraction=0.0),
                   predictor=PredictorConfig(name="oracle"),
                   cluster=Cluster(servers=64), cache=CacheSettings(enabled=False)).validate()
gc.collect()
before = status_mb("VmRSS")
Path("/proc/self/clear_refs").write_text("5")
started = time.process_time()
jobs = len(load_philly()) if step == "table" else len(load_workload(config).jobs)
print(json.dumps({"jobs": jobs, "peak_mb": status_mb("VmHWM") - before, "held_mb": status_mb("VmRSS") - before,
                  "cpu_s": time.process_time() - started}))
"""


def load_average() -> str:
    return "load average %.2f %.2f %.2f (%d CPUs)" % (*os.getloadavg(), os.cpu_count())


def main() -> None:
    print(f"packaged Philly trace; {load_average()} at the start", flush=True)
    print(f"{'step':>9} {'jobs':>7} {'peak MB':>8} {'KB/job':>7} {'held MB':>8} {'KB/job':>7} {'CPU s':>6}", flush=True)
    tree = Path(__file__).resolve().parents[1]
    for step in ("table", "workload"):
        done = subprocess.run([sys.executable, "-c", CHILD, step], capture_output=True, text=True, cwd=tree)
        if done.returncode != 0:
            sys.exit(f"bench_loader_memory: the {step} step failed:\n{done.stderr[-2000:]}")
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{step:>9} {row['jobs']:7,} {row['peak_mb']:8,.0f} {row['peak_mb'] * 1024 / row['jobs']:7.2f} "
              f"{row['held_mb']:8,.0f} {row['held_mb'] * 1024 / row['jobs']:7.2f} {row['cpu_s']:6.1f}", flush=True)
    print(f"{load_average()} at the end")


if __name__ == "__main__":
    main()
