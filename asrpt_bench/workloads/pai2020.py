"""Loader for the Alibaba PAI 2020 GPU trace (cluster-trace-gpu-v2020) exactly as published.

Reads pai_job_table.csv, pai_task_table.csv and pai_group_tag_table.csv: headerless, columns in the
order of the upstream schema/*.header files (each may be gzipped, NAME.csv.gz), from a directory or a
.tar.gz holding them (at any depth; two files of one table are refused). Applies paper-notes 10 items 18-19:

- keep jobs whose status is Terminated, whose summed plan_gpu over tasks is > 0, with duration > 0;
- g_i = sum over the job's tasks of inst_num * ceil(plan_gpu / 100) (a fractional GPU counts as one;
  an empty inst_num counts as one instance);
- duration = max(task end_time) - min(task start_time) over the job's tasks with both times,
  falling back to the job's end_time - start_time;
- release = the job's start_time (its submission), shifted so the first kept job is at 0;
- user from the job table; group from the group-tag table joined on inst_id. When several tag rows
  share an inst_id, the most frequent non-empty group wins, ties going to the first in file order.

Empty cells are normal in the trace (CPU tasks have no plan_gpu, running jobs no end time);
non-numeric text in a numeric column is an error naming the file, row and column.
"""

from __future__ import annotations

import tarfile
import zlib
from contextlib import ExitStack
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..io import COMPRESSED
from .parsing import parse_numeric, parse_text, read_text_csv
from .schema import MAX_GPUS, validate_job_table
from .slicing import sort_by_release

JOB_COLUMNS = ["job_name", "inst_id", "user", "status", "start_time", "end_time"]
TASK_COLUMNS = ["job_name", "task_name", "inst_num", "status", "start_time", "end_time",
                "plan_cpu", "plan_mem", "plan_gpu", "gpu_type"]
GROUP_TAG_COLUMNS = ["inst_id", "user", "gpu_type_spec", "group", "workload"]
PAI_FILES = {
    "pai_job_table.csv": JOB_COLUMNS,
    "pai_task_table.csv": TASK_COLUMNS,
    "pai_group_tag_table.csv": GROUP_TAG_COLUMNS,
}
KEPT_STATUS = "Terminated"


def load_pai2020(path: str | Path) -> pd.DataFrame:
    """The PAI 2020 trace at `path` (directory or .tar.gz) as a validated job table.

    `attrs["filtered"]` counts the jobs dropped by each filter; `attrs["recurrence_keys"]` is "trace".
    """
    tables = _read_tables(Path(path))
    jobs, tasks, tags = (tables[name] for name in PAI_FILES)
    table, filtered = _job_table(jobs, tasks, tags, str(path))
    validated = validate_job_table(table, str(path))
    validated.attrs.update({"source": str(path), "recurrence_keys": "trace", "filtered": filtered})
    return validated


def _read_tables(path: Path) -> dict[str, tuple[pd.DataFrame, str]]:
    if path.is_dir():
        found = {name: _find_in_dir(path, name) for name in PAI_FILES}
        return {name: (read_text_csv(file, str(file), names=PAI_FILES[name]), str(file))
                for name, file in found.items()}
    if path.is_file() and tarfile.is_tarfile(path):
        try:
            return _read_archive(path)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as error:
            raise ConfigError(f"{path}: the archive is cut short or damaged ({type(error).__name__}: "
                              f"{str(error).strip() or 'no detail'}); copy or download it again") from None
    raise ConfigError(f"{path}: not a directory or a .tar.gz archive holding {sorted(PAI_FILES)}")


def _read_archive(path: Path) -> dict[str, tuple[pd.DataFrame, str]]:
    with tarfile.open(path, "r:*") as archive:
        members: dict[str, list[tarfile.TarInfo]] = {}
        for member in archive.getmembers():
            if member.isfile():
                members.setdefault(Path(member.name).name.removesuffix(COMPRESSED), []).append(member)
        result = {}
        for name, columns in PAI_FILES.items():
            found = [member.name for member in members.get(name, [])]
            _refuse_several(path, name, found, "the archive", f"the archive has no {name}")
            source = f"{path}:{found[0]}"
            with ExitStack() as stack:
                handle: IO[bytes] = stack.enter_context(archive.extractfile(members[name][0]))
                result[name] = (read_text_csv(handle, source, names=columns), source)
        return result


def _refuse_several(where: Path, name: str, found: list[str], what: str, missing: str) -> None:
    """Exactly one file of the trace may carry `name`: none is refused (`missing`), and so are two (which
    one is the trace would be a guess)."""
    if not found:
        raise ConfigError(f"{where}: {missing}")
    if len(found) > 1:
        raise ConfigError(f"{where}: {what} holds {len(found)} copies of {name} ({', '.join(sorted(found))}); "
                          "point workload.path at the one trace you mean")


def _find_in_dir(directory: Path, name: str) -> Path:
    """The one file `name` (or `name`.gz) at any depth below `directory`."""
    matches = sorted([*directory.rglob(name), *directory.rglob(name + COMPRESSED)])
    _refuse_several(directory, name, [str(match) for match in matches], "the directory",
                    f"no {name} found (looked in all subdirectories)")
    return matches[0]


def _job_table(jobs: tuple[pd.DataFrame, str], tasks: tuple[pd.DataFrame, str],
               tags: tuple[pd.DataFrame, str], source: str) -> tuple[pd.DataFrame, dict[str, int]]:
    job_frame, job_source = jobs
    task_frame, task_source = tasks
    tag_frame, tag_source = tags
    job_name = parse_text(job_frame, "job_name", job_source, 0)
    job_start = parse_numeric(job_frame, "start_time", job_source, 0, required=False)
    job_end = parse_numeric(job_frame, "end_time", job_source, 0, required=False)
    task_job = parse_text(task_frame, "job_name", task_source, 0)
    inst_num = parse_numeric(task_frame, "inst_num", task_source, 0, required=False, minimum=0.0)
    plan_gpu = parse_numeric(task_frame, "plan_gpu", task_source, 0, required=False, minimum=0.0)
    task_start = parse_numeric(task_frame, "start_time", task_source, 0, required=False)
    task_end = parse_numeric(task_frame, "end_time", task_source, 0, required=False)

    plan = np.nan_to_num(plan_gpu, nan=0.0)
    instances = np.nan_to_num(inst_num, nan=1.0)
    whole_gpus = instances * np.ceil(plan / 100.0)
    timed = ~np.isnan(task_start) & ~np.isnan(task_end)
    per_task = pd.DataFrame({
        "job_name": task_job, "plan_gpu": plan, "gpus": whole_gpus,
        "start": np.where(timed, task_start, np.nan), "end": np.where(timed, task_end, np.nan),
    })
    per_job = per_task.groupby("job_name", sort=False).agg(
        plan_gpu=("plan_gpu", "sum"), gpus=("gpus", "sum"), start=("start", "min"), end=("end", "max"))

    table = pd.DataFrame({"job_id": job_name, "submit": job_start,
                          "user": job_frame["user"].to_numpy(dtype=object),
                          "inst_id": job_frame["inst_id"].to_numpy(dtype=object),
                          "status": job_frame["status"].to_numpy(dtype=object)})
    table = table.join(per_job, on="job_id")
    task_duration = (table["end"] - table["start"]).to_numpy(dtype=float)
    job_duration = job_end - job_start
    table["duration"] = np.where(np.isnan(task_duration), job_duration, task_duration)

    filtered = {"jobs_in_file": len(table)}
    keep = table["status"].astype(str).str.strip() == KEPT_STATUS
    filtered["not_terminated"] = int((~keep).sum())
    has_gpu = keep & (table["plan_gpu"].fillna(0.0) > 0) & (table["gpus"].fillna(0.0) >= 1)
    filtered["no_gpu"] = int((keep & ~has_gpu).sum())
    has_time = has_gpu & (table["duration"] > 0) & table["submit"].notna()
    filtered["no_positive_duration"] = int((has_gpu & ~has_time).sum())
    table = table[has_time.to_numpy()].copy()
    filtered["kept"] = len(table)
    if table.empty:
        raise ConfigError(f"{source}: no job passes the filters (Terminated, plan_gpu > 0, duration > 0): "
                          f"{filtered}")

    table["group"] = table["inst_id"].map(_group_per_instance(tag_frame))
    table["release"] = table["submit"] - table["submit"].min()
    too_many = table["gpus"] > MAX_GPUS
    if too_many.any():
        job = table.loc[too_many, "job_id"].iloc[0]
        raise ConfigError(f"{task_source}: job {job!r}: its tasks ask for {table.loc[too_many, 'gpus'].iloc[0]:.6g} "
                          f"GPUs (inst_num x ceil(plan_gpu / 100)), more than {MAX_GPUS}")
    table["gpus"] = table["gpus"].astype(np.int64)
    columns = ["job_id", "release", "gpus", "duration", "user", "group"]
    return sort_by_release(table[columns].reset_index(drop=True)), filtered


def _group_per_instance(tags: pd.DataFrame) -> pd.Series:
    """inst_id -> its most frequent non-empty group tag (ties: first in file order)."""
    tagged = tags.loc[tags["inst_id"].notna() & tags["group"].notna(), ["inst_id", "group"]]
    if tagged.empty:
        return pd.Series(dtype=object)
    counts = tagged.groupby(["inst_id", "group"], sort=False).size().rename("count").reset_index()
    counts["first"] = np.arange(len(counts))
    best = counts.sort_values(["inst_id", "count", "first"], ascending=[True, False, True], kind="stable")
    return best.drop_duplicates("inst_id").set_index("inst_id")["group"]

