"""The catalogue of bad inputs (docs/bad-inputs.md), one case per row: each kind of bad input, what a
user does to hit it, and the exact outcome (the one-line refusal, or the fallback and its count).

`test_catalogue_outcome` runs every case; `test_the_doc_lists_exactly_these_cases` checks that the
doc's rows are these cases with these very messages, so the doc cannot drift from the code.
Outcomes use `{dir}` for the test's temporary directory.
"""

from __future__ import annotations

import collections
import dataclasses
import gzip
import os
import re
import shutil
import subprocess
import sys
import tarfile
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pyarrow.parquet as pq
import pytest

from asrpt_bench import cache, cli, cli_app, composition, io, rundir, solvers
from asrpt_bench.api import compare
from asrpt_bench.collect import main as collect_main
from asrpt_bench.config import PlacementConfig, PredictorConfig, RunConfig, SchedulerConfig, TaskConfig, WorkloadConfig
from asrpt_bench.core import Cluster, ConfigError, Job, Placement, Stage, TrainingPlan
from asrpt_bench.experiment import run_experiment
from asrpt_bench.graph import build_omega
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.placement.ilp import ILPPlacer
from asrpt_bench.placement.study import main as placement_study_main
from asrpt_bench.profiles import build_plan, register_model
from asrpt_bench.report.figures import main as figures_main
from asrpt_bench.report.reproduction import main as report_main
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.solvers import Availability, LinearModel, SolveResult, SolverError, SolverSettings, backend_entry, solve
from asrpt_bench.timing import DEFAULT_TIMING
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.gavel import load_gavel
from asrpt_bench.workloads.helios import load_acme, load_helios
from asrpt_bench.workloads.pai2020 import load_pai2020
from asrpt_bench.workloads.philly import load_philly
from asrpt_bench.workloads.slurm import load_slurm
from asrpt_bench.workloads.swf import load_swf
from asrpt_bench.workloads.synthetic import synthetic_workload

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "bad-inputs.md"
HEADER = "job_id,release,gpus,iterations,alpha"
GOOD_ROW = "a,0,1,10,1.0"


# --------------------------------------------------------------------------------------------------
# How an outcome is observed


def refusal(call: Callable[[], Any]) -> str:
    """The one-line message of the ConfigError `call` raises."""
    with pytest.raises(ConfigError) as error:
        call()
    message = str(error.value)
    assert "\n" not in message and "np." not in message
    return message


def warned(call: Callable[[], dict]) -> str:
    """'warning: <each distinct warning>; adjustments <counts>' of a run that goes on."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = call()
    return f"warning: {' | '.join(summary['warnings'])}; adjustments {summary['adjustments']}"


def app(tmp: Path, *args: str, **environment: str) -> str:
    """'exit <code>: <stderr>' of the CLI in `tmp`; stderr must be one line, and nothing is printed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **environment}
    env.pop("HYDRA_FULL_ERROR", None)
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *args], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=300)
    lines = [line for line in done.stderr.splitlines() if not line.startswith("Error executing job")]
    assert len(lines) == 1, done.stderr
    return f"exit {done.returncode}: {lines[0]}"


def no_run_dirs(tmp: Path) -> bool:
    return not any(path for path in tmp.rglob("*") if path.is_dir() and io.is_run_dir(path))


def write(tmp: Path, name: str, text: str | bytes) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def plugin(tmp: Path, module: str, source: str) -> RunConfig:
    """Validate a run whose `plugins` names a module written into `tmp` with `source`."""
    write(tmp, f"{module}.py", source)
    sys.path.insert(0, str(tmp))
    try:
        return RunConfig(plugins=[module]).validate()
    finally:
        sys.path.remove(str(tmp))
        sys.modules.pop(module, None)


def table(tmp: Path, *rows: str, header: str = HEADER) -> Path:
    return write(tmp, "jobs.csv", "\n".join([header, *rows]) + "\n")


def csv_run(path: Path, **changes: Any) -> RunConfig:
    """A small `task=simulate` run of the job table at `path` on 1 server x 4 GPUs, oracle predictions."""
    config = RunConfig(cluster=Cluster(servers=1, gpus_per_server=4),
                       workload=WorkloadConfig(name="csv", path=str(path), num_jobs=None, train_fraction=0.0,
                                               drop_oversize=False),
                       predictor=PredictorConfig(name="oracle"), placement=PlacementConfig(name="first_fit"),
                       task=TaskConfig(name="simulate"), progress=False)
    for key, value in changes.items():
        group, name = key.split("__")
        current = getattr(config, group)
        setattr(config, group, current.replace(**{name: value}) if hasattr(current, "replace")
                else dataclasses.replace(current, **{name: value}))
    return config


def typed_run(config: RunConfig) -> RunConfig:
    """`config` on a cluster of two pools of 1 server x 4 GPUs: V100 and K80."""
    config.cluster = Cluster(pools=[{"type": "v100", "servers": 1, "gpus_per_server": 4},
                                    {"type": "k80", "servers": 1, "gpus_per_server": 4}])
    return config


# --------------------------------------------------------------------------------------------------
# Fixtures of other formats

PAI_JOBS = "jA,iA,u1,Terminated,1000,5000\njB,iB,u2,Failed,2000,2600\n"
PAI_TASKS = "jA,worker,4,Terminated,1100,4100,600,29.0,50,V100\njB,worker,1,Failed,2000,2600,600,29.0,100,T4\n"
PAI_TAGS = "iA,u1,V100,gX,bert\n"


def pai(tmp: Path, jobs: str = PAI_JOBS, tasks: str = PAI_TASKS, tags: str | None = PAI_TAGS) -> Path:
    directory = tmp / "pai"
    write(directory, "pai_job_table.csv", jobs)
    write(directory, "pai_task_table.csv", tasks)
    if tags is not None:
        write(directory, "pai_group_tag_table.csv", tags)
    return directory


def pai_tar_without_tags(tmp: Path) -> Path:
    directory = pai(tmp, tags=None)
    archive = tmp / "pai.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for path in directory.iterdir():
            tar.add(path, arcname=f"trace/{path.name}")
    return archive


PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster"
GAVEL_ROWS = ("ResNet-50 (batch size 64)\tpython3 main.py\t--num_steps\t1\t1000\t10.500000\t4\n"
              "A3C\tcd %s/rl && python3 main.py\t--max-steps\t0\t500\t0.000000\t1\n")


def gavel_run(path: Path) -> RunConfig:
    """A `task=simulate` run of the Gavel trace at `path` on 3 servers x 8 GPUs, oracle predictions."""
    return RunConfig(cluster=Cluster(servers=3, gpus_per_server=8),
                     workload=WorkloadConfig(name="gavel", path=str(path), num_jobs=None, train_fraction=0.0),
                     predictor=PredictorConfig(name="oracle"), task=TaskConfig(name="simulate"), progress=False)
SACCT_HEADER = "JobID|Submit|Start|End|State|AllocTRES"
HELIOS_HEADER = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"
HELIOS_ROW = "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0"
SEREN = ("job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time\n"
         "5778432,u5907,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,2023-03-01 00:18:54+08:00,"
         "2023-03-01 00:20:51+08:00,117,32,936.0\n"
         "5778469,u5907,1,8,128,Other,COMPLETED,2023-03-01 00:23:58+08:00,2023-03-01 00:24:11+08:00,"
         "2023-03-01 01:09:04+08:00,2693,13,21544.0\n")
SWF_LINE = "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"


def sacct(tmp: Path, *rows: str, header: str = SACCT_HEADER) -> Path:
    return write(tmp, "sacct.txt", "\n".join([header, *rows]) + "\n")


def helios_log(tmp: Path, row: str = HELIOS_ROW, header: str = HELIOS_HEADER) -> Path:
    return write(tmp, "cluster_log.csv", f"{header}\n{row}\n")


def slurm_app(path: Path) -> str:
    """The CLI's outcome on the Slurm log at `path` (written in the test's directory); the file stays as it was."""
    before = path.read_bytes()
    outcome = app(path.parent, "workload=slurm", f"workload.path={path.name}", "predictor=oracle", "task=simulate")
    assert path.read_bytes() == before
    return outcome


def log_run(path: Path, **workload: Any) -> RunConfig:
    """A `task=simulate` run of the Slurm log at `path`, every job simulated, oracle predictions."""
    return RunConfig(workload=WorkloadConfig(name="slurm", path=str(path), train_fraction=0.0, **workload),
                     predictor=PredictorConfig(name="oracle"), task=TaskConfig(name="simulate"), progress=False)


GRAPH_NODE = ("node1 -- Conv2d(3, 64) -- forward_compute_time=1.0, backward_compute_time=2.0, "
              "activation_size=1000.0, parameter_size={params}")


def restricted_backends(monkeypatch: pytest.MonkeyPatch, *unusable: tuple[str, str, bool]) -> None:
    """Make backends unusable: (name, reason, available-but-size-limited)."""
    for name, reason, limited in unusable:
        backend = solvers.BACKENDS[name]
        monkeypatch.setitem(solvers.BACKENDS, name, backend_entry(name, lambda r=reason, a=limited: Availability(a, False, r),
                                                            backend.factory))
    monkeypatch.setattr(solvers.fallback, "_FALLBACK_WARNED", set())


def stopping_cpsat(monkeypatch: pytest.MonkeyPatch, incumbent: bool) -> None:
    """CP-SAT as if stopped by its time limit: with its solution as the incumbent, or without one."""
    real = solvers.BACKENDS["cpsat"]

    def stopped(model: LinearModel, settings: SolverSettings) -> SolveResult:
        result = real.factory(model, settings)
        if incumbent:
            return SolveResult("feasible", result.objective, 0.0, 1.0, 0.0, "cpsat", result.values)
        return SolveResult("time_limit_no_solution", None, None, None, 0.0, "cpsat")

    monkeypatch.setitem(solvers.BACKENDS, "cpsat", backend_entry("cpsat", real.meta["probe"], stopped))


def ilp_place(gpus_free: tuple[int, ...]) -> str:
    plan = build_plan("vgg19", "p1xd2")
    placement, result = ILPPlacer(solver=SolverSettings(time_limit_s=5.0)).place_with_result(plan, gpus_free, Cluster(2, 2))
    return f"status {result.status}, placement {placement.servers if placement else None}, gap {result.gap}"


def infeasible_model() -> str:
    model = LinearModel("contradiction")
    x = model.add_var("x", 0.0, 1.0, integer=True)
    model.add_constraint({x: 1.0}, lb=2.0, name="x_at_least_2")
    result = solve(model, SolverSettings("cpsat", time_limit_s=5.0))
    return f"status {result.status}, solution {result.has_solution}"


def failing_writer(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    run_dir = tmp / "run"
    io.mark_started(run_dir, {}, [])
    frame = pd.DataFrame({"job_id": ["a"], "end": [1.0]})

    def disk_full(self: Any, *args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", disk_full)  # jobs.parquet is written a row group at a time
    with pytest.raises(OSError) as error:
        io.write_outputs(run_dir, io.RunResult("simulate", {"num_jobs": 1}, jobs=frame))
    left = sorted(path.name for path in run_dir.iterdir())
    return f"{error.value}; status {io.run_status(run_dir)}; files {left}"


def interrupted(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> str:
    def ctrl_c() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_app, "_app", ctrl_c)
    monkeypatch.setattr(sys, "argv", ["asrpt-bench", "-m", "seed=0,1"])
    monkeypatch.setattr(cli_app, "validate_sweep", lambda overrides: 2)
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    return f"exit {exit_info.value.code}: {capsys.readouterr().err.strip()}"


def refused_over_earlier_run(tmp: Path) -> str:
    """A complete run in runs/r1, then a refused run into the same directory: the earlier files survive."""
    write(tmp, "ok.csv", f"{HEADER}\n{GOOD_ROW}\n")
    write(tmp, "bad.csv", f"{HEADER}\na,soon,1,10,1.0\n")
    args = ("workload=csv", "predictor=oracle", "task=simulate", "hydra.run.dir=runs/r1")
    subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *args, "workload.path=ok.csv"], cwd=tmp, check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True)
    run_dir = tmp / "runs" / "r1"
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    outcome = app(tmp, *args, "workload.path=bad.csv")
    after = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    return outcome + ("; earlier run kept" if after == before and run_dir / io.COMPLETE in after else "")


def users_files_in_run_dir(tmp: Path) -> str:
    """`hydra.run.dir=.` in a directory holding the user's own config.json and summary.json."""
    write(tmp, "ok.csv", f"{HEADER}\n{GOOD_ROW}\n")
    write(tmp, "config.json", "mine\n")
    write(tmp, "summary.json", "mine\n")
    outcome = app(tmp, "workload=csv", "workload.path=ok.csv", "predictor=oracle", "task=simulate", "hydra.run.dir=.")
    kept = (tmp / "config.json").read_text() == "mine\n" and (tmp / "summary.json").read_text() == "mine\n"
    return outcome + ("; files kept" if kept else "")


def terminated(tmp: Path) -> str:
    """SIGTERM to a joblib sweep whose loky workers are computing (once they ran on for minutes)."""
    from test_signals import terminated_sweep

    code, err, left = terminated_sweep(tmp)
    return f"exit {code}: {' | '.join(err.splitlines())}; processes left {left}"


def first_line_of_app(tmp: Path, *args: str) -> str:
    """'exit <code>: <first stderr line>' of the CLI in `tmp` (for runs that warn, then go on)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HYDRA_FULL_ERROR", None)
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *args], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=300)
    return f"exit {done.returncode}: {done.stderr.splitlines()[0]}"


EXITING_WORKLOAD = """import sys
from dataclasses import dataclass
from asrpt_bench.workloads.sources import TraceParams, register_workload


@dataclass(frozen=True)
class QuitParams(TraceParams):
    pass


@register_workload("quit", QuitParams)
def quit_loader(params, seed):
    sys.exit(0)
"""


def plugin_exits_in_the_run(tmp: Path) -> str:
    """A plugin workload whose loader calls sys.exit(0): the run fails (once exit 0, nothing run, no word)."""
    write(tmp, "exiting_workload.py", EXITING_WORKLOAD)
    return app(tmp, "plugins=[exiting_workload]", "workload=quit", "predictor=oracle", "task=simulate",
               "hydra.run.dir=run")


def refused_in_the_users_folders(tmp: Path) -> str:
    """A refused run into runs/mine/r1 and into outputs/, where the user made runs/mine/ and outputs/ (empty)."""
    for folder in ("runs/mine", "outputs"):
        (tmp / folder).mkdir(parents=True)
    outcome = app(tmp, "workload=csv", "workload.path=absent.csv", "hydra.run.dir=runs/mine/r1")
    app(tmp, "workload=csv", "workload.path=absent.csv")
    left = sorted(str(path.relative_to(tmp)) for path in tmp.rglob("*"))
    return f"{outcome}; left {left}"


def api_warning(tmp: Path) -> str:
    """What api.compare prints on stderr for a table whose jobs take the whole cluster."""
    write(tmp, "two.csv", f"{HEADER}\na,0,1,10,1.0\nb,0,1,10,1.0\n")
    code = ("import pandas as pd\nfrom asrpt_bench.api import compare\n"
            "compare(pd.read_csv('two.csv'), ['fifo'], servers=1, gpus_per_server=1)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return f"{done.stderr.count(chr(10))} line: {done.stderr.strip()}"


def one_line(capsys: pytest.CaptureFixture, code: int) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return f"exit {code}: {err.strip()}"


def two_job_simulation(predictions: Any, **options: Any) -> None:
    plan = TrainingPlan.fixed(1, 1.0)
    jobs = [Job("a", 0.0, plan, 3), Job("b", 1.0, plan, 2)]
    simulate(jobs, Cluster(1, 2), make_scheduler(options.pop("scheduler", "fifo")), FirstFitPlacer(),
             predictions=predictions, **options)


def frame(**columns: Any) -> pd.DataFrame:
    """A two-job table for api.compare, with `columns` changed or added."""
    return pd.DataFrame({"job_id": ["a", "b"], "release": [0.0, 1.0], "gpus": [1, 2], "iterations": [10, 20],
                         "alpha": [1.0, 1.0], **columns})


def plugin_table(tmp: Path, **columns: Any) -> str:
    """The refusal of a plugin trace source whose table is `frame(**columns)`."""
    from asrpt_bench.workloads.pipeline import load_table
    from asrpt_bench.workloads.sources import WORKLOADS, HandMadeParams, register_workload

    register_workload("door_plugin", HandMadeParams)(lambda params, seed: frame(**columns))
    try:
        return refusal(lambda: load_table("door_plugin", HandMadeParams(), 0))
    finally:
        del WORKLOADS["door_plugin"]


class Planted:
    """A pickle that creates a file when it is loaded."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple:
        return (open, (str(self.target), "w"))


def planted_cache_entry(tmp: Path) -> str:
    """An unsigned entry planted where a run's next hit would load it: the value is recomputed instead."""
    store = cache.DiskCache(tmp / "cache")
    store.get_or_compute("table", "k", lambda: 1)
    store.path("table", "k").write_bytes(__import__("pickle").dumps(Planted(tmp / "pwned")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value, status = store.get_or_compute("table", "k", lambda: 2)
    return f"warning: {caught[0].message}; value {value} ({status}); file created {(tmp / 'pwned').exists()}"


def cache_clear_foreign(tmp: Path, capsys: pytest.CaptureFixture) -> str:
    """`asrpt-bench-cache clear --dir` a project directory holding *.pkl files."""
    write(tmp, "project/model.pkl", b"x")
    with pytest.raises(SystemExit) as exit_info:
        cache.main(["clear", "--dir", str(tmp)])
    kept = (tmp / "project" / "model.pkl").read_bytes() == b"x"
    return f"{one_line(capsys, exit_info.value.code)}; {'kept' if kept else 'deleted'}"


def collect_damaged(tmp: Path, capsys: pytest.CaptureFixture, damage: Callable[[Path], Any], *args: str) -> str:
    """`asrpt-bench-collect` over one complete run (2 jobs) after `damage(run_dir)`."""
    run_dir = tmp / "sweep" / "seed=0"
    jobs = pd.DataFrame({"job_id": ["a", "b"], "end": [1.0, 2.0]})
    rundir.write_run_dir(run_dir, io.RunResult("simulate", {"num_jobs": 2, "total_jct": 3.0}, jobs=jobs), {"seed": 0})
    damage(run_dir)
    code = collect_main([str(tmp / "sweep"), *(args or ("--out", str(tmp / "x.csv")))])
    return f"exit {code}: {capsys.readouterr().err.strip()}"


def compare_run_dir(run_dir: Path) -> Path:
    """A complete `compare` run of asrpt and fifo on 2 jobs, as the CLI writes it."""
    per_scheduler = {"asrpt": {"num_jobs": 2, "total_jct": 3.0}, "fifo": {"num_jobs": 2, "total_jct": 4.0}}
    jobs = pd.DataFrame({"job_id": ["a", "b"] * 2, "end": [1.0, 2.0, 1.0, 3.0],
                         "scheduler": ["asrpt", "asrpt", "fifo", "fifo"]})
    comparison = pd.DataFrame({"scheduler": ["asrpt", "fifo"], "total_jct": [3.0, 4.0]})
    segments = pd.DataFrame({"job_id": ["a"], "start": [0.0], "end": [1.0], "scheduler": ["asrpt"]})
    result = io.RunResult("compare", {"num_jobs": 2, "total_jct": 3.0, "per_scheduler": per_scheduler}, jobs=jobs,
                          comparison=comparison, segments=segments)
    return rundir.write_run_dir(run_dir, result, {"seed": 0, "task": {"name": "compare",
                                                                      "schedulers": ["asrpt", "fifo"]}})


def collect_compare(tmp: Path, capsys: pytest.CaptureFixture, damage: Callable[[Path], Any]) -> str:
    """`asrpt-bench-collect` over one complete compare run after `damage(run_dir)`."""
    damage(compare_run_dir(tmp / "sweep" / "seed=0"))
    code = collect_main([str(tmp / "sweep"), "--out", str(tmp / "x.csv")])
    return f"exit {code}: {capsys.readouterr().err.strip()}"


def before_the_manifest(damage: Callable[[Path], Any]) -> Callable[[Path], None]:
    """`damage`, in a run directory as versions before the checksum manifest wrote it (COMPLETE lists bare
    names), so that only the checks of the files' contents can see it."""
    def damaged(run_dir: Path) -> None:
        damage(run_dir)
        (run_dir / io.COMPLETE).write_text("".join(f"{name}\n" for name in ["ok", *io.listed_files(run_dir)]))

    return damaged


def edit_comparison(run_dir: Path, edit: Callable[[pd.DataFrame], pd.DataFrame]) -> None:
    (run_dir / io.COMPARISON).write_text(edit(pd.read_csv(run_dir / io.COMPARISON)).to_csv(index=False))


def killed_then_rerun(tmp: Path, capsys: pytest.CaptureFixture) -> str:
    """A run SIGKILLed in runs/r1 (its staging directory left behind), then a complete rerun there: collect."""
    write(tmp, "ok.csv", f"{HEADER}\n{GOOD_ROW}\n")
    killed = rundir.stage(tmp / "runs" / "r1", {"seed": 0}, ["seed=0"])
    os.utime(killed / io.CONFIG, ns=(1, 1))  # it started before the rerun
    args = ("workload=csv", "workload.path=ok.csv", "predictor=oracle", "task=simulate", "hydra.run.dir=runs/r1")
    subprocess.run([sys.executable, "-m", "asrpt_bench.cli", *args], cwd=tmp, check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True)
    code = collect_main([str(tmp / "runs"), "--out", str(tmp / "x.csv")])
    note = capsys.readouterr().err.strip().replace(killed.name, ".r1.staging-*")
    return f"exit {code}: {note}; rows {len(pd.read_csv(tmp / 'x.csv'))}"


def committed_results(tmp: Path, damage: Callable[[Path], Any]) -> Path:
    """A copy of the committed results/ in `tmp`/results after `damage(copy)`."""
    results = tmp / "results"
    shutil.copytree(ROOT / "results", results)
    damage(results)
    return results


def report_over(tmp: Path, capsys: pytest.CaptureFixture, results: Path) -> str:
    code = report_main(["--results", str(results), "--out", str(ROOT / "REPRODUCTION.md"), "--check", "--docs", "none"])
    return f"exit {code}: {capsys.readouterr().err.strip()}"


def pai_twice(tmp: Path) -> Path:
    """A PAI directory holding a second copy of its job table in a subdirectory."""
    directory = pai(tmp)
    write(directory, "old/pai_job_table.csv", PAI_JOBS)
    return directory


def cut_archive(tmp: Path) -> Path:
    """A PAI .tar.gz cut after its first 2,000 bytes (its members padded so that they do not fit in them)."""
    directory = pai(tmp)
    write(directory, "padding.bin", os.urandom(20000))
    archive = tmp / "pai.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(directory, arcname="trace")
    archive.write_bytes(archive.read_bytes()[:2000])
    return archive


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


def edited_result(tmp: Path, name: str, edit: Callable[[pd.DataFrame], pd.DataFrame]) -> Path:
    """results/<name>.csv of the committed tables, edited, in `tmp`/results."""
    results = tmp / "results"
    results.mkdir(exist_ok=True)
    edit(pd.read_csv(ROOT / "results" / f"{name}.csv")).to_csv(results / f"{name}.csv", index=False)
    return results


def report_check(tmp: Path, capsys: pytest.CaptureFixture, edit: Callable[[pd.DataFrame], pd.DataFrame]) -> str:
    """`asrpt-bench-report --check` over an edited compare_default.csv."""
    results = edited_result(tmp, "compare_default", edit)
    code = report_main(["--results", str(results), "--out", str(ROOT / "REPRODUCTION.md"), "--check"])
    return f"exit {code}: {capsys.readouterr().err.strip()}"


def figures_of(tmp: Path, capsys: pytest.CaptureFixture, results: Path, *args: str) -> str:
    """`asrpt-bench-figures` over `results`: exit status and its error lines."""
    code = figures_main(["--results", str(results), "--out", str(tmp / "figures"), *args])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("asrpt-bench-figures: error")]
    return f"exit {code}: {' | '.join(errors)}"


def n_a(table: pd.DataFrame) -> pd.DataFrame:
    table["total_jct"] = table["total_jct"].astype(object)
    table.loc[3, "total_jct"] = "n/a"
    return table


def tripled(table: pd.DataFrame) -> pd.DataFrame:
    table.loc[1, "total_jct"] = table.loc[1, "total_jct"] * 3
    return table


def collect_failed(tmp: Path, capsys: pytest.CaptureFixture) -> str:
    run_dir = tmp / "sweep" / "seed=0"
    io.mark_started(run_dir, {"seed": 0}, ["seed=0"])
    io.mark_failed(run_dir, "Traceback (most recent call last):\nValueError: boom\n")
    code = collect_main([str(tmp / "sweep"), "--out", str(tmp / "x.csv")])
    return f"exit {code}: {capsys.readouterr().err.strip()}"


def wrong_figure_table(tmp: Path, capsys: pytest.CaptureFixture) -> str:
    (tmp / "results").mkdir()
    (tmp / "results" / "sensitivity.csv").write_bytes((ROOT / "results" / "compare_default.csv").read_bytes())
    code = figures_main(["--results", str(tmp / "results"), "--out", str(tmp / "figures")])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("asrpt-bench-figures: error")]
    return f"exit {code}: {' | '.join(errors)}"


# --------------------------------------------------------------------------------------------------
# The catalogue


@dataclass(frozen=True)
class Case:
    kind: str
    category: str
    trigger: Callable[..., str]
    expected: str
    fixtures: tuple[str, ...] = ()


def case(kind: str, category: str, expected: str, *fixtures: str) -> Callable[[Callable[..., str]], Case]:
    def wrap(trigger: Callable[..., str]) -> Case:
        return Case(kind, category, trigger, expected, fixtures)

    return wrap


TRACE, PAI, PHILLY, SELECTION = "job table (CSV)", "PAI 2020 trace", "Philly trace", "job selection"
GAVEL, LOGS = "Gavel trace", "cluster job logs"
API = "Python API"
PROFILE, CONFIG, SOLVER, IO = "profile files", "configuration", "solver trouble", "I/O and outputs"

QUEUEING = ["task=queueing", "workload=mg1", "workload.arrivals=20", "predictor=oracle", "cluster.servers=1",
            "cluster.gpus_per_server=1", "preemption.restart_s=0", "progress=false", "cache.enabled=false"]

CASES: list[Case] = [
    # ---- job table rows
    case("csv-empty-file", TRACE, "{dir}/jobs.csv: the file is empty (no header line, no rows)")(
        lambda tmp: refusal(lambda: load_csv(write(tmp, "jobs.csv", "")))),
    case("csv-header-only", TRACE, "{dir}/jobs.csv: no job rows (the file has a header line only)")(
        lambda tmp: refusal(lambda: load_csv(table(tmp)))),
    case("csv-missing-column", TRACE, "{dir}/jobs.csv: missing required column(s) ['gpus']; columns are "
                                      "['job_id', 'release', 'iterations', 'alpha']")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,10,1.0", header="job_id,release,iterations,alpha")))),
    case("csv-not-a-number", TRACE, "{dir}/jobs.csv: row 1 (line 2), column 'release': not a number: 'soon'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,soon,1,10,1.0")))),
    case("csv-infinite-alpha", TRACE, "{dir}/jobs.csv: row 2 (line 3), column 'alpha': not a finite number: 'inf'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, GOOD_ROW, "b,0,1,10,inf")))),
    case("csv-alpha-below-any-iteration", TRACE,
         "{dir}/jobs.csv: row 2 (line 3), column 'alpha': must be >= 1e-06 s (no training iteration is shorter than "
         "a microsecond), got '1e-320'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, GOOD_ROW, "b,0,1,10,1e-320")))),
    case("csv-model-beyond-gpu-memory", TRACE,
         "{dir}/jobs.csv: row 2 (line 3), columns 'model' and 'config': model 't5' under config p1xd1 does not fit "
         "in 32.0 GB per GPU (weights, gradients, Adam states and stashed activations)")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(
            tmp, "a,5,1,10,resnet50,p1xd1", "b,0,1,10,t5,p1xd1",
            header="job_id,release,gpus,iterations,model,config"))))),
    case("csv-negative-release", TRACE, "{dir}/jobs.csv: row 1 (line 2), column 'release': must be >= 0, got -4.0")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,-4,1,10,1.0")))),
    case("csv-fractional-gpus", TRACE, "{dir}/jobs.csv: row 1 (line 2), column 'gpus': not an integer: '1.5'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,1.5,10,1.0")))),
    case("csv-zero-gpus", TRACE, "{dir}/jobs.csv: row 1 (line 2), column 'gpus': must be >= 1, got 0.0")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,0,10,1.0")))),
    case("csv-duplicate-job-id", TRACE, "{dir}/jobs.csv: row 2 (line 3), column 'job_id': duplicate job id 'a'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, GOOD_ROW, "a,5,1,10,1.0")))),
    case("csv-config-contradicts-gpus", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), columns 'gpus' and 'config': p3xd7 uses 21 GPUs (3 stages x 7 replicas) "
         "but gpus is 4")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,4,10,vgg19,p3xd7",
                                                   header="job_id,release,gpus,iterations,model,config")))),
    case("csv-unknown-model", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'model': unknown model 'alexnet'; known: ['bert24', 'gnmt', "
         "'inception_v3', 'resnet50', 't5', 'vgg19', 'xlnet24']")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,4,10,alexnet,p1xd4",
                                                   header="job_id,release,gpus,iterations,model,config")))),
    case("csv-malformed-config", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'config': parallel config '4x1' is not of the form "
         "'p<stages>xd<replicas>', e.g. 'p2xd4'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,4,10,vgg19,4x1",
                                                   header="job_id,release,gpus,iterations,model,config")))),
    case("csv-model-without-config", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'config': value is missing (a row with a model needs both model "
         "and config)")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,4,,vgg19,,3600",
                                                   header="job_id,release,gpus,iterations,model,config,duration")))),
    case("csv-no-alpha-no-model", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'model': a job needs model+config, alpha, or a duration to "
         "assign a model from")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,4,10", header="job_id,release,gpus,iterations")))),
    case("csv-alpha-and-model", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'alpha': give either alpha or model+config, not both")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(
            tmp, "a,0,2,10,vgg19,p1xd2,1.0", header="job_id,release,gpus,iterations,model,config,alpha"))))),
    case("csv-alpha-max-below-alpha", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'alpha_max': must be >= alpha, got 0.5")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,1,10,1.0,0.5", header=HEADER + ",alpha_max")))),
    case("csv-not-utf8", TRACE,
         "{dir}/jobs.csv: cannot be read as CSV: 'utf-8' codec can't decode byte 0xff in position 0: invalid "
         "start byte")(
        lambda tmp: refusal(lambda: load_csv(write(tmp, "jobs.csv", b"\xff\xfe\x00j\x00o\x00b")))),
    case("csv-file-not-found", TRACE, "{dir}/absent.csv: file not found")(
        lambda tmp: refusal(lambda: load_csv(tmp / "absent.csv"))),
    case("csv-path-is-a-directory", TRACE, "{dir}: is a directory, not a CSV file")(
        lambda tmp: refusal(lambda: load_csv(tmp))),
    case("csv-unknown-gpu-type-column", TRACE,
         "{dir}/jobs.csv: column 'alpha_a100': unknown GPU type 'a100'; per-type columns are alpha_<type>, "
         "alpha_max_<type>, alpha_spread_<type> with <type> one of ['k80', 'p100', 'v100']")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,1,10,1.0,2.0", header=HEADER + ",alpha_a100")))),
    case("csv-typed-alpha-for-a-missing-type", TRACE,
         "{dir}/jobs.csv: column 'alpha_k80' is for GPU type 'k80', which the cluster lacks (1 x 4 v100); drop the "
         "column or add a pool of that type")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, "a,0,1,10,1.0,2.0",
                                                                 header=HEADER + ",alpha_k80"))))),
    case("csv-job-with-no-runnable-type", TRACE,
         "job 'a' cannot run on the cluster's GPU type k80 (its alpha there is empty: no measured time)")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, "a,0,1,10,1.0,", header=HEADER + ",alpha_k80"),
                                                           cluster__type="k80")))),
    case("csv-job-with-no-runnable-pool", TRACE,
         "job 'a' can run in no pool of the cluster: its alpha is empty on every GPU type the cluster has (v100, k80)")(
        lambda tmp: refusal(lambda: run_experiment(typed_run(csv_run(table(tmp, "a,0,1,10,1.0,,",
                                                                           header=HEADER + ",alpha_v100,alpha_k80")))))),
    case("csv-job-larger-than-cluster", TRACE,
         "job 'big' needs 8 GPUs but the cluster has 4; drop such jobs with workload.drop_oversize=true "
         "(in Python: simulate(..., drop_oversize=True))")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW, "big,1,8,10,1.0"))))),
    case("csv-job-larger-than-cluster-dropped", TRACE,
         "warning: dropped 1 job(s) needing more than the cluster's 4 GPUs (first: 'big'; "
         "workload.drop_oversize=true); adjustments {'dropped_oversize_jobs': 1}")(
        lambda tmp: warned(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW, "big,1,8,10,1.0"),
                                                          workload__drop_oversize=True)).summary)),
    case("csv-row-with-an-extra-field", TRACE,
         "{dir}/jobs.csv: row 1 (line 2) has 6 field(s), expected 5 (as the header line)")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, GOOD_ROW + ",9", "b,0,1,10,1.0")))),
    case("csv-short-row", TRACE,
         "{dir}/jobs.csv: row 1 (line 2) has 5 field(s), expected 6 (as the header line)")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, GOOD_ROW, header=HEADER + ",group")))),
    case("csv-misspelt-column", TRACE,
         "{dir}/jobs.csv: unknown column 'alpha_mx' (did you mean 'alpha_max'?); the job table's columns are "
         "['job_id', 'release', 'gpus', 'iterations', 'model', 'config', 'alpha', 'alpha_max', 'alpha_spread', "
         "'user', 'group', 'duration', 'partition', 'state', 'recorded_wait', 'time_limit']")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,1,10,1.0,2.0", header=HEADER + ",alpha_mx")))),
    case("csv-repeated-column", TRACE, "{dir}/jobs.csv: column 'gpus' appears more than once in the header line")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,1,10,1.0,4", header=HEADER + ",gpus")))),
    case("csv-iterations-and-duration-without-model", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'iterations': a row with iterations needs model+config or alpha; "
         "without them a model is drawn from its duration, which would replace these iterations (leave iterations "
         "empty to derive them from the duration)")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,3,1000,50", header="job_id,release,gpus,iterations,"
                                                                                   "duration")))),
    case("csv-duration-row-with-an-odd-gpu-count", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'gpus': a model drawn from a duration runs on one of [1, 2, 4, 8, "
         "16, 32] GPUs, so gpus 3 would be changed; give model+config or alpha for other sizes")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,3,500", header="job_id,release,gpus,duration")))),
    case("csv-release-beyond-exact-times", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'release': must be <= 1e+12 s (larger times lose precision in "
         "float64 arithmetic), got '1e308'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,1e308,1,10,1.0")))),
    case("csv-gpus-beyond-any-cluster", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'gpus': must be <= 1e+06 GPUs (no cluster comes near), got '1e19'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,1e19,10,1.0")))),
    case("csv-work-beyond-exact-times", TRACE,
         "{dir}/jobs.csv: row 1 (line 2), column 'iterations': iterations x alpha must be <= 1e+12 s (larger times "
         "lose precision in float64 arithmetic), got '1000000000' x '1e5'")(
        lambda tmp: refusal(lambda: load_csv(table(tmp, "a,0,1,1000000000,1e5")))),
    case("csv-gzip-named-csv", TRACE, "{dir}/jobs.csv: the file is gzip-compressed; name it jobs.csv.gz or gunzip it")(
        lambda tmp: refusal(lambda: load_csv(write(tmp, "jobs.csv",
                                                   gzip.compress(f"{HEADER}\n{GOOD_ROW}\n".encode()))))),
    case("csv-plain-text-named-gz", TRACE,
         "{dir}/jobs.csv.gz: named .gz but not gzip-compressed (it starts b'job_id,relea'); gzip it, or name it "
         "jobs.csv")(
        lambda tmp: refusal(lambda: load_csv(write(tmp, "jobs.csv.gz", f"{HEADER}\n{GOOD_ROW}\n")))),
    case("csv-gzip-cut-short", TRACE,
         "{dir}/jobs.csv.gz: the gzip data ends early, so the file was cut short (an interrupted copy or "
         "download?); copy it again")(
        lambda tmp: refusal(lambda: load_csv(write(tmp, "jobs.csv.gz", gzip.compress(
            f"{HEADER}\n{GOOD_ROW}\n".encode())[:-10])))),
    case("csv-every-job-larger-than-cluster", TRACE,
         "every job (1) needs more than the cluster's 4 GPUs (first: 'big'), so nothing is left to simulate; use a "
         "larger cluster (cluster.servers, cluster.gpus_per_server)")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, "big,1,8,10,1.0"),
                                                           workload__drop_oversize=True)))),
    case("csv-other-delimiter", TRACE,
         "{dir}/jobs.csv: the header line is one field 'job_id;release;gpus;iterations;alpha': its fields are "
         "separated by ';', not ','; set workload.delimiter=';'")(
        lambda tmp: refusal(lambda: load_csv(write(tmp, "jobs.csv", f"{HEADER}\n{GOOD_ROW}\n".replace(",", ";"))))),
    case("csv-delimiter-not-one-character", TRACE,
         "workload.delimiter must be one character other than a quote, a space or a line break, got ', '")(
        lambda tmp: refusal(lambda: WorkloadConfig(name="csv", path="jobs.csv", delimiter=", ").validate())),
    case("csv-forest-without-history", TRACE,
         "warning: predictor=forest learns from the jobs before workload.train_fraction, and workload 'csv' has none "
         "(train_fraction=0); the run predicts with predictor=oracle (true iterations) instead; adjustments "
         "{'predictor_oracle_without_history': 1}")(
        lambda tmp: warned(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW),
                                                          predictor__name="forest")).summary)),
    # ---- PAI 2020
    case("pai-file-missing", PAI, "{dir}/pai: no pai_group_tag_table.csv found (looked in all subdirectories)")(
        lambda tmp: refusal(lambda: load_pai2020(pai(tmp, tags=None)))),
    case("pai-archive-member-missing", PAI, "{dir}/pai.tar.gz: the archive has no pai_group_tag_table.csv")(
        lambda tmp: refusal(lambda: load_pai2020(pai_tar_without_tags(tmp)))),
    case("pai-archive-cut-short", PAI,
         "{dir}/pai.tar.gz: the archive is cut short or damaged (EOFError: Compressed file ended before the "
         "end-of-stream marker was reached); copy or download it again")(
        lambda tmp: refusal(lambda: load_pai2020(cut_archive(tmp)))),
    case("pai-two-copies-of-a-table", PAI,
         "{dir}/pai: the directory holds 2 copies of pai_job_table.csv ({dir}/pai/old/pai_job_table.csv, "
         "{dir}/pai/pai_job_table.csv); point workload.path at the one trace you mean")(
        lambda tmp: refusal(lambda: load_pai2020(pai_twice(tmp)))),
    case("pai-not-a-trace", PAI,
         "{dir}/jobs.csv: not a directory or a .tar.gz archive holding ['pai_group_tag_table.csv', "
         "'pai_job_table.csv', 'pai_task_table.csv']")(
        lambda tmp: refusal(lambda: load_pai2020(table(tmp, GOOD_ROW)))),
    case("pai-non-numeric-cell", PAI,
         "{dir}/pai/pai_task_table.csv: row 1 (line 1), column 'plan_gpu': not a number, got 'half'")(
        lambda tmp: refusal(lambda: load_pai2020(pai(tmp, tasks=PAI_TASKS.replace(",50,", ",half,"))))),
    case("pai-no-job-passes-filters", PAI,
         "{dir}/pai: no job passes the filters (Terminated, plan_gpu > 0, duration > 0): {'jobs_in_file': 2, "
         "'not_terminated': 2, 'no_gpu': 0, 'no_positive_duration': 0, 'kept': 0}")(
        lambda tmp: refusal(lambda: load_pai2020(pai(tmp, jobs=PAI_JOBS.replace("Terminated", "Failed"))))),
    case("pai-extra-field", PAI,
         "{dir}/pai/pai_group_tag_table.csv: row 1 (line 1) has 6 field(s), expected 5: ['inst_id', 'user', "
         "'gpu_type_spec', 'group', 'workload']")(
        lambda tmp: refusal(lambda: load_pai2020(pai(tmp, tags=PAI_TAGS.replace("bert", "bert,extra"))))),
    case("pai-short-row", PAI,
         "{dir}/pai/pai_task_table.csv: row 2 (line 2) has 6 field(s), expected 10: ['job_name', 'task_name', "
         "'inst_num', 'status', 'start_time', 'end_time', 'plan_cpu', 'plan_mem', 'plan_gpu', 'gpu_type']")(
        lambda tmp: refusal(lambda: load_pai2020(pai(tmp, tasks=PAI_TASKS.replace(",600,29.0,100,T4", ""))))),
    # ---- Philly
    case("philly-bad-timestamp", PHILLY,
         "{dir}/philly.csv: row 1 (line 2), column 'timestamp': not a timestamp in format '%Y-%m-%d %H:%M:%S', "
         "got 'yesterday'")(
        lambda tmp: refusal(lambda: load_philly(write(tmp, "philly.csv",
                                                      f"{PHILLY_HEADER}\nyesterday,50,1,50,vcA\n")))),
    case("philly-zero-gpus", PHILLY,
         "{dir}/philly.csv: row 1 (line 2), column 'num_gpus': must be >= 1, got '0'")(
        lambda tmp: refusal(lambda: load_philly(write(tmp, "philly.csv",
                                                      f"{PHILLY_HEADER}\n2017-10-01 00:00:00,50,0,0,vcA\n")))),
    case("philly-unknown-column", PHILLY,
         "{dir}/philly.csv: unknown column 'priority'; the Philly format's columns are ['timestamp', 'duration', "
         "'num_gpus', 'gpu_time', 'cluster']")(
        lambda tmp: refusal(lambda: load_philly(write(tmp, "philly.csv", f"{PHILLY_HEADER},priority\n"
                                                                         "2017-10-01 00:00:00,50,1,50,vcA,u\n")))),
    case("philly-gpus-beyond-any-cluster", PHILLY,
         "{dir}/philly.csv: row 1 (line 2), column 'num_gpus': must be <= 1e+06, got '1e19'")(
        lambda tmp: refusal(lambda: load_philly(write(tmp, "philly.csv",
                                                      f"{PHILLY_HEADER}\n2017-10-01 00:00:00,50,1e19,50,vcA\n")))),
    case("pai-gpus-beyond-any-cluster", PAI,
         "{dir}/pai/pai_task_table.csv: job 'jA': its tasks ask for 4e+17 GPUs (inst_num x ceil(plan_gpu / 100)), "
         "more than 1000000")(
        lambda tmp: refusal(lambda: load_pai2020(pai(tmp, tasks=PAI_TASKS.replace("jA,worker,4,",
                                                                                  "jA,worker,4e17,"))))),
    # ---- Gavel
    case("gavel-empty-file", GAVEL, "{dir}/vc1.trace: the trace has no jobs")(
        lambda tmp: refusal(lambda: load_gavel(write(tmp, "vc1.trace", "")))),
    case("gavel-wrong-field-count", GAVEL,
         "{dir}/vc1.trace: line 3 has 2 tab-separated field(s), expected 7 (Gavel per-VC format, as line 1)")(
        lambda tmp: refusal(lambda: load_gavel(write(tmp, "vc1.trace", GAVEL_ROWS + "A3C\tcmd\n")))),
    case("gavel-trace-beside-its-gzipped-twin", GAVEL,
         "{dir}/traces/vc1.trace and vc1.trace.gz both exist beside each other, and a reader cannot tell which is "
         "current; keep one of them")(
        lambda tmp: refusal(lambda: load_gavel((write(tmp, "traces/vc1.trace", GAVEL_ROWS), write(
            tmp, "traces/vc1.trace.gz", gzip.compress(GAVEL_ROWS.encode())))[0].parent))),
    case("gavel-non-integer-steps", GAVEL,
         "{dir}/vc1.trace: row 1 (line 1), column 'total_steps': must be an integer >= 0, got '1e3'")(
        lambda tmp: refusal(lambda: load_gavel(write(tmp, "vc1.trace", GAVEL_ROWS.replace("\t1000\t", "\t1e3\t"))))),
    case("gavel-steps-beyond-exact-counts", GAVEL,
         "{dir}/vc1.trace: row 1 (line 1), column 'total_steps': must be <= 1e+12, got '100000000000000000000000'")(
        lambda tmp: refusal(lambda: load_gavel(write(tmp, "vc1.trace", GAVEL_ROWS.replace(
            "\t1000\t", "\t100000000000000000000000\t"))))),
    case("gavel-unknown-job-type", GAVEL,
         "{dir}/vc1.trace: row 2 (line 2), column 'job_type': job type 'A4C' has no measured throughput; known: "
         "['A3C', 'CycleGAN', 'LM (batch size 10)', 'LM (batch size 20)', 'LM (batch size 40)', 'LM (batch size 5)', "
         "'LM (batch size 80)', 'Recommendation (batch size 1024)', 'Recommendation (batch size 2048)', "
         "'Recommendation (batch size 4096)', 'Recommendation (batch size 512)', 'Recommendation (batch size 8192)', "
         "'ResNet-18 (batch size 128)', 'ResNet-18 (batch size 16)', 'ResNet-18 (batch size 256)', "
         "'ResNet-18 (batch size 32)', 'ResNet-18 (batch size 64)', 'ResNet-50 (batch size 128)', "
         "'ResNet-50 (batch size 16)', 'ResNet-50 (batch size 32)', 'ResNet-50 (batch size 64)', "
         "'Transformer (batch size 128)', 'Transformer (batch size 16)', 'Transformer (batch size 256)', "
         "'Transformer (batch size 32)', 'Transformer (batch size 64)']")(
        lambda tmp: refusal(lambda: load_gavel(write(tmp, "vc1.trace", GAVEL_ROWS.replace("A3C", "A4C"))))),
    case("gavel-unmeasured-scale-extrapolated", GAVEL,
         "warning: {dir}/vc1.trace: 1 job(s) have a (job type, scale factor) Gavel did not measure; their "
         "throughput is extrapolated from the largest measured scale at its per-GPU rate; adjustments "
         "{'gavel_alpha_extrapolated': 1}")(
        lambda tmp: warned(lambda: run_experiment(gavel_run(write(
            tmp, "vc1.trace", GAVEL_ROWS.replace("10.500000\t4", "10.500000\t16")))).summary)),
    # ---- cluster job logs
    case("log-slurm-unknown-field", LOGS,
         "{dir}/sacct.txt: unknown field 'JobIdent' in the header line (did you mean 'JobID'?); workload=slurm reads "
         "the fields of `sacct --helpformat`")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, "1|2024-03-01T08:00:00|2024-03-01T08:00:00|"
                                                           "2024-03-01T09:00:00|COMPLETED|gres/gpu=1",
                                                     header=SACCT_HEADER.replace("JobID", "JobIdent"))))),
    case("log-slurm-comma-separated", LOGS,
         "exit 2: asrpt-bench: error: sacct.txt: the header line is not sacct --parsable2 output (fields separated "
         "by vertical bars): 'JobID,Submit,Start,End,State,AllocTRES'")(
        lambda tmp: slurm_app(sacct(tmp, "1,2024-03-01T08:00:00,2024-03-01T08:00:00,2024-03-01T09:00:00,COMPLETED,"
                                         "gres/gpu=1", header=SACCT_HEADER.replace("|", ",")))),
    case("log-slurm-missing-field", LOGS,
         "{dir}/sacct.txt: the header line has no 'Start' field; workload=slurm reads sacct --parsable2 output with "
         "at least JobID, Submit, Start, End, State and AllocTRES or ReqTRES (fields found: ['JobID', 'Submit', "
         "'End', 'State', 'AllocTRES'])")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, "1|2024-03-01T08:00:00|2024-03-01T09:00:00|COMPLETED|"
                                                           "gres/gpu=1", header=SACCT_HEADER.replace("|Start", ""))))),
    case("log-helios-unknown-column-set", LOGS,
         "{dir}/cluster_log.csv: not a workload=helios file: unknown column 'gpu_nums' (did you mean 'gpu_num'?); the "
         "published columns are Helios cluster_log.csv: ['job_id', 'user', 'vc', 'gpu_num', 'cpu_num', 'node_num', "
         "'state', 'submit_time', 'start_time', 'end_time', 'duration', 'queue']")(
        lambda tmp: refusal(lambda: load_helios(helios_log(tmp, header=HELIOS_HEADER.replace("gpu_num", "gpu_nums"))))),
    case("log-mixed-time-zones", LOGS,
         "{dir}/trace_seren.csv: row 2 (line 3), column 'start_time': mixed time zones: '2023-03-01 00:24:11' has no "
         "UTC offset while '2023-03-01 00:18:22+08:00' (row 1, column 'submit_time') has one; give every stamp of "
         "the log in one form")(
        lambda tmp: refusal(lambda: load_acme(write(tmp, "trace_seren.csv", SEREN.replace(
            "2023-03-01 00:24:11+08:00", "2023-03-01 00:24:11"))))),
    case("log-bad-time-stamp", LOGS,
         "{dir}/sacct.txt: row 1 (line 2), column 'End': not a time stamp such as 2023-03-01T08:30:00, got "
         "'tomorrow'")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, "1|2024-03-01T08:00:00|2024-03-01T08:00:00|tomorrow|"
                                                           "COMPLETED|gres/gpu=1")))),
    case("log-unknown-state", LOGS,
         "{dir}/sacct.txt: row 1 (line 2), column 'State': unknown job state 'DONE'; sacct's states are "
         "['COMPLETED', 'CANCELLED', 'FAILED', 'TIMEOUT', 'NODE_FAIL', 'OUT_OF_MEMORY', 'PREEMPTED', 'DEADLINE', "
         "'BOOT_FAIL', 'PENDING', 'RUNNING', 'REQUEUED', 'RESIZING', 'REVOKED', 'SUSPENDED', 'COMPLETING', "
         "'CONFIGURING', 'REQUEUE_FED', 'REQUEUE_HOLD', 'RESV_DEL_HOLD', 'SIGNALING', 'SPECIAL_EXIT', 'STAGE_OUT', "
         "'STOPPED']")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, "1|2024-03-01T08:00:00|2024-03-01T08:00:00|"
                                                           "2024-03-01T09:00:00|DONE|gres/gpu=1")))),
    case("log-helios-unknown-state", LOGS,
         "{dir}/cluster_log.csv: row 1 (line 2), column 'state': unknown job state 'KILLED'; the published states "
         "are ['COMPLETED', 'CANCELLED', 'FAILED', 'TIMEOUT', 'NODE_FAIL', 'PENDING', 'RUNNING', 'SUSPENDED']")(
        lambda tmp: refusal(lambda: load_helios(helios_log(tmp, row=HELIOS_ROW.replace("COMPLETED", "KILLED"))))),
    case("log-malformed-alloctres", LOGS,
         "exit 2: asrpt-bench: error: sacct.txt: row 1 (line 2), column 'AllocTRES': malformed TRES "
         "'cpu=4,gres/gpu': item 'gres/gpu' is not <resource>=<count>")(
        lambda tmp: slurm_app(sacct(tmp, "1|2024-03-01T08:00:00|2024-03-01T08:00:00|2024-03-01T09:00:00|COMPLETED|"
                                         "cpu=4,gres/gpu"))),
    case("log-fractional-gpu-count", LOGS,
         "{dir}/sacct.txt: row 1 (line 2), column 'AllocTRES': malformed TRES 'gres/gpu=1.5': the GPU count '1.5' is "
         "not a whole number")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, "1|2024-03-01T08:00:00|2024-03-01T08:00:00|"
                                                           "2024-03-01T09:00:00|COMPLETED|gres/gpu=1.5")))),
    case("log-time-limit-not-minutes", LOGS,
         "{dir}/sacct.txt: row 1 (line 2), column 'TimelimitRaw': not a time limit in minutes (a whole number > 0, "
         "UNLIMITED or Partition_Limit), got '2:00:00'")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, "1|2024-03-01T08:00:00|2024-03-01T08:00:00|"
                                                           "2024-03-01T09:00:00|COMPLETED|gres/gpu=1|2:00:00",
                                                     header=SACCT_HEADER + "|TimelimitRaw")))),
    case("log-end-before-start", LOGS,
         "{dir}/sacct.txt: row 1 (line 2), column 'End': before 'Start' of the same job (by 3600 s); times are "
         "reversed")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, "1|2024-03-01T08:00:00|2024-03-01T09:00:00|"
                                                           "2024-03-01T08:00:00|COMPLETED|gres/gpu=1")))),
    case("log-start-before-submit", LOGS,
         "{dir}/cluster_log.csv: row 1 (line 2), column 'start_time': before 'submit_time' of the same job (by 60 s); "
         "times are reversed")(
        lambda tmp: refusal(lambda: load_helios(helios_log(tmp, row=HELIOS_ROW.replace(
            ",2020-06-09 18:41:01,2020-06-10", ",2020-06-09 18:40:01,2020-06-10"))))),
    case("log-duplicate-job", LOGS,
         "{dir}/sacct.txt: row 2 (line 3), column 'JobID': duplicate job '1' (a requeued job listed once per run by "
         "sacct --duplicates?); export without --duplicates")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, *["1|2024-03-01T08:00:00|2024-03-01T08:00:00|"
                                                            "2024-03-01T09:00:00|COMPLETED|gres/gpu=1"] * 2)))),
    case("log-nothing-ran", LOGS,
         "{dir}/sacct.txt: no job of the log can be simulated (1 jobs: not_finished 1, never_started 0, no_gpu 0, "
         "state_not_selected 0)")(
        lambda tmp: refusal(lambda: load_slurm(sacct(tmp, "1|2024-03-01T08:00:00|Unknown|Unknown|PENDING|")))),
    case("log-swf-negative-run-time", LOGS,
         "{dir}/log.swf: row 1 (line 1), field 4 'Run Time': must be >= 0, or -1 for unknown, got -5")(
        lambda tmp: refusal(lambda: load_swf(write(tmp, "log.swf", SWF_LINE.replace(" 10 100 ", " 10 -5 ", 1))))),
    case("log-swf-wrong-field-count", LOGS,
         "{dir}/log.swf: row 1 (line 2) has 17 field(s), expected 18 (the Standard Workload Format)")(
        lambda tmp: refusal(lambda: load_swf(write(tmp, "log.swf", "; UnixStartTime: 0\n"
                                                   + SWF_LINE.rsplit(" ", 1)[0])))),
    case("log-swf-unknown-status", LOGS,
         "{dir}/log.swf: row 1 (line 1), field 11 'Status': not an SWF status (one of [-1, 0, 1, 2, 3, 4, 5]), got 7")(
        lambda tmp: refusal(lambda: load_swf(write(tmp, "log.swf", SWF_LINE.replace(" -1 1 1 1 ", " -1 7 1 1 ")))))
    ,
    case("log-unknown-timezone", LOGS,
         "workload.timezone must be an IANA time zone name such as 'UTC' or 'Europe/Berlin', got 'CEST'")(
        lambda tmp: refusal(lambda: WorkloadConfig(name="slurm", path="sacct.txt", timezone="CEST").validate())),
    case("log-unknown-state-filter", LOGS,
         "workload.states: 'DONE' is not a finished state of this log format; its finished states are ['COMPLETED', "
         "'CANCELLED', 'FAILED', 'TIMEOUT', 'NODE_FAIL']")(
        lambda tmp: refusal(lambda: WorkloadConfig(name="helios", path="x.csv", states=["DONE"]).validate())),
    case("log-repeated-dst-hour", LOGS,
         "warning: {dir}/sacct.txt: 1 time stamp(s) fall in the hour Europe/Berlin repeats when daylight saving time "
         "ends; each is read as its first (summer-time) occurrence; adjustments {'log_times_in_repeated_dst_hour': 1}")(
        lambda tmp: warned(lambda: run_experiment(log_run(sacct(
            tmp, "1|2024-10-27T01:00:00|2024-10-27T02:30:00|2024-10-27T04:00:00|COMPLETED|gres/gpu=1"),
            timezone="Europe/Berlin")).summary)),
    case("recorded-without-start-times", LOGS,
         "scheduler=recorded cannot replay the log: 1 of the 1 simulated jobs have no recorded start (first: 'a'); "
         "only a job log's jobs (workload=slurm, swf, helios, acme, or a table with recorded_wait) have one")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW), scheduler__name="recorded")))),
    case("recorded-with-target-load", LOGS,
         "scheduler=recorded cannot replay the log: workload.target_load rescales the releases the log's start "
         "times are relative to")(
        lambda tmp: refusal(lambda: run_experiment(replace(log_run(sacct(
            tmp, "1|2024-03-01T08:00:00|2024-03-01T08:10:00|2024-03-01T09:00:00|COMPLETED|gres/gpu=1",
            "2|2024-03-01T08:30:00|2024-03-01T08:30:00|2024-03-01T09:00:00|COMPLETED|gres/gpu=1"), target_load=0.5),
            scheduler=SchedulerConfig("recorded"))))),
    case("recorded-on-pools", LOGS,
         "scheduler=recorded cannot replay the log: a log does not say which GPU type a job ran on, and this cluster "
         "is given as pools (1 x 4 v100 + 1 x 4 k80)")(
        lambda tmp: refusal(lambda: run_experiment(typed_run(replace(log_run(sacct(
            tmp, "1|2024-03-01T08:00:00|2024-03-01T08:10:00|2024-03-01T09:00:00|COMPLETED|gres/gpu=1")),
            scheduler=SchedulerConfig("recorded")))))),
    case("walltime-without-limits", LOGS,
         "walltime predictor: none of the 1 jobs has a requested time limit (column 'time_limit'); predictor=walltime "
         "reads the limits of a job log (workload=slurm, swf, ...) or of a job table with a time_limit column")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW), predictor__name="walltime")))),
    # ---- selecting the simulated jobs
    case("num-jobs-beyond-the-table", SELECTION,
         "workload.num_jobs=9 asks for more jobs than the 1 available (after workload.offset=0); lower it, or set "
         "workload.num_jobs=null to simulate all 1")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW), workload__num_jobs=9)))),
    case("num-jobs-beyond-32-bit", SELECTION,
         "workload.num_jobs must be null or an integer in [1, 2**31 - 1] (a job's index fits a 32-bit column), got "
         "2147483648")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW), workload__num_jobs=2**31)))),
    case("synthetic-jobs-beyond-32-bit", SELECTION,
         "workload.num_jobs must be an integer in [1, 2**31 - 1] (a job's index fits a 32-bit column), got 3000000000")(
        lambda tmp: refusal(lambda: synthetic_workload(3_000_000_000))),
    case("inject-jobs-beyond-32-bit", SELECTION,
         "workload.inject_jobs must be an integer in [0, 2**31 - 1] (a job's index fits a 32-bit column), got "
         "2147483648")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW), workload__inject_jobs=2**31)))),
    case("offset-past-the-jobs", SELECTION, "workload.offset=5 is past the 1 jobs in the selected window")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW), workload__offset=5)))),
    case("single-gpu-share-pool-too-small", SELECTION,
         "workload.single_gpu_share=0.5 with 2 jobs needs 1 multi-GPU jobs but the table has 0; lower "
         "workload.num_jobs or set workload.resample_replace=true")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW, "b,1,1,10,1.0"), workload__num_jobs=2,
                                                           workload__single_gpu_share=0.5)))),
    case("inject-gpus-beyond-cluster", SELECTION,
         "workload.inject_gpus=1000 is more than the cluster's 4 GPUs; injected jobs must fit the cluster (lower "
         "workload.inject_gpus)")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW, "b,1,1,10,1.0"),
                                                           workload__inject_jobs=1, workload__inject_gpus=1000)))),
    case("target-load-beyond-exact-times", SELECTION,
         "workload.target_load=1e-300 stretches the releases to 5e+300 s, beyond 1e+12 s where float64 keeps "
         "event times exact; raise workload.target_load")(
        lambda tmp: refusal(lambda: run_experiment(csv_run(table(tmp, GOOD_ROW, "b,1,1,10,1.0"),
                                                           workload__target_load=1e-300)))),
    case("time-compression-beyond-exact-times", SELECTION,
         "workload.time_compression=1e-300 stretches the releases to 9.41e+306 s, beyond 1e+12 s where float64 keeps "
         "event times exact; raise workload.time_compression")(
        lambda tmp: refusal(lambda: load_philly(None, time_compression=1e-300))),
    case("arrival-rate-beyond-exact-times", SELECTION,
         "workload.arrival_rate=1e-300 stretches the releases to 1.05e+302 s, beyond 1e+12 s where float64 keeps "
         "event times exact; raise workload.arrival_rate")(
        lambda tmp: refusal(lambda: synthetic_workload(100, 0, arrival_rate=1e-300))),
    # ---- profiles
    case("profile-bad-edge-line", PROFILE,
         "{dir}/bad.graph.txt, line 2: expected an edge line 'nodeX -- nodeY', got 'node1 -> node2'")(
        lambda tmp: refusal(lambda: register_model("bad", write(tmp, "bad.graph.txt", GRAPH_NODE.format(
            params="10.0") + "\n\tnode1 -> node2\n")))),
    case("profile-non-numeric-attribute", PROFILE,
         "{dir}/bad.graph.txt, line 1: parameter_size='many' is not a number or a [a; b] list")(
        lambda tmp: refusal(lambda: register_model("bad", write(tmp, "bad.graph.txt",
                                                                GRAPH_NODE.format(params="many") + "\n")))),
    case("profile-file-missing", PROFILE,
         "cannot read profile file {dir}/absent.graph.txt: [Errno 2] No such file or directory: "
         "'{dir}/absent.graph.txt'")(
        lambda tmp: refusal(lambda: register_model("absent", tmp / "absent.graph.txt"))),
    # ---- configuration
    case("unknown-group-option", CONFIG,
         "Could not find 'scheduler/srpt'; available: asrpt, asrpt_oracle, fifo, fifo_replan, las2d, psjf, "
         "psjf_oracle, random_order, recorded, spjf, spwf, srtf, srtf_oracle, wcs_duration, wcs_subtime, wcs_workload")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler=srpt"]))),
    case("unknown-key", CONFIG,
         "cluster.gpus: unknown key; cluster has keys ['b_inter', 'b_intra', 'gpus_per_server', 'pools', 'servers', "
         "'type']")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["cluster.gpus=4"]))),
    case("unknown-key-added", CONFIG,
         "scheduler.comm_heavyy: scheduler 'asrpt' has no parameter 'comm_heavyy'; its parameters: ['tau', "
         "'comm_heavy', 'consolidation_test', 'delay_origin', 'srpt_tiebreak', 'backfill', 'dispatch', "
         "'eligibility', 'overrun', 'min_estimate_s', 'virtual', 'virtual_gpus']")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["+scheduler.comm_heavyy=2"]))),
    case("key-the-component-lacks", CONFIG,
         "predictor.epsilon: predictor 'oracle' has no parameter 'epsilon'; its parameters: none")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["predictor=oracle", "predictor.epsilon=0.2"]))),
    case("key-of-another-option", CONFIG,
         "scheduler.tau: scheduler 'fifo' has no parameter 'tau'; its parameters: ['dispatch', 'duration_source', 'overrun', 'min_estimate_s']")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler=fifo", "scheduler.tau=0.5"]))),
    case("task-key-under-another-task", CONFIG,
         "task.schedulers: task 'simulate' has no parameter 'schedulers'; its parameters: none")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["task=simulate", "task.schedulers=[fifo]"]))),
    case("scheduler-group-runs-nowhere", CONFIG,
         "scheduler.duration_source configures scheduler 'spjf', which this task does not run (task.schedulers: "
         "['asrpt', 'fifo']); it acts on the listed schedulers that share its parameters")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler=spjf", "scheduler.duration_source=oracle",
                                                            "task.schedulers=[asrpt,fifo]"]))),
    case("scheduler-not-compared", CONFIG,
         "scheduler=srtf is not among task.schedulers [asrpt,asrpt_oracle,spjf,spwf,wcs_duration,wcs_workload,"
         "wcs_subtime,fifo]: task compare runs those, relative to the scheduler group's; add it ('task.schedulers="
         "[asrpt,asrpt_oracle,spjf,spwf,wcs_duration,wcs_workload,wcs_subtime,fifo,srtf]') or run it alone "
         "(task=simulate scheduler=srtf)")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler=srtf"]))),
    case("preemption-price-without-preemption", CONFIG,
         "preemption.restart_s prices the suspensions of preemptive schedulers (fifo_replan, las2d, psjf, psjf_oracle, "
         "srtf, "
         "srtf_oracle); this run's schedulers never preempt: ['asrpt', 'fifo']")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["preemption.restart_s=0", "task.schedulers=[asrpt,fifo]"]))),
    case("mg1-size-scv-below-one", CONFIG, "workload.size_scv must be a number >= 1, got 0.5")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["workload=mg1", "workload.size_scv=0.5"]))),
    case("queueing-scheduler-without-closed-form", CONFIG,
         "task.schedulers must be a non-empty list of distinct names among ['fifo', 'spjf', 'psjf_oracle', "
         "'srtf_oracle'], got ['asrpt']")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["task=queueing", "task.schedulers=[asrpt]"]))),
    case("queueing-not-one-gpu", CONFIG,
         "task=queueing simulates one GPU: set cluster.servers=1 cluster.gpus_per_server=1, got 8 x 8")(
        lambda tmp: refusal(lambda: run_experiment(composition.compose_run_config(
            [*QUEUEING, "cluster.servers=8", "cluster.gpus_per_server=8"])))),
    case("queueing-priced-preemption", CONFIG,
         "task=queueing needs preemption.restart_s=0 and preemption.min_run_s=0 (the SRPT and PSJF closed forms "
         "preempt for free), got 30.0 and 0.0")(
        lambda tmp: refusal(lambda: run_experiment(composition.compose_run_config([*QUEUEING, "preemption.restart_s=30"])))),
    case("cluster-key-a-theory-task-ignores", CONFIG,
         "cluster.servers changes nothing in task theory, which builds its own cluster (task.theory_gpus, "
         "task.theory_gpus_per_server); the cluster keys it reads: ['b_intra', 'b_inter']")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["task=theory", "cluster=large"]))),
    case("cluster-key-an-instance-ignores", CONFIG,
         "cluster.gpus_per_server changes nothing with workload=lemma2_reviewer, a hand-made instance that brings "
         "its own cluster (1 x 100 GPUs); drop the cluster keys")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["experiment=lemma2_reviewer",
                                                                    "cluster.gpus_per_server=4"]))),
    case("plugin-takes-a-built-in-name", CONFIG,
         "plugins: cannot import 'taken_name': ConfigError: scheduler 'fifo' is already registered by "
         "asrpt_bench.schedulers.fifo; register it under another name, or pass replace=True to replace it")(
        lambda tmp: refusal(lambda: plugin(tmp, "taken_name", "from asrpt_bench.schedulers import FIFO, "
                                           "register_scheduler\nregister_scheduler('fifo')(FIFO)\n"))),
    case("cluster-unknown-gpu-type", CONFIG,
         "cluster.pools[1].type must be one of ['k80', 'p100', 'v100'], got 'a100'")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["cluster.pools=[{type: v100},{type: a100}]"]))),
    case("cluster-pool-without-servers", CONFIG, "cluster.pools[0].servers must be an integer in [1, 100000], got 0")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["cluster.pools=[{type: v100, servers: 0}]"]))),
    case("cluster-duplicate-pool-names", CONFIG,
         "cluster.pools[1]: pool name 'v100' is taken by cluster.pools[0]; give pools of one type distinct names "
         "(name: ...)")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["cluster.pools=[{type: v100},{type: v100, servers: 2}]"]))),
    case("cluster-flat-key-beside-pools", CONFIG,
         "cluster.servers is the one-pool shorthand; with cluster.pools give every pool its own servers")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["cluster=gavel_36_36_36", "cluster.servers=4"]))),
    case("pool-choice-on-one-pool", CONFIG,
         "placement.pool=first_fit chooses among a cluster's pools; this cluster has one (8 x 8 v100): give several "
         "with cluster.pools")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["placement.pool=first_fit"]))),
    case("cluster-beyond-memory", CONFIG, "cluster.servers must be an integer in [1, 100000], got 1000000000")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["cluster.servers=1000000000"]))),
    case("wrong-type", CONFIG, "cluster.servers: Value 'eight' of type 'str' could not be converted to Integer")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["cluster.servers=eight"]))),
    case("out-of-range", CONFIG, "scheduler.comm_heavy must be a number >= 1, got 0.5")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler.comm_heavy=0.5"]))),
    case("out-of-range-in-python", CONFIG, "scheduler.comm_heavy must be a number >= 1, got 0.5")(
        lambda tmp: refusal(lambda: make_scheduler("asrpt", comm_heavy=0.5))),
    case("misspelt-choice", CONFIG,
         "theory.rho_bar_definition must be one of ['alpha_min_spread', 'iterations_spread'], got 'spread'")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["theory.rho_bar_definition=spread"]))),
    case("missing-required-key", CONFIG,
         "workload.path is required for this workload: set it on the command line (workload.path=...)")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["workload=csv"]))),
    case("variant-overrides-group-dispatch", CONFIG,
         "scheduler.dispatch='conservative' conflicts with task.schedulers ['asrpt+easy']: each names its own "
         "dispatch rule, which is the one that runs; drop scheduler.dispatch, or list a scheduler without '+<rule>'")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler.dispatch=conservative",
                                                            "task.schedulers=[asrpt+easy]"]))),
    case("group-key-inert-in-every-entry", CONFIG,
         "scheduler.overrun changes nothing in any scheduler it configures, given their dispatch rules: fifo "
         "(strict), fifo+greedy (greedy)")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler=fifo", "scheduler.overrun=double",
                                                            "task.schedulers=[fifo,fifo+greedy]"]))),
    case("null-for-a-key", CONFIG,
         "scheduler.dispatch must be one of ['strict', 'easy', 'conservative', 'greedy'], got None")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler=fifo", "scheduler.dispatch=null",
                                                            "task=simulate"]))),
    case("number-for-a-flag", CONFIG, "cache.enabled must be true or false, got 3")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["cache.enabled=3"]))),
    case("no-workers", CONFIG, "workers must be null or an integer >= 1, got 0")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["workers=0"]))),
    case("time-key-beyond-exact-times", CONFIG,
         "preemption.restart_s must be a number of seconds in [0, 1e+12], got 1e+17")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["preemption.restart_s=1e17", "task.schedulers=[srtf]"]))),
    case("estimate-floor-beyond-exact-times", CONFIG,
         "scheduler.min_estimate_s must be a number of seconds in [0, 1e+12], got 1e+300")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["scheduler=fifo", "scheduler.dispatch=easy",
                                                            "scheduler.min_estimate_s=1e300", "task=simulate"]))),
    case("unknown-solver", CONFIG,
         "solver.name: unknown solver 'glpk'; known: ['cbc', 'cpsat', 'gurobi', 'highs']")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["solver.name=glpk"]))),
    case("sweep-syntax-in-a-single-run", CONFIG,
         "Ambiguous value for argument 'seed=0,1'; 1. To use it as a list, use key=[value1,value2]; 2. To use it "
         "as string, quote the value: key='value1,value2'; 3. To sweep over it, add --multirun to your command line")(
        lambda tmp: refusal(lambda: composition.compose_run_config(["seed=0,1"]))),
    case("cli-bad-option-no-run-directory", CONFIG,
         "exit 2: asrpt-bench: error: Could not find 'placement/best'; available: first_fit, heavy_edge, ilp, "
         "random; no run directory")(
        lambda tmp: app(tmp, "placement=best") + ("; no run directory" if no_run_dirs(tmp) else "")),
    case("cli-bad-sweep-value-no-run-directory", CONFIG,
         "exit 2: asrpt-bench: error: scheduler.tau must be a number >= 0, got -1.0; no run directory")(
        lambda tmp: app(tmp, "-m", "debug=tiny", "scheduler.tau=0,-1") + ("; no run directory" if no_run_dirs(tmp)
                                                                           else "")),
    case("cli-bad-file-no-run-directory", CONFIG,
         "exit 2: asrpt-bench: error: absent.csv: file not found; no run directory")(
        lambda tmp: app(tmp, "workload=csv", "workload.path=absent.csv") + ("; no run directory" if no_run_dirs(tmp)
                                                                              else "")),
    case("cli-path-with-home", CONFIG,
         "exit 2: asrpt-bench: error: {dir}/absent.csv: file not found")(
        lambda tmp: app(tmp, "workload=csv", "workload.path=~/absent.csv", HOME=str(tmp))),
    case("cli-misspelt-option", CONFIG,
         "exit 2: asrpt-bench: error: unknown option '-multirun'; the options are -m/--multirun, --cfg, --resolve, "
         "--help and Hydra's other flags (see --help), and overrides are key=value")(
        lambda tmp: app(tmp, "scheduler.tau=0,1", "-multirun")),
    case("cli-option-without-its-value", CONFIG,
         "exit 2: asrpt-bench: error: option --cfg needs a value, one of ['job', 'hydra', 'all']; the options are "
         "-m/--multirun, --cfg, --resolve, --help and Hydra's other flags (see --help), and overrides are key=value")(
        lambda tmp: app(tmp, "seed=1", "--cfg")),
    case("cli-option-value-outside-its-choices", CONFIG,
         "exit 2: asrpt-bench: error: option --cfg takes one of ['job', 'hydra', 'all'], got 'config'; the options "
         "are -m/--multirun, --cfg, --resolve, --help and Hydra's other flags (see --help), and overrides are "
         "key=value")(
        lambda tmp: app(tmp, "--cfg", "config", "seed=1")),
    case("cli-shell-completion-without-its-command", CONFIG,
         "exit 2: asrpt-bench: error: option -sc needs one of install=SHELL, uninstall=SHELL, query=SHELL (e.g. -sc "
         "install=bash); the options are -m/--multirun, --cfg, --resolve, --help and Hydra's other flags (see "
         "--help), and overrides are key=value")(
        lambda tmp: app(tmp, "-sc")),
    case("cli-launcher-without-workers", CONFIG,
         "exit 2: asrpt-bench: error: hydra.launcher.n_jobs must be a number of worker processes >= 1 (or -1 for "
         "one per CPU), got '0'")(
        lambda tmp: app(tmp, "-m", "debug=tiny", "hydra/launcher=joblib", "hydra.launcher.n_jobs=0")),
    case("cli-slurm-launcher-without-slurm", CONFIG,
         "exit 2: asrpt-bench: error: hydra/launcher=submitit_slurm submits to Slurm, and this machine has no srun on "
         "PATH: run the sweep on a Slurm login node, or try it here with hydra/launcher=submitit_local")(
        lambda tmp: app(tmp, "-m", "debug=tiny", "hydra/launcher=submitit_slurm", PATH=os.defpath)),
    case("cli-experiment-without-multirun", CONFIG,
         "exit 0: asrpt-bench: warning: experiment=compare_default is a sweep; without -m this runs one point of it "
         "(add -m to run the whole sweep)")(
        lambda tmp: first_line_of_app(tmp, "experiment=compare_default", "debug=tiny", "workload=synthetic",
                                      "task=simulate", f"hydra.run.dir={tmp}/run")),
    case("plugin-exits-on-import", CONFIG,
         "plugins: importing 'exiting' called sys.exit(3); a plugin module registers components and must not exit")(
        lambda tmp: refusal(lambda: plugin(tmp, "exiting", "import sys\nsys.exit(3)\n"))),
    case("plugin-exits-in-the-run", CONFIG,
         "exit 1: asrpt-bench: error: the run failed (SystemExit: sys.exit(0) was called during the run); traceback "
         "in {dir}/run/FAILED")(
        lambda tmp: plugin_exits_in_the_run(tmp)),
    case("plugin-warns-on-import", CONFIG,
         "exit 0: asrpt-bench: warning: careful: this plugin is old")(
        lambda tmp: (write(tmp, "warner.py", "import warnings\nwarnings.warn('careful: this plugin is old')\n"),
                     app(tmp, "debug=tiny", "plugins=[warner]", "task=simulate", "progress=false"))[1]),
    case("placement-study-bad-argument", CONFIG,
         "exit 2: asrpt-bench-placement-study: error: cluster.servers must be an integer in [1, 100000], got 0", "capsys")(
        lambda tmp, capsys: one_line(capsys, placement_study_main(["--out", str(tmp / "p.csv"), "--servers", "0"]))),
    # ---- the Python API
    case("api-fractional-replicas", API, "Stage.replicas must be a positive integer, got 1.5")(
        lambda tmp: refusal(lambda: Stage(compute_s=1.0, param_bytes=0.0, activation_bytes=0.0, replicas=1.5))),
    case("api-server-outside-the-cluster", API,
         "placement.servers: server index 9 is outside the cluster's 2 servers (0..1)")(
        lambda tmp: refusal(lambda: DEFAULT_TIMING.alpha(build_plan("vgg19", "p1xd2"), Placement((9, 0)),
                                                         Cluster(2, 2)))),
    case("api-negative-server", API, "placement.servers: server index -1 is outside the cluster's 2 servers (0..1)")(
        lambda tmp: refusal(lambda: DEFAULT_TIMING.alpha(build_plan("vgg19", "p1xd2"), Placement((-1, 0)),
                                                         Cluster(2, 2)))),
    case("api-none-argument", API, "job 'a': release must be a finite number of seconds in [0, 1e+12], got None")(
        lambda tmp: refusal(lambda: Job("a", None, TrainingPlan.fixed(1, 1.0), 3))),
    case("api-string-argument", API, "gpus must be a positive integer, got '2'")(
        lambda tmp: refusal(lambda: TrainingPlan.fixed("2", 1.0))),
    case("api-release-beyond-exact-times", API,
         "job 'a': release must be a finite number of seconds in [0, 1e+12], got 1e+300")(
        lambda tmp: refusal(lambda: Job("a", 1e300, TrainingPlan.fixed(1, 1.0), 3))),
    case("api-alpha-below-any-iteration", API,
         "alpha must be a per-iteration time in [1e-06, 1e+12] s (no training iteration is shorter than a "
         "microsecond), got 1e-320")(
        lambda tmp: refusal(lambda: TrainingPlan.fixed(1, 1e-320))),
    case("api-warning-in-one-line", API,
         "1 line: asrpt-bench: warning: 2 job(s) need all 1 GPUs (first: 'a'); the A-SRPT bound assumes g_max < G")(
        lambda tmp: api_warning(tmp)),
    case("api-scheduler-missing", API,
         "scheduler must be a scheduler object with a dispatch() method (e.g. from make_scheduler), got NoneType None")(
        lambda tmp: refusal(lambda: simulate([Job("a", 0.0, TrainingPlan.fixed(1, 1.0), 3)], Cluster(1, 2), None,
                                             FirstFitPlacer()))),
    case("api-path-missing", API, "path must be a CSV file path (str or Path), got NoneType None")(
        lambda tmp: refusal(lambda: load_csv(None))),
    case("api-prediction-not-a-number", API, "job 'a': predicted iterations must be finite and >= 0, got 'many'")(
        lambda tmp: refusal(lambda: two_job_simulation({"a": "many", "b": 2}))),
    case("api-prediction-beyond-exact-times", API,
         "job 'a': predicted iterations x alpha~min must be <= 1e+12 s (larger times lose precision in float64 "
         "arithmetic), got 2e+12 x 1 s")(
        lambda tmp: refusal(lambda: two_job_simulation({"a": 2e12, "b": 2}))),
    case("api-job-fractional-iterations", API, "job 'a': iterations must be an integer in [0, 1e+12], got 2.5")(
        lambda tmp: refusal(lambda: Job("a", 0.0, TrainingPlan.fixed(1, 1.0), 2.5))),
    case("api-job-list-as-id", API, "job_id must be a job id (a string or an integer), got list ['a']")(
        lambda tmp: refusal(lambda: Job(["a"], 0.0, TrainingPlan.fixed(1, 1.0), 3))),
    case("api-job-number-as-user", API, "job 'a': user must be None or a string, got 7")(
        lambda tmp: refusal(lambda: Job("a", 0.0, TrainingPlan.fixed(1, 1.0), 3, user=7))),
    case("api-plan-without-a-name", API, "TrainingPlan.model must be a non-empty string, got None")(
        lambda tmp: refusal(lambda: TrainingPlan(None, "c", (Stage(1.0, 0.0, 0.0, 1),)))),
    case("api-stage-time-beyond-exact-times", API,
         "Stage.compute_s must be a number of seconds in [0, 1e+12], got 1e+300")(
        lambda tmp: refusal(lambda: Stage(compute_s=1e300, param_bytes=0.0, activation_bytes=0.0, replicas=1))),
    case("api-omega-of-nothing", API, "plan must be a TrainingPlan, got NoneType None")(
        lambda tmp: refusal(lambda: build_omega(None))),
    case("api-preemption-price-as-a-mapping", API,
         "preemption must be a PreemptionPrice (the preemption group), got dict {'restart_s': 0}")(
        lambda tmp: refusal(lambda: two_job_simulation(None, scheduler="srtf", preemption={"restart_s": 0}))),
    case("api-solver-by-name", API, "solver must be a SolverSettings (the solver group), got str 'cpsat'")(
        lambda tmp: refusal(lambda: ILPPlacer(solver="cpsat"))),
    case("api-variant-with-another-dispatch", API,
         "scheduler.dispatch='strict' conflicts with scheduler 'fifo+easy', whose name sets its dispatch rule 'easy'")(
        lambda tmp: refusal(lambda: make_scheduler("fifo+easy", dispatch="strict"))),
    case("api-table-misspelt-column", API,
         "the in-memory table: unknown column 'alpha_mx' (did you mean 'alpha_max'?); the job table's columns are "
         "['job_id', 'release', 'gpus', 'iterations', 'model', 'config', 'alpha', 'alpha_max', 'alpha_spread', "
         "'user', 'group', 'duration', 'partition', 'state', 'recorded_wait', 'time_limit']")(
        lambda tmp: refusal(lambda: compare(frame(alpha_mx=[2.0, 2.0]), ["fifo"]))),
    case("api-table-repeated-column", API, "the in-memory table: column 'gpus' appears more than once")(
        lambda tmp: refusal(lambda: compare(pd.concat([frame(), frame()[["gpus"]]], axis=1), ["fifo"]))),
    case("api-table-true-for-a-number", API,
         "the in-memory table: row 1 (line 2), column 'gpus': not a number, got True")(
        lambda tmp: refusal(lambda: compare(frame(gpus=[True, True]), ["fifo"]))),
    case("api-table-list-as-id", API,
         "the in-memory table: row 1 (line 2), column 'job_id': must be a text value, got ['a']")(
        lambda tmp: refusal(lambda: compare(frame(job_id=[["a"], "b"]), ["fifo"]))),
    case("api-table-fractional-iterations", API,
         "the in-memory table: row 1 (line 2), column 'iterations': not an integer: 2.5")(
        lambda tmp: refusal(lambda: compare(frame(iterations=[2.5, 3]), ["fifo"]))),
    case("api-table-no-rows", API, "the in-memory table: no job rows")(
        lambda tmp: refusal(lambda: compare(frame().iloc[:0], ["fifo"]))),
    case("api-workers-as-a-flag", API, "workers must be null or an integer >= 1, got True")(
        lambda tmp: refusal(lambda: compare(frame(), ["fifo", "spjf"], workers=True))),
    case("plugin-table-unknown-column", API,
         "workload 'door_plugin': unknown column 'vc'; the job table's columns are ['job_id', 'release', 'gpus', "
         "'iterations', 'model', 'config', 'alpha', 'alpha_max', 'alpha_spread', 'user', 'group', 'duration', "
         "'partition', 'state', 'recorded_wait', 'time_limit']")(
        lambda tmp: plugin_table(tmp, vc=["x", "y"])),
    case("api-predictions-as-a-list", API,
         "predictions must be a mapping job_id -> predicted iterations (e.g. a dict) or None, got list [3, 2]")(
        lambda tmp: refusal(lambda: two_job_simulation([3, 2]))),
    # ---- solvers
    case("solver-no-backend", SOLVER,
         "solver 'gurobi' is unusable (gurobipy is not importable) and the default 'cpsat' is too (ortools is "
         "not importable)", "monkeypatch")(
        lambda tmp, monkeypatch: (restricted_backends(monkeypatch, ("gurobi", "gurobipy is not importable", False),
                                                      ("cpsat", "ortools is not importable", False)),
                                  refusal(lambda: solvers.resolve_solver("gurobi")))[1]),
    case("solver-size-limited-licence", SOLVER,
         "warning: solver 'gurobi' unusable: size-limited Gurobi licence (models up to 2000 variables/rows); "
         "using 'cpsat' instead; adjustments {'solver_fallback': 1}", "monkeypatch")(
        lambda tmp, monkeypatch: (restricted_backends(monkeypatch, (
            "gurobi", "size-limited Gurobi licence (models up to 2000 variables/rows)", True)),
            warned(lambda: run_experiment(RunConfig(
                solver=SolverSettings(name="gurobi", time_limit_s=10.0),
                task=TaskConfig(name="placement", study_models=["vgg19"], study_gpu_counts=[2],
                                study_patterns=["empty"]), progress=False)).summary))[1]),
    case("solver-time-limit-with-incumbent", SOLVER, "status feasible, placement (1, 1), gap 1.0", "monkeypatch")(
        lambda tmp, monkeypatch: (stopping_cpsat(monkeypatch, incumbent=True), ilp_place((1, 2)))[1]),
    case("solver-time-limit-without-incumbent", SOLVER,
         "ILP placement of vgg19/p1xd2 found no solution with cpsat in 5.0 s (status time_limit_no_solution)",
         "monkeypatch")(
        lambda tmp, monkeypatch: (stopping_cpsat(monkeypatch, incumbent=False), _solver_error(
            lambda: ILPPlacer(solver=SolverSettings(time_limit_s=5.0)).place(build_plan("vgg19", "p1xd2"), (1, 2), Cluster(2, 2))))[1]),
    case("solver-infeasible-model", SOLVER, "status infeasible, solution False")(
        lambda tmp: infeasible_model()),
    case("placement-does-not-fit", SOLVER, "status infeasible, placement None, gap None")(
        lambda tmp: ilp_place((1, 0))),
    # ---- I/O and outputs
    case("unwritable-output-directory", IO,
         "exit 2: asrpt-bench: error: cannot write the output directory: [Errno 20] Not a directory: "
         "'{dir}/file.txt/run'")(
        lambda tmp: (write(tmp, "file.txt", "x"), app(tmp, "debug=tiny", f"hydra.run.dir={tmp}/file.txt/run"))[1]),
    case("refused-run-keeps-the-users-empty-folders", IO,
         "exit 2: asrpt-bench: error: absent.csv: file not found; left ['outputs', 'runs', 'runs/mine']")(
        lambda tmp: refused_in_the_users_folders(tmp)),
    case("placement-study-out-is-a-directory", IO,
         "exit 2: asrpt-bench-placement-study: error: --out {dir} is a directory; give the name of the file to "
         "write", "capsys")(
        lambda tmp, capsys: one_line(capsys, placement_study_main(["--out", str(tmp), "--models", "vgg19"]))),
    case("report-out-is-a-directory", IO,
         "exit 2: asrpt-bench-report: error: cannot write: [Errno 21] Is a directory: '{dir}'", "capsys")(
        lambda tmp, capsys: one_line(capsys, report_main(["--results", str(ROOT / "results"), "--out", str(tmp),
                                                          "--docs", "none"]))),
    case("collect-out-below-a-file", IO,
         "exit 2: asrpt-bench-collect: error: --out {dir}/file.txt/x.csv: {dir}/file.txt is a file, not a "
         "directory", "capsys")(
        lambda tmp, capsys: collect_damaged(tmp, capsys, lambda run: write(tmp, "file.txt", "x"), "--out",
                                            str(tmp / "file.txt" / "x.csv"))),
    case("failing-writer", IO,
         "[Errno 28] No space left on device; status incomplete; files ['INCOMPLETE', 'config.json', "
         "'overrides.json']", "monkeypatch")(
        lambda tmp, monkeypatch: failing_writer(tmp, monkeypatch)),
    case("output-name-taken-in-a-run", IO,
         "exit 2: asrpt-bench: error: {dir}/run: already holds ['accuracy_abs.csv'], which no run wrote; a run "
         "never overwrites them: choose an empty or new output directory (hydra.run.dir=...); kept")(
        lambda tmp: (tmp / "run" / "accuracy_abs.csv").mkdir(parents=True) or app(
            tmp, "debug=tiny", "workload=synthetic", "task=predictor", f"hydra.run.dir={tmp}/run") + (
            "; kept" if (tmp / "run" / "accuracy_abs.csv").is_dir() and not any(
                rundir.is_staging(p) for p in tmp.rglob("*")) else "")),
    case("refused-run-in-an-earlier-runs-directory", IO,
         "exit 2: asrpt-bench: error: bad.csv: row 1 (line 2), column 'release': not a number: 'soon'; earlier run "
         "kept")(
        lambda tmp: refused_over_earlier_run(tmp)),
    case("run-directory-holds-the-users-files", IO,
         "exit 2: asrpt-bench: error: {dir}: already holds ['config.json', 'summary.json'], which no run wrote; a "
         "run never overwrites them: choose an empty or new output directory (hydra.run.dir=...); files kept")(
        lambda tmp: users_files_in_run_dir(tmp)),
    case("collect-failed-runs", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'failed': 1} (first: {dir}/sweep/seed=0: "
         "ValueError: boom); nothing written, pass --allow-partial to write the table with them flagged",
         "capsys")(
        lambda tmp, capsys: collect_failed(tmp, capsys)),
    case("collect-truncated-jobs-table", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "jobs.parquet: its SHA-256 differs from the one COMPLETE recorded at the end of the run (cut short or "
         "changed since)); nothing written, pass --allow-partial to write the table with them "
         "flagged", "capsys")(
        lambda tmp, capsys: collect_damaged(tmp, capsys, lambda run: truncate(run / io.JOBS))),
    case("collect-truncated-summary", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "summary.json: its SHA-256 differs from the one COMPLETE recorded at the end of the run (cut short or "
         "changed since)); nothing written, pass --allow-partial to write the table with them "
         "flagged", "capsys")(
        lambda tmp, capsys: collect_damaged(tmp, capsys, lambda run: truncate(run / io.SUMMARY))),
    case("collect-cut-comparison", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "comparison.csv: its SHA-256 differs from the one COMPLETE recorded at the end of the run (cut short or "
         "changed since)); nothing written, pass --allow-partial to write the table with them "
         "flagged", "capsys")(
        lambda tmp, capsys: collect_compare(tmp, capsys, lambda run: truncate(run / io.COMPARISON))),
    case("collect-output-missing", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "segments.parquet: listed in COMPLETE but missing); nothing written, pass --allow-partial to write the "
         "table with them flagged", "capsys")(
        lambda tmp, capsys: collect_compare(tmp, capsys, lambda run: (run / io.SEGMENTS).unlink())),
    case("collect-output-removed-with-its-line", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "comparison.csv: missing, while summary.json holds per_scheduler results); nothing written, pass "
         "--allow-partial to write the table with them flagged", "capsys")(
        lambda tmp, capsys: collect_compare(tmp, capsys, lambda run: (run / io.COMPARISON).unlink() or (
            run / io.COMPLETE).write_text("".join(line for line in (run / io.COMPLETE).read_text().splitlines(
                keepends=True) if not line.endswith(f"  {io.COMPARISON}\n"))))),
    case("collect-rows-do-not-match-the-summary", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "jobs.parquet: 1 rows, the summary says num_jobs 2); nothing written, pass --allow-partial to write the "
         "table with them flagged", "capsys")(
        lambda tmp, capsys: collect_damaged(tmp, capsys, before_the_manifest(lambda run: io.atomic_write_frame(
            run / io.JOBS, pd.DataFrame({"job_id": ["a"], "end": [1.0]}))))),
    case("collect-unreadable-parquet-before-the-manifest", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "segments.parquet: not a readable Parquet file (ArrowInvalid; truncated?)); nothing written, pass "
         "--allow-partial to write the table with them flagged", "capsys")(
        lambda tmp, capsys: collect_compare(tmp, capsys, before_the_manifest(
            lambda run: truncate(run / io.SEGMENTS)))),
    case("collect-comparison-lacks-a-scheduler", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "comparison.csv: no row of scheduler 'fifo', which the run's config or summary lists); nothing written, "
         "pass --allow-partial to write the table with them flagged", "capsys")(
        lambda tmp, capsys: collect_compare(tmp, capsys, before_the_manifest(
            lambda run: edit_comparison(run, lambda table: table.iloc[:1])))),
    case("collect-comparison-disagrees-with-the-summary", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "comparison.csv: scheduler 'fifo', column 'total_jct' holds nan but summary.json says 4.0); nothing "
         "written, pass --allow-partial to write the table with them flagged", "capsys")(
        lambda tmp, capsys: collect_compare(tmp, capsys, before_the_manifest(
            lambda run: edit_comparison(run, lambda table: table.assign(total_jct=[3.0, None]))))),
    case("collect-truncated-overrides", IO,
         "exit 1: asrpt-bench-collect: error: runs not complete: {'corrupt': 1} (first: {dir}/sweep/seed=0: "
         "overrides.json: cannot be read (Expecting value: line 1 column 2 (char 1))); nothing written, pass "
         "--allow-partial to write the table with them flagged", "capsys")(
        lambda tmp, capsys: collect_damaged(tmp, capsys, before_the_manifest(
            lambda run: truncate(run / io.OVERRIDES)))),
    case("collect-staging-of-a-killed-run", IO,
         "exit 0: asrpt-bench-collect: note: 1 staging directory of killed runs superseded by a later complete "
         "run, not counted (first: {dir}/runs/.r1.staging-*); rows 1", "capsys")(
        lambda tmp, capsys: killed_then_rerun(tmp, capsys)),
    case("collect-out-is-a-directory", IO,
         "exit 2: asrpt-bench-collect: error: --out {dir} is a directory; give the name of the file to write",
         "capsys")(
        lambda tmp, capsys: collect_damaged(tmp, capsys, lambda run: None, "--out", str(tmp))),
    case("collect-out-of-unknown-format", IO,
         "exit 2: asrpt-bench-collect: error: --out {dir}/x.json: give a file ending in .csv, .csv.gz, .parquet "
         "(the name says the format)", "capsys")(
        lambda tmp, capsys: collect_damaged(tmp, capsys, lambda run: None, "--out", str(tmp / "x.json"))),
    case("collect-out-beside-its-gzipped-twin", IO,
         "exit 2: asrpt-bench-collect: error: --out {dir}/x.csv: {dir}/x.csv.gz exists beside it, and a reader "
         "could not tell which is current; remove x.csv.gz or write to it", "capsys")(
        lambda tmp, capsys: collect_damaged(tmp, capsys, lambda run: write(tmp, "x.csv.gz", b""), "--out",
                                            str(tmp / "x.csv"))),
    case("figure-from-the-wrong-table", IO,
         "exit 2: asrpt-bench-figures: error: {dir}/results/sensitivity.csv: expected runs of experiment "
         "'sensitivity', found ['compare_default'] (collect a sweep of experiment=sensitivity into it)",
         "capsys")(
        lambda tmp, capsys: wrong_figure_table(tmp, capsys)),
    case("terminated-sweep", IO,
         "exit 143: asrpt-bench: terminated; completed runs are kept (a rerun of a sweep skips them); "
         "processes left []")(
        lambda tmp: terminated(tmp)),
    case("figures-unwritable-out", IO,
         "exit 2: asrpt-bench-figures: error: cannot write to --out {dir}/file.txt/figures: [Errno 20] Not a "
         "directory: '{dir}/file.txt/figures'", "capsys")(
        lambda tmp, capsys: (write(tmp, "file.txt", "x"), one_line(capsys, figures_main([
            "--results", str(ROOT / "results"), "--out", str(tmp / "file.txt" / "figures")])))[1]),
    case("cache-planted-entry", IO,
         "warning: cache entry {dir}/cache/table/k.pkl is not trusted (not signed); recomputing it without loading "
         "it; value 2 (miss); file created False")(
        lambda tmp: planted_cache_entry(tmp)),
    case("cache-directory-writable-by-all", IO,
         "cache.dir: {dir} is writable by every user (mode 0777); use a private directory, or set "
         "ASRPT_BENCH_CACHE_ALLOW_WRITABLE=1 to accept it (entries stay signed with your key)")(
        lambda tmp: (tmp.chmod(0o777), refusal(lambda: cache.CacheSettings(dir=str(tmp)).open()))[1]),
    case("cache-clear-a-foreign-directory", IO,
         "exit 2: asrpt-bench-cache: error: {dir}: not an asrpt-bench cache (no ASRPT_BENCH_CACHE file); nothing "
         "removed; kept", "capsys")(
        lambda tmp, capsys: cache_clear_foreign(tmp, capsys)),
    case("report-edited-total-jct", IO,
         "exit 2: asrpt-bench-report: error: {dir}/results/compare_default.csv: row 2 (line 3), column 'total_jct': "
         "1.92805e+08 is not mean_jct x num_jobs (32134.1 x 2000 = 6.42683e+07); the table was edited after "
         "collection", "capsys")(
        lambda tmp, capsys: report_check(tmp, capsys, tripled)),
    case("report-non-numeric-cell", IO,
         "exit 2: asrpt-bench-report: error: {dir}/results/compare_default.csv: row 4 (line 5), column 'total_jct': "
         "not a number: 'n/a'", "capsys")(
        lambda tmp, capsys: report_check(tmp, capsys, n_a)),
    case("figure-from-half-a-table", IO,
         "exit 2: asrpt-bench-figures: error: {dir}/results/fig6_num_jobs.csv: stale against "
         "conf/experiment/fig6_num_jobs.yaml: workload.num_jobs has ['1000', '2000', '500'] but the experiment sweeps "
         "['1000', '2000', '4000', '500', '8000']", "capsys")(
        lambda tmp, capsys: figures_of(tmp, capsys, edited_result(tmp, "fig6_num_jobs", lambda t: t[
            t["workload.num_jobs"] <= t["workload.num_jobs"].median()]))),
    case("figure-incomplete-seed-set", IO,
         "exit 2: asrpt-bench-figures: error: {dir}/results/fig6_num_jobs.csv: incomplete seed set: "
         "workload.num_jobs=1000, scheduler=fifo, placer=heavy_edge has seeds [1, 2, 3, 4] of [0, 1, 2, 3, 4]; "
         "collect the whole sweep", "capsys")(
        lambda tmp, capsys: figures_of(tmp, capsys, edited_result(tmp, "fig6_num_jobs", lambda t: t.drop(
            t.index[7])))),
    case("figure-table-not-utf8", IO,
         "exit 2: asrpt-bench-figures: error: {dir}/results/fig6_num_jobs.csv: not UTF-8 text (byte 0: invalid "
         "start byte); a collected table is UTF-8 CSV", "capsys")(
        lambda tmp, capsys: figures_of(tmp, capsys, write(tmp, "results/fig6_num_jobs.csv", b"\xff\xfe\x00r").parent)),
    case("report-gzipped-table-cut-short", IO,
         "exit 2: asrpt-bench-report: error: {dir}/results/dispatch_map.csv.gz: the gzip data ends early, so the "
         "file was cut short (an interrupted copy or download?); copy it again", "capsys")(
        lambda tmp, capsys: report_over(tmp, capsys, committed_results(
            tmp, lambda results: truncate(results / "dispatch_map.csv.gz")))),
    case("figure-plain-text-table-named-gz", IO,
         "exit 2: asrpt-bench-figures: error: {dir}/results/fig6_num_jobs.csv.gz: named .gz but not "
         "gzip-compressed (it starts b'experiment,s'); gzip it, or name it fig6_num_jobs.csv", "capsys")(
        lambda tmp, capsys: figures_of(tmp, capsys, write(tmp, "results/fig6_num_jobs.csv.gz",
                                                          "experiment,seed\nfig6_num_jobs,0\n").parent)),
    case("report-table-beside-its-gzipped-twin", IO,
         "exit 2: asrpt-bench-report: error: {dir}/results/dispatch_map.csv and dispatch_map.csv.gz both exist "
         "beside each other, and a reader cannot tell which is current; keep one of them", "capsys")(
        lambda tmp, capsys: report_over(tmp, capsys, committed_results(tmp, lambda results: write(
            results, "dispatch_map.csv", gzip.decompress((results / "dispatch_map.csv.gz").read_bytes()))))),
    case("interrupted-sweep", IO,
         "exit 130: asrpt-bench: interrupted; completed runs are kept (a rerun of a sweep skips them)",
         "monkeypatch", "capsys")(
        lambda tmp, monkeypatch, capsys: interrupted(monkeypatch, capsys)),
]


def _solver_error(call: Callable[[], Any]) -> str:
    with pytest.raises(SolverError) as error:
        call()
    return str(error.value)


# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", CASES, ids=[c.kind for c in CASES])
def test_catalogue_outcome(bad: Case, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    fixtures = [request.getfixturevalue(name) for name in bad.fixtures]
    assert bad.trigger(tmp_path, *fixtures) == bad.expected.replace("{dir}", str(tmp_path))


ROW = re.compile(r"^\| `(?P<kind>[a-z0-9-]+)` \| (?P<input>.+) \| `(?P<outcome>.+)` \|$")


def doc_rows() -> dict[str, tuple[str, str]]:
    """kind -> (section, outcome) of every catalogue row in docs/bad-inputs.md."""
    rows, section = {}, ""
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        match = ROW.match(line)
        if match:
            assert match["kind"] not in rows, f"{match['kind']} listed twice"
            rows[match["kind"]] = (section, match["outcome"])
    return rows


def test_the_doc_lists_exactly_these_cases() -> None:
    rows = doc_rows()
    assert sorted(rows) == sorted(c.kind for c in CASES)
    for bad in CASES:
        assert rows[bad.kind] == (bad.category, bad.expected), bad.kind


def test_the_catalogue_has_at_least_thirty_kinds_in_every_category() -> None:
    categories = {c.category for c in CASES}
    assert categories == {TRACE, PAI, PHILLY, GAVEL, LOGS, SELECTION, PROFILE, CONFIG, API, SOLVER, IO}
    assert len(CASES) >= 30


def test_the_doc_counts_each_category_as_the_catalogue_does() -> None:
    """The page's summary table (category -> kinds, then the total) is the catalogue's count."""
    counts = collections.Counter(c.category for c in CASES)
    text = DOC.read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| ([^|*]+?) \| (\d+) \|$", text, flags=re.M))
    assert {k: int(v) for k, v in table.items()} == dict(counts)
    assert f"| **total** | **{len(CASES)}** |" in text
