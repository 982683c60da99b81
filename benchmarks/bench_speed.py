"""Speed of the whole tool: simulator throughput, its growth, the default run's phases, startup, sweeps.

Every measurement runs in a fresh Python process against a given copy of the code (PYTHONPATH), so
`--before DIR` (e.g. `git archive <commit> | tar -x -C DIR`) measures the old code the same way,
interleaved with the new (before, after, before, after, ...), and prints after/before ratios. The
machine is shared: quote the `uptime` load printed with the figures.

Sections (`--sections`, default all):
  sim     jobs/s per scheduler on the full Philly trace (82,247 jobs, 64 x 8 GPUs, Heavy-Edge, oracle
          predictions, audit on): wall time of simulate() alone, each scheduler in a fresh process
  growth  A-SRPT + Heavy-Edge simulate() time on the first 5k..82k jobs after a warm-up run on one job
          of every plan (so per-plan caches do not load the smallest size); exponent of a log-log fit
  phases  the default `asrpt-bench` run split into imports, load, fit, simulate (all schedulers),
          write; cold (empty cache) and warm (cache filled by the cold run)
  e2e     end-to-end wall of `asrpt-bench` (cold, warm) and of `task=simulate` on a 2,000-job CSV
  warm    end-to-end wall of the warm default `asrpt-bench` and the warm `task=simulate` on the 2,000-job
          CSV (oracle predictions), each the second run on its own cache (the first fills it)
  sweep   README's 16-point sweep with the basic, joblib (2 workers) and ray (2 CPUs) launchers, warm
          cache (the after code only: the before code has no cache and no ray launcher)

    python benchmarks/bench_speed.py --before /tmp/asrpt_before --repeat 3
    python benchmarks/bench_speed.py --sections warm --repeat 5 --output results/bench_warm.txt
    python benchmarks/bench_speed.py --sections sim,growth
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCHEDULERS = ["asrpt", "asrpt_oracle", "spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime", "fifo"]
GROWTH_SIZES = [5_000, 10_000, 20_000, 40_000, 82_247]
SWEEP = ["-m", "scheduler.comm_heavy=1.2,1.5,2,3", "scheduler.tau=0,0.5,1,2"]

FULL_TRACE = """
from asrpt_bench.config import RunConfig, WorkloadConfig
from asrpt_bench.core import Cluster
from asrpt_bench.prepare import load_workload
config = RunConfig(workload=WorkloadConfig("philly", num_jobs=None, train_fraction=0.0), cluster=Cluster(servers=64))
workload = load_workload(config.validate())
jobs, cluster = workload.jobs, workload.cluster
"""

SIM = FULL_TRACE + """
import json, time
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
out = {}
for name in NAMES:
    started = time.perf_counter()
    simulate(jobs[:SIZE], cluster, make_scheduler(name), HeavyEdgePlacer(),
             predictions={job.job_id: float(job.iterations) for job in jobs[:SIZE]})
    out[name] = time.perf_counter() - started
print("RESULT", json.dumps(out))
"""

GROWTH = FULL_TRACE + """
import json, time
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
# warm-up on one job of every plan: per-plan estimates and placement caches are filled once, so the
# first (smallest) size does not carry them and the exponent measures growth
one_per_plan = list({job.plan: job for job in jobs}.values())
simulate(one_per_plan, cluster, make_scheduler("asrpt"), HeavyEdgePlacer(),
         predictions={job.job_id: float(job.iterations) for job in one_per_plan})
out = {}
for size in SIZES:
    part = jobs[:size]
    predictions = {job.job_id: float(job.iterations) for job in part}
    started = time.perf_counter()
    simulate(part, cluster, make_scheduler("asrpt"), HeavyEdgePlacer(), predictions=predictions)
    out[size] = time.perf_counter() - started
print("RESULT", json.dumps(out))
"""

PHASES = """
import time
started = time.perf_counter()
import asrpt_bench.cli
from asrpt_bench import io
from asrpt_bench.composition import compose_run_config
from asrpt_bench.experiment import check_components
from asrpt_bench.prepare import fit_predictions, load_workload
from asrpt_bench.tasks import TASKS, Context
imported = time.perf_counter()
config = compose_run_config(OVERRIDES)
check_components(config)
workload = load_workload(config)
loaded = time.perf_counter()
fit_predictions(config, workload)
fitted = time.perf_counter()
result = TASKS["compare"](Context(config, workload, {}))
simulated = time.perf_counter()
io.write_outputs(OUT, result)
written = time.perf_counter()
import json
print("RESULT", json.dumps({"imports": imported - started, "load": loaded - imported, "fit": fitted - loaded,
                           "simulate": simulated - fitted, "write": written - simulated}))
"""


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def env_for(code: Path, cache_home: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(cache_home), "HYDRA_FULL_ERROR": "1",
            "RAY_USAGE_STATS_ENABLED": "0"}


def run_snippet(code: Path, snippet: str, cache_home: Path, **names: object) -> dict:
    """Run `snippet` (with NAME = value lines prepended) in a fresh interpreter on `code`; its RESULT."""
    header = "".join(f"{key} = {value!r}\n" for key, value in names.items())
    done = subprocess.run([sys.executable, "-c", header + textwrap.dedent(snippet)], cwd=tempfile.gettempdir(),
                          env=env_for(code, cache_home), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"benchmark snippet failed on {code}:\n{done.stderr[-3000:]}")
    line = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def wall(code: Path, args: list[str], cache_home: Path, cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *args], cwd=cwd, env=env_for(code, cache_home),
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"asrpt-bench {' '.join(args)} failed on {code}:\n{done.stderr[-3000:]}")
    return elapsed


def interleaved(versions: dict[str, Path], repeat: int, measure) -> dict[str, list]:
    """measure(label, code) for every version, `repeat` rounds, alternating versions within a round."""
    results: dict[str, list] = {label: [] for label in versions}
    for _ in range(repeat):
        for label, code in versions.items():
            results[label].append(measure(label, code))
    return results


def median_of(runs: list[dict]) -> dict:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def report(title: str, table: dict[str, dict], unit: str, fmt: str = "{:.2f}", higher_is_better: bool = False) -> None:
    """One row per key, one column per version, and the speed-up of after over before."""
    labels = list(table)
    keys = list(table[labels[0]])
    print(f"\n{title} ({unit}; median)")
    print(f"  {'':>14}" + "".join(f"{label:>12}" for label in labels) + ("   speed-up" if len(labels) == 2 else ""))
    for key in keys:
        values = [table[label][key] for label in labels]
        ratio = ""
        if len(values) == 2 and min(values) > 0:
            ratio = f"   {(values[1] / values[0] if higher_is_better else values[0] / values[1]):.2f}x"
        print(f"  {str(key):>14}" + "".join(f"{fmt.format(v):>12}" for v in values) + ratio)


def section_sim(versions: dict[str, Path], repeat: int, cache_home: Path) -> None:
    def measure(label: str, code: Path) -> dict:
        """Each scheduler in its own fresh process, as a user's run meets it (no warm caches)."""
        return {name: run_snippet(code, SIM, cache_home, NAMES=[name], SIZE=None)[name] for name in SCHEDULERS}

    runs = interleaved(versions, repeat, measure)
    seconds = {label: median_of(r) for label, r in runs.items()}
    report("simulate() on the full Philly trace, 82,247 jobs, 64x8 GPUs, Heavy-Edge, audit on", seconds, "s")
    throughput = {label: {name: 82_247 / t for name, t in values.items()} for label, values in seconds.items()}
    report("throughput", throughput, "jobs/s", "{:,.0f}", higher_is_better=True)


def section_growth(versions: dict[str, Path], repeat: int, cache_home: Path) -> None:
    runs = interleaved(versions, repeat, lambda label, code: run_snippet(code, GROWTH, cache_home,
                                                                         SIZES=GROWTH_SIZES))
    seconds = {label: median_of(r) for label, r in runs.items()}
    report("A-SRPT + Heavy-Edge simulate() by trace prefix", seconds, "s")
    for label, values in seconds.items():
        sizes = np.array([float(k) for k in values])
        exponent = np.polyfit(np.log(sizes), np.log(np.array(list(values.values()))), 1)[0]
        print(f"  growth exponent ({label}): {exponent:.3f}  (time ~ n^k over {int(sizes[0]):,}..{int(sizes[-1]):,})")


def section_phases(versions: dict[str, Path], repeat: int, cache_home: Path) -> None:
    def measure(label: str, code: Path) -> dict:
        out = Path(tempfile.mkdtemp(prefix="bench_phases_"))
        cache_dir = Path(tempfile.mkdtemp(prefix="bench_cache_"))
        overrides = ["progress=false"] + ([f"cache.dir={cache_dir}"] if label == "after" else [])
        try:
            cold = run_snippet(code, PHASES, cache_home, OVERRIDES=overrides, OUT=str(out / "cold"))
            warm = run_snippet(code, PHASES, cache_home, OVERRIDES=overrides, OUT=str(out / "warm"))
        finally:
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache_dir, ignore_errors=True)
        return {**{f"cold {k}": v for k, v in cold.items()}, **{f"warm {k}": v for k, v in warm.items()}}

    runs = interleaved(versions, repeat, measure)
    report("default asrpt-bench run by phase (second run: warm cache; before: no cache)",
           {label: median_of(r) for label, r in runs.items()}, "s")


def csv_table(code: Path, cache_home: Path) -> Path:
    """The default run's 2,000 simulated jobs as a CSV job table, in a fresh temporary directory."""
    table = Path(tempfile.mkdtemp(prefix="bench_csv_")) / "jobs2000.csv"
    run_snippet(code, """
from asrpt_bench.config import RunConfig
from asrpt_bench.prepare import load_workload
from asrpt_bench.workloads.schema import COLUMNS
table = load_workload(RunConfig()).table
columns = [c.name for c in COLUMNS if c.name in table.columns and table[c.name].notna().any()]
table[columns].astype({"gpus": "int64", "iterations": "int64"}).to_csv(PATH, index=False)
print("RESULT {}")
""", cache_home, PATH=str(table))
    return table


def section_e2e(versions: dict[str, Path], repeat: int, cache_home: Path) -> None:
    table = csv_table(versions["after"], cache_home)

    def measure(label: str, code: Path) -> dict:
        work = Path(tempfile.mkdtemp(prefix="bench_e2e_"))
        cache = [f"cache.dir={work / 'cache'}"] if label == "after" else []
        try:
            return {"default, cold": wall(code, ["progress=false", f"hydra.run.dir={work / 'a'}", *cache], cache_home,
                                          work),
                    "default, warm": wall(code, ["progress=false", f"hydra.run.dir={work / 'b'}", *cache], cache_home,
                                          work),
                    "csv simulate": wall(code, ["task=simulate", "workload=csv", f"workload.path={table}",
                                                "predictor=oracle", "progress=false", f"hydra.run.dir={work / 'c'}",
                                                *cache], cache_home, work)}
        finally:
            shutil.rmtree(work, ignore_errors=True)

    runs = interleaved(versions, repeat, measure)
    report("end to end: python -m asrpt_bench.cli (default run; task=simulate on a 2,000-job CSV, oracle)",
           {label: median_of(r) for label, r in runs.items()}, "s wall")
    shutil.rmtree(table.parent, ignore_errors=True)


def section_warm(versions: dict[str, Path], repeat: int, cache_home: Path) -> None:
    """The warm runs only: the first run of each round fills a fresh cache and is not reported."""
    table = csv_table(versions["after"], cache_home)
    simulate = ["task=simulate", "workload=csv", f"workload.path={table}", "predictor=oracle"]

    def measure(label: str, code: Path) -> dict:
        work = Path(tempfile.mkdtemp(prefix="bench_warm_"))
        out = {}
        try:
            for name, args in (("default, warm", []), ("csv simulate, warm", simulate)):
                common = [*args, "progress=false", f"cache.dir={work / name.split(',')[0].replace(' ', '_')}"]
                wall(code, [*common, f"hydra.run.dir={work / 'fill'}"], cache_home, work)
                shutil.rmtree(work / "fill")
                out[name] = wall(code, [*common, f"hydra.run.dir={work / 'warm'}"], cache_home, work)
                shutil.rmtree(work / "warm")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return out

    runs = interleaved(versions, repeat, measure)
    report("warm runs end to end: python -m asrpt_bench.cli, second run on the same cache (default; "
           "task=simulate on a 2,000-job CSV, oracle)", {label: median_of(r) for label, r in runs.items()}, "s wall")
    for label, values in runs.items():
        for key in values[0]:
            print(f"  {label} {key}: runs {', '.join(f'{run[key]:.2f}' for run in values)}")
    shutil.rmtree(table.parent, ignore_errors=True)


def section_sweep(versions: dict[str, Path], repeat: int, cache_home: Path) -> None:
    code = versions["after"]
    work = Path(tempfile.mkdtemp(prefix="bench_sweep_"))
    cache = f"cache.dir={work / 'cache'}"
    wall(code, ["progress=false", cache, f"hydra.run.dir={work / 'warmup'}"], cache_home, work)
    launchers = {"basic": [], "joblib x2": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
                 "ray x2": ["hydra/launcher=ray", "hydra.launcher.num_cpus=2"]}
    times: dict[str, list[float]] = {name: [] for name in launchers}
    for round_ in range(repeat):
        for name, args in launchers.items():
            sweep_dir = work / f"{name.split()[0]}{round_}"
            times[name].append(wall(code, [*SWEEP, *args, "progress=false", cache, f"hydra.sweep.dir={sweep_dir}"],
                                    cache_home, work))
    shutil.rmtree(work, ignore_errors=True)
    basic = statistics.median(times["basic"])
    print("\n16-point sweep (README example, task compare), warm cache (s wall; median)")
    for name, values in times.items():
        print(f"  {name:>14}{statistics.median(values):>12.1f}   speed-up vs basic {basic / statistics.median(values):.2f}x")


SECTIONS = {"sim": section_sim, "growth": section_growth, "phases": section_phases, "e2e": section_e2e,
            "warm": section_warm, "sweep": section_sweep}


class Tee:
    """stdout that is also written to a file (--output)."""

    def __init__(self, stream, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.stream, self.file = stream, path.open("w")

    def write(self, text: str) -> int:
        self.file.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.file.flush()
        self.stream.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, default=None, help="a copy of the old code to compare against")
    parser.add_argument("--after", type=Path, default=ROOT, help="the code to measure (default: this checkout)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds per measurement (median reported)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated: {','.join(SECTIONS)}")
    parser.add_argument("--output", type=Path, default=None, help="also write the report to this file")
    args = parser.parse_args()
    if args.output is not None:
        sys.stdout = Tee(sys.stdout, args.output)
    versions = {"before": args.before.resolve()} if args.before else {}
    versions["after"] = args.after.resolve()
    cache_home = Path(tempfile.mkdtemp(prefix="bench_xdg_"))
    print(f"load before: {uptime()}")
    try:
        for name in args.sections.split(","):
            SECTIONS[name](versions, args.repeat, cache_home)
            sys.stdout.flush()
    finally:
        shutil.rmtree(cache_home, ignore_errors=True)
    print(f"\nload after: {uptime()}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
