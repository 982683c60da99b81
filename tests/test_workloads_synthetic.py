"""Synthetic workloads, contiguous slicing and single-GPU-share resampling."""

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.workloads.slicing import resample_single_gpu_share, slice_jobs
from asrpt_bench.workloads.synthetic import synthetic_workload


@pytest.mark.parametrize("share", [0.0, 0.2, 0.45, 1.0])
def test_single_gpu_share_is_exact(share):
    table = synthetic_workload(500, seed=1, single_gpu_share=share)
    assert (table["gpus"] == 1).sum() == round(share * 500)


def test_recurring_groups_releases_and_labels():
    table = synthetic_workload(2000, seed=4, num_groups=50, num_users=10, arrival_rate=0.5)
    assert table["release"].iloc[0] == 0.0 and np.all(np.diff(table["release"]) > 0)
    assert 0.3 < 1 / np.diff(table["release"]).mean() < 0.7
    assert table["group"].nunique() <= 50 and table["user"].nunique() <= 10
    assert (table.groupby("group")["gpus"].nunique() == 1).all()
    assert (table.groupby("group")["user"].nunique() == 1).all()
    assert table["group"].str.startswith("syn-").all() and table["job_id"].str.startswith("syn-").all()
    assert table.attrs["recurrence_keys"] == "synthetic"
    # durations recur: the spread within a group is far below the spread across groups
    log_duration = np.log(table["duration"])
    assert log_duration.groupby(table["group"]).std().mean() < 0.5 * log_duration.std()


def test_same_seed_same_table_other_seed_differs():
    a = synthetic_workload(300, seed=7, duration_distribution="exponential", duration_params={"mean": 100.0})
    b = synthetic_workload(300, seed=7, duration_distribution="exponential", duration_params={"mean": 100.0})
    c = synthetic_workload(300, seed=8, duration_distribution="exponential", duration_params={"mean": 100.0})
    pd.testing.assert_frame_equal(a, b)
    assert not a["duration"].equals(c["duration"])


def test_gpu_mix_accepts_string_keys_and_bad_parameters_fail():
    table = synthetic_workload(200, seed=0, single_gpu_share=0.0, gpu_mix={"4": 1.0})
    assert set(table["gpus"]) == {4}
    with pytest.raises(ConfigError, match="gpu_mix"):
        synthetic_workload(10, gpu_mix={1: 1.0})
    with pytest.raises(ConfigError, match="single_gpu_share"):
        synthetic_workload(10, single_gpu_share=1.5)
    with pytest.raises(ConfigError, match="duration_distribution 'weibull' unknown"):
        synthetic_workload(10, duration_distribution="weibull")
    with pytest.raises(ConfigError, match="duration_params"):
        synthetic_workload(10, duration_params={"mean": 5.0})


def jobs(gpus, releases):
    return pd.DataFrame({"job_id": [f"j{i}" for i in range(len(gpus))], "release": releases, "gpus": gpus,
                         "duration": np.ones(len(gpus))})


def test_slice_is_contiguous_in_time():
    table = jobs([1, 2, 1, 4, 1], [40.0, 10.0, 30.0, 20.0, 50.0])
    part = slice_jobs(table, num_jobs=2, offset=1)
    assert part["job_id"].tolist() == ["j3", "j2"] and part["release"].tolist() == [0.0, 10.0]
    window = slice_jobs(table, start=15, end=45, shift=False)
    assert window["job_id"].tolist() == ["j3", "j2", "j0"]
    with pytest.raises(ConfigError, match="num_jobs"):
        slice_jobs(table, num_jobs=0)


def test_resample_single_gpu_share_draws_the_quota_from_each_pool():
    table = jobs([1] * 60 + [2, 4, 8, 2] * 10, np.arange(100.0))
    sample = resample_single_gpu_share(table, 0.25, num_jobs=40, seed=3)
    assert len(sample) == 40 and (sample["gpus"] == 1).sum() == 10
    assert sample["job_id"].is_unique and np.all(np.diff(sample["release"]) >= 0)
    assert sample["release"].iloc[0] == 0.0
    again = resample_single_gpu_share(table, 0.25, num_jobs=40, seed=3)
    pd.testing.assert_frame_equal(sample, again)
    slots = resample_single_gpu_share(table, 0.25, num_jobs=40, seed=3, releases="slots")
    assert slots["release"].tolist() == list(np.arange(40.0))
    with pytest.raises(ConfigError, match="needs 50 multi-GPU jobs but the table has 40"):
        resample_single_gpu_share(table, 0.0, num_jobs=50)
    doubled = resample_single_gpu_share(table, 0.0, num_jobs=50, replace=True)
    assert doubled["job_id"].is_unique and (doubled["gpus"] > 1).all()
