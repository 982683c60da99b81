"""The Hydra app behind `asrpt-bench` (cli.py imports it once the arguments passed its own checks): one run
or sweep point per call of `_app`, composed by Hydra from the config tree (composition.py), converted to
the typed `RunConfig`, run by `experiment.run_experiment` in a staging directory and published into its
run directory (rundir.py). With composition.py, the only module that imports hydra or omegaconf.

A launcher's worker process imports this module to run a point (the task function is `_app`), so what a
worker needs is registered here when it is imported: the `run_unique` and `asrpt_help` resolvers, and
Ctrl-C left to the main process.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import sys
import traceback
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import hydra
from hydra._internal.hydra import Hydra
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from . import cli_args, io, rundir
from .cli_args import PROG
from .composition import SCHEMA_GROUP, hydra_error_message, prepare, to_run_config, validate_sweep
from .core import ConfigError
from .experiment import run_experiment
from .identity import KEY as IDENTITY_KEY
from .identity import is_current, run_identity
from .report.tables import format_result
from .sweep_points import COMPLETE, SKIPPED, point_label

log = logging.getLogger("asrpt_bench")
# Written to the run's cli.log only (the console sees the same text on stdout).
record = logging.getLogger("asrpt_bench.record")

# A single run's directory: its timestamp and `<pid>-<random>`, so runs started in one second never share it.
OmegaConf.register_new_resolver("run_unique", rundir.unique_suffix, replace=True, use_cache=True)

HIDDEN_GROUPS = ("hydra", SCHEMA_GROUP)
"""Config groups --help does not list: Hydra's own (--hydra-help shows them) and the generated schemas."""


def _help(*, _root_: DictConfig) -> str:
    """`asrpt-bench --help` (conf/hydra/help/asrpt.yaml): cli_help's text for the composed config; `$`
    escaped for the string.Template Hydra fills the help template into."""
    from .cli_help import help_text

    loader = GlobalHydra.instance().config_loader()
    groups = {group: sorted(loader.get_group_options(group)) for group in _groups(loader, "")}
    values = {key: OmegaConf.to_container(_root_[key], resolve=True) if OmegaConf.is_config(_root_[key])
              else _root_[key] for key in _root_ if key != "hydra"}
    choices = {group: str(choice) for group, choice in _root_.hydra.runtime.choices.items() if choice is not None}
    return help_text(values, choices, groups).replace("$", "$$")


HELP_FLAGS = ("-h", "--help")
HELP_ELSEWHERE = f"{PROG} --help prints the help"
"""What `hydra.help.template` resolves to in a run that did not ask for the help (`use_help`)."""


def use_help(args: list[str]) -> None:
    """Hydra resolves `hydra.help.template` whenever it composes the tree (merging its own hydra config
    into ours), not only for --help: the full text, which composes every option of every group (more
    than half of a warm default run), is made only when the arguments ask for it."""
    requested = any(flag in args for flag in HELP_FLAGS)
    OmegaConf.register_new_resolver("asrpt_help", _help if requested else lambda: HELP_ELSEWHERE, replace=True,
                                    use_cache=False)


def _groups(loader: Any, parent: str) -> list[str]:
    """Every config group under `parent` but the hidden ones, nested groups by their path."""
    found = []
    for name in loader.list_groups(parent):
        path = f"{parent}/{name}" if parent else name
        if path.split("/")[0] in HIDDEN_GROUPS:
            continue
        if loader.get_group_options(path):
            found.append(path)
        found.extend(_groups(loader, path))
    return found


use_help([])  # a worker process never prints the help


def _ignore_interrupts_in_workers() -> None:
    """In a launcher's worker process Ctrl-C is the main process's to report (in one line); it stops the
    workers, whose own KeyboardInterrupt tracebacks would only add noise. Done when a worker imports
    this module to run a point."""
    if multiprocessing.parent_process() is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


_ignore_interrupts_in_workers()


class RunFailed(Exception):
    """A run failed; the message names it and where its traceback is."""


class SweepPointFailed(RunFailed):
    """A sweep point failed (raised so that Hydra's job return marks it failed, whatever the launcher)."""


# The single run's failure, reported by main(): raising it through Hydra would add Hydra's own line.
_FAILURES: list[Exception] = []
# What the run directory held, and which folders existed, before the run (set by `run`, read on a refusal).
_EARLIER: list[rundir.HydraRecord] = [rundir.HydraRecord(None)]


def _first_line(error: BaseException) -> str:
    if isinstance(error, SystemExit):  # a component (a plugin's) called sys.exit: say so, not just its code
        return f"sys.exit({error.code!r}) was called during the run"
    text = str(error).strip()
    return text.splitlines()[0].strip() if text else type(error).__name__


# --------------------------------------------------------------------------------------------------
# One run or sweep point


def _log_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
    """Warnings as one line on stderr and in cli.log (not Python's two-line file:line form)."""
    log.warning("%s: warning: %s", PROG, message)


def _fail(staging: Path, run_dir: Path, multirun: bool, overrides: list[str], error: BaseException,
          point: str = "") -> RunFailed:
    """Record the failure (FAILED with the traceback) and publish it into the run directory; the
    exception to raise (Hydra marks the point failed). If the record cannot be published it stays in
    the staging directory, which the message names. A sweep's point says so in one line (`point`)."""
    io.mark_failed(staging, traceback.format_exc())
    where = run_dir
    try:
        rundir.publish(staging, run_dir)
    except (ConfigError, OSError):
        where = staging
    reason = f"({type(error).__name__}: {_first_line(error)}); traceback in {where / io.FAILED}"
    if multirun:
        log.info("%s: failed %s", point, reason)
        return SweepPointFailed(f"sweep point {overrides} failed {reason}")
    return RunFailed(f"the run failed {reason}")


def _shown(path: Path) -> Path:
    """`path` relative to the working directory when it lies inside it (as the user would type it)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _run_point(cfg: DictConfig) -> str:
    """One run (a single run, or one point of a sweep): computed in a staging directory next to Hydra's
    output directory and published into it (rundir.py); a refused single run leaves it as it was.
    Returns the outcome (sweep_points.COMPLETE or SKIPPED), which a sweep's point says in one line."""
    warnings.showwarning = _log_warning
    hydra_config = HydraConfig.get()
    run_dir = Path(hydra_config.runtime.output_dir)
    multirun = hydra_config.mode == RunMode.MULTIRUN
    overrides = list(hydra_config.overrides.task)
    job_name = hydra_config.job.name
    point = f"{point_label(int(hydra_config.job.num))} ({' '.join(overrides) or 'defaults'})" if multirun else ""
    record.info("%s %s", PROG, " ".join(overrides))
    try:
        run_config = to_run_config(cfg)
        rundir.check_target(run_dir)
        identity = run_identity(run_config)
    except ConfigError as error:
        if not multirun:
            _EARLIER[0].remove_created(run_dir, job_name)
            raise
        raise _fail(rundir.stage(run_dir, {}, overrides), run_dir, multirun, overrides, error, point) from error
    if multirun and is_current(run_dir, identity):
        log.info("%s: %s, %s", point, SKIPPED, _shown(run_dir))
        return SKIPPED
    staging = rundir.stage(run_dir, run_config.to_dict(), overrides)
    try:
        result = run_experiment(run_config)
        result.summary[IDENTITY_KEY] = identity
        io.write_outputs(staging, result)
        rundir.publish(staging, run_dir)
    except ConfigError as error:
        if not multirun:
            rundir.discard(staging)
            _EARLIER[0].remove_created(run_dir, job_name)
            raise
        raise _fail(staging, run_dir, multirun, overrides, error, point) from error
    except (Exception, SystemExit) as error:  # recorded in the run dir; a sweep runs its other points first
        raise _fail(staging, run_dir, multirun, overrides, error, point) from error
    except BaseException:  # interrupted: nothing is published
        rundir.discard(staging)
        raise
    text = f"{format_result(result)}\nrun directory: {_shown(run_dir)}"
    print(text)
    record.info("%s", text)
    if multirun:
        log.info("%s: %s", point, COMPLETE)
    return COMPLETE


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def _app(cfg: DictConfig) -> str | None:
    try:
        return _run_point(cfg)
    except (ConfigError, RunFailed) as error:
        if HydraConfig.get().mode == RunMode.MULTIRUN:
            raise
        _FAILURES.append(error)
        return None


# --------------------------------------------------------------------------------------------------
# The run of the command line


def _sets_mode(args: list[str]) -> bool:
    """Whether the arguments may set `hydra.mode`: an override of it, or an option that names another
    config tree (this package's tree never sets it: tests/test_compose_once.py)."""
    return any((arg.startswith("-") and arg not in cli_args.MULTIRUN_FLAGS)
               or arg.lstrip("+~").split("=", 1)[0] == "hydra.mode" for arg in args)


@contextmanager
def _mode_from_flags(args: list[str]) -> Iterator[None]:
    """Hydra composes the whole config tree twice per run: once (Hydra.get_mode) only to read
    `hydra.mode`, then again to run. This tree never sets `hydra.mode`, so that first composition
    always answers None, and Hydra then takes the mode from -m/--multirun: answer None without
    composing (about half a second a run), unless the arguments may set the mode. A composition
    error is raised by the second composition either way (get_mode swallows it), so messages stay."""
    if _sets_mode(args):
        yield
        return
    original = Hydra.get_mode
    Hydra.get_mode = lambda self, config_name, overrides: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Hydra.get_mode = original  # type: ignore[method-assign]


def run(args: list[str], earlier: rundir.HydraRecord) -> None:
    """Check the arguments and run the app on them (one run, or a sweep); a single run's failure is
    raised here, as Hydra's own errors are (cli.main turns each into its line and exit code). `earlier`
    is what the run directory held before, restored by a refused single run."""
    warnings.showwarning = _log_warning  # a plugin's warning at import time is one line too
    _EARLIER[:] = [earlier]
    use_help(args)
    prepare([a for a in args if not a.startswith("-")])  # launcher workers inherit the ConfigStore
    cli_args.check_options(args)
    cli_args.check_launcher(args)
    single_point = cli_args.single_point_warning(args)
    if single_point:
        print(f"{PROG}: warning: {single_point}", file=sys.stderr)
    multirun = any(flag in args for flag in cli_args.MULTIRUN_FLAGS)
    if multirun and all(a in cli_args.MULTIRUN_FLAGS or not a.startswith("-") for a in args):
        validate_sweep([a for a in args if a not in cli_args.MULTIRUN_FLAGS])
    own_dir = cli_args.sweep_dir_override(args)
    sys.argv[1:] = cli_args.overrides_first(args + ([own_dir] if own_dir else []))
    with _mode_from_flags(args):
        _app()
    if _FAILURES:
        raise _FAILURES[0]


COMPOSITION_ERRORS = (HydraException, OmegaConfBaseException)
"""Hydra's and OmegaConf's own errors: bad input, said in one line by `hydra_error_message` (exit 2)."""
