"""`asrpt-bench`: the Hydra app. The only module that imports hydra or omegaconf.

It composes the config tree in `asrpt_bench/conf`, converts it to the typed `RunConfig` (unknown
keys, wrong types and out-of-range values fail here, naming the key, before any work), records the
run's config, calls `experiment.run_experiment` and writes the run directory atomically. In a
multirun sweep a failing point writes a `FAILED` marker with its traceback and the sweep goes on,
and a point whose directory already completed with the same config is skipped.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import traceback
from pathlib import Path

import hydra
from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from . import io
from .config import RunConfig
from .core import ConfigError
from .experiment import run_experiment
from .provenance import config_hash
from .report.tables import format_result

CONFIG_DIR = Path(__file__).resolve().parent / "conf"
log = logging.getLogger("asrpt_bench")

# The typed schema of the whole tree: every group has every key of its dataclass (so e.g.
# predictor.epsilon can be overridden whatever the predictor), and wrong types fail at compose time.
ConfigStore.instance().store(name="run_config_schema", node=RunConfig)
# Sweep subdirectories are named from the overrides; a point without overrides gets "defaults".
OmegaConf.register_new_resolver("run_dirname", lambda dirname: dirname or "defaults", replace=True)


def _key_error(error: OmegaConfBaseException) -> ConfigError:
    key = getattr(error, "full_key", None) or "config"
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    return ConfigError(f"{key}: {message}")


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
    missing = sorted(OmegaConf.missing_keys(container))
    if missing:
        raise ConfigError(f"{missing[0]} is required: set it on the command line ({missing[0]}=...)")
    _reject_unknown_keys(OmegaConf.to_container(container, resolve=False), RunConfig)
    try:
        merged = OmegaConf.merge(OmegaConf.structured(RunConfig), container)
        run_config = OmegaConf.to_object(merged)
    except OmegaConfBaseException as error:
        raise _key_error(error) from None
    assert isinstance(run_config, RunConfig)
    return run_config.validate()


def compose_run_config(overrides: list[str] | None = None, config_dir: Path = CONFIG_DIR) -> RunConfig:
    """Compose the config tree with `overrides` (as on the command line) and validate it."""
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        try:
            cfg = compose(config_name="config", overrides=list(overrides or []))
        except HydraException as error:
            cause = f": {str(error.__cause__).splitlines()[0]}" if error.__cause__ else ""
            raise ConfigError(f"{str(error).splitlines()[0]}{cause}") from None
    return to_run_config(cfg)


def _run_point(cfg: DictConfig) -> None:
    """One run (a single run, or one point of a sweep) in Hydra's output directory."""
    hydra_config = HydraConfig.get()
    run_dir = Path(hydra_config.runtime.output_dir)
    multirun = hydra_config.mode == RunMode.MULTIRUN
    overrides = list(hydra_config.overrides.task)
    try:
        run_config = to_run_config(cfg)
    except ConfigError as error:
        io.mark_started(run_dir, {}, overrides)
        io.mark_failed(run_dir, f"ConfigError: {error}\n")
        if not multirun:
            raise
        log.error("point %s failed: %s", overrides, error)
        return
    digest = config_hash(run_config)
    if multirun and io.is_complete(run_dir, digest):
        log.info("skipping %s: already complete (%s)", run_dir, digest)
        return
    io.mark_started(run_dir, run_config.to_dict(), overrides)
    try:
        result = run_experiment(run_config)
    except Exception as error:  # recorded in the run dir; a sweep goes on with its other points
        io.mark_failed(run_dir, traceback.format_exc())
        if not multirun:
            raise
        log.error("point %s failed (%s: %s); traceback in %s", overrides, type(error).__name__, error,
                  run_dir / io.FAILED)
        return
    io.write_outputs(run_dir, result)
    print(format_result(result))
    print(f"run directory: {run_dir}")


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def _app(cfg: DictConfig) -> None:
    """Bad configuration of a single run exits with status 2 and a one-line message naming the key."""
    try:
        _run_point(cfg)
    except ConfigError as error:
        print(f"asrpt-bench: error: {error}", file=sys.stderr)
        sys.exit(2)


def main() -> None:
    """Console entry point (`asrpt-bench`, or `python -m asrpt_bench.cli`)."""
    _app()


if __name__ == "__main__":
    main()
