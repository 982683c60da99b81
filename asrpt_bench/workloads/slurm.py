"""Loader for a Slurm accounting export: the output of

    sacct --allusers --parsable2 --format=JobID,User,Account,Partition,Submit,Start,End,State,AllocTRES,ReqTRES,TimelimitRaw,NNodes

(fields separated by `|`, a header line first; more fields, in any order, are fine as long as sacct has them,
and JobID, Submit, Start, End, State and AllocTRES or ReqTRES are there). Per job:

- job steps (`123.batch`, `123.extern`, `123.0`) are folded into their job: the allocation's own row
  holds its times, state and resources; the components of a heterogeneous job (`123+0`, `123+1`) are
  one job with the GPUs of all components, submitted at the first submission, started at the first start
  and ended at the last end. Array tasks (`123_4`) are jobs of their own;
- GPUs from `gres/gpu=N` in AllocTRES (else the sum of the typed `gres/gpu:<type>=N`), from ReqTRES when
  AllocTRES is empty (a job that never got an allocation);
- the state is the first word of State (`CANCELLED by 1234` is CANCELLED);
- times `YYYY-MM-DDTHH:MM:SS` without a zone, read in `workload.timezone` (`Unknown`/`None`: not known);
- the requested time limit from TimelimitRaw (minutes; `UNLIMITED` and `Partition_Limit`: none);
- user from User, group from Account, partition from Partition.

Which jobs are kept and the trace card: joblog.py.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..core import ConfigError
from .instants import StampColumn, repeated_hour_note, to_seconds, where
from .joblog import LogJobs, log_job_table
from .parsing import read_text

SACCT_FIELDS = (
    "Account", "AdminComment", "AllocCPUS", "AllocNodes", "AllocTRES", "AssocID", "AveCPU", "AveCPUFreq",
    "AveDiskRead", "AveDiskWrite", "AvePages", "AveRSS", "AveVMSize", "BlockID", "Cluster", "Comment",
    "Constraints", "ConsumedEnergy", "ConsumedEnergyRaw", "Container", "CPUTime", "CPUTimeRAW", "DBIndex",
    "DerivedExitCode", "Elapsed", "ElapsedRaw", "Eligible", "End", "ExitCode", "Extra", "FailedNode", "Flags",
    "GID", "Group", "JobID", "JobIDRaw", "JobName", "Layout", "Licenses", "MaxDiskRead", "MaxDiskReadNode",
    "MaxDiskReadTask", "MaxDiskWrite", "MaxDiskWriteNode", "MaxDiskWriteTask", "MaxPages", "MaxPagesNode",
    "MaxPagesTask", "MaxRSS", "MaxRSSNode", "MaxRSSTask", "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask",
    "McsLabel", "MinCPU", "MinCPUNode", "MinCPUTask", "NCPUS", "NNodes", "NodeList", "NTasks", "Partition",
    "Planned", "PlannedCPU", "PlannedCPURAW", "Priority", "QOS", "QOSRAW", "QOSREQ", "Reason", "ReqCPUFreq",
    "ReqCPUFreqGov", "ReqCPUFreqMax", "ReqCPUFreqMin", "ReqCPUS", "ReqMem", "ReqNodes", "ReqTRES",
    "ReqReservation", "Reservation", "ReservationId", "Restarts", "SegmentSize", "SLUID", "Start", "State",
    "StdErr", "StdIn", "StdOut", "Submit", "SubmitLine", "Suspended", "SystemComment", "SystemCPU", "Timelimit",
    "TimelimitRaw", "TotalCPU", "TRESUsageInAve", "TRESUsageInMax", "TRESUsageInMaxNode", "TRESUsageInMaxTask",
    "TRESUsageInMin", "TRESUsageInMinNode", "TRESUsageInMinTask", "TRESUsageInTot", "TRESUsageOutAve",
    "TRESUsageOutMax", "TRESUsageOutMaxNode", "TRESUsageOutMaxTask", "TRESUsageOutMin", "TRESUsageOutMinNode",
    "TRESUsageOutMinTask", "TRESUsageOutTot", "UID", "User", "UserCPU", "WCKey", "WCKeyID", "WorkDir")
"""The fields `sacct --helpformat` lists (Slurm 25.11); a header with any other name is refused."""
REQUIRED_FIELDS = ("JobID", "Submit", "Start", "End", "State")
FINISHED_STATES = ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                   "DEADLINE", "BOOT_FAIL")
"""States a job ends in (sacct's JOB STATE CODES); its observed run time is what the log holds."""
UNFINISHED_STATES = ("PENDING", "RUNNING", "REQUEUED", "RESIZING", "REVOKED", "SUSPENDED", "COMPLETING",
                     "CONFIGURING", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SIGNALING", "SPECIAL_EXIT",
                     "STAGE_OUT", "STOPPED")
"""States of a job that had not ended (or never ran here) when the log was written."""
UNKNOWN_TIMES = ("Unknown", "None", "")
NO_LIMIT = ("UNLIMITED", "Partition_Limit", "")
GPU_TRES = re.compile(r"gres/gpu(:[^=]+)?")
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "samples" / "sacct_sample.txt"
"""A synthetic sacct export shipped with the package (docs/operators.md runs on it; how it was made:
data/samples/README.md)."""


def load_slurm(path: str | Path, *, timezone: str = "UTC", states: list[str] | None = None) -> pd.DataFrame:
    """The jobs of a `sacct --parsable2` export at `path` as a job table with its trace card (module doc)."""
    source = str(path)
    header, rows, lines = _read(Path(path), source)
    return log_job_table(_log_jobs(header, rows, lines, source, timezone), states)


def _read(path: Path, source: str) -> tuple[list[str], list[list[str]], np.ndarray]:
    """Header fields (sacct's spelling), data rows split at '|' and the file line of each row."""
    text = read_text(path, source)
    numbered = [(number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not numbered:
        raise ConfigError(f"{source}: the file is empty (no header line, no rows)")
    header = [_field_name(name.strip(), source) for name in numbered[0][1].split("|")]
    for name in REQUIRED_FIELDS:
        if name not in header:
            raise ConfigError(f"{source}: the header line has no {name!r} field; workload=slurm reads sacct "
                              "--parsable2 output with at least JobID, Submit, Start, End, State and AllocTRES or "
                              f"ReqTRES (fields found: {header})")
    if "AllocTRES" not in header and "ReqTRES" not in header:
        raise ConfigError(f"{source}: the header line has neither 'AllocTRES' nor 'ReqTRES', so no job's GPUs are "
                          f"known (fields found: {header})")
    repeated = [name for name in header if header.count(name) > 1]
    if repeated:
        raise ConfigError(f"{source}: field {repeated[0]!r} appears more than once in the header line")
    rows, lines = [], []
    for number, line in numbered[1:]:
        fields = line.split("|")
        if len(fields) != len(header):
            raise ConfigError(f"{source}: row {len(rows) + 1} (line {number}) has {len(fields)} '|'-separated "
                              f"field(s), expected {len(header)} (as the header line)")
        rows.append(fields)
        lines.append(number)
    if not rows:
        raise ConfigError(f"{source}: no job rows (the file has a header line only)")
    return header, rows, np.array(lines)


def _field_name(name: str, source: str) -> str:
    """sacct's spelling of a header field (sacct matches field names without regard to case)."""
    by_lower = {field.lower(): field for field in SACCT_FIELDS}
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    if "," in name or "\t" in name:
        raise ConfigError(f"{source}: the header line is not sacct --parsable2 output (fields separated by vertical "
                          f"bars): {name[:80]!r}")
    close = difflib.get_close_matches(name, SACCT_FIELDS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(f"{source}: unknown field {name!r} in the header line{hint}; workload=slurm reads the fields "
                      "of `sacct --helpformat`")


def _log_jobs(header: list[str], rows: list[list[str]], lines: np.ndarray, source: str, timezone: str) -> LogJobs:
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    job_ids = frame["JobID"].str.strip().to_numpy(dtype=object)
    step = np.array(["." in job_id for job_id in job_ids])
    own = np.flatnonzero(~step)
    _refuse_duplicates(job_ids, own, lines, source)
    keys = np.array([job_id.split("+")[0] for job_id in job_ids[own]], dtype=object)
    state = _states(frame["State"].to_numpy(dtype=object)[own], own, lines, source)
    stamps = [StampColumn(name, _known_times(frame[name].to_numpy(dtype=object)[own]), lines[own])
              for name in ("Submit", "Start", "End")]
    (submit, start, end), repeated = to_seconds(stamps, source, timezone)
    gpus = _gpus(frame, own, lines, source)
    limit = _time_limit(frame, own, lines, source)
    per_row = pd.DataFrame({"key": keys, "row": own, "submit": submit, "start": start, "end": end, "gpus": gpus})
    jobs = per_row.groupby("key", sort=False).agg(row=("row", "first"), submit=("submit", "min"),
                                                  start=("start", "min"), end=("end", "max"), gpus=("gpus", "sum"),
                                                  components=("row", "size"))
    first = jobs["row"].to_numpy()
    at = np.searchsorted(own, first)
    text = {name: frame[name].str.strip().to_numpy(dtype=object)[first] if name in frame else None
            for name in ("User", "Account", "Partition")}
    known_parents = set(keys)
    orphans = sum(1 for job_id in job_ids[step] if job_id.split(".")[0].split("+")[0] not in known_parents)
    return LogJobs(source=source, format="slurm", job_id=jobs.index.to_numpy(dtype=object), lines=lines[first],
                   submit=jobs["submit"].to_numpy(dtype=float), start=jobs["start"].to_numpy(dtype=float),
                   end=jobs["end"].to_numpy(dtype=float), gpus=jobs["gpus"].to_numpy(dtype=float),
                   state=state[at], finished_states=FINISHED_STATES,
                   columns={"submit": "Submit", "start": "Start", "end": "End"},
                   user=_blank_is_none(text["User"]), group=_blank_is_none(text["Account"]),
                   partition=_blank_is_none(text["Partition"]), time_limit=limit[at],
                   read={"rows": len(rows), "job steps folded into their jobs": int(step.sum()) - orphans,
                         "job steps without their job (ignored)": orphans,
                         "heterogeneous job components folded": int((jobs["components"] - 1).sum())},
                   notes=[repeated_hour_note(source, timezone, repeated)] if repeated else [])


def _refuse_duplicates(job_ids: np.ndarray, own: np.ndarray, lines: np.ndarray, source: str) -> None:
    seen: set[str] = set()
    for i in own:
        if job_ids[i] in seen:
            raise ConfigError(f"{where(source, int(i), int(lines[i]), 'JobID')}: duplicate job {job_ids[i]!r} (a "
                              "requeued job listed once per run by sacct --duplicates?); export without "
                              "--duplicates")
        seen.add(job_ids[i])


def _states(cells: np.ndarray, own: np.ndarray, lines: np.ndarray, source: str) -> np.ndarray:
    known = FINISHED_STATES + UNFINISHED_STATES
    words = np.array([(cell or "").strip().split(" ")[0] for cell in cells], dtype=object)
    unknown = np.flatnonzero(~np.isin(words, known))
    if len(unknown):
        i = int(own[unknown[0]])
        raise ConfigError(f"{where(source, i, int(lines[i]), 'State')}: unknown job state {cells[unknown[0]]!r}; "
                          f"sacct's states are {list(known)}")
    return words


def _known_times(cells: np.ndarray) -> np.ndarray:
    return np.array([None if cell is None or cell.strip() in UNKNOWN_TIMES else cell for cell in cells], dtype=object)


def _blank_is_none(cells: np.ndarray | None) -> np.ndarray | None:
    if cells is None:
        return None
    return np.array([cell if cell else None for cell in cells], dtype=object)


def _gpus(frame: pd.DataFrame, own: np.ndarray, lines: np.ndarray, source: str) -> np.ndarray:
    """GPUs of each job row: AllocTRES's, or ReqTRES's when AllocTRES is empty (or absent)."""
    gpus = np.full(len(own), np.nan)
    for column in ("AllocTRES", "ReqTRES"):
        if column not in frame:
            continue
        cells = frame[column].to_numpy(dtype=object)
        for k, i in enumerate(own):
            if np.isnan(gpus[k]) and cells[i].strip():
                gpus[k] = tres_gpus(cells[i].strip(), where(source, int(i), int(lines[i]), column))
    return np.nan_to_num(gpus, nan=0.0)


def tres_gpus(tres: str, at: str) -> int:
    """GPUs in a TRES string such as `billing=8,cpu=8,gres/gpu=2,mem=64G,node=1` (`gres/gpu`, else the sum of
    the typed `gres/gpu:<type>` counts; 0 without either). `at` names the cell in messages."""
    total, typed = None, 0
    for item in tres.split(","):
        name, equals, value = item.partition("=")
        if not equals or not name.strip() or not value.strip():
            raise ConfigError(f"{at}: malformed TRES {tres!r}: item {item!r} is not <resource>=<count>")
        if GPU_TRES.fullmatch(name.strip()):
            if not value.strip().isdigit():
                raise ConfigError(f"{at}: malformed TRES {tres!r}: the GPU count {value!r} is not a whole number")
            if name.strip() == "gres/gpu":
                total = int(value)
            else:
                typed += int(value)
    return total if total is not None else typed


def _time_limit(frame: pd.DataFrame, own: np.ndarray, lines: np.ndarray, source: str) -> np.ndarray:
    """Seconds of TimelimitRaw (minutes) per job row; NaN without a limit or without the field."""
    if "TimelimitRaw" not in frame:
        return np.full(len(own), np.nan)
    cells = frame["TimelimitRaw"].str.strip().to_numpy(dtype=object)[own]
    limits = np.full(len(own), np.nan)
    for k, cell in enumerate(cells):
        if cell in NO_LIMIT:
            continue
        if not cell.isdigit() or int(cell) == 0:
            i = int(own[k])
            raise ConfigError(f"{where(source, i, int(lines[i]), 'TimelimitRaw')}: not a time limit in minutes "
                              f"(a whole number > 0, UNLIMITED or Partition_Limit), got {cell!r}")
        limits[k] = 60.0 * int(cell)
    return limits
