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
"""

from __future__ import annotations

import gc
import os
import sys
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
