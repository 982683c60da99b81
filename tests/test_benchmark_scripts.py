"""The benchmark scripts run on a small prefix of the trace: they import the package as it is now, so a
change of its API cannot leave them broken until the next measurement."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'benchmarks'}"}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_bench_dispatch_reports_every_rule_beside_strict() -> None:
    out = bench("bench_dispatch.py", "--jobs", "2000", "--schedulers", "fifo,fifo+easy,srtf", "--repeat", "2")
    assert "2,000 Philly jobs" in out and "fifo+easy" in out and "srtf" in out and out.count("load average") == 2
    rounds = [line for line in out.splitlines() if line.startswith("round ")]
    assert [line.split(":")[0] for line in rounds] == ["round 1", "round 2"]
    for line in rounds:  # each round's time per scheduler, and its ratio to the first's in the round
        first, *others = line.split(": ")[1].split(", ")
        seconds = float(first.split()[1])
        assert first.split()[0] == "fifo" and "x)" not in first
        for entry in others:
            name, taken, ratio = entry.split()
            assert name in ("fifo+easy", "srtf") and ratio.startswith("(") and ratio.endswith("x)")
            # both times are printed to 0.01 s: the ratio lies between what their rounding allows
            low = (float(taken) - 0.005) / (seconds + 0.005)
            high = (float(taken) + 0.005) / max(seconds - 0.005, 1e-9)
            assert low - 0.005 <= float(ratio[1:-2]) <= high + 0.005
    table = {line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1] in
             (["fifo"], ["fifo+easy"], ["srtf"])}
    assert set(table) == {"fifo", "fifo+easy", "srtf"}
    assert float(table["fifo"][3]) == 1.0 == float(table["fifo"][4])  # ratios to the first's median, and paired
    ratios = {name: [float(entry.split()[2][1:-2]) for line in rounds for entry in line.split(": ")[1].split(", ")
                     if entry.split()[0] == name] for name in ("fifo+easy", "srtf")}
    for name, row in table.items():
        seconds, per_segment, preemptions = float(row[1]), float(row[-6]), int(row[-1])
        if name != "fifo":  # the median of two paired ratios is their mean (each of the three printed to 0.01)
            assert abs(float(row[4]) - sum(ratios[name]) / 2) <= 0.0101
        # CPU microseconds per run segment: the jobs plus their preemptions, from the median time
        assert abs(per_segment - 1e6 * seconds / (2000 + preemptions)) <= 1e6 * 0.005 / (2000 + preemptions) + 0.05
    assert int(table["srtf"][-1]) > 0 and int(table["fifo"][-1]) == 0


@pytest.mark.slow
def test_bench_conservative_fold_counts_reservations_and_their_cuts() -> None:
    out = bench("bench_conservative_fold.py", "--jobs", "3000")
    lines = out.splitlines()
    assert lines[0].startswith("asrpt+conservative on 3,000 Philly jobs") and "load average" in lines[0]
    computed, runs = (int(word.replace(",", "")) for word in lines[1].split() if word.replace(",", "").isdigit())
    assert computed >= runs > 0
    scanned = next(line for line in lines if line.startswith("decisions that scanned the fold"))
    scans, found = (int(word.replace(",", "")) for word in scanned.split(": ")[1].split() if word.replace(",", "").isdigit())
    assert scans >= found >= 0
    # a cut's dropped reservations are counted under what made it; those computed again were dropped first
    causes = lines.index("cuts by what made them (reservations dropped, cuts):")
    dropped = 0
    for line in lines[causes + 1:]:
        if not line.startswith("  "):
            break
        reservations, cuts = (int(part.replace(",", "")) for part in line.rsplit(": ", 1)[1].split(" in "))
        assert reservations >= cuts > 0
        dropped += reservations
    assert dropped >= int(lines[-1].split(": ")[1].split(";")[0].replace(",", ""))
    # every reservation is counted under what its run was for and why it stopped, and under its GPU count
    purposes = lines.index("what the compiled runs were for, and why they stopped (reservations, runs):")
    rows = [line for line in lines[purposes + 1:] if line.startswith("  for ")]
    assert rows and sum(int(line.split(": ")[1].split(" in ")[0].replace(",", "")) for line in rows) == computed
    assert sum(int(line.split(" in ")[-1].replace(",", "")) for line in rows) == runs
    shares = next(line for line in lines if line.startswith("reservations by GPU count: "))
    assert abs(sum(float(part.split(": ")[1].rstrip("%")) for part in shares.split(": ", 1)[1].split(", ")) - 100) < 0.5
    assert lines[-1].startswith("computed again after a cut: ")


@pytest.mark.slow
def test_bench_preemptive_reports_jobs_per_second_beside_asrpt() -> None:
    out = bench("bench_preemptive.py", "--size", "300", "--schedulers", "asrpt", "srtf")
    assert "x asrpt" in out and "srtf" in out


@pytest.mark.slow
def test_bench_preemptive_parts_times_each_part_and_sorts_every_walk() -> None:
    """On 2,000 jobs (preemptions among them) every kind of bounded walk occurs, the kinds the bounds decide
    agree with the walk (the script raises otherwise), and every walk that reaches the bounds is sorted."""
    out = bench("bench_preemptive_parts.py", "--jobs", "2000", "--scheduler", "srtf", "--walks")
    lines = out.splitlines()
    assert "srtf on 2,000 Philly jobs" in lines[0] and "load average" in lines[0]
    parts = {line[:40].strip(): int(line[40:].split()[0].replace(",", "")) for line in lines[2:]
             if not line.startswith("walks,")}
    assert {"proposal", "start (simulator)", "suspension (simulator)", "admission_walk"} <= set(parts)
    assert parts["completion"] == 2000
    walks = {line[7:21].strip(): int(line[21:].split()[0].replace(",", "")) for line in lines
             if line.startswith("walks,")}
    assert set(walks) == {"no admission", "idle only", "needs ranks"}
    assert sum(walks.values()) >= parts["RunningBounds.take"] > walks["needs ranks"] > 0


@pytest.mark.slow
def test_bench_parquet_write_reports_the_memory_a_write_adds_beside_another_tree() -> None:
    out = bench("bench_parquet_write.py", "--rows", "3000", "--base-jobs", "1000", "--before", str(ROOT))
    before, after = (line.split() for line in out.splitlines()[2:4])
    assert (before[0], after[0]) == ("before", "after") and before[-1] == after[-1]  # the same bytes
    assert "Python peak, after / before: " in out and "RSS added, after / before: " in out
    assert out.count("load average") == 2


def test_bench_startup_shows_a_dash_for_a_figure_only_the_after_code_has(capsys: pytest.CaptureFixture) -> None:
    """The before code knows no `workers`: its serial row is a dash, with no ratio; the split loop's ratio
    is a positive number (0.5 with an idle second CPU)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_startup
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    figures = {"after": {"warm default wall s": 1.5, "warm default, workers=1 wall s": 2.0},
               "before": {"warm default wall s": 3.0}}
    bench_startup.print_figures(figures, {"after": ROOT, "before": ROOT}, True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split() == ["warm", "default", "wall", "s", "1.500", "3.000", "0.50"]
    assert lines[3].split() == ["warm", "default,", "workers=1", "wall", "s", "2.000", "-"]
    headroom = bench_startup.fork_headroom(rounds=100_000, repeat=1)
    assert headroom > 0 and math.isfinite(headroom)  # a wall-time ratio: no upper limit holds on a loaded machine


def import_bench_startup():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_startup
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return bench_startup


def test_bench_startup_phases_add_up_and_a_missing_stamp_is_named() -> None:
    bench_startup = import_bench_startup()
    labels = ["start", "cli", "app", ">compose", "<compose", ">run", ">schedulers", "<schedulers", ">write",
              "<write", "end"]
    stamps = [(label, 10.0 + k * k) for k, label in enumerate(labels)]
    stamps.insert(7, (">schedulers", 99.0))  # a second call of a hooked function: the first stamp counts
    durations = bench_startup.phase_durations(stamps)
    assert list(durations.values()) == [(k + 1) ** 2 - k * k for k in range(len(labels) - 1)]
    assert sum(durations.values()) == (len(labels) - 1) ** 2
    with pytest.raises(RuntimeError, match="no stamp '<write'"):
        bench_startup.phase_durations([stamp for stamp in stamps if stamp[0] != "<write"])


def test_bench_startup_hooks_name_calls_the_run_makes() -> None:
    """The phased driver wraps these attributes; one renamed would leave a phase without its stamps."""
    from hydra._internal.hydra import Hydra

    from asrpt_bench import cli_app, io
    from asrpt_bench.tasks import compare

    owners = {"Hydra": Hydra, "cli_app": cli_app, "io": io, "compare": compare}
    for owner, name, _ in import_bench_startup().PHASE_HOOKS:
        assert callable(getattr(owners[owner], name)), (owner, name)


@pytest.mark.slow
def test_bench_startup_phased_run_prints_every_phase(capsys: pytest.CaptureFixture) -> None:
    bench_startup = import_bench_startup()
    bench_startup.phased_runs(ROOT, 1)
    out = capsys.readouterr().out
    assert all(phase in out for phase, _, _ in bench_startup.PHASES) and "the whole process (median)" in out


@pytest.mark.slow
def test_bench_loader_memory_reports_both_steps_per_job() -> None:
    out = bench("bench_loader_memory.py")
    assert [line.split()[:2] for line in out.splitlines()[2:4]] == [["table", "82,247"], ["workload", "82,247"]]
    assert out.count("load average") == 2


@pytest.mark.slow
def test_bench_memory_cli_runs_the_one_command_in_both_trees() -> None:
    """--cli: one line per tree with the run's own job count, a peak RSS, and the same table hashes in both trees
    (srtf_oracle writes segments.parquet too)."""
    out = bench("bench_memory.py", "--cli", "--sizes", "300", "--scheduler", "srtf_oracle", "--before", str(ROOT))
    lines = out.splitlines()
    assert "task=simulate workload=synthetic workload.synthetic_jobs=N" in lines[0] and "scheduler=srtf_oracle" in lines[0]
    before, after = (line.split() for line in lines[2:4])
    assert (before[:2], after[:2]) == (["before", "300"], ["after", "300"])
    assert float(before[2].replace(",", "")) > 50 and before[-6:] == after[-6:]
    assert after[-6::2] == ["jobs.parquet", "users.csv", "segments.parquet"]
    assert lines[4] == "300 jobs: the two trees' tables are the same bytes" and out.count("load average") == 2


def test_bench_memory_refuses_tree_options_without_cli() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_memory.py"), "--before", str(ROOT)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--before and --repeat measure the CLI replay: add --cli" in done.stderr


@pytest.mark.slow
def test_bench_gavel_side_by_side_alternates_gavel_and_ours(tmp_path: Path) -> None:
    """With a stand-in for Gavel's driver (it writes the trace's first field and its policy), the script hands
    Gavel the packaged trace and the V100 arguments, runs our V100 command, and prints a ratio per pair."""
    driver = tmp_path / "gavel" / "scheduler" / "scripts" / "drivers" / "simulate_scheduler_with_trace.py"
    driver.parent.mkdir(parents=True)
    driver.write_text("import sys\nargs = sys.argv[1:]\n"
                      "print(open(args[args.index('--trace_file') + 1]).readline().split('\\t')[0])\n"
                      "print(args[args.index('--policy') + 1], args[args.index('--cluster_spec') + 1])\n")
    out = bench("bench_gavel_side_by_side.py", "v100", "--gavel", str(tmp_path / "gavel"), "--rounds", "1",
                "--dir", str(tmp_path / "runs"))
    assert (tmp_path / "runs" / "gavel_1.out").read_text() == "ResNet-18 (batch size 64)\nfifo 108:0:0\n"
    assert (tmp_path / "runs" / "round1_ours" / "jobs.parquet").is_file()
    lines = out.splitlines()
    assert lines[0].startswith("round 1: gavel ") and "load average" in lines[1]
    assert lines[-1].split()[0] == "ours" and lines[-1].rstrip().endswith("x")
