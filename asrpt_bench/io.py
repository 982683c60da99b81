"""Run directories: atomic writes of run outputs, status markers and readers.

A run directory is complete iff it holds a `COMPLETE` marker, written last, and every file that
marker lists is whole. A run that starts writes `INCOMPLETE` (with its config) before any work; a
run that fails writes `FAILED` with the traceback. Every file is written to a temporary name in the
same directory and moved into place with `os.replace`, so a reader never sees a half-written file,
and an interrupted run leaves a directory that is clearly marked incomplete.

`COMPLETE` is the run's checksum manifest: the line `ok`, then one line per file the run wrote
(config, overrides, every output, summary) in `sha256sum` form, `<SHA-256>  <name>`, so
`tail -n +2 COMPLETE | sha256sum -c` checks a run directory by hand and `verify_manifest` does it in
code. A file cut short, edited or removed after the run fails that check. (Run directories written
before the manifest list bare names; they are checked for presence only.)
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import math
import os
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from .errors import ConfigError

if TYPE_CHECKING:  # pandas is imported by the readers that return frames, not by every user of this module
    import pandas as pd

COMPLETE = "COMPLETE"
FAILED = "FAILED"
INCOMPLETE = "INCOMPLETE"
SUMMARY = "summary.json"
JOBS = "jobs.parquet"
SEGMENTS = "segments.parquet"
COMPARISON = "comparison.csv"
CONFIG = "config.json"
OVERRIDES = "overrides.json"
STATUSES = ("complete", "failed", "incomplete")
MANIFEST_HEADER = "ok"
GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class RunResult:
    """What a run produced: scalar summary, per-job table, the run segments of a preemptive run and any
    named extra tables (written as CSV)."""

    task: str
    summary: dict[str, Any]
    jobs: pd.DataFrame | None = None
    comparison: pd.DataFrame | None = None
    segments: pd.DataFrame | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _finite_or_none(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null."""
    if isinstance(value, dict):
        return {k: _finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(v) for v in value]
    if isinstance(value, (float, np.floating)) and not math.isfinite(float(value)):
        return None
    return value


def _publish(tmp: str, path: Path) -> None:
    """Give the temporary file ordinary permissions (mkstemp makes it 0600) and move it into place; an
    error names `path`, never the temporary name."""
    os.chmod(tmp, 0o644)
    try:
        os.replace(tmp, path)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None


def output_file_problem(path: Path) -> str:
    """'' when a file can be written at `path`, else why not, naming it: a directory is there, a folder on
    the way is a file, or its compressed (or plain) twin exists beside it (`refuse_twins`). A command
    checks its output with this before it works for minutes."""
    path = Path(path)
    if path.is_dir():
        return f"{path} is a directory; give the name of the file to write"
    folder = next((parent for parent in path.parents if parent.exists()), Path("."))
    if not folder.is_dir():
        return f"{path}: {folder} is a file, not a directory"
    twin = compressed_twin(path)
    if twin.exists():
        return (f"{path}: {twin} exists beside it, and a reader could not tell which is current; remove "
                f"{twin.name} or write to it")
    return ""


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file next to `path`, flush to disk, then move it into place."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        _publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, payload: Any) -> str:
    """Write `payload` as JSON (NaN and infinities as null); the SHA-256 of the bytes written."""
    data = (json.dumps(_finite_or_none(payload), indent=2, sort_keys=True, default=_json_default) + "\n").encode()
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


COMPRESSED = ".gz"


def compressed_twin(path: Path) -> Path:
    """The other form of a file: `NAME.gz` for `NAME` and back. A table or trace is kept in one form: a
    reader never guesses which of the two is current (`refuse_twins`)."""
    path = Path(path)
    if path.name.endswith(COMPRESSED):
        return path.with_name(path.name[: -len(COMPRESSED)])
    return path.with_name(path.name + COMPRESSED)


def refuse_twins(path: Path) -> None:
    """ConfigError when `path` and its compressed twin (or plain twin) both exist."""
    twin = compressed_twin(path)
    if Path(path).exists() and twin.exists():
        raise ConfigError(f"{path} and {twin.name} both exist beside each other, and a reader cannot tell which is "
                          "current; keep one of them")


def read_file_bytes(path: Path, source: str | None = None) -> bytes:
    """The bytes of a table or trace file, gunzipped when its name ends in .gz. One ConfigError line naming
    the file (`source`, else the path) for a .gz file that is not gzip data, is cut short or is damaged,
    and for gzip data under a name without .gz; OSError (file not found, a directory) is the caller's."""
    path = Path(path)
    source = source or str(path)
    data = path.read_bytes()
    if not path.name.endswith(COMPRESSED):
        if data[:2] == GZIP_MAGIC:
            raise ConfigError(f"{source}: the file is gzip-compressed; name it {path.name}.gz or gunzip it")
        return data
    if data and data[:2] != GZIP_MAGIC:
        raise ConfigError(f"{source}: named .gz but not gzip-compressed (it starts {data[:12]!r}); gzip it, or "
                          f"name it {path.name[: -len(COMPRESSED)]}")
    try:
        return gzip.decompress(data)
    except EOFError:
        raise ConfigError(f"{source}: the gzip data ends early, so the file was cut short (an interrupted copy or "
                          "download?); copy it again") from None
    except (gzip.BadGzipFile, zlib.error) as error:
        raise ConfigError(f"{source}: damaged gzip data ({error}); copy it again") from None


def frame_bytes(path: Path, frame: pd.DataFrame) -> bytes:
    """`frame` as the file `path` names: Parquet for `.parquet`, gzip-compressed CSV for `.gz` (no time
    stamp in the gzip header, so equal tables give equal bytes), CSV otherwise."""
    path = Path(path)
    if path.suffix == ".parquet":
        return frame.to_parquet(index=False)
    text = frame.to_csv(index=False).encode("utf-8")
    return gzip.compress(text, mtime=0) if path.suffix == COMPRESSED else text


def atomic_write_frame(path: Path, frame: pd.DataFrame) -> str:
    """Write `frame` as `frame_bytes` does, flushed, then moved into place; the SHA-256 of the bytes
    written. A `.parquet` file is written a row group at a time (`atomic_write_parquet`), so a long run's
    table never exists whole as Arrow data or as file bytes; every other form through atomic_write_bytes."""
    if Path(path).suffix == ".parquet":
        return atomic_write_parquet(path, frame)
    data = frame_bytes(path, frame)
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


ROW_GROUP_ROWS = 1 << 20
"""Rows of a parquet row group: pyarrow's default, so a table written a group at a time has the very bytes
frame.to_parquet(index=False) gives it, and a table of at most this many rows is one group."""
HASH_BLOCK = 1 << 20


def atomic_write_parquet(path: Path, frame: pd.DataFrame, group_rows: int | None = None) -> str:
    """Write `frame` as parquet (no index, the schema and pandas metadata of the whole frame) in row groups
    of `group_rows` rows (default ROW_GROUP_ROWS), each converted to Arrow and written before the next, to a temporary file next to
    `path`, flushed, then moved into place (a reader never sees a half-written file); the SHA-256 of the file.
    frame.to_parquet holds the whole table as Arrow data and the whole file as bytes at once; this holds
    one group. Read back, the file gives the frame to_parquet's would, whatever `group_rows` is."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    group_rows = ROW_GROUP_ROWS if group_rows is None else group_rows
    if isinstance(group_rows, bool) or not isinstance(group_rows, int) or group_rows < 1:
        raise ValueError(f"group_rows must be a positive whole number of rows, got {group_rows!r}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    schema = pa.Schema.from_pandas(frame, preserve_index=False)
    if frame.attrs:  # as pandas' to_parquet keeps them
        schema = schema.with_metadata({**schema.metadata, b"PANDAS_ATTRS": json.dumps(frame.attrs).encode()})
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            with pq.ParquetWriter(stream, schema) as writer:
                for begin in range(0, max(len(frame), 1), group_rows):
                    writer.write_table(pa.Table.from_pandas(frame.iloc[begin:begin + group_rows], schema=schema,
                                                            preserve_index=False))
            stream.flush()
            os.fsync(stream.fileno())
        digest = _sha256(Path(tmp))
        _publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return digest


def _earlier_outputs(run_dir: Path) -> set[str]:
    """Output files an earlier run may have left: the fixed names and those its COMPLETE marker lists."""
    return {SUMMARY, JOBS, COMPARISON, SEGMENTS, *listed_files(run_dir)}


def mark_started(run_dir: Path, config: dict[str, Any], overrides: list[str]) -> None:
    """Record the run's config and overrides and mark it incomplete, clearing any earlier outcome and
    the outputs of an earlier run (so a rerun cannot complete next to another run's tables)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / INCOMPLETE, "run started; outputs are not complete\n")
    for name in _earlier_outputs(run_dir):
        (run_dir / name).unlink(missing_ok=True)
    for marker in (COMPLETE, FAILED):
        (run_dir / marker).unlink(missing_ok=True)
    atomic_write_json(run_dir / CONFIG, config)
    atomic_write_json(run_dir / OVERRIDES, list(overrides))


def mark_failed(run_dir: Path, traceback_text: str) -> None:
    atomic_write_text(Path(run_dir) / FAILED, traceback_text)


def write_outputs(run_dir: Path, result: RunResult) -> None:
    """Write every output of `result`, then the COMPLETE marker last: the checksum manifest of the
    config and overrides `mark_started` wrote and of every output (module doc)."""
    run_dir = Path(run_dir)
    frames = {JOBS: result.jobs, COMPARISON: result.comparison, SEGMENTS: result.segments,
              **{f"{name}.csv": table for name, table in result.tables.items()}}
    checksums = {name: _sha256(run_dir / name) for name in (CONFIG, OVERRIDES) if (run_dir / name).is_file()}
    for name, frame in frames.items():
        if frame is not None:
            checksums[name] = atomic_write_frame(run_dir / name, frame)
    checksums[SUMMARY] = atomic_write_json(run_dir / SUMMARY, {"task": result.task, **result.summary})
    lines = [MANIFEST_HEADER, *(f"{digest}  {name}" for name, digest in checksums.items())]
    atomic_write_text(run_dir / COMPLETE, "".join(f"{line}\n" for line in lines))
    (run_dir / INCOMPLETE).unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    """The SHA-256 of a file, read a block at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(HASH_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def listed_files(run_dir: Path) -> dict[str, str | None]:
    """name -> SHA-256 of every file the COMPLETE marker lists (None for a bare name, as run directories
    written before the manifest have); {} without a readable marker. Only plain names count: a line
    naming a path elsewhere is never a file of this run."""
    try:
        lines = (Path(run_dir) / COMPLETE).read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError:
        return {}
    listed: dict[str, str | None] = {}
    for line in lines:
        digest, separator, name = line.partition("  ")
        if not separator:
            digest, name = "", line
        if name and Path(name).name == name and name not in (".", ".."):
            listed[name] = digest or None
    return listed


def verify_manifest(run_dir: Path) -> str:
    """'' when every file the COMPLETE marker lists is there with the checksum written at the end of the
    run, else the first problem, naming the file."""
    run_dir = Path(run_dir)
    try:
        header = (run_dir / COMPLETE).read_text(encoding="utf-8", errors="replace").splitlines()[:1]
    except OSError as error:
        return f"{COMPLETE}: cannot be read ({error.strerror or type(error).__name__})"
    if header != [MANIFEST_HEADER]:
        return f"{COMPLETE}: not a run's manifest (its first line is not {MANIFEST_HEADER!r})"
    for name, digest in listed_files(run_dir).items():
        path = run_dir / name
        if not path.is_file():
            return f"{name}: listed in {COMPLETE} but missing"
        if digest is not None and _sha256(path) != digest:
            return (f"{name}: its SHA-256 differs from the one {COMPLETE} recorded at the end of the run (cut short "
                    "or changed since)")
    return ""


def run_status(run_dir: Path) -> str:
    """'complete' (COMPLETE marker), 'failed' (FAILED marker) or 'incomplete' (anything else)."""
    run_dir = Path(run_dir)
    if (run_dir / COMPLETE).exists():
        return "complete"
    if (run_dir / FAILED).exists():
        return "failed"
    return "incomplete"


def is_complete(run_dir: Path, config_hash: str | None = None) -> bool:
    """True if the run finished and every file it wrote is whole (`verify_manifest`); with `config_hash`,
    only if it finished with that same config."""
    if run_status(run_dir) != "complete" or verify_manifest(run_dir):
        return False
    if config_hash is None:
        return True
    return read_summary(run_dir).get("config_hash") == config_hash


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def read_summary(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / SUMMARY
    return read_json(path) if path.exists() else {}


def read_config(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / CONFIG
    return read_json(path) if path.exists() else {}


def read_overrides(run_dir: Path) -> list[str]:
    """The run's command-line overrides (ours, else Hydra's saved `.hydra/overrides.yaml`)."""
    path = Path(run_dir) / OVERRIDES
    if path.exists():
        return list(read_json(path))
    hydra_overrides = Path(run_dir) / ".hydra" / "overrides.yaml"
    if hydra_overrides.exists():
        import yaml

        return [str(item) for item in (yaml.safe_load(hydra_overrides.read_text(encoding="utf-8")) or [])]
    return []


def read_jobs(run_dir: Path) -> pd.DataFrame:
    import pandas as pd

    return pd.read_parquet(Path(run_dir) / JOBS)


def read_comparison(run_dir: Path) -> pd.DataFrame | None:
    import pandas as pd

    path = Path(run_dir) / COMPARISON
    return pd.read_csv(path) if path.exists() else None


def read_failure(run_dir: Path) -> str:
    path = Path(run_dir) / FAILED
    return path.read_text(encoding="utf-8") if path.exists() else ""


def is_run_dir(path: Path) -> bool:
    """A directory some run wrote (its markers, our config record, or Hydra's saved config)."""
    path = Path(path)
    return any((path / name).exists() for name in (COMPLETE, FAILED, INCOMPLETE, CONFIG, ".hydra"))


def find_run_dirs(roots: Iterable[Path]) -> list[Path]:
    """Every run directory at or below the given roots, sorted; staging dirs count as incomplete runs."""
    found: set[Path] = set()
    for root in roots:
        root = Path(root)
        if not root.exists():
            raise FileNotFoundError(f"no such directory: {root}")
        candidates = [root] + [p for p in root.rglob("*") if p.is_dir()]
        found.update(p for p in candidates if p.name != ".hydra" and is_run_dir(p))
    return sorted(found)
