"""Plain job-table CSV: the schema itself, with errors naming file, row and column."""

import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.workloads.csv_table import load_csv


def write(tmp_path, text, name="jobs.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_fixed_alpha_and_model_rows_load_with_types(tmp_path):
    path = write(tmp_path, "job_id,release,gpus,iterations,alpha,alpha_max,model,config,user\n"
                           "A,0,1,100000,1.0,,,,alice\n"
                           "B,0,50,2000,1.0,2.5,,,bob\n"
                           "C,3.5,4,10,,,vgg19,p1xd4,\n")
    table = load_csv(path)
    assert table["job_id"].tolist() == ["A", "B", "C"]
    assert table["gpus"].tolist() == [1, 50, 4]
    assert table["iterations"].tolist() == [100000, 2000, 10]
    assert table["alpha_max"].isna().tolist() == [True, False, True]
    assert table.loc[2, "model"] == "vgg19" and table.loc[2, "config"] == "p1xd4"
    assert table["user"].isna().tolist() == [False, False, True]
    assert table.attrs["recurrence_keys"] == "file"


@pytest.mark.parametrize("row, column, problem", [
    ("B,0,0,10,1.0", "gpus", "must be >= 1"),
    ("B,zero,1,10,1.0", "release", "not a number"),
    ("B,0,1,10,-1.0", "alpha", "must be > 0"),
    ("B,0,1,ten,1.0", "iterations", "not a number"),
])
def test_malformed_rows_name_file_row_and_column(tmp_path, row, column, problem):
    path = write(tmp_path, f"job_id,release,gpus,iterations,alpha\nA,0,1,5,1.0\n{row}\n")
    with pytest.raises(ConfigError) as error:
        load_csv(path)
    assert f"{path}: row 2 (line 3), column '{column}': {problem}" in str(error.value)


def test_negative_duration_and_missing_columns(tmp_path):
    path = write(tmp_path, "job_id,release,gpus,duration\nA,0,1,-4\n")
    with pytest.raises(ConfigError, match=r"row 1 \(line 2\), column 'duration': must be >= 0"):
        load_csv(path)
    path = write(tmp_path, "job_id,gpus,alpha\nA,1,1.0\n", name="norelease.csv")
    with pytest.raises(ConfigError, match=r"norelease.csv: missing required column\(s\) \['release'\]"):
        load_csv(path)
    with pytest.raises(ConfigError, match="absent.csv: file not found"):
        load_csv(tmp_path / "absent.csv")
    (tmp_path / "packed.csv.gz").write_bytes(b"\x1f\x8b")
    with pytest.raises(ConfigError, match=r"packed.csv: file not found \(packed.csv.gz is there: give that name\)"):
        load_csv(tmp_path / "packed.csv")
