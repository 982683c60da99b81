"""The job-table schema: typed columns, and errors that name the source, row and column."""

import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.workloads.schema import COLUMNS, check_given_table, validate_job_table


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
    with pytest.raises(ConfigError) as refused:
        validate_job_table(bare, "jobs.csv")
    assert str(refused.value) == ("jobs.csv: row 1 (line 2), column 'model': a job needs model+config, alpha, or a "
                                  "duration to assign a model from")


def test_blank_cells_of_a_number_column_are_missing_values():
    out = validate_job_table(table(alpha_max=["", " "], duration=[" ", 7]), "jobs.csv")
    assert out["alpha_max"].isna().all() and out["duration"].isna().tolist() == [True, False]


LIMIT = "(larger times lose precision in float64 arithmetic)"


@pytest.mark.parametrize("overrides, message", [
    ({"alpha_max": [1.0, 1.5]}, "row 2 (line 3), column 'alpha_max': must be >= alpha, got 1.5"),
    ({"alpha_spread": [0.5, 2.0]}, "row 1 (line 2), column 'alpha_spread': must be >= alpha, got 0.5"),
    ({"alpha": [1.0, None], "alpha_spread": [None, 3.0]},
     "row 2 (line 3), column 'alpha_spread': needs alpha (it is the spread-placement time of a fixed-alpha job), "
     "got 3.0"),
    ({"duration": [1.0, -1.0]}, "row 2 (line 3), column 'duration': must be >= 0, got -1.0"),
    ({"recorded_wait": [0.0, -1.0]}, "row 2 (line 3), column 'recorded_wait': must be >= 0, got -1.0"),
    ({"time_limit": [0.0, 5.0]}, "row 1 (line 2), column 'time_limit': must be > 0, got 0.0"),
    ({"alpha": [1.0, None], "model": [None, "bert24"]},  # a model without its config is no way to a time
     "row 2 (line 3), column 'model': a job needs model+config, alpha, or a duration to assign a model from"),
    ({"release": [0.0, 2e12]}, f"row 2 (line 3), column 'release': must be <= 1e+12 s {LIMIT}, got 2000000000000.0"),
    ({"duration": [2e12, 1.0]}, f"row 1 (line 2), column 'duration': must be <= 1e+12 s {LIMIT}, got 2000000000000.0"),
    ({"alpha": [1.0, 2e12]}, f"row 2 (line 3), column 'alpha': must be <= 1e+12 s {LIMIT}, got 2000000000000.0"),
    ({"alpha_max": [1.0, 3e12]}, f"row 2 (line 3), column 'alpha_max': must be <= 1e+12 s {LIMIT}, got 3000000000000.0"),
    ({"alpha_spread": [3e12, 2.0]},
     f"row 1 (line 2), column 'alpha_spread': must be <= 1e+12 s {LIMIT}, got 3000000000000.0"),
    ({"iterations": [10, 2 ** 62]},
     f"row 2 (line 3), column 'iterations': must be <= 1e+12 iterations {LIMIT}, got 4611686018427387904"),
    ({"gpus": [1, 2_000_000]}, "row 2 (line 3), column 'gpus': must be <= 1e+06 GPUs (no cluster comes near), got 2000000"),
    ({"iterations": [10, 10 ** 12]},
     f"row 2 (line 3), column 'iterations': iterations x alpha must be <= 1e+12 s {LIMIT}, got 1000000000000 x 2.0"),
    ({"alpha": [1.0, 1e-7]}, "row 2 (line 3), column 'alpha': must be >= 1e-06 s (no training iteration is shorter "
     "than a microsecond), got 1e-07"),
    ({"release": [0.0, float("inf")]}, "row 2 (line 3), column 'release': not a finite number: inf"),
    ({"gpus": [1, True]}, "row 2 (line 3), column 'gpus': not a number, got True"),
    ({"job_id": ["a", [1]]}, "row 2 (line 3), column 'job_id': must be a text value, got [1]"),
    ({"user": ["u", True]}, "row 2 (line 3), column 'user': must be a text value, got True"),
    ({"job_id": ["a", None]}, "row 2 (line 3), column 'job_id': value is missing"),
    ({"release": [0.0, None]}, "row 2 (line 3), column 'release': value is missing"),
    ({"gpus": [1, None]}, "row 2 (line 3), column 'gpus': value is missing"),
    ({"iterations": [1, 2.5]}, "row 2 (line 3), column 'iterations': not an integer: 2.5"),
])
def test_every_refusal_names_file_row_column_and_value(overrides, message):
    with pytest.raises(ConfigError) as refused:
        validate_job_table(table(**overrides), "jobs.csv")
    assert str(refused.value) == f"jobs.csv: {message}"


def test_values_at_every_limit_are_accepted():
    edge = table(release=[0.0, 1e12], duration=[0.0, 1e12], alpha=[1e-6, 2.0], alpha_max=[1e-6, 2.0],
                 alpha_spread=[1e-6, 1e12], iterations=[0, 5 * 10 ** 11], gpus=[1, 1_000_000])
    out = validate_job_table(edge, "jobs.csv")
    assert list(out["release"]) == [0.0, 1e12] and list(out["gpus"]) == [1, 1_000_000]
    assert list(out["iterations"]) == [0, 5e11] and list(out["alpha"]) == [1e-6, 2.0]


def test_text_columns_take_numbers_written_as_text():
    out = validate_job_table(table(job_id=[7, 8], user=["u", 3]), "jobs.csv")
    assert list(out["job_id"]) == ["7", "8"] and list(out["user"]) == ["u", "3"]


def given(**overrides):
    """table() with a zoo model on row 1 instead of its alpha."""
    return table(**{"model": ["bert24", None], "config": ["p1xd1", None], "alpha": [None, 2.0], **overrides})


@pytest.mark.parametrize("frame, message", [
    ([1, 2], "a job table must be a pandas DataFrame, got list"),
    (table().set_axis(["job_id", "release", "gpus", "gpus", "alpha"], axis=1), "column 'gpus' appears more than once"),
    (table(alpha_mx=[1.0, 2.0]), "unknown column 'alpha_mx' (did you mean 'alpha_max'?); the job table's columns are "
     "['job_id', 'release', 'gpus', 'iterations', 'model', 'config', 'alpha', 'alpha_max', 'alpha_spread', 'user', "
     "'group', 'duration', 'partition', 'state', 'recorded_wait', 'time_limit']"),
    (table().iloc[:0], "no job rows"),
    (given(config=[None, None], duration=[5.0, None]),
     "row 1 (line 2), column 'config': value is missing (a row with a model needs both model and config)"),
    (given(model=[None, None], duration=[5.0, None]),
     "row 1 (line 2), column 'model': value is missing (a row with a config needs both model and config)"),
    (given(model=["bert", None]), "row 1 (line 2), column 'model': unknown model 'bert'; known: ['bert24', 'gnmt', "
     "'inception_v3', 'resnet50', 't5', 'vgg19', 'xlnet24']"),
    (given(config=["q1", None]), "row 1 (line 2), column 'config': parallel config 'q1' is not of the form "
     "'p<stages>xd<replicas>', e.g. 'p2xd4'"),
    (given(config=["p1xd2", None]), "row 1 (line 2), columns 'gpus' and 'config': p1xd2 uses 2 GPUs (1 stages x 2 "
     "replicas) but gpus is 1"),
    (table(alpha=[None, 2.0], duration=[100.0, None]), "row 1 (line 2), column 'iterations': a row with iterations "
     "needs model+config or alpha; without them a model is drawn from its duration, which would replace these "
     "iterations (leave iterations empty to derive them from the duration)"),
    (table(alpha=[None, 2.0], iterations=[None, 20], gpus=[3, 2], duration=[100.0, None]),
     "row 1 (line 2), column 'gpus': a model drawn from a duration runs on one of [1, 2, 4, 8, 16, 32] GPUs, so gpus "
     "3 would be changed; give model+config or alpha for other sizes"),
])
def test_a_given_table_is_refused_naming_what_is_wrong(frame, message):
    with pytest.raises(ConfigError) as refused:
        check_given_table(frame, "jobs.csv")
    assert str(refused.value) == f"jobs.csv: {message}"


def test_a_given_table_with_a_model_a_fixed_alpha_and_a_drawn_model_passes():
    out = check_given_table(given(model=["bert24", None, None], config=["p2xd2", None, None], alpha=[None, 2.0, None],
                                  gpus=[4, 2, 4], job_id=["a", "b", "c"], release=[0.0, 5.0, 6.0],
                                  iterations=[10, 20, None], duration=[None, None, 100.0]), "jobs.csv")
    assert list(out["job_id"]) == ["a", "b", "c"] and list(out["gpus"]) == [4, 2, 4]


def test_a_given_row_with_its_time_keeps_its_iterations_and_gpus_beside_a_duration():
    # only a row whose model is drawn from its duration may not carry iterations or an odd GPU count
    out = check_given_table(given(gpus=[1, 3], duration=[50.0, 100.0]), "jobs.csv")
    assert list(out["iterations"]) == [10, 20] and list(out["gpus"]) == [1, 3]
