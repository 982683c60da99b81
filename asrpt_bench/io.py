"""Run directories: atomic writes of run outputs, status markers and readers.

A run directory is complete iff it holds a `COMPLETE` marker, written last. A run that starts
writes `INCOMPLETE` (with its config) before any work; a run that fails writes `FAILED` with the
traceback. Every file is written to a temporary name in the same directory and moved into place
with `os.replace`, so a reader never sees a half-written file, and an interrupted run leaves a
directory that is clearly marked incomplete.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
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
    """Give the temporary file ordinary permissions (mkstemp makes it 0600) and move it into place."""
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file next to `path`, flush to disk, then move it into place."""
    path = Path(path)
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


def atomic_write_json(path: Path, payload: Any) -> None:
    text = json.dumps(_finite_or_none(payload), indent=2, sort_keys=True, default=_json_default)
    atomic_write_text(path, text + "\n")


def atomic_write_frame(path: Path, frame: pd.DataFrame) -> None:
    """Parquet for `.parquet` paths, CSV otherwise, through atomic_write_bytes (flushed, then moved)."""
    path = Path(path)
    data = frame.to_parquet(index=False) if path.suffix == ".parquet" else frame.to_csv(index=False).encode("utf-8")
    atomic_write_bytes(path, data)


def _earlier_outputs(run_dir: Path) -> set[str]:
    """Output files an earlier run may have left: the fixed names and those its COMPLETE marker lists."""
    names = {SUMMARY, JOBS, COMPARISON, SEGMENTS}
    marker = run_dir / COMPLETE
    if marker.exists():
        listed = marker.read_text(encoding="utf-8").splitlines()[1:]
        names.update(name for name in listed if name and Path(name).name == name)
    return names


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
    """Write every output of `result`, then the COMPLETE marker last ("ok", then one output name a line)."""
    run_dir = Path(run_dir)
    frames = {JOBS: result.jobs, COMPARISON: result.comparison, SEGMENTS: result.segments,
              **{f"{name}.csv": table for name, table in result.tables.items()}}
    written = [name for name, frame in frames.items() if frame is not None]
    for name in written:
        atomic_write_frame(run_dir / name, frames[name])
    atomic_write_json(run_dir / SUMMARY, {"task": result.task, **result.summary})
    atomic_write_text(run_dir / COMPLETE, "".join(f"{line}\n" for line in ["ok", *written, SUMMARY]))
    (run_dir / INCOMPLETE).unlink(missing_ok=True)


def run_status(run_dir: Path) -> str:
    """'complete' (COMPLETE marker), 'failed' (FAILED marker) or 'incomplete' (anything else)."""
    run_dir = Path(run_dir)
    if (run_dir / COMPLETE).exists():
        return "complete"
    if (run_dir / FAILED).exists():
        return "failed"
    return "incomplete"


def is_complete(run_dir: Path, config_hash: str | None = None) -> bool:
    """True if the run finished; with `config_hash`, only if it finished with that same config."""
    if run_status(run_dir) != "complete":
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
    return pd.read_parquet(Path(run_dir) / JOBS)


def read_comparison(run_dir: Path) -> pd.DataFrame | None:
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
