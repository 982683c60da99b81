"""`asrpt-bench`: the console entry point, its exit codes and one-line errors. The Hydra app itself is
cli_app.py, imported only once the arguments are in, so that importing this module costs little (the
start-up benchmark, benchmarks/bench_startup.py, measures it).

The app composes the config tree in `asrpt_bench/conf` (composition.py: plugins first, then every
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

Exit: when the process is the command itself (`asrpt-bench`, or `python -m asrpt_bench.cli`) and a run
succeeded, it flushes stdout and stderr, runs the exit handlers (`atexit`: logging's closes `cli.log`) and
ends with `os._exit(0)`, skipping the interpreter's teardown, which frees every object of the run one by one
(some 40-50 ms of a warm default run). With another non-daemon thread alive (which the interpreter would
join), on an error, or when main() is called from other code (a test, a notebook), the process exits, or
main() returns, as usual.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from pathlib import Path
from types import ModuleType

from . import cli_args, rundir, signals
from .cli_args import PROG
from .errors import ConfigError


def _exit(code: int, message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(code)


def _import_app() -> ModuleType:
    """cli_app: Hydra, pandas and every component, what a run needs, imported once it is one. The import
    makes a few hundred thousand long-lived objects and no garbage, so the cyclic collector pauses during
    it and then leaves those objects out of its later passes (gc.freeze): its full passes over them cost a
    warm default run about a quarter of a CPU-second. Only the first import does this, so a caller that
    runs main() again in its own process (a test) keeps its own objects collectable."""
    if "asrpt_bench.cli_app" in sys.modules:
        from . import cli_app
        return cli_app
    enabled = gc.isenabled()
    gc.disable()
    try:
        from . import cli_app
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    return cli_app


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
    if is_the_command() and not _other_threads_to_join():
        _exit_without_teardown()


def _other_threads_to_join() -> bool:
    """Whether a thread other than this one would hold up the usual exit (a non-daemon thread, which the
    interpreter joins; a daemon thread, such as tqdm's monitor, it ends as os._exit does)."""
    return any(not thread.daemon for thread in threading.enumerate() if thread is not threading.current_thread())


def is_the_command() -> bool:
    """Whether this process is `asrpt-bench` itself: its `__main__` is this module (`python -m
    asrpt_bench.cli`) or the console script named PROG; not a test, a notebook or a script calling main()."""
    program = sys.modules.get("__main__")
    spec = getattr(program, "__spec__", None)
    if spec is not None:
        return spec.name == "asrpt_bench.cli"
    return Path(str(getattr(program, "__file__", ""))).name == PROG


def _exit_without_teardown() -> None:
    """End a successful run of the command as the interpreter would, less its teardown (module doc): the
    streams flushed and the exit handlers run, then os._exit(0). A stream that cannot be flushed (a closed
    pipe) leaves the usual exit to report it."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()
    os._exit(0)


def _main(full_error: bool) -> None:
    sys.argv[1:] = cli_args.expand_home(sys.argv[1:])
    args = sys.argv[1:]
    multirun = any(flag in args for flag in cli_args.MULTIRUN_FLAGS)
    earlier = (rundir.HydraRecord(None) if multirun
               else rundir.HydraRecord.of_arguments(args, cli_args.default_run_dir()))
    signals.install()
    cli_app = _import_app()

    try:
        cli_app.run(args, earlier)
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
        if isinstance(error, cli_app.COMPOSITION_ERRORS):
            _exit(2, f"error: {cli_app.hydra_error_message(error)}")
        if isinstance(error, cli_app.SweepPointFailed):
            _exit(1, f"error: {error}; the other points ran (asrpt-bench-collect lists every point's status)")
        if isinstance(error, cli_app.RunFailed):
            _exit(1, f"error: {error}")
        if isinstance(error, OSError):
            _exit(2, f"error: cannot write the output directory: {error}")
        raise


if __name__ == "__main__":
    main()
