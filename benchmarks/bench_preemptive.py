"""Simulated jobs per second of the preemptive references (srtf, srtf_oracle, las2d) beside
A-SRPT's, on the full Philly trace (82,247 jobs, 64 x 8 GPUs, Heavy-Edge, oracle predictions, audit
on), each scheduler with its defaults in a fresh process, as bench_speed.py's `sim` section measures.

    python benchmarks/bench_preemptive.py                         # full trace
    python benchmarks/bench_preemptive.py --size 10000 --schedulers asrpt srtf
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from bench_speed import ROOT, SIM, run_snippet, uptime

SCHEDULERS = ["asrpt", "srtf", "srtf_oracle", "las2d"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=None, help="the first SIZE jobs of the trace (default: all)")
    parser.add_argument("--schedulers", nargs="+", default=SCHEDULERS)
    args = parser.parse_args()
    cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    print(uptime())
    seconds = {}
    for name in args.schedulers:
        seconds[name] = run_snippet(ROOT, SIM, cache_home, NAMES=[name], SIZE=args.size)[name]
        print(f"  {name:>12} {seconds[name]:8.1f} s", flush=True)
    jobs = args.size or 82_247
    reference = seconds.get("asrpt")
    print(f"simulate() on {jobs:,} Philly jobs, 64x8 GPUs, Heavy-Edge, audit on; {uptime()}")
    for name, value in seconds.items():
        ratio = f"   {(jobs / value) / (jobs / reference):.3f} x asrpt" if reference else ""
        print(f"  {name:>12} {value:8.1f} s {jobs / value:10,.0f} jobs/s{ratio}")


if __name__ == "__main__":
    main()
