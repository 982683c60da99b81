"""`asrpt-bench`: the Hydra app. The only module that imports hydra or omegaconf.

It composes the config tree in `asrpt_bench/conf`, converts it to the typed `RunConfig` (unknown
keys, wrong types and out-of-range values fail here, naming the key, before any work), records the
run's config, calls `experiment.run_experiment` and writes the run directory atomically. In a
multirun sweep a failing point writes a `FAILED` marker with its traceback and the other points
run; a point whose directory already completed with the same config is skipped.

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

import dataclasses
import logging
import multiprocessing
import os
import signal
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

import hydra
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException, MissingConfigException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from . import cli_args, io, rundir, signals
from .config import RunConfig
from .core import ConfigError
from .experiment import run_experiment
from .identity import KEY as IDENTITY_KEY
from .identity import is_current, run_identity
from .report.tables import format_result

CONFIG_DIR = Path(__file__).resolve().parent / "conf"
PROG = "asrpt-bench"
log = logging.getLogger("asrpt_bench")
# Written to the run's cli.log only (the console sees the same text on stdout).
record = logging.getLogger("asrpt_bench.record")

# The typed schema of the whole tree: every group has every key of its dataclass (so e.g.
# predictor.epsilon can be overridden whatever the predictor), and wrong types fail at compose time.
ConfigStore.instance().store(name="run_config_schema", node=RunConfig)
# Sweep subdirectories are named from the overrides; a point without overrides gets "defaults".
OmegaConf.register_new_resolver("run_dirname", lambda dirname: dirname or "defaults", replace=True)
# A single run's directory: its timestamp and `<pid>-<random>`, so runs started in one second never share it.
OmegaConf.register_new_resolver("run_unique", rundir.unique_suffix, replace=True, use_cache=True)


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


# --------------------------------------------------------------------------------------------------
# Configuration errors in one line


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0].strip() if text else type(error).__name__


def _known_keys(full_key: str) -> str:
    """'<group> has keys [...]' for the parent of `full_key` in the RunConfig schema."""
    schema: Any = RunConfig
    parent = full_key.rsplit(".", 1)[0] if "." in full_key else ""
    for part in [p for p in parent.split(".") if p]:
        fields = {item.name: item for item in dataclasses.fields(schema)}
        if part not in fields or fields[part].default_factory is dataclasses.MISSING:
            return ""
        schema = type(fields[part].default_factory())
    return f"{parent or 'the root'} has keys {sorted(item.name for item in dataclasses.fields(schema))}"


def hydra_error_message(error: BaseException) -> str:
    """One line for a Hydra or OmegaConf error: the key or option, what is wrong, what is known."""
    if isinstance(error, MissingConfigException):
        message = _first_line(error).removeprefix("In 'config': ")
        return f"{message}; available: {', '.join(error.options)}" if error.options else message
    cause = error.__cause__ if error.__cause__ is not None else error
    full_key = getattr(cause, "full_key", None)
    if isinstance(cause, (ConfigKeyError, ConfigAttributeError)) and full_key:
        known = _known_keys(str(full_key))
        return f"{full_key}: unknown key" + (f"; {known}" if known else "")
    if full_key:
        return f"{full_key}: {_first_line(cause)}"
    if cause is not error:
        return f"{_first_line(error).rstrip('.')}: {_first_line(cause)}"
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return "; ".join(lines) if 1 < len(lines) <= 4 else _first_line(error)


def _reject_unknown_keys(values: dict, schema: type, prefix: str = "") -> None:
    """Keys added with `+key=...` survive Hydra's typed merge; refuse them here, naming the key."""
    fields = {item.name: item for item in dataclasses.fields(schema)}
    for key, value in values.items():
        if key not in fields:
            raise ConfigError(f"{prefix}{key}: unknown key; {prefix.rstrip('.') or 'the root'} has keys "
                              f"{sorted(fields)}")
        default = fields[key].default_factory() if fields[key].default_factory is not dataclasses.MISSING else None
        if dataclasses.is_dataclass(default) and isinstance(value, dict):
            _reject_unknown_keys(value, type(default), f"{prefix}{key}.")


def to_run_config(cfg: DictConfig) -> RunConfig:
    """The composed config as a validated RunConfig; errors name the offending key."""
    container = OmegaConf.masked_copy(cfg, [key for key in cfg.keys() if key != "hydra"])
    _reject_unknown_keys(OmegaConf.to_container(container, resolve=False), RunConfig)
    try:
        missing = sorted(OmegaConf.missing_keys(container))
        if missing:
            raise ConfigError(f"{missing[0]} is required: set it on the command line ({missing[0]}=...)")
        # Interpolations are resolved before the typed merge so that `${...}` values are type-checked too.
        resolved = OmegaConf.to_container(container, resolve=True)
        merged = OmegaConf.merge(OmegaConf.structured(RunConfig), resolved)
        run_config = OmegaConf.to_object(merged)
    except OmegaConfBaseException as error:
        raise ConfigError(hydra_error_message(error)) from None
    assert isinstance(run_config, RunConfig)
    return run_config.validate()


def _compose(overrides: list[str], hydra_config: bool = False) -> DictConfig:
    try:
        return compose(config_name="config", overrides=overrides, return_hydra_config=hydra_config)
    except (HydraException, OmegaConfBaseException) as error:
        raise ConfigError(hydra_error_message(error)) from None


def compose_run_config(overrides: list[str] | None = None, config_dir: Path = CONFIG_DIR) -> RunConfig:
    """Compose the config tree with `overrides` (as on the command line) and validate it."""
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        return to_run_config(_compose(list(overrides or [])))


def sweep_axes(overrides: list[str], sweeper_params: dict[str, str]) -> list[list[str]]:
    """The sweep as Hydra's basic sweeper builds it: one axis per key, its `key=value` choices (the
    config's hydra.sweeper.params first, command-line overrides of the same key replacing them)."""
    parser = OverridesParser.create()
    try:
        parsed = parser.parse_overrides([f"{key}={value}" for key, value in sweeper_params.items()] + overrides)
    except HydraException as error:
        raise ConfigError(hydra_error_message(error)) from None
    axes: dict[str, list[str]] = {}
    for override in parsed:
        key = override.get_key_element()
        if not override.is_sweep_override():
            axes[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            axes[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            raise ConfigError(f"{key}: the basic sweeper supports lists and ranges, not {override.value_type.name}")
    return list(axes.values())


def validate_sweep(overrides: list[str], config_dir: Path = CONFIG_DIR) -> int:
    """Validate a sweep before any point runs: every value of every swept key appears in at least one
    composed and validated point (max axis length compositions, not the whole product; a failure
    that needs two values together is caught when that point runs). Returns the sweep's point count."""
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        first = sweep_axes(overrides, {})
        base = _compose([axis[0] for axis in first], hydra_config=True)
        params = base.hydra.sweeper.get("params")
        params = OmegaConf.to_container(params, resolve=False) if params else {}
        axes = sweep_axes(overrides, {str(k): str(v) for k, v in params.items()})
        for index in range(max((len(axis) for axis in axes), default=1)):
            to_run_config(_compose([axis[index % len(axis)] for axis in axes]))
    count = 1
    for axis in axes:
        count *= len(axis)
    return count


# --------------------------------------------------------------------------------------------------
# One run or sweep point


def _log_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
    """Warnings as one line on stderr and in cli.log (not Python's two-line file:line form)."""
    log.warning("%s: warning: %s", PROG, message)


def _fail(staging: Path, run_dir: Path, multirun: bool, overrides: list[str], error: Exception) -> RunFailed:
    """Record the failure (FAILED with the traceback) and publish it into the run directory; the
    exception to raise (Hydra marks the point failed). If the record cannot be published it stays in
    the staging directory, which the message names."""
    io.mark_failed(staging, traceback.format_exc())
    where = run_dir
    try:
        rundir.publish(staging, run_dir)
    except (ConfigError, OSError):
        where = staging
    reason = f"({type(error).__name__}: {_first_line(error)}); traceback in {where / io.FAILED}"
    if multirun:
        return SweepPointFailed(f"sweep point {overrides} failed {reason}")
    return RunFailed(f"the run failed {reason}")


def _run_point(cfg: DictConfig) -> None:
    """One run (a single run, or one point of a sweep): computed in a staging directory next to Hydra's
    output directory and published into it (rundir.py); a refused single run leaves it as it was."""
    warnings.showwarning = _log_warning
    hydra_config = HydraConfig.get()
    run_dir = Path(hydra_config.runtime.output_dir)
    multirun = hydra_config.mode == RunMode.MULTIRUN
    overrides = list(hydra_config.overrides.task)
    job_name = hydra_config.job.name
    record.info("%s %s", PROG, " ".join(overrides))
    try:
        run_config = to_run_config(cfg)
        rundir.check_target(run_dir)
        identity = run_identity(run_config)
    except ConfigError as error:
        if not multirun:
            rundir.remove_if_only_hydra(run_dir, job_name)
            raise
        raise _fail(rundir.stage(run_dir, {}, overrides), run_dir, multirun, overrides, error) from error
    if multirun and is_current(run_dir, identity):
        log.info("skipping %s: already complete (%s)", run_dir, identity)
        return
    staging = rundir.stage(run_dir, run_config.to_dict(), overrides)
    try:
        result = run_experiment(run_config)
        result.summary[IDENTITY_KEY] = identity
        io.write_outputs(staging, result)
        rundir.publish(staging, run_dir)
    except ConfigError as error:
        if not multirun:
            rundir.discard(staging)
            rundir.remove_if_only_hydra(run_dir, job_name)
            raise
        raise _fail(staging, run_dir, multirun, overrides, error) from error
    except Exception as error:  # recorded in the run dir; a sweep runs its other points first
        raise _fail(staging, run_dir, multirun, overrides, error) from error
    except BaseException:  # interrupted: nothing is published
        rundir.discard(staging)
        raise
    text = f"{format_result(result)}\nrun directory: {run_dir}"
    print(text)
    record.info("%s", text)


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def _app(cfg: DictConfig) -> None:
    try:
        _run_point(cfg)
    except (ConfigError, RunFailed) as error:
        if HydraConfig.get().mode == RunMode.MULTIRUN:
            raise
        _FAILURES.append(error)


# --------------------------------------------------------------------------------------------------
# Entry point


MULTIRUN_FLAGS = ("-m", "--multirun")


def _exit(code: int, message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(code)


def main() -> None:
    """Console entry point (`asrpt-bench`, or `python -m asrpt_bench.cli`); exit codes in the module doc."""
    full_error = os.environ.get("HYDRA_FULL_ERROR", "") not in ("", "0")
    os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra raises instead of printing; we print one line
    sys.argv[1:] = cli_args.expand_home(sys.argv[1:])
    args = sys.argv[1:]
    multirun = any(flag in args for flag in MULTIRUN_FLAGS)
    earlier = rundir.HydraRecord(None) if multirun else rundir.HydraRecord.of_arguments(args)
    signals.install()
    try:
        cli_args.check_options(args)
        cli_args.check_launcher(args)
        single_point = cli_args.single_point_warning(args)
        if single_point:
            print(f"{PROG}: warning: {single_point}", file=sys.stderr)
        if multirun and all(a in MULTIRUN_FLAGS or not a.startswith("-") for a in args):
            validate_sweep([a for a in args if a not in MULTIRUN_FLAGS])
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
