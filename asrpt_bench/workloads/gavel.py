"""Loader for the trace files of the Gavel scheduler project (stanford-futuredata/gavel).

Both formats are tab-separated, one job per line, no header:
- 7 fields, the per-VC Philly-derived files (`traces/msr/seed=N/<vc>.trace`): job_type, command,
  num_steps_arg, needs_data_dir, total_steps, arrival_time, scale_factor;
- 10 fields, the layout Gavel's current `parse_trace` reads (its generator's output): job_type,
  command, working_directory, num_steps_arg, needs_data_dir, total_steps, scale_factor,
  priority_weight, SLO, arrival_time.
A file's first line decides its format. `path` is a file or a directory (every `*.trace` in it,
merged by arrival time; each file keeps its own clock, as Gavel's per-VC files start at 0). The
virtual cluster is the file name without `.trace`.

Per job: gpus = scale_factor, iterations = total_steps, release = arrival_time (shifted to 0),
alpha = 1 / (Gavel's measured V100 throughput of (job_type, scale_factor)), the same on every
placement as in Gavel's simulator (fixed-alpha rows of the job-table schema), duration = iterations
* alpha, group = job_type (model + batch size: real recurrence), user = the virtual cluster.
`alpha_max="alpha"` declares alpha_max = alpha (no job is communication-heavy, as in Gavel);
`"unconsolidated"` declares the alpha of Gavel's spread-placement measurement, so A-SRPT's
COMM_HEAVY test acts. `placement="measured"` makes the simulated alpha depend on the placement as
Gavel measured it: consolidated on one server, unconsolidated when the job spans several (38 of the
(job type, 4 or 8 GPUs) pairs differ by more than 1%, ResNet-18 at 4 GPUs by about 3x), so placement
and COMM_HEAVY act on real data; the default, "consolidated", is Gavel's own simulator.
Unmeasured (job_type, scale_factor) pairs are extrapolated (gavel_throughputs.py); their count is
warned once and kept in `attrs["gavel_alpha_extrapolated"]`. The generator format's priority_weight
and SLO are checked and then ignored (A-SRPT and the baselines have neither); jobs with a
priority_weight other than 1 or an SLO (>= 0; Gavel writes -1 for none) are warned once and counted in
`attrs["gavel_priority_slo_ignored"]`.
"""

from __future__ import annotations

import math
from contextlib import ExitStack
from importlib import resources
from pathlib import Path
from typing import Callable

import pandas as pd

from ..adjustments import adjust
from ..core import ConfigError
from ..io import read_file_bytes, refuse_twins
from .gavel_throughputs import job_types, throughput
from .parsing import location
from .recurrence import RecurrenceSpec, recurrence_keys
from .schema import MAX_COUNT, MAX_GPUS, MAX_SECONDS, validate_job_table
from .slicing import sort_by_release

PACKAGED_GAVEL = ("data", "traces", "gavel_generated_seed0.trace.gz")
FIELDS = {
    7: ("job_type", "command", "num_steps_arg", "needs_data_dir", "total_steps", "arrival_time", "scale_factor"),
    10: ("job_type", "command", "working_directory", "num_steps_arg", "needs_data_dir", "total_steps",
         "scale_factor", "priority_weight", "SLO", "arrival_time"),
}
FORMAT_NAMES = {7: "Gavel per-VC format", 10: "Gavel generator format"}
ALPHA_MAX_SOURCES = ("alpha", "unconsolidated")
PLACEMENT_MODELS = ("consolidated", "measured")
TRACE_RECURRENCE = RecurrenceSpec(source="trace", new_group_share=0.0)


def load_gavel(path: str | Path | None = None, *, recurrence: RecurrenceSpec = TRACE_RECURRENCE, seed: int = 0,
               train_fraction: float = 0.8, alpha_max: str = "alpha", placement: str = "consolidated") -> pd.DataFrame:
    """A Gavel trace file or directory as a validated job table (module doc).

    path: None reads the packaged trace of Gavel's generator (seed 0, 2,297 jobs).
    recurrence: the key model; the default keeps the job type as the group (recurrence.py).
    placement: "consolidated" (Gavel's simulator: the consolidated throughput on every placement) or
    "measured" (the consolidated throughput on one server, Gavel's unconsolidated measurement when the
    job spans several: column `alpha_spread`).
    """
    if alpha_max not in ALPHA_MAX_SOURCES:
        raise ConfigError(f"workload.gavel_alpha_max must be one of {list(ALPHA_MAX_SOURCES)}, got {alpha_max!r}")
    if placement not in PLACEMENT_MODELS:
        raise ConfigError(f"workload.gavel_placement must be one of {list(PLACEMENT_MODELS)}, got {placement!r}")
    with ExitStack() as stack:
        if path is None:
            resource = resources.files("asrpt_bench").joinpath(*PACKAGED_GAVEL)
            files = [stack.enter_context(resources.as_file(resource))]
            source = "packaged Gavel trace (asrpt_bench/data/traces/gavel_generated_seed0.trace.gz)"
            names = ["gavel_generated_seed0"]
        else:
            files, source = _trace_files(Path(path)), str(path)
            names = [f.name.removesuffix(".gz").removesuffix(".trace") for f in files]
        parts = [_read_file(file, name) for file, name in zip(files, names)]
    table = sort_by_release(pd.concat(parts, ignore_index=True))
    table["release"] = table["release"] - table["release"].min()
    extrapolated = int(table.pop("extrapolated").sum())
    ignored = int(table.pop("priority_or_slo").sum())
    if placement == "measured":
        table["alpha_spread"] = table["alpha_max"]  # the unconsolidated measurement (never below alpha)
    if alpha_max == "alpha":
        table["alpha_max"] = table["alpha"]
    table = recurrence_keys(table, seed, recurrence, train_fraction=train_fraction, by="vc")
    validated = validate_job_table(table, source)
    validated.attrs.update(table.attrs)
    validated.attrs.update(source=source, gavel_alpha_extrapolated=extrapolated, gavel_priority_slo_ignored=ignored)
    if extrapolated:
        note_extrapolated(source, extrapolated)
    if ignored:
        note_priority_slo_ignored(source, ignored)
    return validated


def note_extrapolated(source: str, count: int) -> None:
    """Say (once per run, also when the table comes from a cache) that `count` jobs' alphas are extrapolated."""
    adjust("gavel_alpha_extrapolated", count,
           f"{source}: {count} job(s) have a (job type, scale factor) Gavel did not measure; their throughput "
           "is extrapolated from the largest measured scale at its per-GPU rate", stacklevel=3)


def note_priority_slo_ignored(source: str, count: int) -> None:
    """Say (once per run, also when the table comes from a cache) that `count` jobs' priority weights
    or SLOs are read and ignored."""
    adjust("gavel_priority_slo_ignored", count,
           f"{source}: {count} job(s) have a priority_weight other than 1 or an SLO; A-SRPT and the baselines "
           "ignore both (every job weighs 1, none has a deadline)", stacklevel=3)


def has_priority_or_slo(fields: dict[str, str]) -> bool:
    """Whether a parsed generator-format row asks for a priority weight other than 1 or an SLO (>= 0)."""
    if "priority_weight" not in fields:
        return False
    return float(fields["priority_weight"]) != 1.0 or float(fields["SLO"]) >= 0


def _trace_files(path: Path) -> list[Path]:
    """The trace file at `path`, or every *.trace (or *.trace.gz) file of the directory `path`: one file of
    a VC in both forms is refused, not guessed at."""
    if path.is_dir():
        files = sorted([*path.glob("*.trace"), *path.glob("*.trace.gz")])
        if not files:
            raise ConfigError(f"{path}: no *.trace or *.trace.gz files in this directory")
        for file in files:
            refuse_twins(file)
        return files
    if not path.exists():
        raise ConfigError(f"{path}: file not found")
    return [path]


def _read_file(path: Path, name: str) -> pd.DataFrame:
    """One trace file as rows of the job table (plus `extrapolated`, `priority_or_slo`), every field checked."""
    source = str(path)
    try:
        text = read_file_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{source}: cannot be read as a text trace ({type(error).__name__}: {error})") from None
    lines = [(number, line.rstrip("\r")) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not lines:
        raise ConfigError(f"{source}: the trace has no jobs")
    first, line = lines[0]
    width = len(line.split("\t"))
    if width not in FIELDS:
        raise ConfigError(f"{source}: line {first} has {width} tab-separated field(s); a Gavel trace has 7 "
                          f"({FORMAT_NAMES[7]}) or 10 ({FORMAT_NAMES[10]})")
    names = FIELDS[width]
    rows = [_parse_line(line, number, row, names, source, name, first) for row, (number, line) in enumerate(lines)]
    return pd.DataFrame(rows, columns=["job_id", "release", "gpus", "iterations", "alpha", "alpha_max", "duration",
                                       "group", "user", "vc", "extrapolated", "priority_or_slo"])


def _parse_line(line: str, number: int, row: int, names: tuple[str, ...], source: str, vc: str, first: int) -> tuple:
    """Job row `row` (0-based; blank lines are no rows) on line `number`; `first`: the line the format was
    read from."""
    values = line.split("\t")
    if len(values) != len(names):
        raise ConfigError(f"{source}: line {number} has {len(values)} tab-separated field(s), expected "
                          f"{len(names)} ({FORMAT_NAMES[len(names)]}, as line {first})")
    fields = dict(zip(names, values))

    def where(field: str) -> str:
        return location(source, row, field, header_lines=number - 1 - row)

    def parsed(field: str, convert: Callable[[str], float], ok: Callable[[float], bool], requirement: str) -> float:
        text = fields[field]
        try:
            value = convert(text.strip())
        except (ValueError, OverflowError):
            value = None
        if value is None or not ok(value):
            raise ConfigError(f"{where(field)}: must be {requirement}, got {text!r}")
        return value

    job_type = fields["job_type"]
    if job_type not in job_types():
        raise ConfigError(f"{where('job_type')}: job type {job_type!r} has no measured throughput; "
                          f"known: {list(job_types())}")
    parsed("needs_data_dir", int, lambda v: v in (0, 1), "0 or 1")
    steps = int(parsed("total_steps", int, lambda v: v >= 0, "an integer >= 0"))
    gpus = int(parsed("scale_factor", int, lambda v: v >= 1, "an integer >= 1"))
    arrival = parsed("arrival_time", float, lambda v: math.isfinite(v) and v >= 0, "a finite number >= 0 (s)")
    for field, value, limit in (("total_steps", steps, MAX_COUNT), ("scale_factor", gpus, MAX_GPUS),
                                ("arrival_time", arrival, MAX_SECONDS)):
        if value > limit:
            raise ConfigError(f"{where(field)}: must be <= {limit:.0e}, got {fields[field]!r}")
    for field in ("priority_weight", "SLO"):
        if field in fields:
            parsed(field, float, math.isfinite, "a finite number")
    consolidated, spread, extrapolated = throughput(job_type, gpus)
    alpha = 1.0 / consolidated
    return (f"gavel-{vc}-{number:05d}", arrival, gpus, steps, alpha, max(alpha, 1.0 / spread), steps * alpha,
            job_type, vc, vc, extrapolated, has_priority_or_slo(fields))

