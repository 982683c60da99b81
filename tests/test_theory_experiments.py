"""The `theory` and `adversarial` tasks, the theory/ablation experiments' configs and their figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from asrpt_bench import io, rundir
from asrpt_bench.composition import CONFIG_DIR, compose_run_config
from asrpt_bench.config import RunConfig
from asrpt_bench.core import ConfigError, Job, TrainingPlan
from asrpt_bench.build import build_scheduler
from asrpt_bench.experiment import run_experiment
from asrpt_bench.prepare import load_workload
from asrpt_bench.report import theory_plots
from asrpt_bench.theory.adversarial import evaluate
from asrpt_bench.theory.lower_bounds import alpha_min_for_jobs, lower_bound_for_jobs
from asrpt_bench.tasks.theory import TinyInstance, _run_instance, draw_instance, theory_cluster

TINY = ["task=theory", "task.theory_instances=6", "task.theory_jobs=4", "task.schedulers=[asrpt,asrpt_oracle,spjf,fifo]",
        "progress=false"]


def _theory(overrides: list[str]) -> tuple[RunConfig, "io.RunResult"]:
    config = compose_run_config(TINY + overrides)
    return config, run_experiment(config)


def _instances(result: io.RunResult) -> pd.DataFrame:
    return result.tables["theory_instances"]


# ---------------------------------------------------------------- theory task

@pytest.mark.parametrize("tau", [0.0, 1.0])
def test_theorem1_holds_against_exact_opt_with_perfect_prediction(tau: float) -> None:
    _, result = _theory(["predictor=oracle", f"scheduler.tau={tau}", "task.theory_alpha=fixed"])
    table = _instances(result)
    assert table["opt_exact"].all()
    assert (table["ratio_to_opt"] >= 1 - 1e-9).all()  # OPT is optimal for every scheduler
    asrpt = table[table["scheduler"] == "asrpt"]
    assert len(asrpt) == 6
    assert (asrpt["epsilon_bar"] == 0).all()
    assert (asrpt["ratio_to_opt"] <= asrpt["theorem1_bound"]).all()
    assert result.summary["bound_violations"] == 0
    assert result.summary["ratio_over_bound_max"] == pytest.approx(asrpt["ratio_over_bound"].max())
    assert result.summary["ratio_to_opt_max"] == pytest.approx(asrpt["ratio_to_opt"].max())
    # with rho = 1 the bound is 2 + tau + G / (G - g_max)
    expected = 2 + tau + 8 / (8 - asrpt["g_max"])
    assert np.allclose(asrpt["theorem1_bound"], expected)


def test_reviewer_instance_ratio_and_bound_hand_checked() -> None:
    """paper-notes 7.5: G=100, A (g=1, n=100000), B (g=50, n=2000), alpha=1, tau=0:
    A-SRPT gives C = (101000, 4000), OPT = 102000, bound 2 + 0 + 100/50 = 4."""
    config = compose_run_config(TINY + ["predictor=oracle", "scheduler.tau=0", "task.theory_gpus=100",
                                        "task.theory_job_gpus=[1,50]"])
    jobs = [Job("A", 0.0, TrainingPlan.fixed(1, 1.0), 100000), Job("B", 0.0, TrainingPlan.fixed(50, 1.0), 2000)]
    table = pd.DataFrame({"job_id": ["A", "B"], "release": [0.0, 0.0], "gpus": [1, 50],
                          "iterations": [100000, 2000], "alpha_min": [1.0, 1.0], "alpha_max": [1.0, 1.0]})
    cluster = theory_cluster(config.task, config)
    rows, frames = _run_instance(config, TinyInstance(0, jobs, table), cluster,
                                 {"asrpt": build_scheduler(config, "asrpt")})
    row = rows[0]
    assert row["sum_completion"] == pytest.approx(105000.0)
    assert row["opt"] == pytest.approx(102000.0) and row["opt_exact"]
    assert row["theorem1_bound"] == pytest.approx(4.0)
    assert row["ratio_to_opt"] == pytest.approx(105000 / 102000)
    assert frames[0].set_index("job_id")["end"].to_dict() == pytest.approx({"A": 101000.0, "B": 4000.0})


def test_theory_task_is_deterministic_and_seeded() -> None:
    _, first = _theory(["predictor=noisy", "predictor.epsilon=0.3"])
    _, again = _theory(["predictor=noisy", "predictor.epsilon=0.3"])
    _, other = _theory(["predictor=noisy", "predictor.epsilon=0.3", "seed=1"])
    columns = ["instance", "scheduler", "sum_completion", "opt", "theorem1_bound"]
    pd.testing.assert_frame_equal(_instances(first)[columns], _instances(again)[columns])
    assert not np.allclose(_instances(first)["opt"], _instances(other)["opt"])


def test_prediction_error_raises_the_bound_on_the_same_instances() -> None:
    _, exact = _theory(["predictor=noisy", "predictor.epsilon=0.0"])
    _, noisy = _theory(["predictor=noisy", "predictor.epsilon=0.5"])
    a = _instances(exact).query("scheduler == 'asrpt'").reset_index(drop=True)
    b = _instances(noisy).query("scheduler == 'asrpt'").reset_index(drop=True)
    assert np.allclose(a["opt"], b["opt"])  # the instances do not depend on epsilon
    assert (a["epsilon_bar"] == 0).all() and (b["epsilon_bar"] > 0).all()
    assert (b["theorem1_bound"] > a["theorem1_bound"]).all()
    oracle = _instances(noisy).query("scheduler == 'asrpt_oracle'")
    assert (oracle["epsilon_bar"] == 0).all()  # the oracle variant's bound uses the true iterations


def test_instances_follow_the_configured_ranges() -> None:
    config = compose_run_config(TINY + ["task.theory_job_gpus=[2,3]", "task.theory_iterations=[5,9]",
                                        "task.theory_releases=[10,20]", "task.theory_rho_max=2.0"])
    cluster = theory_cluster(config.task, config)
    instance = draw_instance(config.task, cluster, config.timing, config.seed, 3)
    table = instance.table
    assert table["gpus"].between(2, 3).all() and table["iterations"].between(5, 9).all()
    assert table["release"].between(10, 20).all()
    assert (table["alpha_min"] == 1.0).all() and table["alpha_max"].between(1.0, 2.0).all()
    assert [job.job_id for job in instance.jobs] == list(table["job_id"])


def test_placement_mode_reports_opt_as_a_lower_bound() -> None:
    _, result = _theory(["predictor=oracle", "task.theory_alpha=placement", "task.theory_gpus_per_server=4",
                         "task.theory_job_gpus=[1,4]", "scheduler.comm_heavy=1.2"])
    table = _instances(result)
    assert not table["opt_exact"].any()
    assert (table["ratio_to_opt"] >= 1 - 1e-9).all()
    assert table["rho"].max() > 1.0  # spreading costs something
    assert result.summary["opt_exact_share"] == 0.0
    assert result.summary["bound_violations"] == 0  # never claimed without an exact OPT


@pytest.mark.parametrize("override, key", [
    ("task.theory_job_gpus=[1,8]", "task.theory_job_gpus"),
    ("task.theory_alpha=elastic", "task.theory_alpha"),
    ("task.theory_gpus_per_server=3", "task.theory_gpus_per_server"),
    ("task.theory_iterations=[9,5]", "task.theory_iterations"),
    ("task.theory_time_limit_s=0", "task.theory_time_limit_s"),
    ("task.adversarial_objective=makespan", "task.adversarial_objective"),
    ("task.adversarial_budget=0", "task.adversarial_budget"),
])
def test_bad_theory_keys_are_rejected_by_name(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        compose_run_config(TINY + [override])


def test_placement_mode_needs_servers_that_hold_every_job() -> None:
    with pytest.raises(ConfigError, match="theory_gpus_per_server"):
        compose_run_config(TINY + ["task.theory_alpha=placement"])


def test_theory_task_refuses_a_predictor_that_needs_history() -> None:
    with pytest.raises(ConfigError, match="predictor 'forest'"):
        _theory(["predictor=forest"])


def test_run_summary_bounds_use_a_valid_alpha_min_and_oracle_has_no_error() -> None:
    """summary.json's lower bound and Theorem 1 symbols use theory.alpha_min_source (<= the true
    alpha_min), not the Heavy-Edge estimate in jobs.parquet; the oracle variant's epsilon-bar is 0."""
    config = compose_run_config(["debug=tiny", "workload=synthetic", "task.schedulers=[asrpt,asrpt_oracle]",
                                 "cluster.servers=4", "cluster.gpus_per_server=4"])
    result = run_experiment(config)
    workload = load_workload(config)
    safe = alpha_min_for_jobs(workload.jobs, workload.cluster, config.timing, "consolidated")
    alpha_max = np.array([config.timing.alpha_max(job.plan, workload.cluster) for job in workload.jobs])
    expected_lb = lower_bound_for_jobs(workload.jobs, workload.cluster, config.timing).value
    runs = result.summary["per_scheduler"]
    for name in ("asrpt", "asrpt_oracle"):
        assert runs[name]["lower_bound"] == pytest.approx(expected_lb)
        assert runs[name]["rho"] == pytest.approx(max(1.0, float(np.max(alpha_max / safe))))
        assert "consolidated" in runs[name]["theory_note"]
    assert runs["asrpt_oracle"]["epsilon_bar"] == 0.0 < runs["asrpt"]["epsilon_bar"]
    assert runs["asrpt_oracle"]["theorem1_bound"] < runs["asrpt"]["theorem1_bound"]


# ---------------------------------------------------------------- adversarial task

def test_adversarial_best_instance_reruns_through_workload_csv(tmp_path: Path) -> None:
    config = compose_run_config(["task=adversarial", "task.adversarial_budget=30", "task.theory_gpus=20",
                                 "scheduler.tau=0", "progress=false"])
    result = run_experiment(config)
    run_dir = rundir.write_run_dir(tmp_path / "search", result, config.to_dict())
    summary = result.summary
    assert summary["best_value"] == pytest.approx(summary["eq12_violation_rel"])
    assert summary["evaluations"] == 30 and len(result.tables["history"]) == 30
    assert result.tables["history"]["best_value"].is_monotonic_increasing
    best = pd.read_csv(run_dir / "best_instance.csv")
    assert evaluate("eq12", best, 20, 0.0) == pytest.approx(summary["best_value"])

    rerun_overrides = summary["rerun"].split()[1:]
    rerun_overrides = [o.replace("best_instance.csv", str(run_dir / "best_instance.csv")) for o in rerun_overrides]
    rerun = run_experiment(compose_run_config(rerun_overrides + ["progress=false"]))
    searched = result.jobs.sort_values("job_id").reset_index(drop=True)
    replayed = rerun.jobs.sort_values("job_id").reset_index(drop=True)
    shift = best["release"].min()  # the csv workload moves the first release to 0
    assert list(searched["job_id"]) == list(replayed["job_id"])
    assert np.allclose(searched["start"] - shift, replayed["start"])
    assert np.allclose(searched["end"] - shift, replayed["end"])


def test_adversarial_ratio_objective_stays_below_the_bound() -> None:
    result = run_experiment(compose_run_config(["task=adversarial", "task.adversarial_objective=ratio",
                                                "task.adversarial_budget=20", "task.theory_gpus=8",
                                                "scheduler.tau=0", "progress=false"]))
    summary = result.summary
    assert summary["best_value"] == pytest.approx(summary["ratio_over_bound"])
    assert summary["opt_proven"]
    assert summary["best_value"] <= 1.0  # Theorem 1 holds on the worst instance found
    assert summary["ratio_to_opt"] >= 1.0


# ---------------------------------------------------------------- experiments

NEW_EXPERIMENTS = ("theory_ratio_vs_bound", "theory_trace_ratio", "adversarial_search", "ablation_novelty_bias",
                   "ablation_placement", "ablation_backfill")


def _sweep_values(name: str) -> dict[str, list[str]]:
    params = yaml.safe_load((CONFIG_DIR / "experiment" / f"{name}.yaml").read_text())["hydra"]["sweeper"]["params"]
    return {key: str(values).split(",") for key, values in params.items()}


@pytest.mark.parametrize("name", NEW_EXPERIMENTS)
def test_every_swept_value_composes_and_validates(name: str) -> None:
    axes = _sweep_values(name)
    assert len(axes["seed"]) >= 3, "several seeds"
    for key, values in axes.items():
        for value in values:
            compose_run_config([f"experiment={name}", f"{key}={value}"])


@pytest.mark.parametrize("name, key, values, field", [
    ("ablation_novelty_bias", "predictor.unseen", ("zero", "mean"), lambda c: c.predictor.unseen),
    ("ablation_placement", "placement", ("heavy_edge", "first_fit"), lambda c: c.placement.name),
    ("ablation_backfill", "scheduler.backfill", ("false", "true"), lambda c: str(c.scheduler.backfill).lower()),
])
def test_ablations_vary_exactly_their_key_under_asrpt(name, key, values, field) -> None:
    configs = [compose_run_config([f"experiment={name}", f"{key}={v}"]) for v in values]
    assert [field(c) for c in configs] == list(values)
    assert all(c.task.name == "simulate" and c.scheduler.name == "asrpt" for c in configs)
    first, second = (c.to_dict() for c in configs)
    differing = {group for group in first if first[group] != second[group]}
    assert differing == {key.split(".")[0]}


def test_theory_experiment_sweeps_tau_comm_heavy_and_epsilon() -> None:
    params = yaml.safe_load((CONFIG_DIR / "experiment" / "theory_ratio_vs_bound.yaml").read_text())
    swept = set(params["hydra"]["sweeper"]["params"])
    assert {"scheduler.tau", "scheduler.comm_heavy", "predictor.epsilon", "task.theory_alpha"} <= swept
    config = compose_run_config(["experiment=theory_ratio_vs_bound"])
    assert config.task.name == "theory" and config.predictor.name == "noisy"
    assert config.task.to_dict()["theory_gpus"] == 8


# ---------------------------------------------------------------- figures

def _theory_table() -> pd.DataFrame:
    rows = []
    for seed in (0, 1):
        for alpha in ("fixed", "placement"):
            for comm_heavy in (1.5, 3.0):
                for tau in (0.0, 1.0):
                    for eps in (0.0, 0.5):
                        rows.append({"status": "complete", "scheduler": "asrpt", "seed": seed,
                                     "task.theory_alpha": alpha, "scheduler.comm_heavy": comm_heavy,
                                     "scheduler.tau": tau, "predictor.epsilon": eps,
                                     "ratio_to_opt_max": 1.2 + 0.1 * seed, "theorem1_bound_min": 4 + tau + 10 * eps,
                                     "ratio_over_bound_max": 0.25 + 0.05 * seed})
    return pd.DataFrame(rows)


def test_ratio_vs_bound_figure_has_one_panel_per_alpha_model_and_comm_heavy() -> None:
    figure = theory_plots.plot_theory_ratio_vs_bound(_theory_table())
    assert len(figure.axes) == 4
    assert "worst ratio / bound in any run: 0.3)" in figure._suptitle.get_text()
    lines = figure.axes[0].get_lines()
    assert len(lines) == 4  # per tau: the measured ratio and the bound


def test_ablation_figure_reports_the_relative_change() -> None:
    table = pd.DataFrame({"status": "complete", "seed": [0, 1, 0, 1], "scheduler.backfill": [False, False, True, True],
                          "total_jct": [100.0, 300.0, 90.0, 240.0]})
    figure = theory_plots.plot_ablation_backfill(table)
    texts = [t.get_text() for t in figure.axes[0].texts]
    # mean 200 -> 165 is -17.5%; per seed -10% and -20%: mean -15%, t(0.975, 1) * 7.07 / sqrt(2) = 63.5
    assert texts == ["reference", "-17.5%\nper seed -15.0% [-78.5, +48.5]"]
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["strict head-of-line (paper)",
                                                                         "backfill (extension)"]


def test_figures_name_missing_columns() -> None:
    with pytest.raises(ConfigError, match="adversarial search"):
        theory_plots.plot_adversarial(pd.DataFrame({"status": ["complete"], "seed": [0]}))
