"""PAI 2020 loader on hand-made files in the published headerless schema."""

import gzip
import tarfile
from pathlib import Path

import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.workloads.pai2020 import GROUP_TAG_COLUMNS, JOB_COLUMNS, TASK_COLUMNS, load_pai2020

SCHEMA = Path(__file__).resolve().parent / "data" / "pai2020_schema"
"""The published column orders (`alibaba/clusterdata` cluster-trace-gpu-v2020/data/*.header; tests/data/README.md)."""

# job_name, inst_id, user, status, start_time, end_time
JOBS = """jA,iA,u1,Terminated,1000,5000
jB,iB,u2,Terminated,2000,2600
jC,iC,u1,Failed,1500,1600
jD,iD,u3,Terminated,3000,3500
jE,iE,u2,Terminated,2500,2900
jF,iF,u3,Terminated,1700,2400
"""
# job_name, task_name, inst_num, status, start_time, end_time, plan_cpu, plan_mem, plan_gpu, gpu_type
TASKS = """jA,worker,4,Terminated,1100,4100,600,29.0,50,V100
jA,ps,2,Terminated,1050,4200,800,10.0,,MISC
jB,worker,1,Terminated,,,600,29.0,250,P100
jC,worker,1,Failed,1500,1600,600,29.0,100,T4
jD,evaluator,1,Terminated,3000,3500,600,29.0,0,MISC
jE,worker,,Terminated,2500,2500,600,29.0,100,T4
jF,worker,2,Terminated,1800,2000,600,29.0,100,V100
jF,chief,1,Terminated,1900,2300,600,29.0,800,V100
"""
# inst_id, user, gpu_type_spec, group, workload
TAGS = """iA,u1,V100,gX,bert
iA,u1,V100,gY,
iA,u1,V100,gX,bert
iB,u2,,gY,
iF,u3,,,
"""


def write_trace(directory: Path, jobs=JOBS, tasks=TASKS, tags=TAGS) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pai_job_table.csv").write_text(jobs)
    (directory / "pai_task_table.csv").write_text(tasks)
    (directory / "pai_group_tag_table.csv").write_text(tags)
    return directory


def test_three_job_file_matches_hand_computation(tmp_path):
    """Worked by hand (paper-notes 10 items 18-19):
    - jC is Failed; jD has sum plan_gpu = 0; jE's only task runs 2500..2500 (duration 0): dropped.
    - jA: g = 4 * ceil(50/100) + 2 * 0 (CPU ps, empty plan_gpu) = 4; tasks span 1050..4200 -> 3150 s;
      group: iA is tagged gX twice and gY once -> gX.
    - jF: g = 2 * ceil(100/100) + 1 * ceil(800/100) = 10; tasks span 1800..2300 -> 500 s; iF has an
      empty group -> missing.
    - jB: g = 1 * ceil(250/100) = 3; no task times -> job end - start = 2600 - 2000 = 600 s; group gY.
    - releases: submit (job start) 1000, 1700, 2000 shifted by the first kept job -> 0, 700, 1000.
    """
    table = load_pai2020(write_trace(tmp_path / "pai"))
    assert table["job_id"].tolist() == ["jA", "jF", "jB"]
    assert table["release"].tolist() == [0.0, 700.0, 1000.0]
    assert table["gpus"].tolist() == [4, 10, 3]
    assert table["duration"].tolist() == [3150.0, 500.0, 600.0]
    assert table["user"].tolist() == ["u1", "u3", "u2"]
    assert table["group"].iloc[0] == "gX" and table["group"].iloc[2] == "gY"
    assert table["group"].isna().iloc[1]
    assert table["iterations"].isna().all() and table["model"].isna().all()
    assert table.attrs["filtered"] == {"jobs_in_file": 6, "not_terminated": 1, "no_gpu": 1,
                                       "no_positive_duration": 1, "kept": 3}
    assert table.attrs["recurrence_keys"] == "trace"


def test_tar_gz_archive_with_nested_folder_gives_the_same_table(tmp_path):
    folder = write_trace(tmp_path / "src" / "cluster-trace-gpu-v2020")
    archive = tmp_path / "pai.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname="cluster-trace-gpu-v2020")
    from_dir = load_pai2020(folder)
    from_tar = load_pai2020(archive)
    assert from_tar.equals(from_dir)


def test_gzipped_tables_read_as_the_plain_ones_in_a_directory_and_an_archive(tmp_path):
    plain = load_pai2020(write_trace(tmp_path / "plain"))
    folder = write_trace(tmp_path / "packed")
    for name in ("pai_job_table.csv", "pai_task_table.csv"):
        (folder / f"{name}.gz").write_bytes(gzip.compress((folder / name).read_bytes()))
        (folder / name).unlink()
    archive = tmp_path / "packed.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname="trace")
    assert load_pai2020(folder).equals(plain) and load_pai2020(archive).equals(plain)


@pytest.mark.parametrize("table_name, line, column, problem", [
    ("pai_task_table.csv", 3, "plan_gpu", "not a number"),
    ("pai_task_table.csv", 3, "inst_num", "must be >= 0"),
    ("pai_job_table.csv", 2, "start_time", "not a number"),
])
def test_malformed_values_name_file_row_and_column(tmp_path, table_name, line, column, problem):
    if column == "plan_gpu":
        tasks = TASKS.replace("jB,worker,1,Terminated,,,600,29.0,250", "jB,worker,1,Terminated,,,600,29.0,lots")
        folder = write_trace(tmp_path, tasks=tasks)
    elif column == "inst_num":
        folder = write_trace(tmp_path, tasks=TASKS.replace("jB,worker,1,", "jB,worker,-1,"))
    else:
        folder = write_trace(tmp_path, jobs=JOBS.replace("jB,iB,u2,Terminated,2000", "jB,iB,u2,Terminated,noon"))
    with pytest.raises(ConfigError) as error:
        load_pai2020(folder)
    assert f"{table_name}: row {line} (line {line}), column '{column}': {problem}" in str(error.value)


def test_missing_file_no_kept_job_and_not_a_trace(tmp_path):
    folder = write_trace(tmp_path / "a")
    (folder / "pai_group_tag_table.csv").unlink()
    with pytest.raises(ConfigError, match="no pai_group_tag_table.csv found"):
        load_pai2020(folder)
    failed = write_trace(tmp_path / "b", jobs=JOBS.replace("Terminated", "Failed"))
    with pytest.raises(ConfigError, match="no job passes the filters"):
        load_pai2020(failed)
    with pytest.raises(ConfigError, match="not a directory or a .tar.gz"):
        load_pai2020(tmp_path / "missing")


def test_duplicate_job_names_are_rejected(tmp_path):
    folder = write_trace(tmp_path, jobs=JOBS + "jA,iA2,u1,Terminated,1200,1300\n")
    with pytest.raises(ConfigError, match="duplicate job id 'jA'"):
        load_pai2020(folder)


def test_column_order_is_the_published_schema():
    for name, columns in (("pai_job_table", JOB_COLUMNS), ("pai_task_table", TASK_COLUMNS),
                          ("pai_group_tag_table", GROUP_TAG_COLUMNS)):
        assert (SCHEMA / f"{name}.header").read_text().strip().split(",") == columns


def test_gpu_count_rounds_fractional_shares_up(tmp_path):
    tasks = "jA,worker,3,Terminated,0,100,1,1,25,T4\njA,ps,1,Terminated,0,100,1,1,101,T4\n"
    folder = write_trace(tmp_path, jobs="jA,iA,u1,Terminated,0,100\n", tasks=tasks, tags="")
    table = load_pai2020(folder)
    assert table["gpus"].tolist() == [3 * 1 + 1 * 2]
    assert table["group"].isna().all()
