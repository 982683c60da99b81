"""`asrpt-bench`: the Hydra app (with composition.py, the only modules that import hydra or omegaconf).

It composes the config tree in `asrpt_bench/conf` (composition.py: plugins first, then every
component's schema), converts it to the typed `RunConfig` (unknown keys, wrong types and
out-of-range values fail here, naming the key, before any work), records the run's config, calls `experiment.run_experiment` and writes the run directory atomically. In a
multirun sweep a failing point writes a `FAILED` marker with its traceback and the other points
run; a point whose directory already completed with the same config is skipped. Each point of a sweep
says its outcome in one line ("point 3 of 12 (seed=2): skipped (complete), ..."), and the sweeper
(hydra_plugins/asrpt_sweeper) counts them after each batch, whatever the launcher.

Exit codes (design.md 4), each failure said in one line on stderr:
0   done;
2   bad input or configuration (a Hydra error such as an unknown option or key, an invalid value, a
    bad file): no run directory is left behind. A sweep validates every value of every swept key
    before any point runs;
1   the run failed, or at least one sweep point failed (after every point ran); tracebacks are in
    the FAILED files;
130 interrupted (Ctrl-C, SIGINT), 143 terminated (SIGTERM): every worker process is stopped, completed
    runs are kept, and rerunning a sweep skips them.
Set HYDRA_FULL_ERROR=1 to get Python tracebacks instead of one line.

Logging: warnings and progress notes go to stderr and, with the printed result, to the run's
`cli.log` (Hydra's job log, configured in conf/hydra/job_logging/asrpt.yaml).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
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

from . import cli_args, io, rundir, signals
from .cli_help import help_text
from .composition import (CONFIG_DIR, SCHEMA_GROUP, compose_run_config, hydra_error_message, prepare,  # noqa: F401
                          sweep_axes, to_run_config, validate_sweep)
from .core import ConfigError
from .experiment import run_experiment
from .identity import KEY as IDENTITY_KEY
from .identity import is_current, run_identity
from .report.tables import format_result
from .sweep_points import COMPLETE, SKIPPED, point_label

PROG = "asrpt-bench"
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
    loader = GlobalHydra.instance().config_loader()
    groups = {group: sorted(loader.get_group_options(group)) for group in _groups(loader, "")}
    values = {key: OmegaConf.to_container(_root_[key], resolve=True) if OmegaConf.is_config(_root_[key])
              else _root_[key] for key in _root_ if key != "hydra"}
    choices = {group: str(choice) for group, choice in _root_.hydra.runtime.choices.items() if choice is not None}
    return help_text(values, choices, groups).replace("$", "$$")


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


OmegaConf.register_new_resolver("asrpt_help", _help, replace=True, use_cache=False)


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
# What the run directory held, and which folders existed, before the run (set by main, read on a refusal).
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
# Entry point


MULTIRUN_FLAGS = ("-m", "--multirun")


def _sets_mode(args: list[str]) -> bool:
    """Whether the arguments may set `hydra.mode`: an override of it, or an option that names another
    config tree (this package's tree never sets it: tests/test_compose_once.py)."""
    return any((arg.startswith("-") and arg not in MULTIRUN_FLAGS)
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


def _exit(code: int, message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(code)


def main() -> None:
    """Console entry point (`asrpt-bench`, or `python -m asrpt_bench.cli`); exit codes in the module doc."""
    previous = os.environ.get("HYDRA_FULL_ERROR")
    full_error = (previous or "") not in ("", "0")
    os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra raises instead of printing; we print one line
    try:
        _main(full_error)
    finally:  # a caller in the same process (a test, a notebook) keeps its own setting
        if previous is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = previous


def _main(full_error: bool) -> None:
    warnings.showwarning = _log_warning  # a plugin's warning at import time is one line too
    sys.argv[1:] = cli_args.expand_home(sys.argv[1:])
    args = sys.argv[1:]
    multirun = any(flag in args for flag in MULTIRUN_FLAGS)
    earlier = (rundir.HydraRecord(None) if multirun
               else rundir.HydraRecord.of_arguments(args, cli_args.default_run_dir()))
    _EARLIER[:] = [earlier]
    signals.install()
    try:
        prepare([a for a in args if not a.startswith("-")])  # launcher workers inherit the ConfigStore
        cli_args.check_options(args)
        cli_args.check_launcher(args)
        single_point = cli_args.single_point_warning(args)
        if single_point:
            print(f"{PROG}: warning: {single_point}", file=sys.stderr)
        if multirun and all(a in MULTIRUN_FLAGS or not a.startswith("-") for a in args):
            validate_sweep([a for a in args if a not in MULTIRUN_FLAGS])
        own_dir = cli_args.sweep_dir_override(args)
        sys.argv[1:] = cli_args.overrides_first(args + ([own_dir] if own_dir else []))
        with _mode_from_flags(args):
            _app()
        if _FAILURES:
            raise _FAILURES[0]
    except KeyboardInterrupt as interrupt:
        signals.stop_descendants()
        terminated = isinstance(interrupt, signals.Terminated)
        _exit(143 if terminated else 130, f"{'terminated' if terminated else 'interrupted'}; completed runs are "
              "kept (a rerun of a sweep skips them)")
    except Exception as error:
        if full_error:
            raise
        if isinstance(error, ConfigError):
            earlier.restore()  # a refused run leaves an earlier run's directory exactly as it was
            _exit(2, f"error: {error}")
        if isinstance(error, (HydraException, OmegaConfBaseException)):
            _exit(2, f"error: {hydra_error_message(error)}")
        if isinstance(error, SweepPointFailed):
            _exit(1, f"error: {error}; the other points ran (asrpt-bench-collect lists every point's status)")
        if isinstance(error, RunFailed):
            _exit(1, f"error: {error}")
        if isinstance(error, OSError):
            _exit(2, f"error: cannot write the output directory: {error}")
        raise


if __name__ == "__main__":
    main()
