"""Content-keyed on-disk cache of prepared work: model-assigned job tables, fitted predictors and their predictions.

Every sweep point and every parallel worker needs the same loaded table and the same fitted forest;
the first computes them, the others read them here. An entry's key is the SHA-256 of everything its
value depends on: the kind of entry, the package version and a fingerprint of the package's own
files (code and packaged data, so editing the code or a profile never serves a stale entry), the
versions of the libraries whose objects are pickled, the bytes of any input trace, and the caller's
parameters (for tables `workloads.pipeline.TableSpec.cache_inputs`: every table-deciding parameter of the
workload source, so a new knob joins the key without touching this module; for predictions, the
fitted predictor's key inputs plus the simulated jobs' content, `frame_hash`). Entries are pickles
written atomically (io.atomic_write_bytes), so a reader never sees half an entry; an entry that does
not load is recomputed and rewritten. Every entry is signed with the user's own key and unpickled
only if its signature checks (cache_trust.py), so a planted entry never runs; a directory every user
can write to is refused. The cache marks its directory with a `MARKER` file, and `clear` deletes
only the entries it wrote there, never other files.

    asrpt-bench-cache info            # where the cache is, entries and size
    asrpt-bench-cache clear           # delete every entry (also: --dir DIR)
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import pickle
import sys
import warnings
from functools import lru_cache
from importlib.metadata import PackageNotFoundError
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

from .cache_trust import MAGIC, UntrustedEntry, check_directory, key_path, sign, signing_key, verify
from .errors import ConfigError
from .io import atomic_write_bytes, atomic_write_text
from .params import Params, param
from .rules import Rule, flag
from .versions import installed_version

T = TypeVar("T")
PACKAGE_ROOT = Path(__file__).resolve().parent
PICKLED_LIBRARIES = ("numpy", "pandas", "pyarrow", "scikit-learn")
MARKER = "ASRPT_BENCH_CACHE"
"""The file that marks a directory as this cache's; `clear` removes nothing from a directory without it."""


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/asrpt_bench`, else `~/.cache/asrpt_bench`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "asrpt_bench"


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of every file of the installed package (code and packaged data), read once per process."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_ROOT.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(str(path.relative_to(PACKAGE_ROOT)).encode("utf-8") + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _library_versions() -> dict[str, str]:
    """The versions of the libraries whose objects the cache pickles, looked up once per process
    (versions.installed_version; a process keeps the libraries it loaded)."""
    found = {}
    for name in ("asrpt_bench",) + PICKLED_LIBRARIES:
        try:
            found[name] = installed_version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


@lru_cache(maxsize=64)
def _content_hash(path: str, size: int, mtime_ns: int) -> str:
    target = Path(path)
    files = [target] if target.is_file() else sorted(p for p in target.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for file in files:
        digest.update(str(file.relative_to(target) if file != target else file.name).encode("utf-8") + b"\0")
        with file.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def content_hash(path: str | Path) -> str:
    """SHA-256 of a file's bytes, or of every file under a directory (names included); memoised per
    (path, size, modification time) within the process."""
    stat = Path(path).stat()
    return _content_hash(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


def frame_hash(frame: Any) -> str:
    """SHA-256 of a DataFrame's content: column names, dtypes, index and every value (pandas' stable
    row hashes, which do not depend on the process), for keys of entries computed from a table."""
    import pandas as pd

    digest = hashlib.sha256()
    digest.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode("utf-8") + b"\0")
    digest.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return digest.hexdigest()


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"__type__": type(value).__qualname__,
                **{f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def cache_key(kind: str, **inputs: Any) -> str:
    """Hex key of an entry of `kind` computed from `inputs` (dataclasses are expanded field by field)."""
    payload = {"kind": kind, "code": code_fingerprint(), "versions": _library_versions(), "inputs": _jsonable(inputs)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


MEMORY_ENTRIES = 6
_memory: dict[tuple, Any] = {}


def memoised(key: tuple, compute: Callable[[], tuple[T, str]]) -> tuple[T, str]:
    """The process memo in front of the disk cache: compute() (which returns a value and where it came
    from: 'hit', 'miss', 'off') once per process for `key`; the last few keys are kept, and a repeat
    reports 'memory'. Sweep points run in one process share prepared work this way."""
    if key in _memory:
        return _memory[key], "memory"
    value, status = compute()
    if len(_memory) >= MEMORY_ENTRIES:
        del _memory[next(iter(_memory))]
    _memory[key] = value
    return value, status


@dataclasses.dataclass(frozen=True)
class DiskCache:
    """The cache at `root` (None: disabled, every call computes). With `max_bytes`, writing an entry
    first removes the least recently used entries (a hit refreshes an entry's modification time) until
    the entries fit."""

    root: Path | None
    max_bytes: int | None = None

    def path(self, kind: str, key: str) -> Path:
        assert self.root is not None
        return self.root / kind / f"{key}.pkl"

    def get_or_compute(self, kind: str, key: str, compute: Callable[[], T]) -> tuple[T, str]:
        """The cached value of (kind, key), else compute, store and return it; the second item is
        'hit', 'miss' or 'off'."""
        if self.root is None:
            return compute(), "off"
        try:
            signing_key()
        except OSError as error:  # e.g. a read-only config directory: no signed cache, never a failed run
            warnings.warn(f"cannot read or make the cache signing key {key_path()} ({error}); the cache is not "
                          "used", stacklevel=2)
            return compute(), "off"
        path = self.path(kind, key)
        if path.exists():
            try:
                value = pickle.loads(verify(kind, key, path.read_bytes()))
                os.utime(path)  # recently used: the last to be evicted
                return value, "hit"
            except UntrustedEntry as error:  # never unpickled: it could run anyone's code
                warnings.warn(f"cache entry {path} is not trusted ({error}); recomputing it without loading it",
                              stacklevel=2)
            except Exception as error:  # an entry of another environment: recompute, then overwrite it
                warnings.warn(f"cache entry {path} does not load ({type(error).__name__}: {error}); recomputing",
                              stacklevel=2)
        value = compute()
        try:
            if not (self.root / MARKER).exists():
                atomic_write_text(self.root / MARKER, "asrpt-bench cache: `asrpt-bench-cache clear` removes the "
                                  "entries it wrote here\n")
            data = sign(kind, key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
            self.evict(len(data))
            atomic_write_bytes(path, data)
        except OSError as error:  # a read-only or full cache directory costs time, never a run
            warnings.warn(f"cannot write cache entry {path}: {error}", stacklevel=2)
        return value, "miss"


    def evict(self, incoming: int) -> int:
        """Remove the least recently used entries until they and `incoming` bytes fit `max_bytes`; how many."""
        if self.root is None or self.max_bytes is None:
            return 0
        found = [(path.stat().st_mtime_ns, path.stat().st_size, path) for path in entries(self.root)]
        total = sum(size for _, size, _ in found) + incoming
        removed = 0
        for _, size, path in sorted(found, key=lambda item: item[:1]):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            removed += 1
        return removed


def _is_directory_path(value: Any) -> bool:
    if not (isinstance(value, str) and value.strip()):
        return False
    path = Path(value).expanduser()
    return not path.exists() or path.is_dir()


def _directory_refusal(key: str, value: Any) -> str:
    if isinstance(value, str) and value.strip():
        return f"{key} must be a directory (it names a file), got {value!r}"
    return f"{key} must be null (the default directory) or a directory path, got {value!r}"


@dataclasses.dataclass(frozen=True)
class CacheSettings(Params):
    """The config group `cache`. None of its keys changes a result, so none enters the config hash."""

    dir: Optional[str] = param(None, Rule("null (the default directory) or a directory path",
                                          lambda v: v is None or _is_directory_path(v), _directory_refusal),
                               "null: $XDG_CACHE_HOME/asrpt_bench, else ~/.cache/asrpt_bench")
    enabled: bool = param(True, flag(), "false: compute everything in every run")
    max_size_gb: Optional[float] = param(4.0, Rule("null (no cap) or a size > 0 in GB", lambda v: v is None or (
        isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0)),
                                         "past it, the least recently used entries are removed (null: no cap)")

    def __post_init__(self) -> None:
        self.check("cache")

    def open(self) -> "DiskCache":
        """The cache these settings name: the directory (None: the default), or a disabled one; ConfigError for
        a directory every user can write to (cache_trust.check_directory)."""
        if not self.enabled:
            return DiskCache(None)
        root = Path(self.dir).expanduser() if self.dir else default_cache_dir()
        check_directory(root)
        return DiskCache(root, None if self.max_size_gb is None else int(self.max_size_gb * 1e9))


def _written_here(path: Path) -> bool:
    """An entry file this cache wrote (it starts with the signed-entry header)."""
    try:
        with path.open("rb") as stream:
            return stream.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def entries(root: Path) -> list[Path]:
    """The entries this cache wrote under `root` (none unless `root` holds the MARKER file)."""
    if not (Path(root) / MARKER).is_file():
        return []
    return sorted(path for path in Path(root).glob("*/*.pkl") if path.is_file() and _written_here(path))


def clear(root: Path) -> int:
    """Delete the entries this cache wrote under `root`, then kind folders left empty; never another file.
    ConfigError if `root` is not a cache directory (no MARKER file). Returns how many were removed."""
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"{root}: no such cache directory")
    if not (root / MARKER).is_file():
        raise ConfigError(f"{root}: not an asrpt-bench cache (no {MARKER} file); nothing removed")
    found = entries(root)
    for path in found:
        path.unlink()
    for kind_dir in sorted({path.parent for path in found}):
        if not any(kind_dir.iterdir()):
            kind_dir.rmdir()
    return len(found)


def main(argv: list[str] | None = None) -> None:
    """`asrpt-bench-cache info|clear [--dir DIR]`."""
    parser = argparse.ArgumentParser(prog="asrpt-bench-cache", description="Inspect or clear the cache of "
                                     "prepared workloads and fitted predictors.")
    parser.add_argument("action", choices=("info", "clear"))
    parser.add_argument("--dir", default=None, help=f"cache directory (default: {default_cache_dir()})")
    args = parser.parse_args(argv)
    root = Path(args.dir).expanduser() if args.dir else default_cache_dir()
    try:
        if args.action == "clear":
            print(f"removed {clear(root)} entries from {root}")
            return
        found = entries(root)
        size = sum(path.stat().st_size for path in found)
    except (ConfigError, OSError) as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    kinds = sorted({path.parent.name for path in found})
    print(f"{root}: {len(found)} entries ({', '.join(kinds) or 'none'}), {size / 1e6:.1f} MB")

if __name__ == "__main__":
    main()
