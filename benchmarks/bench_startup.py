"""Start-up cost of `asrpt-bench`: what `import asrpt_bench.cli` costs, where that time goes, and the warm
default run end to end.

Each figure is measured in fresh processes against a given copy of the code (PYTHONPATH), so `--before DIR`
(e.g. `git archive <commit> | tar -x -C DIR`, or another worktree) measures the old code the same way,
interleaved with the new, and prints after/before ratios. The machine may be shared: the `uptime` load
average is printed before and after the figures.

Bytecode: an installed package has its .pyc files (pip compiles them), but a checkout run with
PYTHONDONTWRITEBYTECODE=1 (or from a read-only tree) compiles every module of the package on every start,
which costs a warm default run about a second. So each copy of the code gets its own bytecode cache in a
temporary PYTHONPYCACHEPREFIX, filled by an untimed run before the timed ones, and nothing is written
into the code's directories; `--as-is` runs with the environment's own bytecode setting instead.

  import      CPU time (user + system, from the child's rusage) and wall time of
              `python -c "import asrpt_bench.cli"`, median of --repeat runs; the interpreter's own
              start-up (`python -c pass`) is printed beside it
  importtime  `python -X importtime -c "import asrpt_bench.cli"`: its cumulative total and the modules
              with the largest self time (the after code only)
  warm        the default `asrpt-bench` run (no arguments) on a cache the previous run filled: wall and
              CPU time of the whole process (its forked workers included), median of --repeat runs, the
              copies' runs interleaved round by round (after, after workers=1, before; then again), so a
              load that changes during the bench falls on both; for the after code also with workers=1
              (every scheduler in the one process);
              before and after the figures, the time of a CPU-bound loop split over 2 forked processes
              over its time in one (0.5: a second CPU is idle; near 1: the workers cannot gain)
  --profile N one more warm run of the after code under cProfile, its N calls of largest cumulative time;
              that run has workers=1, so every scheduler's simulation is in its profile (the default run
              simulates them in forked workers, whose calls the parent's profile does not see)
  --phases N  N more warm default runs of the after code (workers as by default), each timed phase by
              phase in wall time (stamps around the app's import, Hydra's composition, the run, the
              schedulers and the writing of the run directory): the median of each phase, and the whole
              process's wall time (its rest is the interpreter's start and exit)

    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --before /work/main --repeat 7
    python benchmarks/bench_startup.py --repeat 3 --profile 30      # and where the warm run spends its time
    python benchmarks/bench_startup.py --repeat 1 --phases 7         # and its wall time phase by phase
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def _spin(rounds: int) -> int:
    total = 0
    for i in range(rounds):
        total += i * i
    return total


def fork_headroom(rounds: int = 3_000_000, repeat: int = 3) -> float:
    """How much a second CPU helps right now: the wall time of a CPU-bound loop split over two forked
    processes over that of the whole loop in one, median of `repeat` (0.5: an idle second CPU; near 1:
    other programs keep the CPUs busy, and forked workers cannot gain)."""
    ratios = []
    for _ in range(repeat):
        started = time.perf_counter()
        _spin(2 * rounds)
        serial = time.perf_counter() - started
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            _spin(rounds)
            os._exit(0)
        _spin(rounds)
        os.waitpid(pid, 0)
        ratios.append((time.perf_counter() - started) / serial)
    return statistics.median(ratios)


BYTECODE: dict[Path, Path] = {}
"""Copy of the code -> its private bytecode cache (PYTHONPYCACHEPREFIX); empty with --as-is."""


def child_environment(code: Path, extra: dict[str, str] | None) -> dict[str, str]:
    """The environment of a child run on `code`: its PYTHONPATH and, unless --as-is, its bytecode cache."""
    env = {**os.environ, **(extra or {}), "PYTHONPATH": str(code)}
    if code in BYTECODE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(BYTECODE[code])
    return env


def timed(code: Path, command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Run `command` on `code`; (wall s, CPU s of the child and its children, stderr). Fails on a non-zero exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=child_environment(code, env), capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed on {code}:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stderr


def import_cost(code: Path, repeat: int) -> dict[str, float]:
    """Median CPU and wall seconds of importing the CLI module, and of the bare interpreter."""
    work = Path(tempfile.gettempdir())
    timed(code, [sys.executable, "-c", "import asrpt_bench.cli_app"], work)  # fills the bytecode cache
    cli = [timed(code, [sys.executable, "-c", "import asrpt_bench.cli"], work) for _ in range(repeat)]
    bare = [timed(code, [sys.executable, "-c", "pass"], work) for _ in range(repeat)]
    return {"import CPU s": statistics.median(c for _, c, _ in cli),
            "import wall s": statistics.median(w for w, _, _ in cli),
            "bare python CPU s": statistics.median(c for _, c, _ in bare)}


PROFILED = """
import cProfile, sys
sys.argv = ["asrpt-bench", *sys.argv[2:]]
from asrpt_bench.cli import main
profile = cProfile.Profile()
try:
    profile.runcall(main)
finally:
    profile.dump_stats(STATS)
"""


PHASED = """
import json, sys, time
stamps = [("start", time.perf_counter())]
sys.argv = ["asrpt-bench", *sys.argv[2:]]
import asrpt_bench.cli as cli
stamps.append(("cli", time.perf_counter()))
app = cli._import_app()
stamps.append(("app", time.perf_counter()))
from hydra._internal.hydra import Hydra
from asrpt_bench import io
from asrpt_bench.tasks import compare


def around(owner, name, label):
    original = getattr(owner, name)

    def stamped(*args, **kwargs):
        stamps.append((">" + label, time.perf_counter()))
        try:
            return original(*args, **kwargs)
        finally:
            stamps.append(("<" + label, time.perf_counter()))

    setattr(owner, name, stamped)


for owner, name, label in PHASE_HOOKS:
    around({"Hydra": Hydra, "cli_app": app, "io": io, "compare": compare}[owner], name, label)
cli.main()
stamps.append(("end", time.perf_counter()))
with open(STAMPS, "w") as out:
    json.dump(stamps, out)
"""

PHASE_HOOKS = [("Hydra", "compose_config", "compose"), ("cli_app", "_run_point", "run"),
               ("compare", "ordered_map", "schedulers"), ("io", "write_outputs", "write")]
"""(owner, attribute, label) of the calls a phased run stamps on entry and exit (in PHASED's names)."""

PHASES = [("import asrpt_bench.cli", "start", "cli"), ("import the app (asrpt_bench.cli_app)", "cli", "app"),
          ("Hydra before composing", "app", ">compose"), ("Hydra's composition", ">compose", "<compose"),
          ("Hydra's job set-up", "<compose", ">run"),
          ("run: config, workload, predictions", ">run", ">schedulers"),
          ("the schedulers (forked workers)", ">schedulers", "<schedulers"),
          ("tables and summary", "<schedulers", ">write"), ("writing the run directory", ">write", "<write"),
          ("publish, print, Hydra's teardown", "<write", "end")]
"""(phase, the stamp it starts at, the stamp it ends at): consecutive, so they add up to the in-process time."""


def phase_durations(stamps: list[tuple[str, float]]) -> dict[str, float]:
    """Seconds of each of PHASES from one phased run's stamps (the first stamp of each label counts)."""
    first: dict[str, float] = {}
    for label, at in stamps:
        first.setdefault(label, at)
    missing = [label for _, start, end in PHASES for label in (start, end) if label not in first]
    if missing:
        raise RuntimeError(f"the phased run made no stamp {missing[0]!r}: a hooked call was renamed or not made")
    return {phase: first[end] - first[start] for phase, start, end in PHASES}


def phased_runs(code: Path, repeat: int) -> None:
    """`repeat` warm default runs of `code` stamped phase by phase (PHASED; a first run fills the cache):
    the median wall seconds of each phase, and of the whole process."""
    work = Path(tempfile.mkdtemp(prefix="bench_startup_phases_"))
    env = {"XDG_CACHE_HOME": str(work / "xdg"), "HYDRA_FULL_ERROR": "1"}
    arguments = ["progress=false", f"cache.dir={work / 'cache'}"]
    driver = PHASED.replace("PHASE_HOOKS", repr(PHASE_HOOKS)).replace("STAMPS", repr(str(work / "stamps.json")))
    try:
        timed(code, [sys.executable, "-m", "asrpt_bench.cli", *arguments, f"hydra.run.dir={work / 'fill'}"], work, env)
        durations: dict[str, list[float]] = {phase: [] for phase, _, _ in PHASES}
        walls = []
        for index in range(repeat):
            wall, _, _ = timed(code, [sys.executable, "-c", driver, "-", *arguments,
                                      f"hydra.run.dir={work / f'phased{index}'}"], work, env)
            walls.append(wall)
            for phase, seconds in phase_durations(json.loads((work / "stamps.json").read_text())).items():
                durations[phase].append(seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {phase: statistics.median(values) for phase, values in durations.items()}
    total = sum(medians.values())
    print(f"\nwarm default run of the after code, phase by phase (wall s, median of {repeat}; {load()}):")
    for phase, seconds in medians.items():
        print(f"  {phase:40} {seconds:6.3f}  {100 * seconds / total:5.1f} %")
    print(f"  {'in the process (the phases added up)':40} {total:6.3f}")
    print(f"  {'the whole process (median)':40} {statistics.median(walls):6.3f}")


SERIAL = ", workers=1"
"""The label of the after code's warm runs in one process (its schedulers simulated one after another)."""


def warm_default_runs(versions: dict[str, Path], repeat: int, profile_top: int = 0) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds of the default run on a filled cache (a first run of each copy fills its
    own, unreported), the copies' runs interleaved round by round so that a change of load falls on all of
    them; the after code also with workers=1, alternated with its default run. With `profile_top`, one
    more run of the after code under cProfile and its `profile_top` costliest calls by cumulative time."""
    works = {label: Path(tempfile.mkdtemp(prefix=f"bench_startup_{label}_")) for label in versions}
    env = {label: {"XDG_CACHE_HOME": str(work / "xdg"), "HYDRA_FULL_ERROR": "1"} for label, work in works.items()}
    arguments = {label: ["progress=false", f"cache.dir={work / 'cache'}"] for label, work in works.items()}
    variants = {label: {"": [], **({SERIAL: ["workers=1"]} if label == "after" else {})} for label in versions}
    try:
        for label, code in versions.items():
            timed(code, [sys.executable, "-m", "asrpt_bench.cli", *arguments[label],
                         f"hydra.run.dir={works[label] / 'fill'}"], works[label], env[label])
        runs: dict[str, dict[str, list[tuple[float, float, str]]]] = {
            label: {variant: [] for variant in variants[label]} for label in versions}
        for index in range(repeat):
            for label, code in versions.items():
                for number, (variant, extra) in enumerate(variants[label].items()):
                    run_dir = works[label] / f"warm{number}-{index}"
                    runs[label][variant].append(timed(code, [sys.executable, "-m", "asrpt_bench.cli", *arguments[label],
                                                             *extra, f"hydra.run.dir={run_dir}"],
                                                      works[label], env[label]))
        if profile_top and "after" in versions:
            print_profile(versions["after"], works["after"], env["after"],
                          [*arguments["after"], "workers=1", f"hydra.run.dir={works['after'] / 'profiled'}"],
                          profile_top)
        figures: dict[str, dict[str, float]] = {label: {} for label in versions}
        for label, by_variant in runs.items():
            for variant, done in by_variant.items():
                figures[label][f"warm default{variant} wall s"] = statistics.median(w for w, _, _ in done)
                figures[label][f"warm default{variant} CPU s"] = statistics.median(c for _, c, _ in done)
        return figures
    finally:
        for work in works.values():
            shutil.rmtree(work, ignore_errors=True)


def print_profile(code: Path, work: Path, env: dict[str, str], arguments: list[str], top: int) -> None:
    """The warm default run of `code` under cProfile, in one process (`arguments` has workers=1): its `top`
    calls by cumulative time (profiled times are inflated, most for code of many small calls; read them as
    shares)."""
    stats = work / "warm.prof"
    timed(code, [sys.executable, "-c", PROFILED.replace("STATS", repr(str(stats))), "-", *arguments], work, env)
    print(f"\ncProfile of the warm default run ({code}), top {top} by cumulative time:")
    pstats.Stats(str(stats), stream=sys.stdout).sort_stats("cumulative").print_stats(top)


def importtime_profile(code: Path, top: int) -> None:
    """The cumulative import time of asrpt_bench.cli and the `top` modules by self time."""
    _, _, stderr = timed(code, [sys.executable, "-X", "importtime", "-c", "import asrpt_bench.cli"],
                         Path(tempfile.gettempdir()))
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        own, cumulative, name = line[len("import time:"):].split("|")
        rows.append((int(own), int(cumulative), name.rstrip()))
    total = next(cumulative for _, cumulative, name in rows if name.strip() == "asrpt_bench.cli")
    print(f"\n-X importtime, after code: asrpt_bench.cli cumulative {total / 1e6:.3f} s, {len(rows)} modules imported")
    for own, cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"  self {own / 1e3:8.1f} ms  cumulative {cumulative / 1e3:8.1f} ms  {name.strip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a copy of the code to compare against (its root directory)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (the median is printed)")
    parser.add_argument("--top", type=int, default=12, help="modules listed by -X importtime self time")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also profile one warm default run of the after code and print its N costliest calls")
    parser.add_argument("--phases", type=int, default=0, metavar="N",
                        help="also time N warm default runs of the after code phase by phase")
    parser.add_argument("--as-is", action="store_true",
                        help="keep the environment's bytecode setting (no private bytecode cache per copy)")
    args = parser.parse_args()
    versions = {"after": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory(prefix="bench_startup_pyc_") as bytecode:
        if not args.as_is:
            BYTECODE.update({code: Path(bytecode) / label for label, code in versions.items()})
        print(f"{load()}; {len(os.sched_getaffinity(0))} usable CPUs; a CPU-bound loop split over 2 forked "
              f"processes takes {fork_headroom():.2f} of its time in one")
        print("bytecode: " + ("as the environment has it (PYTHONDONTWRITEBYTECODE="
                              f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})" if args.as_is
                              else "cached per copy of the code, filled by an untimed run"))
        print_figures(measure_all(versions, args.repeat, args.profile), versions, bool(args.before))
        importtime_profile(ROOT, args.top)
        if args.phases:
            phased_runs(ROOT, args.phases)
    print(f"\n{load()}; the split loop: {fork_headroom():.2f}")


def measure_all(versions: dict[str, Path], repeat: int, profile_top: int) -> dict[str, dict[str, float]]:
    figures: dict[str, dict[str, float]] = {label: {} for label in versions}
    for label, code in versions.items():  # interleaved, so a change of load falls on both
        figures[label].update(import_cost(code, repeat))
    for label, warm in warm_default_runs(versions, repeat, profile_top).items():
        figures[label].update(warm)
    return figures


def print_figures(figures: dict[str, dict[str, float]], versions: dict[str, Path], ratios: bool) -> None:
    width = max(map(len, figures["after"]))
    print(f"\n{'':{width}}  " + "  ".join(f"{label:>8}" for label in versions) + ("  after/before" if ratios else ""))
    for key in figures["after"]:
        values = [figures[label].get(key) for label in versions]
        ratio = f"  {values[0] / values[1]:12.2f}" if ratios and values[1] is not None else ""
        print(f"{key:{width}}  " + "  ".join("       -" if value is None else f"{value:8.3f}" for value in values)
              + ratio)


if __name__ == "__main__":
    main()
