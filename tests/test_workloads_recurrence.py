"""The recurrence-key model: blind to duration at sigma = null, informative as sigma falls, new groups
chosen at random in an exact share after the predictor's own history cut."""

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.prediction import ForestPredictor, accuracy_summary, chronological_split, prediction_errors
from asrpt_bench.workloads.recurrence import RecurrenceSpec, recurrence_keys


def trace(n=3000, seed=0):
    """Philly-like: releases in order, 3 VCs, GPU counts 1/2/8, lognormal durations."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)],
        "release": np.sort(rng.uniform(0, 1e6, n)),
        "gpus": rng.choice([1, 2, 8], n, p=[0.7, 0.2, 0.1]),
        "duration": np.exp(rng.normal(7, 2, n)),
        "vc": rng.choice(["vcA", "vcB", "vcC"], n),
    })


def keys(table, seed=1, train_fraction=0.8, **spec):
    return recurrence_keys(table, seed, RecurrenceSpec(**spec), train_fraction=train_fraction)


def later_mask(table, train_fraction=0.8):
    cut = int(np.floor(train_fraction * len(table)))
    mask = np.zeros(len(table), dtype=bool)
    mask[np.argsort(table["release"].to_numpy(), kind="stable")[cut:]] = True
    return mask


@pytest.mark.parametrize("share", [0.0, 0.2])
def test_no_information_keys_ignore_durations(share):
    """sigma = null: shuffling durations among jobs of one VC and GPU count changes no key."""
    table = trace()
    shuffled = table.copy()
    rng = np.random.default_rng(7)
    for _, rows in table.groupby(["vc", "gpus"]).indices.items():
        shuffled.loc[table.index[rows], "duration"] = rng.permutation(table["duration"].to_numpy()[rows])
    assert not np.array_equal(shuffled["duration"], table["duration"])
    a = keys(table, sigma=None, new_group_share=share)
    b = keys(shuffled, sigma=None, new_group_share=share)
    assert a["group"].tolist() == b["group"].tolist() and a["user"].tolist() == b["user"].tolist()
    # not even read: the keys exist for a table without durations
    blind = keys(table.drop(columns="duration"), sigma=None, new_group_share=share)
    assert blind["group"].tolist() == a["group"].tolist()
    assert keys(table, sigma=float("inf"), new_group_share=share)["group"].tolist() == a["group"].tolist()


def test_finite_sigma_needs_durations():
    with pytest.raises(ConfigError, match=r"workload\.recurrence\.sigma is finite"):
        keys(trace().drop(columns="duration"), sigma=1.0)


def test_templates_stay_in_their_pool_and_are_seeded():
    table = trace()
    keyed = keys(table, sigma=0.5)
    assert keyed["group"].str.startswith("syn-").all() and keyed["user"].str.startswith("syn-u-").all()
    assert keyed.attrs["recurrence_keys"] == "synthetic"
    for _, members in keyed.groupby("group"):
        assert members["vc"].nunique() == 1 and members["gpus"].nunique() == 1 and members["user"].nunique() == 1
    assert (keyed.groupby("user")["vc"].nunique() == 1).all()
    assert keyed["group"].tolist() == keys(table, sigma=0.5)["group"].tolist()
    assert keyed["group"].tolist() != keys(table, seed=2, sigma=0.5)["group"].tolist()
    mean_size = len(table) / keyed["group"].nunique()
    assert 10 <= mean_size <= 30  # jobs_per_template = 20 (empty chunks dropped, a few new groups added)


def test_perfect_recurrence_orders_templates_by_duration():
    """sigma = 0: every template is a contiguous run of the history's duration order."""
    table = trace()
    keyed = keys(table, sigma=0.0, new_group_share=0.0)
    history = ~later_mask(table)
    for _, pool in keyed[history].groupby(["vc", "gpus"]):
        ranked = pool.sort_values("duration", kind="stable")["group"].to_numpy()
        runs = 1 + np.count_nonzero(ranked[1:] != ranked[:-1])
        assert runs == len(set(ranked))


def test_new_groups_are_an_exact_random_share_of_the_later_jobs():
    table = trace()
    later = later_mask(table)
    keyed = keys(table, sigma=1.0, new_group_share=0.25)
    seen = set(keyed.loc[~later, "group"])
    new = later & ~keyed["group"].isin(seen).to_numpy()
    assert new.sum() == round(0.25 * later.sum())  # every pool has history here, so nothing else is new
    assert keyed.attrs["recurrence"]["new_group_share_achieved"] == pytest.approx(new.sum() / later.sum())
    assert keyed.loc[new, "group"].str.startswith("syn-new-").all()
    assert not keyed.loc[~new, "group"].str.startswith("syn-new-").any()
    # random, not by size or duration: new and seen later jobs look alike
    work = (table["gpus"] * table["duration"]).to_numpy()
    assert np.median(work[new]) / np.median(work[later & ~new]) == pytest.approx(1.0, abs=0.35)
    assert keys(table, sigma=1.0, new_group_share=0.0).attrs["recurrence"]["new_group_share_achieved"] == 0.0


def test_biased_selection_is_labelled_and_favours_large_jobs():
    table = trace()
    later = later_mask(table)
    keyed = keys(table, sigma=1.0, new_group_share=0.1, new_group_selection="gpu_time")
    assert keyed.attrs["recurrence"]["new_group_selection"] == "gpu_time"
    new = keyed["group"].str.startswith("syn-new-").to_numpy()
    work = (table["gpus"] * table["duration"]).to_numpy()
    assert np.median(work[new]) > 10 * np.median(work[later & ~new])


def test_a_pool_without_history_is_new_and_counted():
    table = trace(400)
    late = table["release"] >= table["release"].quantile(0.9)
    table.loc[late, "vc"] = "vcLate"
    keyed = keys(table, sigma=1.0, new_group_share=0.0)
    assert keyed.attrs["recurrence"]["new_without_history_pool"] == int(late.sum())


def test_virtual_cluster_and_trace_sources():
    table = trace(500)
    by_vc = keys(table, source="virtual_cluster", new_group_share=0.0)
    assert by_vc["group"].tolist() == table["vc"].tolist() and by_vc["user"].isna().all()
    given = table.assign(group=np.where(table["gpus"] > 1, "big", "small"), user="u")
    traced = keys(given, source="trace", new_group_share=0.5)
    assert set(traced["group"]) == {"big", "small", "syn-new-big", "syn-new-small"}
    assert traced.attrs["recurrence_keys"] == "trace"
    with pytest.raises(ConfigError, match="source=trace needs a trace with job groups"):
        keys(table, source="trace")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("sigma", -0.1, "sigma must be null"),
    ("new_group_share", 1.5, "new_group_share must be a number in"),
    ("new_group_selection", "longest", "new_group_selection must be one of"),
    ("source", "users", "source must be one of"),
    ("jobs_per_template", 0.5, "jobs_per_template must be a number >= 1"),
    ("concentration", 0.0, "concentration must be a positive number"),
])
def test_bad_knobs_name_the_key(key, value, message):
    with pytest.raises(ConfigError, match=rf"workload\.recurrence\.{message}"):
        keys(trace(50), **{key: value})


def _seen_error(table, sigma):
    keyed = keys(table, sigma=sigma, new_group_share=0.0).assign(iterations=lambda t: np.rint(t["duration"]))
    history, test = chronological_split(keyed, 0.8)
    forest = ForestPredictor(n_estimators=20, random_state=0).fit(history)
    errors = prediction_errors(test, forest.predict(test), forest.unseen_mask(test))
    return accuracy_summary(errors)["median_relative_error_seen"]


def test_forest_error_grows_as_keys_lose_information():
    table = trace(4000)
    errors = [_seen_error(table, sigma) for sigma in (0.0, 0.5, 2.0, None)]
    assert all(a < b for a, b in zip(errors, errors[1:])), errors
    assert errors[0] < 0.3 and errors[-1] > 1.0
