"""Run directories that are unique and never lose what a run did not write.

A run builds its record (config, overrides, outputs and the COMPLETE or FAILED marker) in a fresh
staging directory next to its target, made exclusively by `tempfile.mkdtemp`, and `publish` moves
it into place only when the run has an outcome. A refused run (exit 2) removes its staging
directory and leaves the target exactly as it was. Publishing replaces only an earlier run's record
(the fixed output names and those its COMPLETE marker lists); a target holding any other file of
those names is refused, so a user's own `config.json` or `summary.json` is never overwritten.

`unique_suffix` names a single run's directory beyond its timestamp (process id and random bits),
so two runs started in the same second never share a directory.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import secrets
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from . import io
from .errors import ConfigError

MARKERS = (io.COMPLETE, io.FAILED, io.INCOMPLETE)
HYDRA_FILES = ("config.yaml", "hydra.yaml", "overrides.yaml")
RECORD = (io.CONFIG, io.OVERRIDES, io.SUMMARY, io.JOBS, io.COMPARISON, *MARKERS)
STAGING_INFIX = ".staging-"
HYDRA_SUBDIR = ".hydra"


def unique_suffix() -> str:
    """`<pid>-<4 hex digits>`: distinct for processes alive at once, and across hosts with high odds."""
    return f"{os.getpid()}-{secrets.token_hex(2)}"


def make_staging(target: Path) -> Path:
    """A new, empty directory next to `target` that no other process can have made."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}{STAGING_INFIX}", dir=target.parent))
    staging.chmod(0o755)  # mkdtemp makes it 0700; a published run directory is an ordinary one
    return staging


def is_staging(path: Path) -> bool:
    return Path(path).name.startswith(".") and STAGING_INFIX in Path(path).name


def target_of(staging: Path) -> Path:
    """The run directory a staging directory was made for (`make_staging` names it `.<target>.staging-*`)."""
    staging = Path(staging)
    return staging.parent / staging.name[1:staging.name.rindex(STAGING_INFIX)]


def _started_ns(run_dir: Path) -> int:
    """When a run started: its config record's time stamp (written first, and moved with the record)."""
    config = Path(run_dir) / io.CONFIG
    return (config if config.is_file() else Path(run_dir)).stat().st_mtime_ns


def superseded(staging: Path) -> bool:
    """Whether a staging directory a killed run left behind (SIGKILL, a lost node) is superseded by the
    complete run in its target: one that started after it, or one with the very same config (the record
    the killed run would have published). Such a directory is no run of its own; one that is not
    superseded is an incomplete run."""
    target = target_of(staging)
    if not is_staging(staging) or not io.is_complete(target):
        return False
    config = Path(staging) / io.CONFIG
    if config.is_file() and config.read_bytes() == (target / io.CONFIG).read_bytes():
        return True
    return _started_ns(target) >= _started_ns(staging)


def replaceable(target: Path) -> set[str]:
    """Names in `target` an earlier run wrote (so a new run may replace them): its record files and the
    outputs its COMPLETE marker lists; nothing when `target` holds no run marker."""
    target = Path(target)
    if not any((target / marker).exists() for marker in MARKERS):
        return set()
    return set(RECORD) | set(io.listed_files(target))


def foreign(target: Path, names: set[str] | tuple[str, ...] = RECORD) -> list[str]:
    """Those of `names` present in `target` that no earlier run wrote there."""
    target = Path(target)
    if not target.is_dir():
        return []
    allowed = replaceable(target)
    return sorted(name for name in names if name not in allowed and (target / name).exists())


def check_target(target: Path) -> None:
    """Refuse a target directory whose record names hold files no run wrote (e.g. hydra.run.dir=.)."""
    _refuse_foreign(target, foreign(target))


def _refuse_foreign(target: Path, clash: list[str]) -> None:
    if clash:
        raise ConfigError(f"{target}: already holds {clash}, which no run wrote; a run never overwrites them: "
                          "choose an empty or new output directory (hydra.run.dir=...)")


def stage(target: Path, config: dict[str, Any], overrides: list[str]) -> Path:
    """A staging directory for `target`, already holding the run's config and overrides."""
    staging = make_staging(target)
    io.mark_started(staging, config, overrides)
    return staging


def publish(staging: Path, target: Path) -> None:
    """Move the staged record into `target`, replacing only an earlier run's record there.

    `target` is marked INCOMPLETE first, the earlier run's markers and outputs are removed, the new
    files move in one by one (each `os.replace` is atomic) and the new marker moves in last, all under an
    exclusive lock on `target`. A FAILED record brings only the config, the overrides and the
    traceback."""
    staging, target = Path(staging), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    with _locked(target):
        _publish(staging, target)
    discard(staging)


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive lock on `directory` itself (flock on its descriptor: no file is added to it), so two
    runs publishing into one directory at once do not mix their files."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def _publish(staging: Path, target: Path) -> None:
    if (staging / io.FAILED).exists():  # a failed run publishes its record, never its partial outputs
        for path in staging.iterdir():
            if path.name not in (io.CONFIG, io.OVERRIDES, io.FAILED, io.INCOMPLETE):
                path.unlink()
    staged = {path.name for path in staging.iterdir()}
    _refuse_foreign(target, foreign(target, staged | set(RECORD)))
    earlier = replaceable(target)
    io.atomic_write_text(target / io.INCOMPLETE, "run started; outputs are not complete\n")
    for name in sorted(earlier - {io.INCOMPLETE}):
        path = target / name
        if path.is_file() or path.is_symlink():
            path.unlink()
    markers = [name for name in (io.COMPLETE, io.FAILED) if name in staged]
    for name in sorted(staged - set(MARKERS)):
        os.replace(staging / name, target / name)
    for name in markers:
        os.replace(staging / name, target / name)
    if markers:
        (target / io.INCOMPLETE).unlink(missing_ok=True)


def discard(staging: Path) -> None:
    """Remove a staging directory this process made (only staging directories, by their name)."""
    if is_staging(staging):
        shutil.rmtree(staging, ignore_errors=True)


def write_run_dir(path: Path, result: io.RunResult, config: dict[str, Any], overrides: list[str] = ()) -> Path:
    """Write a whole run directory outside Hydra: build it in a fresh staging directory, then move it in
    (a rename when `path` is absent or empty; else `publish`, which replaces only an earlier run)."""
    path = Path(path)
    staging = stage(path, config, list(overrides))
    try:
        io.write_outputs(staging, result)
        try:
            os.rename(staging, path)  # atomic when `path` is absent or an empty directory
            return path
        except OSError:
            if not path.is_dir():
                raise
        publish(staging, path)
    except BaseException:
        discard(staging)
        raise
    return path


class HydraRecord:
    """What Hydra itself writes into a run directory before the run starts (`.hydra/*.yaml` and the
    job log), saved beforehand so that a refused run can put it back byte for byte, and which folders
    existed then, so that a refused run removes only those Hydra made for it.

    Only a directory named on the command line (`hydra.run.dir=DIR`, without interpolations) can
    hold an earlier run: the default directory names are unique."""

    def __init__(self, target: Path | None, job_name: str = "cli", existing: frozenset[Path] = frozenset()) -> None:
        self.target = target
        self.existing = existing
        self.saved: dict[Path, bytes | None] = {}
        if target is None:
            return
        for path in [*(target / HYDRA_SUBDIR / name for name in HYDRA_FILES), target / f"{job_name}.log"]:
            self.saved[path] = path.read_bytes() if path.is_file() else None

    @classmethod
    def of_arguments(cls, args: Sequence[str], default_dir: str, job_name: str = "cli") -> "HydraRecord":
        """The record of a single run's directory: the one its `hydra.run.dir=DIR` argument names, else
        `default_dir` (Hydra's pattern, e.g. `outputs/${task.name}/${now:...}`)."""
        named = [arg.split("=", 1)[1] for arg in args if arg.lstrip("+").startswith("hydra.run.dir=")]
        pattern = named[-1] if named else default_dir
        existing = existing_dirs(pattern)
        if not named or "${" in named[-1]:
            return cls(None, job_name, existing)
        target = Path(named[-1]).expanduser()
        return cls(target if target.is_dir() else None, job_name, existing)

    def restore(self) -> None:
        """Put back every saved file as it was (files Hydra created are removed, then `.hydra/` if empty)."""
        if self.target is None or not self.target.is_dir():
            return
        for path, data in self.saved.items():
            if data is None:
                path.unlink(missing_ok=True)
            elif not path.is_file() or path.read_bytes() != data:
                io.atomic_write_bytes(path, data)
        hydra_dir = self.target / HYDRA_SUBDIR
        if hydra_dir.is_dir() and not any(hydra_dir.iterdir()):
            hydra_dir.rmdir()

    def remove_created(self, target: Path, job_name: str) -> None:
        """After a refused run: if `target` holds nothing but what Hydra wrote for this run (`.hydra/` and
        the job log), remove those, then the directory and its parents below the working directory while
        they are empty and did not exist before the run. Anything else is left exactly as it is."""
        target = Path(target).resolve()
        here = Path.cwd().resolve()
        if not target.is_dir() or target == here:
            return
        entries = {path.name for path in target.iterdir()}
        hydra_dir = target / HYDRA_SUBDIR
        if not entries <= {HYDRA_SUBDIR, f"{job_name}.log"}:
            return
        if hydra_dir.is_dir() and not {path.name for path in hydra_dir.iterdir()} <= set(HYDRA_FILES):
            return
        if hydra_dir.is_dir():
            for name in HYDRA_FILES:
                (hydra_dir / name).unlink(missing_ok=True)
            hydra_dir.rmdir()
        (target / f"{job_name}.log").unlink(missing_ok=True)
        for directory in [target, *target.parents]:
            if (directory == here or here not in directory.parents or directory in self.existing
                    or any(directory.iterdir())):
                break
            directory.rmdir()


def existing_dirs(pattern: str) -> frozenset[Path]:
    """The directories that exist now (resolved) among those a run directory named by `pattern` could be
    or lie in: the ancestors of its fixed part, and below it every folder down to the pattern's depth
    (`outputs/${task.name}/${now:...}`: outputs/ and each folder in it, and each folder in those)."""
    parts = Path(pattern).expanduser().parts
    fixed = list(itertools.takewhile(lambda part: "${" not in part, parts))
    base = Path(*fixed) if fixed else Path(".")
    found = [path for path in (base, *base.parents) if path.is_dir()]
    level = [base] if base.is_dir() else []
    for _ in parts[len(fixed):]:
        level = [child for directory in level for child in directory.iterdir() if child.is_dir()]
        found.extend(level)
    return frozenset(path.resolve() for path in found)
