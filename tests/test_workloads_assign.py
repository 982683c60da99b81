"""Model assignment: per-group models, configurations, iterations = duration / alpha~min, seeding."""

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.core import Cluster, ConfigError
from asrpt_bench.placement.estimates import alpha_min_estimate
from asrpt_bench.profiles import build_plan
from asrpt_bench.workloads.assign import assign_models, nearest_count
from asrpt_bench.workloads.schema import validate_job_table

CLUSTER = Cluster(servers=4, gpus_per_server=8)


def trace(n=60, seed=0):
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)],
        "release": np.arange(n, dtype=float),
        "gpus": rng.choice([1, 1, 2, 3, 12, 128], n),
        "duration": rng.uniform(10, 1e5, n),
        "group": [f"g{i % 12}" for i in range(n)],
    })
    return validate_job_table(table, "test trace")


@pytest.mark.parametrize("demand, expected", [(1, 1), (3, 4), (6, 8), (12, 16), (24, 32), (128, 32)])
def test_nearest_count_on_log_scale(demand, expected):
    assert nearest_count(demand, (1, 2, 4, 8, 16, 32)) == expected


def test_nearest_count_ties_go_to_the_smaller_count():
    assert nearest_count(4, (2, 8)) == 2


def test_same_seed_identical_other_seed_different():
    a = assign_models(trace(), CLUSTER, seed=5)
    b = assign_models(trace(), CLUSTER, seed=5)
    c = assign_models(trace(), CLUSTER, seed=6)
    pd.testing.assert_frame_equal(a, b)
    assert a["model"].tolist() != c["model"].tolist()


def test_groups_share_a_model_and_configs_match_gpus():
    table = assign_models(trace(), CLUSTER, seed=1)
    assert (table.groupby("group")["model"].nunique() == 1).all()
    assert (table.groupby(["group", "trace_gpus"])["config"].nunique() == 1).all()
    for model, config, gpus in table[["model", "config", "gpus"]].itertuples(index=False):
        assert build_plan(model, config).gpus == gpus
    single = table[table["trace_gpus"] == 1]
    assert (single["config"] == "p1xd1").all() and (single["gpus"] == 1).all()
    assert set(table.loc[table["trace_gpus"] == 3, "gpus"]) == {4}
    assert set(table.loc[table["trace_gpus"] == 128, "gpus"]) == {32}


def test_iterations_are_duration_over_alpha_min_estimate():
    table = assign_models(trace(), CLUSTER, seed=2)
    for row in table.itertuples(index=False):
        alpha = alpha_min_estimate(build_plan(row.model, row.config), CLUSTER)
        assert row.iterations == max(1, round(row.duration / alpha))
    assert (table["iterations"] >= 1).all() and table["alpha"].isna().all()


def test_models_subset_max_gpus_and_oversize_jobs():
    table = assign_models(trace(), CLUSTER, seed=3, models=["vgg19", "t5"], max_gpus=8)
    assert set(table["model"]) <= {"vgg19", "t5"}
    assert table["gpus"].max() <= 8
    assert (table.loc[table["trace_gpus"] == 1, "model"] == "vgg19").all()  # t5 needs >= 2 GPUs
    small = Cluster(servers=1, gpus_per_server=8)
    big = assign_models(trace(), small, seed=3)
    assert big["gpus"].max() == 32 and big["iterations"].notna().all()


def test_existing_models_and_fixed_alpha_rows_are_kept():
    table = validate_job_table(pd.DataFrame({
        "job_id": ["fixed", "given", "open"], "release": [0.0, 1.0, 2.0], "gpus": [2, 4, 1],
        "alpha": [2.0, np.nan, np.nan], "model": [None, "bert24", None], "config": [None, "p2xd2", None],
        "duration": [101.0, 50.0, 0.0], "iterations": [np.nan, np.nan, np.nan]}), "mixed")
    out = assign_models(table, CLUSTER, seed=0)
    assert out.loc[0, "iterations"] == 50 and pd.isna(out.loc[0, "model"])  # round(101 / 2) = 50 (half to even)
    assert (out.loc[1, "model"], out.loc[1, "config"], out.loc[1, "gpus"]) == ("bert24", "p2xd2", 4)
    alpha = alpha_min_estimate(build_plan("bert24", "p2xd2"), CLUSTER)
    assert out.loc[1, "iterations"] == max(1, round(50.0 / alpha))
    assert out.loc[2, "iterations"] == 1  # zero duration -> at least one iteration
    assert out.loc[2, "config"] == "p1xd1"


def test_bad_parameters():
    with pytest.raises(ConfigError, match=r"unknown model\(s\) \['gpt5'\]"):
        assign_models(trace(), CLUSTER, seed=0, models=["gpt5"])
    with pytest.raises(ConfigError, match="max_gpus"):
        assign_models(trace(), CLUSTER, seed=0, max_gpus=0)
    with pytest.raises(ConfigError, match="seed"):
        assign_models(trace(), CLUSTER, seed=-1)
