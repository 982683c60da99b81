"""A Hydra launcher that runs every sweep point as a Ray task, on a local or an existing Ray cluster.

Select it with `hydra/launcher=ray`. Each point runs Hydra's own `run_job` on a Ray worker, exactly as
the basic and joblib launchers run it in-process or in a loky worker, so a point lands in the same
run directory with the same markers, a completed point is skipped on a rerun, and a failing point
comes back as a failed `JobReturn` for Hydra's sweeper to report. Ray is imported only when a sweep
launches (Hydra imports every plugin module when it starts).

    address      null: start a Ray instance on this machine (ray.init), shut down after the sweep;
                 "auto" or "ray://HOST:10001": join an existing cluster (then left running)
    num_cpus     CPUs of the local instance (null: all); ignored when joining a cluster
    cpus_per_task  CPUs Ray reserves per point (points run concurrently up to the CPUs available)
    runtime_env  Ray runtime environment for the workers, e.g. {pip: [asrpt_bench], env_vars: {...}}
    log_to_driver  false: the driver logs one line per point as it finishes, "[k/N] #i : overrides :
                 COMPLETED" (or "skipped (complete)", or FAILED and why; its printed summary is in the
                 point's run directory, cli.log); true: Ray also forwards the workers' output
    init         further keyword arguments of ray.init

What the driver prints has no ANSI colour codes when stderr is not a terminal (a pipe, a log file,
a batch job), and Ray's "token authentication is enabled" warning is replaced by the header line
saying whether token authentication is on. Joining a cluster without token authentication logs a
warning: anyone who can reach such a cluster can run code on it (README, "Sweeps on a cluster").

On a cluster, every worker must import asrpt_bench (installed in the image, or through
`runtime_env`), and `hydra.sweep.dir` (and `cache.dir`) must name a path every node shares; the
launcher makes the sweep directory absolute and each point runs in the driver's working directory
when that directory exists on its node.
"""

# No `from __future__ import annotations`: Hydra executes plugin modules without registering them in
# sys.modules, and dataclasses then cannot resolve string annotations.
import importlib.util
import logging
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Sequence

from hydra.core.config_store import ConfigStore
from hydra.core.hydra_config import HydraConfig
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, run_job, setup_globals
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict

from asrpt_bench.sweep_points import POINTS_ENV, SKIPPED

log = logging.getLogger(__name__)


@dataclass
class RayLauncherConf:
    _target_: str = "hydra_plugins.asrpt_ray_launcher.ray_launcher.RayLauncher"
    address: Optional[str] = None
    num_cpus: Optional[int] = None
    cpus_per_task: float = 1.0
    runtime_env: Dict[str, Any] = field(default_factory=dict)
    log_to_driver: bool = False
    init: Dict[str, Any] = field(default_factory=dict)


ConfigStore.instance().store(group="hydra/launcher", name="ray", node=RayLauncherConf, provider="asrpt_bench")


ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Ray >= 2.59 warns this whenever it turns token authentication on by itself (a local instance, or
# `address=auto` with a token on disk); the launcher's header line says it instead.
RAY_AUTH_ENABLED_WARNING = "Token authentication is enabled for this Ray cluster"
# The loggers whose records the driver shows while it starts or joins Ray (worker.py: "Started a
# local Ray instance" / "Connected to Ray cluster. View the dashboard at <bright green URL>").
RAY_LOGGERS = ("ray._private.worker", "ray._private.authentication.authentication_token_setup")


class _PlainRayLog(logging.Filter):
    """Drops Ray's token-auth-enabled warning and, off a terminal, strips ANSI codes from Ray's lines."""

    def __init__(self, plain: bool) -> None:
        super().__init__()
        self.plain = plain

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message.startswith(RAY_AUTH_ENABLED_WARNING):
            return False
        if self.plain and "\x1b" in message:
            record.msg, record.args = ANSI_ESCAPE.sub("", message), None
        return True


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


@contextmanager
def _quiet_ray() -> Iterator[None]:
    """While the launcher runs: Ray's own driver-side lines filtered (_PlainRayLog) and, when stderr is
    not a terminal, Ray's forwarded worker lines without colour (RAY_COLOR_PREFIX=0, unless set)."""
    plain = not _is_terminal(sys.stderr)
    loggers = [logging.getLogger(name) for name in RAY_LOGGERS]
    quiet = _PlainRayLog(plain)
    colour = os.environ.get("RAY_COLOR_PREFIX")
    if plain and colour is None:
        os.environ["RAY_COLOR_PREFIX"] = "0"
    for logger in loggers:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(quiet)
        if plain and colour is None:
            os.environ.pop("RAY_COLOR_PREFIX", None)


def _token_auth_on() -> Optional[bool]:
    """Whether this driver uses Ray token authentication (after ray.init, which sets RAY_AUTH_MODE when
    it turns it on by itself); None for a Ray without token authentication (before 2.52)."""
    try:
        if importlib.util.find_spec("ray._private.authentication") is None:
            return None
    except (ImportError, ValueError):  # a stand-in ray module (tests), or one that is not a package
        return None
    return os.environ.get("RAY_AUTH_MODE", "disabled").strip().lower() == "token"


@contextmanager
def _working_directory(path: str) -> Iterator[None]:
    """Run in `path` when this node has it (a local worker, or a shared filesystem), else stay put."""
    previous = os.getcwd()
    moved = os.path.isdir(path)
    if moved:
        os.chdir(path)
    try:
        yield
    finally:
        if moved:
            os.chdir(previous)


@contextmanager
def _environment(values: Dict[str, str]) -> Iterator[None]:
    """The driver's sweep environment (the point count) on a worker, which may run on another node."""
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_point(hydra_context: HydraContext, sweep_config: DictConfig, task_function: TaskFunction,
              singleton_state: Dict[Any, Any], driver_cwd: str, environment: Dict[str, str]) -> JobReturn:
    """One sweep point on a Ray worker: Hydra's run_job with the driver's config state."""
    setup_globals()
    Singleton.set_state(singleton_state)
    HydraConfig.instance().set_config(sweep_config)
    with _working_directory(driver_cwd), _environment(environment):
        return run_job(hydra_context=hydra_context, task_function=task_function, config=sweep_config,
                       job_dir_key="hydra.sweep.dir", job_subdir_key="hydra.sweep.subdir")


class RayLauncher(Launcher):
    def __init__(self, address: Optional[str] = None, num_cpus: Optional[int] = None, cpus_per_task: float = 1.0,
                 runtime_env: Optional[Dict[str, Any]] = None, log_to_driver: bool = False,
                 init: Optional[Dict[str, Any]] = None) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.cpus_per_task = cpus_per_task
        self.runtime_env = _plain(runtime_env or {})
        self.log_to_driver = log_to_driver
        self.init = _plain(init or {})
        self.config: Optional[DictConfig] = None
        self.task_function: Optional[TaskFunction] = None
        self.hydra_context: Optional[HydraContext] = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        self.config = config
        self.task_function = task_function
        self.hydra_context = hydra_context

    def _init_kwargs(self) -> Dict[str, Any]:
        kwargs: Dict[str, Any] = {"address": self.address, "log_to_driver": self.log_to_driver, **self.init}
        if self.runtime_env:
            kwargs["runtime_env"] = self.runtime_env
        if self.address is None:
            kwargs.setdefault("num_cpus", self.num_cpus)
            kwargs.setdefault("include_dashboard", False)
        return kwargs

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
        import ray

        setup_globals()
        assert self.config is not None and self.task_function is not None and self.hydra_context is not None
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        sweep_dir = Path(str(self.config.hydra.sweep.dir)).absolute()
        sweep_dir.mkdir(parents=True, exist_ok=True)
        with _quiet_ray():
            started = not ray.is_initialized()
            if started:
                ray.init(**self._init_kwargs())
            try:
                return self._launch(ray, job_overrides, initial_job_idx, sweep_dir)
            finally:
                if started and self.address is None:
                    ray.shutdown()

    def _launch(self, ray: Any, job_overrides: Sequence[Sequence[str]], initial_job_idx: int,
                sweep_dir: Path) -> Sequence[JobReturn]:
        assert self.config is not None and self.task_function is not None and self.hydra_context is not None
        auth = _token_auth_on()
        log.info("Ray launcher: %d points on %s%s, sweep output dir %s", len(job_overrides),
                 self.address or "a local Ray instance",
                 "" if auth is None else f" (token authentication {'on' if auth else 'off'})", sweep_dir)
        if auth is False and self.address is not None:
            log.warning("Ray launcher: joined %s without token authentication (RAY_AUTH_MODE is not 'token'): "
                        "anyone who can reach this cluster can run code on it; README, 'Sweeps on a cluster'",
                        self.address)
        remote = ray.remote(num_cpus=self.cpus_per_task, max_retries=0)(run_point)
        singleton_state = Singleton.get_state()
        environment = {POINTS_ENV: os.environ[POINTS_ENV]} if POINTS_ENV in os.environ else {}
        pending = []
        try:
            for overrides in job_overrides:
                idx = initial_job_idx + len(pending)
                sweep_config = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
                with open_dict(sweep_config):
                    sweep_config.hydra.job.id = f"{sweep_config.hydra.job.name}_{idx}"
                    sweep_config.hydra.job.num = idx
                    sweep_config.hydra.sweep.dir = str(sweep_dir)
                pending.append((remote.remote(self.hydra_context, sweep_config, self.task_function,
                                              singleton_state, os.getcwd(), environment), sweep_config))
            return _gather(ray, pending, [list(o) for o in job_overrides], initial_job_idx)
        except BaseException:  # SIGTERM or Ctrl-C: no point keeps running, on this machine or a cluster
            _cancel(ray, [ref for ref, _ in pending])
            raise


def _gather(ray: Any, pending: Sequence[Any], job_overrides: Sequence[Sequence[str]],
            initial_job_idx: int) -> Sequence[JobReturn]:
    """Every point's JobReturn in sweep order; one log line per point as it finishes, in finishing order,
    with how many of the launch's points have finished."""
    position = {ref: i for i, (ref, _) in enumerate(pending)}
    results: list = [None] * len(pending)
    waiting = [ref for ref, _ in pending]
    finished = 0
    while waiting:
        done, waiting = ray.wait(waiting, num_returns=1)
        for ref in done:
            i = position[ref]
            results[i] = _result(ray, ref, pending[i][1])
            finished += 1
            log.info("\t[%d/%d] #%d : %s : %s", finished, len(pending), initial_job_idx + i,
                     " ".join(filter_overrides(job_overrides[i])), _outcome(results[i]))
    return results


def _outcome(result: JobReturn) -> str:
    """A point's status in one line: COMPLETED, "skipped (complete)" when an earlier run already completed
    it (asrpt_bench.sweep_points.SKIPPED, the point's return value), or FAILED with the first line of its
    error."""
    if result.status == JobStatus.COMPLETED:
        return SKIPPED if result._return_value == SKIPPED else "COMPLETED"
    error = result._return_value
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"FAILED ({type(error).__name__}{': ' + first if first else ''})"


def _cancel(ray: Any, refs: Sequence[Any]) -> None:
    """Force-cancel every point still pending (its worker process is killed)."""
    for ref in refs:
        try:
            ray.cancel(ref, force=True)
        except Exception as error:  # an already finished or lost task cannot be cancelled
            log.debug("cannot cancel %s: %s", ref, error)


def _plain(mapping: Any) -> Dict[str, Any]:
    """A mapping from the launcher config as plain dicts and lists (ray.init wants them)."""
    return OmegaConf.to_container(mapping, resolve=True) if OmegaConf.is_config(mapping) else dict(mapping)


def _result(ray: Any, ref: Any, sweep_config: DictConfig) -> JobReturn:
    """The point's JobReturn; a task Ray itself lost (a worker crash) becomes a failed JobReturn, as a
    failing task function does inside run_job, so the sweeper reports it and the other points survive."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as error:
        log.error("a sweep point was lost by Ray: %s", error)
        return JobReturn(overrides=list(sweep_config.hydra.overrides.task), cfg=sweep_config,
                         hydra_cfg=sweep_config, status=JobStatus.FAILED, _return_value=error)
