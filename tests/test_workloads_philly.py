"""Philly loader: sorting, shifting, slicing, recurrence keys, the packaged trace and malformed files."""

import numpy as np
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.workloads.philly import load_philly

HEADER = "timestamp,duration,num_gpus,gpu_time,cluster\n"
ROWS = [
    "2017-10-01 00:01:40,50.0,2,100.0,vcB",    # file row 0: t = 100 s
    "2017-10-01 00:00:00,300.0,1,300.0,vcA",   # file row 1: t = 0 s (first)
    "2017-10-01 00:10:00,10.0,8,80.0,vcA",     # file row 2: t = 600 s
    "2017-10-01 00:01:40,20.0,1,20.0,vcA",     # file row 3: t = 100 s, tie with row 0 (file order kept)
]


def write(tmp_path, rows, header=HEADER, name="philly.csv"):
    path = tmp_path / name
    path.write_text(header + "\n".join(rows) + "\n")
    return path


def test_sorted_by_submit_time_and_shifted_to_zero(tmp_path):
    table = load_philly(write(tmp_path, ROWS), recurrence="virtual_cluster")
    assert table["job_id"].tolist() == ["philly-00001", "philly-00000", "philly-00003", "philly-00002"]
    assert table["release"].tolist() == [0.0, 100.0, 100.0, 600.0]
    assert table["gpus"].tolist() == [1, 2, 1, 8]
    assert table["duration"].tolist() == [300.0, 50.0, 20.0, 10.0]
    assert table["group"].tolist() == ["vcA", "vcB", "vcA", "vcA"]
    assert table["vc"].tolist() == table["group"].tolist()
    assert table["user"].isna().all()
    assert table.attrs["recurrence_keys"] == "virtual_cluster"


def test_count_offset_window_and_compression(tmp_path):
    path = write(tmp_path, ROWS)
    sliced = load_philly(path, num_jobs=2, offset=1, recurrence="virtual_cluster")
    assert sliced["job_id"].tolist() == ["philly-00000", "philly-00003"]
    assert sliced["release"].tolist() == [0.0, 0.0]
    window = load_philly(path, start=50, end=700, recurrence="virtual_cluster")
    assert window["job_id"].tolist() == ["philly-00000", "philly-00003", "philly-00002"]
    assert window["release"].tolist() == [0.0, 0.0, 500.0]
    compressed = load_philly(path, time_compression=4.0, recurrence="virtual_cluster")
    assert compressed["release"].tolist() == [0.0, 25.0, 25.0, 150.0]
    assert compressed["duration"].tolist() == [300.0, 50.0, 20.0, 10.0]


@pytest.mark.parametrize("row, column, problem", [
    ("2017-10-01 00:02:00,abc,1,1.0,vcA", "duration", "not a number"),
    ("2017-10-01 00:02:00,-5,1,1.0,vcA", "duration", "must be >= 0"),
    ("2017-10-01 00:02:00,5,0,0.0,vcA", "num_gpus", "must be >= 1"),
    ("2017-10-01 00:02:00,5,1.5,0.0,vcA", "num_gpus", "not an integer"),
    ("yesterday,5,1,5.0,vcA", "timestamp", "not a timestamp"),
    ("2017-10-01 00:02:00,5,1,5.0,", "cluster", "value is missing"),
])
def test_malformed_row_names_file_row_and_column(tmp_path, row, column, problem):
    path = write(tmp_path, ROWS[:2] + [row] + ROWS[2:])
    with pytest.raises(ConfigError) as error:
        load_philly(path)
    assert f"{path}: row 3 (line 4), column '{column}': {problem}" in str(error.value)


def test_missing_column_and_missing_file(tmp_path):
    path = write(tmp_path, ["2017-10-01 00:00:00,1,1,vcA"], header="timestamp,duration,gpu_time,cluster\n")
    with pytest.raises(ConfigError, match=r"missing required column\(s\) \['num_gpus'\]"):
        load_philly(path)
    with pytest.raises(ConfigError, match="nothing.csv: file not found"):
        load_philly(tmp_path / "nothing.csv")


def test_bad_options(tmp_path):
    path = write(tmp_path, ROWS)
    with pytest.raises(ConfigError, match=r"workload\.recurrence\.source must be one of"):
        load_philly(path, recurrence="users")
    with pytest.raises(ConfigError, match="the Philly trace has no job groups"):
        load_philly(path, recurrence="trace")
    with pytest.raises(ConfigError, match="time_compression"):
        load_philly(path, time_compression=0)
    with pytest.raises(ConfigError, match="contains no jobs"):
        load_philly(path, start=1000, end=2000)
    with pytest.raises(ConfigError, match="offset=9"):
        load_philly(path, offset=9)


def test_packaged_trace_loads_whole_and_sorted():
    table = load_philly()
    assert len(table) == 82247
    release = table["release"].to_numpy()
    assert release[0] == 0.0 and np.all(np.diff(release) >= 0)
    assert table["vc"].nunique() == 15
    assert (table["gpus"] == 1).sum() == 76627
    assert table.attrs["recurrence_keys"] == "synthetic"
    assert table["group"].str.startswith("syn-").all() and table["user"].str.startswith("syn-u-").all()
    new = table["group"].str.startswith("syn-new-")
    assert new.sum() == round(0.1 * (82247 - 65797)) and (table.index[new] >= 65797).all()
    assert table.attrs["recurrence"]["sigma"] == 1.0 and table.attrs["recurrence"]["history_jobs"] == 65797


def test_slice_keeps_the_keys_of_the_full_trace():
    full = load_philly(seed=3)
    part = load_philly(num_jobs=500, offset=20000, seed=3)
    expected = full.set_index("job_id").loc[part["job_id"], ["group", "user"]]
    assert part[["group", "user"]].to_numpy().tolist() == expected.to_numpy().tolist()
    assert part["release"].iloc[0] == 0.0
