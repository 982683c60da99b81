"""Gavel's own simulator beside ours on Gavel's trace, whole process against whole process
(docs/workloads.md, "Side by side with Gavel's simulator").

Needs a checkout of Gavel (stanford-futuredata/gavel) and a Python that runs its simulator; neither is a
dependency of this project. Both sides replay the same jobs: Gavel's generator output for seed 0, which
this package ships (workload=gavel), unpacked to a temporary file for Gavel unless --trace names one.

  v100  Gavel `--policy fifo --cluster_spec 108:0:0` against our `task=simulate scheduler=fifo` on 27
        servers of 4 GPUs
  het   Gavel `--policy fifo_perf --cluster_spec 36:36:36 --num_gpus_per_server 4:4:4` against our
        `task=compare` of fifo and fifo_replan (rounds of 360 s) and our `fifo_replan` alone, on
        cluster=gavel_36_36_36

Every command runs once untimed (caches, bytecode), then Gavel's run and ours alternate, --rounds of each,
each child under `nice -n 5`. Gavel's stdout (its figures) goes to DIR/gavel_N.out, its log (stderr, about
140 MB for the V100 run) to /dev/null; our run directories go under DIR. The table gives medians of wall
and CPU seconds (user + system of the child, from its rusage), Gavel's over ours, the ratio of each
alternating pair, and the load average before and after the timed runs.

    python benchmarks/bench_gavel_side_by_side.py --gavel ~/gavel --gavel-python ~/gavelenv/bin/python het
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OURS = {
    "v100": {"ours": ["task=simulate", "scheduler=fifo", "predictor=oracle", "workload=gavel",
                      "workload.train_fraction=0", "workload.num_jobs=null", "cluster.servers=27",
                      "cluster.gpus_per_server=4"]},
    "het": {"ours (compare)": ["task=compare", "task.schedulers=[fifo,fifo_replan]", "scheduler.round_s=360",
                               "preemption.restart_s=0", "scheduler=fifo_replan", "predictor=oracle",
                               "workload=gavel", "workload.train_fraction=0", "workload.num_jobs=null",
                               "cluster=gavel_36_36_36"],
            "ours (fifo_replan alone)": ["task=simulate", "scheduler=fifo_replan", "scheduler.round_s=360",
                                         "preemption.restart_s=0", "predictor=oracle", "workload=gavel",
                                         "workload.train_fraction=0", "workload.num_jobs=null",
                                         "cluster=gavel_36_36_36"]},
}
GAVEL = {"v100": ["--policy", "fifo", "--cluster_spec", "108:0:0"],
         "het": ["--policy", "fifo_perf", "--cluster_spec", "36:36:36", "--num_gpus_per_server", "4:4:4"]}
PACKAGED_TRACE = Path(__file__).resolve().parents[1] / "asrpt_bench" / "data" / "traces" / "gavel_generated_seed0.trace.gz"


def timed(command: list[str], cwd: Path, stdout: Path | None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process run under `nice -n 5`, with
    PYTHONDONTWRITEBYTECODE unset, so that both sides run from compiled bytecode after the untimed run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    with open(stdout or os.devnull, "w") as out:
        subprocess.run(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.DEVNULL, check=True,
                       preexec_fn=lambda: os.nice(5))
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=sorted(GAVEL), help="v100: 108 V100; het: 36 V100 + 36 P100 + 36 K80")
    parser.add_argument("--gavel", type=Path, required=True, help="a checkout of Gavel (its scheduler/ inside)")
    parser.add_argument("--gavel-python", default=sys.executable, help="the Python that runs Gavel's simulator")
    parser.add_argument("--trace", type=Path, default=None,
                        help="Gavel's trace file (default: the packaged generator output for seed 0)")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each command")
    parser.add_argument("--dir", type=Path, default=None, help="where the runs write (default: a new temporary one)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    driver = args.gavel / "scheduler" / "scripts" / "drivers" / "simulate_scheduler_with_trace.py"
    if not driver.is_file():
        parser.error(f"--gavel {args.gavel}: no scheduler/scripts/drivers/simulate_scheduler_with_trace.py there")
    ours_command = shutil.which("asrpt-bench")
    if ours_command is None:
        parser.error("asrpt-bench is not on PATH: install this package first (pip install -e .)")
    work = args.dir or Path(tempfile.mkdtemp(prefix="gavel_side_by_side_"))
    work.mkdir(parents=True, exist_ok=True)
    trace = args.trace
    if trace is None:
        trace = work / "gavel_generated_seed0.trace"
        trace.write_bytes(gzip.decompress(PACKAGED_TRACE.read_bytes()))
    gavel = [args.gavel_python, str(driver), "--trace_file", str(trace.resolve()), *GAVEL[args.kind],
             "--throughputs_file", "simulation_throughputs.json", "--seed", "0"]
    ours = {name: [ours_command, *overrides] for name, overrides in OURS[args.kind].items()}
    scheduler_dir = args.gavel / "scheduler"

    def run_ours(name: str, tag: str) -> tuple[float, float]:
        run_dir = work / f"{tag}_{name.split()[-1].strip('()')}"
        return timed([*ours[name], f"hydra.run.dir={run_dir}"], work, None)

    timed(gavel, scheduler_dir, work / "gavel_0.out")  # untimed: bytecode, caches
    for name in ours:
        run_ours(name, "untimed")
    times: dict[str, list[tuple[float, float]]] = {"gavel": [], **{name: [] for name in ours}}
    load_before = os.getloadavg()[0]
    for round_ in range(1, args.rounds + 1):
        times["gavel"].append(timed(gavel, scheduler_dir, work / f"gavel_{round_}.out"))
        for name in ours:
            times[name].append(run_ours(name, f"round{round_}"))
        print(f"round {round_}: " + ", ".join(f"{name} {times[name][-1][0]:.2f} s" for name in times), flush=True)
    load_after = os.getloadavg()[0]

    def median(name: str, which: int) -> float:
        return statistics.median(sample[which] for sample in times[name])

    print(f"{args.kind}: {args.rounds} alternating rounds, load average {load_before:.2f} before and "
          f"{load_after:.2f} after; runs in {work}")
    print(f"{'command':>26} {'wall s':>8} {'CPU s':>8} {'Gavel / it, wall (CPU)':>24}  pairs (wall)")
    print(f"{'gavel':>26} {median('gavel', 0):8.2f} {median('gavel', 1):8.2f}")
    for name in ours:
        pairs = ", ".join(f"{g[0] / o[0]:.0f}x" for g, o in zip(times["gavel"], times[name]))
        ratio = f"{median('gavel', 0) / median(name, 0):.0f}x ({median('gavel', 1) / median(name, 1):.0f}x)"
        print(f"{name:>26} {median(name, 0):8.2f} {median(name, 1):8.2f} {ratio:>24}  {pairs}")


if __name__ == "__main__":
    main()
