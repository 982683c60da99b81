"""Fuzzing the input layers (hypothesis): random bytes and random rows given to the CSV job-table and
PAI 2020 loaders, and random values given to the config layer and the component registries, either
load or are refused with a one-line ConfigError; no other exception escapes."""

from __future__ import annotations

import csv
import io as text_io
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from asrpt_bench.composition import compose_run_config
from asrpt_bench.config import RunConfig
from asrpt_bench.core import Cluster, ConfigError
from asrpt_bench.placement import PLACERS, make_placer
from asrpt_bench.prediction import PREDICTORS, make_predictor
from asrpt_bench.schedulers import SCHEDULERS, make_scheduler
from asrpt_bench.workloads.assign import assign_models
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.helios import load_acme, load_helios
from asrpt_bench.workloads.jobs import jobs_from_table
from asrpt_bench.workloads.pai2020 import PAI_FILES, load_pai2020
from asrpt_bench.workloads.slurm import load_slurm
from asrpt_bench.workloads.swf import load_swf

FUZZ = settings(deadline=None, derandomize=True, max_examples=120, suppress_health_check=[HealthCheck.too_slow])
SCHEMA_COLUMNS = ["job_id", "release", "gpus", "iterations", "model", "config", "alpha", "alpha_max", "user",
                  "group", "duration"]
CELLS = st.one_of(
    st.sampled_from(["", "0", "1", "2", "8", "-1", "1.5", "inf", "-inf", "nan", "NaN", "1e309", "1e-320", "abc",
                     "vgg19", "bert24", "p1xd1", "p2xd4", "p0xd1", "p99xd99", "True", " 3 ", "0x10", "1,000"]),
    st.integers(-10, 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=8),
)
SMALL_CLUSTER = Cluster(servers=2, gpus_per_server=4)


def loads_or_refuses(call: Callable[[], Any]) -> Any:
    """Run `call`; a ConfigError must be one line without numpy reprs. Anything else propagates (fails)."""
    try:
        return call()
    except ConfigError as error:
        message = str(error)
        assert message and "\n" not in message and "np." not in message, message
        return None


def csv_text(header: list[str], rows: list[list[str]]) -> str:
    buffer = text_io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


@st.composite
def job_tables(draw: st.DrawFn) -> str:
    """A header of schema columns (sometimes missing some, sometimes with an extra) and rows of random cells."""
    header = draw(st.lists(st.sampled_from(SCHEMA_COLUMNS + ["extra"]), min_size=1, max_size=12, unique=True))
    rows = draw(st.lists(st.lists(CELLS, min_size=len(header), max_size=len(header)), max_size=5))
    return csv_text(header, rows)


@st.composite
def plausible_job_tables(draw: st.DrawFn) -> str:
    """Well-formed headers, cells that are mostly right: what reaches model assignment and the jobs."""
    header = ["job_id", "release", "gpus", "iterations"] + draw(st.sampled_from(
        [["alpha"], ["alpha", "alpha_max"], ["model", "config"], ["duration"], ["model", "config", "alpha"]]))
    number = st.one_of(st.integers(0, 20).map(str), st.integers(1, 20).map(str), st.integers(1, 20).map(str),
                       st.sampled_from(["", "-1", "0.5", "inf", "x"]))
    cell = {"job_id": st.sampled_from(["a", "b", "c", "d", "a", ""]), "release": number,
            "gpus": st.sampled_from(["1", "2", "4", "1", "2", "8", "0", "3"]),
            "iterations": number, "alpha": number, "alpha_max": number, "duration": number,
            "model": st.sampled_from(["vgg19", "gnmt", "vgg19", "nope", ""]),
            "config": st.sampled_from(["p1xd1", "p1xd2", "p2xd2", "p1xd4", "p9xd9", "2x2", ""])}
    rows = draw(st.lists(st.tuples(*[cell[column] for column in header]).map(list), min_size=1, max_size=4,
                         unique_by=lambda row: row[0]))
    return csv_text(header, rows)


def _file(data: str | bytes, name: str = "jobs.csv") -> Path:
    directory = Path(tempfile.mkdtemp(prefix="asrpt_fuzz_"))
    path = directory / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


@FUZZ
@given(data=st.binary(max_size=400))
def test_csv_loader_random_bytes(data: bytes) -> None:
    loads_or_refuses(lambda: load_csv(_file(data)))


@FUZZ
@given(text=job_tables())
def test_csv_loader_random_rows(text: str) -> None:
    loads_or_refuses(lambda: load_csv(_file(text)))


@settings(deadline=None, derandomize=True, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(text=plausible_job_tables())
def test_csv_rows_through_assignment_to_jobs(text: str) -> None:
    """A table that loads goes through model assignment and becomes jobs, or is refused naming the row."""
    table = loads_or_refuses(lambda: load_csv(_file(text)))
    if table is not None:
        loads_or_refuses(lambda: jobs_from_table(assign_models(table, SMALL_CLUSTER, seed=0), "fuzz.csv"))


NUMBERS = st.one_of(st.integers(0, 10**4).map(str), st.integers(0, 10**4).map(str),
                    st.sampled_from(["", "-5", "1e3", "nan", "inf", "x"]))
PAI_CELLS = {"status": st.sampled_from(["Terminated", "Terminated", "Failed", "Running", ""]),
             "plan_gpu": st.sampled_from(["100", "50", "800", "", "0", "-5", "x"]),
             "inst_num": st.sampled_from(["1", "2", "8", "", "0", "-1", "1.5"]),
             "start_time": NUMBERS, "end_time": NUMBERS, "plan_cpu": NUMBERS, "plan_mem": NUMBERS}
TEXT_CELL = st.sampled_from(["iA", "iB", "u1", "V100", "gX", "", "bert", "x,y"])
VALID_ROWS = {"pai_job_table.csv": ["jA", "iA", "u1", "Terminated", "1000", "5000"],
              "pai_task_table.csv": ["jA", "worker", "1", "Terminated", "1100", "4100", "600", "29", "100", "V100"],
              "pai_group_tag_table.csv": ["iA", "u1", "V100", "gX", "bert"]}


@st.composite
def pai_traces(draw: st.DrawFn) -> dict[str, str]:
    """The three headerless PAI tables: sometimes random bytes, usually rows of mostly sensible cells
    (with the right number of fields or not), often around one sound job."""
    files = {}
    for name, columns in PAI_FILES.items():
        if draw(st.integers(0, 9)) == 0:
            files[name] = draw(st.binary(max_size=100)).decode("latin-1")
            continue
        width = len(columns) + draw(st.sampled_from([0, 0, 0, 0, -1, 1]))
        cells = [st.sampled_from(["jA", "jB", "jC"]) if column == "job_name" else PAI_CELLS.get(column, TEXT_CELL)
                 for column in (columns + ["extra"])[:width]]
        rows = draw(st.lists(st.tuples(*cells).map(list), max_size=6))
        if draw(st.booleans()):  # one sound job among the random rows, so some traces load
            rows.insert(draw(st.integers(0, len(rows))), VALID_ROWS[name])
        files[name] = csv_text([], rows).lstrip("\r\n")
    return files


@FUZZ
@given(trace=pai_traces())
def test_pai_loader_random_tables(trace: dict[str, str]) -> None:
    directory = Path(tempfile.mkdtemp(prefix="asrpt_fuzz_pai_"))
    for name, text in trace.items():
        (directory / name).write_text(text, encoding="latin-1")
    loads_or_refuses(lambda: load_pai2020(directory))


CONFIG_KEYS = ["seed", "progress", "workers"] + [f"{group}.{key}" for group, value in RunConfig().groups()
                                      for key in (value.to_dict() if hasattr(value, "params") else vars(value))]
VALUES = st.one_of(
    st.sampled_from(["0", "1", "-1", "0.5", "1e9", "null", "true", "inf", "nan", "[]", "[1,2]", "abc", "''",
                     "asrpt", "cpsat", "heavy_edge", "fixed", "{a:1}", "${seed}", "[1, x]"]),
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=6),
)


@pytest.mark.slow
@settings(deadline=None, derandomize=True, max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(CONFIG_KEYS), value=VALUES)
@example(key="seed", value="${seed}")  # recursive interpolation escaped as an OmegaConf error
@example(key="task.theory_job_gpus", value="${seed}")  # an int where a list belongs reached len()
def test_config_layer_random_overrides(key: str, value: str) -> None:
    """Any value for any key composes into a valid RunConfig or is refused in one line."""
    loads_or_refuses(lambda: compose_run_config([f"{key}={value}"]))


PARAM_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True),
                         st.text(max_size=6), st.sampled_from(["ring", "refined", "zero", "both", "cpsat", "alpha"]))


@FUZZ
@given(kind=st.sampled_from(["scheduler", "predictor", "placement"]), data=st.data())
def test_registries_random_parameters(kind: str, data: st.DataObject) -> None:
    """make_scheduler / make_predictor / make_placer with random parameter values: a component or one
    line (the same checks as the config layer)."""
    make, names = {"scheduler": (make_scheduler, ["asrpt", "asrpt_oracle", "spjf", "fifo", "wcs_duration"]),
                   "predictor": (make_predictor, ["forest", "noisy", "oracle"]),
                   "placement": (make_placer, ["heavy_edge", "first_fit", "random", "ilp"])}[kind]
    name = data.draw(st.sampled_from(names))
    registry = {"scheduler": SCHEDULERS, "predictor": PREDICTORS, "placement": PLACERS}[kind]
    accepted = registry.params_type(name).names()
    chosen = data.draw(st.lists(st.sampled_from(accepted), unique=True, max_size=3)) if accepted else []
    params = {param: data.draw(PARAM_VALUES) for param in chosen}
    component = loads_or_refuses(lambda: make(name, **params))
    if component is not None and kind == "predictor":
        loads_or_refuses(lambda: component.fit(None) if name in ("noisy", "oracle") else None)


LOG_FIXTURES = Path(__file__).parent / "data" / "joblogs"
LOG_LOADERS = {"sacct.txt": lambda path: load_slurm(path, timezone="Europe/Berlin"), "small.swf": load_swf,
               "cluster_log.csv": load_helios, "trace_seren.csv": load_acme}
LOG_MUTATIONS = st.sampled_from(["", "-1", "0", "-5", "x", "Unknown", "None", "1.5", "2024-03-31T02:30:00",
                                 "2024-10-27T02:30:00", "2023-03-01 00:18:22+08:00", "gres/gpu", "gres/gpu=x",
                                 "CANCELLED by 7", "DONE", "1e309", "|", ",", ";", " "])


@st.composite
def mutated_logs(draw: st.DrawFn) -> tuple[str, str]:
    """A job-log fixture with a few of its fields replaced by awkward values (or its lines shuffled)."""
    name = draw(st.sampled_from(sorted(LOG_LOADERS)))
    lines = (LOG_FIXTURES / name).read_text().splitlines()
    separator = {"sacct.txt": "|", "small.swf": " "}.get(name, ",")
    for _ in range(draw(st.integers(1, 4))):
        row = draw(st.integers(0, len(lines) - 1))
        fields = lines[row].split(separator)
        fields[draw(st.integers(0, len(fields) - 1))] = draw(LOG_MUTATIONS)
        lines[row] = separator.join(fields)
    if draw(st.booleans()):
        lines = draw(st.permutations(lines))
    return name, "\n".join(lines) + "\n"


@FUZZ
@given(log=mutated_logs())
def test_job_log_loaders_on_mutated_logs(log: tuple[str, str]) -> None:
    name, text = log
    loads_or_refuses(lambda: LOG_LOADERS[name](_file(text, name)))


@FUZZ
@given(data=st.binary(max_size=300), name=st.sampled_from(sorted(LOG_LOADERS)))
def test_job_log_loaders_on_random_bytes(data: bytes, name: str) -> None:
    loads_or_refuses(lambda: LOG_LOADERS[name](_file(data, name)))
