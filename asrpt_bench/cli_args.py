"""Command-line arguments of `asrpt-bench` checked before Hydra sees them, each refusal in one line.

- `key=~/file`: `~` is expanded (Hydra's override grammar cannot lex an unquoted `~`);
- `hydra.launcher.n_jobs=0`: refused (joblib has no meaning for it and would print a traceback);
- `hydra/launcher=submitit_slurm` in a sweep on a machine without Slurm (no `srun`): refused (submitit
  would print a 25-line traceback);
- `experiment=NAME` without `-m`: a named experiment is a sweep, so a single run of it runs one point;
  `single_point_warning` says so;
- an option Hydra does not know (`-M`, `-multirun`, `-m=true`): refused in one line instead of
  Hydra's argparse usage text;
- an ad-hoc sweep (`-m` without `experiment=` or `hydra.sweep.dir=`) gets a directory of its own,
  `multirun/<task>/<swept keys>-<hash of the overrides>` (`sweep_dir_override`);
- options may come anywhere (`seed=0,1 -m scheduler.tau=0,1`): the overrides are handed to Hydra first,
  the options after them (`overrides_first`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil

import yaml

from .conf import CONFIG_DIR
from .errors import ConfigError

PROG = "asrpt-bench"
"""The program's name, which begins every line it writes to stderr."""

HOME_VALUE = re.compile(r"^(\+{0,2}[A-Za-z_][\w.]*)=(~[^/\s'\"]*(?:/.*)?)$")
N_JOBS = re.compile(r"^\+{0,2}hydra\.launcher\.n_jobs=(.*)$")
SLURM_LAUNCHER = re.compile(r"^\+{0,2}hydra/launcher=submitit_slurm$")
EXPERIMENT = re.compile(r"^\+{0,2}experiment=(.+)$")
MULTIRUN_FLAGS = ("-m", "--multirun")
FLAGS = ("-h", "--help", "--hydra-help", "--version", "--resolve", "-r", "--run", "-m", "--multirun", "-sc",
         "--shell-completion")
"""Hydra's options that take no value (`-sc install=bash`: the shell is an override)."""
VALUE_FLAGS = ("-c", "--cfg", "-p", "--package", "-cp", "--config-path", "-cn", "--config-name", "-cd",
               "--config-dir", "--experimental-rerun")
"""Hydra's options that take a value (as the next argument, or after `=`)."""
COMPLETION_FLAGS = ("-sc", "--shell-completion")
COMPLETION_COMMANDS = ("install=", "uninstall=", "query=")
"""What shell completion does, given as an override (`-sc install=bash`)."""
INFO_CHOICES = ("all", "config", "defaults", "defaults-tree", "plugins", "searchpath")
OPTIONAL_VALUE_FLAGS = {"-i": INFO_CHOICES, "--info": INFO_CHOICES}
"""Hydra's options whose value may follow them or be left out: name -> its choices."""
CHOICES = {"-c": ("job", "hydra", "all"), "--cfg": ("job", "hydra", "all"), **OPTIONAL_VALUE_FLAGS}
"""The values an option accepts, where Hydra restricts them."""


def check_options(args: list[str]) -> None:
    """Refuse an option Hydra does not know, a value given to one that takes none, a missing value and a
    value outside an option's choices (Hydra would print its usage text, 8 lines, for each)."""
    for position, arg in enumerate(args):
        if not arg.startswith("-"):
            continue
        flag, has_value, value = arg.partition("=")
        following = args[position + 1] if position + 1 < len(args) else None
        if not has_value and following is not None and not following.startswith("-") and (
                flag in VALUE_FLAGS or following in OPTIONAL_VALUE_FLAGS.get(flag, ())):
            has_value, value = "=", following
        if flag in COMPLETION_FLAGS and not any(other.startswith(COMPLETION_COMMANDS) for other in args):
            _refuse(f"option {flag} needs one of {', '.join(f'{c}SHELL' for c in COMPLETION_COMMANDS)} (e.g. "
                    f"{flag} install=bash)")
        if flag in FLAGS and not has_value:
            continue
        if flag in VALUE_FLAGS and not has_value:
            _refuse(f"option {flag} needs a value" + (f", one of {list(CHOICES[flag])}" if flag in CHOICES else ""))
        if flag in VALUE_FLAGS or flag in OPTIONAL_VALUE_FLAGS:
            if has_value and flag in CHOICES and value not in CHOICES[flag]:
                _refuse(f"option {flag} takes one of {list(CHOICES[flag])}, got {value!r}")
            continue
        _refuse(f"option {flag} takes no value" if flag in FLAGS else f"unknown option {arg!r}")


def _refuse(problem: str) -> None:
    raise ConfigError(f"{problem}; the options are -m/--multirun, --cfg, --resolve, --help and Hydra's other "
                      "flags (see --help), and overrides are key=value")


def overrides_first(args: list[str]) -> list[str]:
    """The overrides (in their order), then the options, each with its value. Hydra's parser reads the
    overrides only as one run of arguments, so `seed=0,1 -m` followed by an override (one the user typed
    after `-m`, or the sweep directory this module adds) would be refused with its usage text."""
    overrides: list[str] = []
    options: list[str] = []
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if not arg.startswith("-"):
            overrides.append(arg)
            continue
        options.append(arg)
        following = args[position] if position < len(args) else ""
        if following and ((arg in VALUE_FLAGS and not following.startswith("-"))
                          or following in OPTIONAL_VALUE_FLAGS.get(arg, ())):
            options.append(following)
            position += 1
    return overrides + options


def default_run_dir() -> str:
    """The single run's directory pattern of the config tree (`hydra.run.dir` in conf/config.yaml)."""
    tree = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text(encoding="utf-8"))
    return str(tree["hydra"]["run"]["dir"])


def expand_home(args: list[str]) -> list[str]:
    """`key=~/file` with `~` expanded."""
    expanded = []
    for arg in args:
        match = HOME_VALUE.match(arg)
        expanded.append(f"{match[1]}={os.path.expanduser(match[2])}" if match else arg)
    return expanded


def check_launcher(args: list[str]) -> None:
    """Refuse `hydra.launcher.n_jobs` values no launcher can run with (0 and non-integers), and the Slurm
    launcher in a sweep where there is no Slurm to submit to."""
    if any(flag in args for flag in MULTIRUN_FLAGS) and any(map(SLURM_LAUNCHER.match, args)) \
            and shutil.which("srun") is None:
        raise ConfigError("hydra/launcher=submitit_slurm submits to Slurm, and this machine has no srun on PATH: run "
                          "the sweep on a Slurm login node, or try it here with hydra/launcher=submitit_local")
    for arg in args:
        match = N_JOBS.match(arg)
        if not match:
            continue
        values = [value.strip() for value in match[1].split(",")]
        for value in values:
            if not re.fullmatch(r"-?[0-9]+", value) or int(value) == 0:
                raise ConfigError(f"hydra.launcher.n_jobs must be a number of worker processes >= 1 (or -1 for "
                                  f"one per CPU), got {value!r}")


def single_point_warning(args: list[str]) -> str | None:
    """The warning for `experiment=NAME` without -m (it runs one point of the sweep), else None."""
    if any(flag in args for flag in MULTIRUN_FLAGS):
        return None
    names = [match[1] for match in map(EXPERIMENT.match, args) if match and match[1] != "null"]
    if not names:
        return None
    return (f"experiment={names[-1]} is a sweep; without -m this runs one point of it (add -m to run the whole "
            "sweep)")


SWEEP_DIR = re.compile(r"^\+{0,2}hydra\.sweep\.dir=")
NOT_NAMING_A_SWEEP = ("progress=", "workers=", "hydra.", "hydra/", "cache.")
"""Overrides that change no result (where output goes, how points and schedulers are run, the cache), so they
leave the sweep's directory as it is: a rerun with another launcher resumes the same sweep."""


def sweep_dir_override(args: list[str]) -> str | None:
    """`hydra.sweep.dir=multirun/${task.name}/<name>` for an ad-hoc sweep, else None (a single run, a named
    experiment, which sets its own directory, or an explicit hydra.sweep.dir).

    `<name>` is the swept keys joined by `+` and 8 hex digits of the SHA-256 of the sorted overrides, so two
    different sweeps never share a directory (collect would mix them) and the same sweep always gets the
    same one (a rerun skips the points that completed)."""
    if not any(flag in args for flag in MULTIRUN_FLAGS):
        return None
    overrides = sorted(a.lstrip("+~") for a in args if not a.startswith("-"))
    if any(EXPERIMENT.match(a) or SWEEP_DIR.match(a) for a in overrides):
        return None
    kept = [a for a in overrides if not a.startswith(NOT_NAMING_A_SWEEP)]
    swept = [a.split("=", 1)[0] for a in kept if "," in a.split("=", 1)[-1]]
    digest = hashlib.sha256("\n".join(kept).encode("utf-8")).hexdigest()[:8]
    name = "+".join(swept) if swept else "sweep"
    return f"hydra.sweep.dir=multirun/${{task.name}}/{name}-{digest}"
