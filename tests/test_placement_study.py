"""The placement study table: one row per model x config x pattern, ILP never worse, atomic CSV, CLI."""

from __future__ import annotations

import pandas as pd
import pytest

from asrpt_bench import profiles
from asrpt_bench.core import Cluster, ConfigError
from asrpt_bench.placement.patterns import fragmentation_patterns
from asrpt_bench.placement.study import COLUMNS, main, run_placement_study, summarize_study, write_csv_atomic

SMALL = Cluster(servers=4, gpus_per_server=4)
WALL_TIME_COLUMNS = ["he_wall_s", "ilp_wall_s"]


@pytest.fixture(scope="module")
def study() -> pd.DataFrame:
    return run_placement_study(["vgg19", "gnmt"], [2, 4, 8], SMALL, None, "cpsat", 10.0, seed=3)


def test_one_row_per_model_config_and_fitting_pattern(study: pd.DataFrame) -> None:
    assert list(study.columns) == list(COLUMNS)
    patterns = fragmentation_patterns(SMALL, 3)
    expected = {(m, c.name, p) for m in ("vgg19", "gnmt") for g in (2, 4, 8) for c in profiles.configurations(m, g)
                for p, free in patterns.items() if sum(free) >= g}
    assert set(zip(study["model"], study["config"], study["pattern"])) == expected
    assert len(study) == len(expected)


def test_ilp_is_optimal_and_never_worse_than_heavy_edge(study: pd.DataFrame) -> None:
    assert (study["ilp_status"] == "optimal").all()
    assert (study["ilp_alpha"] <= study["he_alpha"] * (1 + 1e-12)).all()
    assert (study["gap"] >= -1e-12).all()
    assert study["gap"].tolist() == pytest.approx((study["he_alpha"] / study["ilp_alpha"] - 1).tolist())
    assert (study["ilp_alpha"] >= study["alpha_consolidated"] * (1 - 1e-12)).all()
    assert (study["ilp_bound"] <= study["ilp_alpha"] + 1e-6).all()


def test_records_settings_and_cluster(study: pd.DataFrame) -> None:
    assert set(study["ilp_solver"]) == {"cpsat"}
    assert set(study["time_limit_s"]) == {10.0} and set(study["seed"]) == {3}
    assert set(study["cluster_servers"]) == {4} and set(study["b_inter"]) == {SMALL.b_inter}


def test_same_inputs_give_the_same_table_apart_from_wall_times(study: pd.DataFrame) -> None:
    again = run_placement_study(["vgg19", "gnmt"], [2, 4, 8], SMALL, None, "cpsat", 10.0, seed=3)
    pd.testing.assert_frame_equal(study.drop(columns=WALL_TIME_COLUMNS), again.drop(columns=WALL_TIME_COLUMNS))


def test_summary_has_one_row_per_pattern(study: pd.DataFrame) -> None:
    summary = summarize_study(study)
    assert set(summary.index) == set(study["pattern"])
    assert (summary["optimal_share"] == 1.0).all()
    assert summary["rows"].sum() == len(study)


@pytest.mark.parametrize("kwargs, message", [
    (dict(models=["alexnet"]), "unknown model(s) ['alexnet']"),
    (dict(patterns=["swiss_cheese"]), "unknown fragmentation pattern(s) ['swiss_cheese']"),
    (dict(gpu_counts=[2, 32]), "gpu counts [32] exceed the cluster's 16 GPUs"),
    (dict(solver="glpk"), "unknown solver 'glpk'"),
])
def test_bad_arguments_raise_config_errors(kwargs: dict, message: str) -> None:
    args = dict(models=["vgg19"], gpu_counts=[2], cluster=SMALL, patterns=None, solver="cpsat", time_limit_s=5.0)
    args.update(kwargs)
    with pytest.raises(ConfigError) as info:
        run_placement_study(**args)
    assert message in str(info.value)


def test_csv_is_written_atomically(tmp_path, study: pd.DataFrame) -> None:
    target = tmp_path / "nested" / "study.csv"
    write_csv_atomic(study, target)
    assert [p.name for p in target.parent.iterdir()] == ["study.csv"]
    pd.testing.assert_frame_equal(pd.read_csv(target), study, check_dtype=False)


def test_cli_writes_the_table(tmp_path, capsys) -> None:
    out = tmp_path / "placement_study.csv"
    assert main(["--out", str(out), "--models", "vgg19", "--gpus", "2,4", "--servers", "4", "--gpus-per-server",
                 "4", "--patterns", "empty,scattered", "--solver", "highs", "--time-limit", "5"]) == 0
    table = pd.read_csv(out)
    assert set(table["pattern"]) == {"empty", "scattered"} and set(table["gpus"]) == {2, 4}
    assert set(table["ilp_solver"]) == {"highs"}
    assert f"wrote {len(table)} rows" in capsys.readouterr().out
