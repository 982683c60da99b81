"""The job-table schema: typed columns, and errors that name the source, row and column."""

import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.workloads.schema import COLUMNS, validate_job_table


def table(**overrides):
    base = {"job_id": ["a", "b"], "release": [0.0, 5.0], "gpus": [1, 2], "iterations": [10, 20],
            "alpha": [1.0, 2.0]}
    base.update(overrides)
    return pd.DataFrame(base)


def test_valid_table_gets_every_column_typed():
    out = validate_job_table(table(), "jobs.csv")
    assert list(out.columns)[:5] == ["job_id", "release", "gpus", "iterations", "alpha"]
    assert {c.name for c in COLUMNS} <= set(out.columns)
    assert out["gpus"].dtype == "int64" and out["release"].dtype == float
    assert out["model"].isna().all()


@pytest.mark.parametrize("overrides, message", [
    ({"release": [0.0, "soon"]}, "row 2 (line 3), column 'release': not a number"),
    ({"gpus": [1, 0]}, "row 2 (line 3), column 'gpus': must be >= 1"),
    ({"iterations": [-1, 3]}, "row 1 (line 2), column 'iterations': must be >= 0"),
    ({"release": [-2.0, 1.0]}, "row 1 (line 2), column 'release': must be >= 0"),
    ({"gpus": [1, 2.5]}, "row 2 (line 3), column 'gpus': not an integer"),
    ({"job_id": ["a", "a"]}, "row 2 (line 3), column 'job_id': duplicate job id 'a'"),
    ({"alpha": [1.0, 0.0]}, "row 2 (line 3), column 'alpha': must be > 0"),
])
def test_errors_name_file_row_and_column(overrides, message):
    with pytest.raises(ConfigError, match="jobs.csv: " + message.replace("(", r"\(").replace(")", r"\)")):
        validate_job_table(table(**overrides), "jobs.csv")


def test_missing_required_column_is_named():
    with pytest.raises(ConfigError, match=r"missing required column\(s\) \['gpus'\]"):
        validate_job_table(table().drop(columns=["gpus"]), "jobs.csv")


def test_job_needs_a_way_to_get_its_time():
    bare = table().drop(columns=["alpha"])
    with pytest.raises(ConfigError, match="needs model\\+config, alpha, or a duration"):
        validate_job_table(bare, "jobs.csv")
