"""Sampled mutation testing of one core module or package with mutmut 3, and the docs page generated from the runs.

    python tools/mutation.py run timing --sample 120          # one module, a seeded sample of its mutants
    python tools/mutation.py run sim/ --sample 150            # a package: every .py file under asrpt_bench/sim/
    python tools/mutation.py run sim/engine --sample 150 --seed 1
    python tools/mutation.py judge NAME yes "why it is equivalent"   # judge a survivor
    python tools/mutation.py report                           # rewrite docs/mutation.md from results/mutation/

`run` copies the working tree into a scratch directory, lets mutmut generate every mutant of the module (of
every file of the package), draws one seeded sample of them, and runs `mutmut run --max-children 1` on the sample under `nice -n 19`.
mutmut first records which tests call which function (its stats run over the module's test files, listed
in TESTS below), then runs each mutant against only the tests that called the mutated function. The
outcome, the surviving mutants' diffs and how the run was made go to results/mutation/MODULE.json; `report`
renders every such record, with the judgements of tools/mutation_judgements.yaml, into docs/mutation.md.
Needs the `mutation` extra (`pip install -e ".[mutation]"`); not part of CI.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results" / "mutation"
JUDGEMENTS = ROOT / "tools" / "mutation_judgements.yaml"
DOC = ROOT / "docs" / "mutation.md"
README = ROOT / "README.md"
# not doc_numbers' generated: blocks, which are computed from the experiments' tables
BEGIN, END = "<!-- mutation-report -->", "<!-- /mutation-report -->"
README_BEGIN, README_END = "<!-- mutation-scores -->", "<!-- /mutation-scores -->"

# The test files whose tests may call a module's functions, by module (the longest matching prefix wins).
# mutmut runs each mutant against the tests of these files that called the mutated function in its stats run.
# The module's own tests and their nearest neighbours, in-process only: mutmut cannot see what a subprocess calls,
# and every listed file multiplies the time of each surviving mutant.
_SCHEDULING = ["test_schedulers.py", "test_dispatch.py", "test_las2d.py", "test_preemptive_sim.py",
               "test_scheduler_contract.py", "test_variant_entries.py", "test_schedule_checksums.py", "test_psjf.py",
               "test_random_order.py", "test_recorded.py", "test_virtual_srpt_exact.py",
               "test_virtual_srpt_rounding.py", "test_relaxed_eligibility.py", "test_decision_instants.py",
               "test_sim_typed.py", "test_cluster_pools.py", "test_net_gain.py", "test_reservation_profile.py",
               "test_kept_profile.py", "test_preemptive_reference.py", "test_vectorised_priorities.py",
               "test_preemptive_structures.py", "test_compiled_profile.py", "test_count_queue.py"]
TESTS: dict[str, list[str]] = {
    "timing": ["test_timing.py", "test_heavy_edge.py"],
    "placement/heavy_edge": ["test_heavy_edge.py", "test_placers.py"],
    "schedulers/": _SCHEDULING,
    "schedulers/virtual_srpt": ["test_virtual_srpt_exact.py", "test_virtual_srpt_rounding.py"],
    # the compiled kernels run as Python in a mutation run: the replays of thousands of jobs that the scheduling
    # tests hold take minutes per mutant there, while these compare every kernel with profile.Profile directly
    "schedulers/profile_jit": ["test_compiled_profile.py", "test_kept_profile.py"],
    "sim/": ["test_sim_engine.py", "test_scheduler_contract.py", "test_sim_metrics.py", "test_sim_audit.py",
             "test_sim_job_tables.py", "test_preemptive_sim.py", "test_schedulers.py", "test_schedule_checksums.py",
             "test_recorded.py", "test_cluster_pools.py", "test_sim_typed.py", "test_las2d.py", "test_net_gain.py",
             "test_psjf.py", "test_preemptive_audit.py", "test_preemptive_events.py", "test_segment_table.py",
             "test_preemptive_reference.py", "test_vectorised_priorities.py", "test_preemptive_structures.py",
             "test_placement_memo.py", "test_preemptive_compiled.py"],
    # the compiled preemptive loop, run as Python: its own comparison with the Python loop (about 30 s a mutant)
    "sim/preemptive_jit": ["test_preemptive_compiled.py"],
    "workloads/schema": ["test_schema.py", "test_workloads_csv.py", "test_one_validation_path.py",
                         "test_sim_job_tables.py"],
}
# Tests that fail on mutmut's instrumented copy of the code itself, left out of its runs: mutmut adds every mutant of
# a method as an attribute of its class, which a test of the class's public names sees, and calls every
# function through its own trampoline, a frame a warning's location is then counted from.
DESELECT = ["tests/test_sim_engine.py::test_dispatch_context_exposes_only_the_protocol",
            "tests/test_sim_engine.py::test_simulate_warnings_point_at_the_callers_line",
            # runs the CLI in a subprocess, which cannot import mutmut's instrumented copy
            "tests/test_component_params.py::test_a_sweep_over_an_ignored_key_is_refused_before_any_point_runs"]
# The core modules the 95% target is set for (docs/mutation.md)
CORE = ("sim/", "schedulers/", "timing", "placement/heavy_edge", "workloads/schema")
# mutmut's verdicts; a mutant counts as killed when a test failed on it or it ran out of time
KILLED = ("killed", "timeout")
COPY_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache", ".hypothesis", "mutants",
                                     ".mutation", "outputs", "multirun", "results")


def is_package(module: str) -> bool:
    """`sim/` names a package (every .py file under asrpt_bench/sim/), `sim/engine` one module."""
    return module.endswith("/")


def display_path(module: str) -> str:
    """What the records and the docs call the mutated code: asrpt_bench/sim/ or asrpt_bench/sim/engine.py."""
    return f"asrpt_bench/{module}" if is_package(module) else f"asrpt_bench/{module.removesuffix('.py')}.py"


def module_paths(module: str, root: Path = ROOT) -> list[Path]:
    """The files to mutate, relative to `root`: `sim/engine` -> [asrpt_bench/sim/engine.py]; `sim/` -> every .py
    file under asrpt_bench/sim/, sorted (refused in one line when there is no such file or package)."""
    path = Path(display_path(module))
    if is_package(module):
        if not (root / path).is_dir():
            sys.exit(f"mutation: no package {module!r} ({path} is not a directory)")
        files = sorted(p.relative_to(root) for p in (root / path).rglob("*.py") if "__pycache__" not in p.parts)
        if not files:
            sys.exit(f"mutation: package {module!r} has no .py files")
        return files
    if not (root / path).is_file():
        sys.exit(f"mutation: no module {module!r} ({path} does not exist)")
    return [path]


def slug(module: str) -> str:
    """The name of the module's record: `sim/engine` -> sim.engine, `sim/` -> sim."""
    return module.removesuffix(".py").strip("/").replace("/", ".")


def test_files(module: str) -> list[str]:
    matches = [prefix for prefix in TESTS if module == prefix or (prefix.endswith("/") and module.startswith(prefix))]
    if not matches:
        sys.exit(f"mutation: no test files listed for {module!r}: add it to TESTS in tools/mutation.py or "
                 "pass --tests")
    return TESTS[max(matches, key=len)]


def setup_cfg(paths: list[Path], tests: list[str], copy: list[str]) -> str:
    """mutmut's configuration: mutate the given files (one `only_mutate` entry each), select the module's test
    files, skip slow tests and the tests in DESELECT."""
    def lines(values: list[str]) -> str:
        return "".join(f"\n    {v}" for v in values)
    deselected = [arg for test in DESELECT for arg in ("--deselect", test)]
    return ("[mutmut]\n"
            "source_paths = asrpt_bench\n"
            f"only_mutate ={lines([p.as_posix() for p in paths])}\n"
            f"pytest_add_cli_args_test_selection ={lines([f'tests/{t}' for t in tests])}\n"
            f"pytest_add_cli_args ={lines(['-p', 'no:cacheprovider', '-m', 'not slow', *deselected])}\n"
            f"also_copy ={lines(copy)}\n")


def mutant_names(workdir: Path, path: Path) -> list[str]:
    """Every mutant mutmut makes of `path`, named as `mutmut run` takes them (read in `workdir`, whose
    setup.cfg configures mutmut)."""
    code = ("import sys; from pathlib import Path\n"
            "from mutmut.mutation.file_mutation import mutate_file_contents\n"
            "from mutmut.utils.format_utils import get_mutant_name\n"
            "p = Path(sys.argv[1]); mutated = mutate_file_contents(str(p), p.read_text())\n"
            "print('\\n'.join(get_mutant_name(p, n) for n in mutated.mutant_names))\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], cwd=workdir, capture_output=True, text=True,
                          env=clean_env())
    if done.returncode != 0:
        sys.exit(f"mutation: mutmut could not list the mutants of {path}:\n{done.stderr[-2000:]}")
    return sorted(done.stdout.split())


def draw(population: list[str], sample: int, seed: int) -> list[str]:
    """The seeded sample (sorted), drawn once across all of a package's mutants; `sample` 0 means all."""
    if not sample:
        return list(population)
    return sorted(random.Random(seed).sample(population, min(sample, len(population))))


def clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH (mutmut puts its mutated copy first on sys.path itself) and with
    NUMBA_DISABLE_JIT=1: numba cannot compile mutmut's trampolines, so the compiled kernels of
    schedulers/profile_jit.py run their mutants as Python."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["NUMBA_DISABLE_JIT"] = "1"
    return env


def mutmut(workdir: Path, *args: str, log: Path | None = None) -> str:
    command = ["nice", "-n", "19", "mutmut", *args]
    with open(log, "w") if log else open(os.devnull, "w") as sink:
        done = subprocess.run(command, cwd=workdir, env=clean_env(), stdout=subprocess.PIPE if not log else sink,
                              stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        tail = log.read_text()[-3000:] if log else (done.stdout or "")[-3000:]
        sys.exit(f"mutation: `mutmut {args[0]}` failed (exit {done.returncode}):\n{tail}")
    return "" if log else done.stdout


def statuses(workdir: Path) -> dict[str, str]:
    """mutmut's verdict for every mutant it checked."""
    out = mutmut(workdir, "results", "--all", "true")
    found = dict(re.findall(r"^\s+(\S+__mutmut_\d+): (.+)$", out, flags=re.M))
    return {name: status.strip() for name, status in found.items()}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def run(args: argparse.Namespace) -> None:
    import mutmut as mutmut_package  # the `mutation` extra; only this command needs it

    paths = module_paths(args.module)
    tests = args.tests or test_files(args.module)
    commit, dirty = git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--", "asrpt_bench", "tests"))
    workdir = Path(args.workdir or ROOT / ".mutation") / slug(args.module)
    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(ROOT, workdir, ignore=COPY_IGNORE)
    copy = sorted(p.name for p in workdir.iterdir() if p.name not in ("asrpt_bench", "setup.cfg"))
    (workdir / "setup.cfg").write_text(setup_cfg(paths, tests, copy))

    by_file = {p.as_posix(): mutant_names(workdir, p) for p in paths}
    population = sorted(name for names in by_file.values() for name in names)
    sample = draw(population, args.sample, args.seed)
    path = display_path(args.module)
    print(f"{path}: {len(population)} mutants in {len(paths)} files, running {len(sample)} (seed {args.seed}); "
          f"tests: {', '.join(tests)}", flush=True)
    load_start, started = os.getloadavg(), time.time()
    log = workdir / "mutmut-run.log"
    mutmut(workdir, "run", "--max-children", "1", *sample, log=log)
    wall = time.time() - started
    verdicts = statuses(workdir)
    missing = [name for name in sample if name not in verdicts]
    if missing:
        sys.exit(f"mutation: mutmut gave no verdict for {len(missing)} sampled mutants, e.g. {missing[0]}")
    outcome = {name: verdicts[name] for name in sample}
    survivors = {name: show(workdir, name) for name, status in outcome.items() if status not in KILLED}
    record = {
        "module": args.module, "path": path, "commit": commit, "uncommitted_changes": dirty,
        "mutmut": mutmut_package.__version__, "population": len(population), "seed": args.seed,
        "population_by_file": {name: len(names) for name, names in by_file.items()},
        "sample": len(sample), "tests": tests, "outcome": outcome, "survivors": survivors,
        "command": " ".join(["python tools/mutation.py run", args.module, "--sample", str(args.sample),
                             "--seed", str(args.seed)] + (["--tests", *args.tests] if args.tests else [])),
        "wall_s": round(wall), "load_average": [round(load_start[0], 2), round(os.getloadavg()[0], 2)],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{slug(args.module)}.json"
    out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    killed, scored = score(record)
    print(f"{path}: {killed}/{scored} killed (raw {100 * killed / scored:.1f}%), {len(survivors)} survivors to judge; "
          f"{wall / 60:.1f} min at load {record['load_average'][0]}; wrote {out.relative_to(ROOT)}")
    if not args.keep:
        shutil.rmtree(workdir)


def show(workdir: Path, name: str) -> str:
    """The mutant's diff against the original function, as `mutmut show` prints it (its header dropped)."""
    lines = mutmut(workdir, "show", name).splitlines()
    return "\n".join(line for line in lines if not line.startswith("# ")).strip("\n")


def score(record: dict) -> tuple[int, int]:
    """(killed, scored): mutmut's own score, killed or timed out over every sampled mutant it did not skip."""
    verdicts = list(record["outcome"].values())
    return sum(v in KILLED for v in verdicts), sum(v != "skipped" for v in verdicts)


def equivalents(record: dict, judgements: dict[str, dict]) -> int:
    """The scored survivors judged equivalent by a current judgement (a stale one does not count)."""
    return sum(status not in KILLED and status != "skipped"
               and judgement(name, record["survivors"][name], judgements).startswith("equivalent")
               for name, status in record["outcome"].items())


def mutation_score(record: dict, judgements: dict[str, dict]) -> tuple[int, int]:
    """(killed, killable): the mutation score's terms, killed over the scored mutants not judged equivalent
    (the target is judged on this; `score` is mutmut's raw one, which counts equivalent mutants as misses)."""
    killed, scored = score(record)
    return killed, scored - equivalents(record, judgements)


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def wilson(killed: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson interval of the killed fraction, for a sample of n out of the module's mutants."""
    if n == 0:
        return 0.0, 1.0
    p = killed / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def mutated_line(diff: str) -> str:
    """The first line the mutant adds: what a judgement is checked against when the code moves."""
    return next((line[1:].strip() for line in diff.splitlines()
                 if line.startswith("+") and not line.startswith("+++")), "")


def load_judgements() -> dict[str, dict]:
    import yaml  # PyYAML, a dependency of hydra-core

    if not JUDGEMENTS.exists():
        return {}
    return yaml.safe_load(JUDGEMENTS.read_text()) or {}


def render(records: list[dict], judgements: dict[str, dict]) -> str:
    """The generated part of docs/mutation.md: one row per module, then every survivor with its judgement."""
    out = ["| module | mutants | sampled | killed | survived | judged equivalent | score | 95% interval | raw score "
           "| commit | run |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        killed, scored = score(r)
        _, killable = mutation_score(r, judgements)
        low, high = wilson(killed, killable)
        interval = "all mutants run" if r["sample"] == r["population"] else f"{100 * low:.1f}-{100 * high:.1f}%"
        out.append(f"| `{r['path']}` | {r['population']} | {r['sample']} | {killed} | {scored - killed} | "
                   f"{scored - killable} | {percent(killed, killable)} | {interval} | {percent(killed, scored)} | "
                   f"{r['commit'][:7]} | {r['wall_s'] / 60:.0f} min at load {r['load_average'][0]:g} |")
    for r in records:
        if not r["survivors"]:
            continue
        out += ["", f"### `{r['path']}`: {len(r['survivors'])} surviving", "",
                f"`{r['command']}` (mutmut {r['mutmut']}, tests: {', '.join(r['tests'])})", ""]
        for name, diff in sorted(r["survivors"].items()):
            out.append(f"- `{name}` ({r['outcome'][name]}): {judgement(name, diff, judgements)}")
            out += ["", "  ```diff", *[f"  {line}" for line in diff.splitlines()], "  ```", ""]
    return "\n".join(out).rstrip("\n")


def judgement(name: str, diff: str, judgements: dict[str, dict]) -> str:
    entry = judgements.get(name)
    if entry is None:
        return "**not judged yet**"
    if entry.get("line") != mutated_line(diff):
        return "**judgement stale** (the mutant changed since it was judged)"
    verdict = "equivalent" if entry["equivalent"] else "not equivalent"
    return f"{verdict}: {entry['why']}"


JUDGEMENTS_HEADER = """\
# Surviving mutants judged by hand, written by `python tools/mutation.py judge` (docs/mutation.md): mutant name ->
# the line the mutant adds (a judgement goes stale when the code under it changes), whether the mutant is
# equivalent (no input a user can give tells it from the original) and why.
"""


def judge(args: argparse.Namespace) -> None:
    """Record a judgement of a survivor of a recorded run in tools/mutation_judgements.yaml."""
    survivors = {name: diff for record in records() for name, diff in record["survivors"].items()}
    if args.name not in survivors:
        sys.exit(f"mutation: {args.name} is not a survivor of any run in {RESULTS.relative_to(ROOT)}")
    judgements = load_judgements()
    judgements[args.name] = {"line": mutated_line(survivors[args.name]), "equivalent": args.equivalent == "yes",
                             "why": " ".join(args.why.split())}
    save_judgements(judgements)


def save_judgements(judgements: dict[str, dict]) -> None:
    import yaml

    body = yaml.safe_dump(dict(sorted(judgements.items())), allow_unicode=True, sort_keys=False, width=110)
    JUDGEMENTS.write_text(JUDGEMENTS_HEADER + body)


def current_judgements(runs: list[dict], judgements: dict[str, dict]) -> dict[str, dict]:
    """The judgements of survivors of the recorded runs whose mutated line is still the one judged: a rerun
    replaces a module's record, and its sample's survivors are judged afresh."""
    survivors = {name: diff for record in runs for name, diff in record["survivors"].items()}
    return {name: entry for name, entry in judgements.items()
            if name in survivors and entry["line"] == mutated_line(survivors[name])}


def records() -> list[dict]:
    """Every recorded run, by module."""
    return [json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))]


def summary(records: list[dict], judgements: dict[str, dict]) -> str:
    """README's line: each module's score, its raw score beside it, and the core modules not run yet."""
    parts = [f"`{r['module']}` {percent(*mutation_score(r, judgements))} ({percent(*score(r))})" for r in records]
    missing = [f"`{module}`" for module in CORE if module not in {r["module"] for r in records}]
    return ("Scores (killed / sampled mutants not judged equivalent; in brackets mutmut's raw killed / sampled): "
            + ", ".join(parts) + (f"; no recorded run yet: {', '.join(missing)}" if missing else "") + ".")


def block(path: Path, begin: str, end: str) -> str:
    """The text between the markers `begin` and `end` of `path` (refused in one line when they are missing)."""
    text = path.read_text()
    if begin not in text or end not in text:
        sys.exit(f"mutation: {path.relative_to(ROOT)} has no {begin} ... {end} block")
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def rewrite_block(path: Path, begin: str, end: str, content: str) -> None:
    block(path, begin, end)
    head, _, rest = path.read_text().partition(begin)
    _, _, tail = rest.partition(end)
    path.write_text(f"{head}{begin}\n{content}\n{end}{tail}")


def report(_: argparse.Namespace) -> None:
    """Drop the judgements no recorded run needs any more, then render the records."""
    runs, judged = records(), load_judgements()
    judgements = current_judgements(runs, judged)
    if len(judgements) < len(judged):
        save_judgements(judgements)
        print(f"dropped {len(judged) - len(judgements)} judgement(s) of mutants no recorded run has as a survivor")
    rewrite_block(DOC, BEGIN, END, render(runs, judgements))
    rewrite_block(README, README_BEGIN, README_END, summary(runs, judgements))
    print(f"wrote {DOC.relative_to(ROOT)} and the scores in {README.relative_to(ROOT)} from {len(runs)} runs")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("run", help="mutate one module and record the outcome in results/mutation/")
    one.add_argument("module", help="a module under asrpt_bench/, e.g. timing, sim/engine, placement/heavy_edge")
    one.add_argument("--sample", type=int, default=100, help="mutants to run, drawn at random (0: all)")
    one.add_argument("--seed", type=int, default=0, help="seed of the sample")
    one.add_argument("--tests", nargs="+", help="test files under tests/ instead of the module's list")
    one.add_argument("--workdir", help="scratch directory (default .mutation/ in the repository)")
    one.add_argument("--keep", action="store_true", help="keep the scratch copy (mutmut browse, show, apply)")
    one.set_defaults(func=run)
    verdict = commands.add_parser("judge", help="judge a surviving mutant in tools/mutation_judgements.yaml")
    verdict.add_argument("name", help="the mutant, as results/mutation/*.json names it")
    verdict.add_argument("equivalent", choices=("yes", "no"), help="whether no input tells it from the original")
    verdict.add_argument("why", help="one or two sentences")
    verdict.set_defaults(func=judge)
    commands.add_parser("report", help="rewrite docs/mutation.md and README's scores from results/mutation/").set_defaults(func=report)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
