"""The simulator against queueing theory: the M/G/1 closed forms (computed independently here), the mg1
workload, the `queueing` task and its refusals, the experiment and its figure, and the slow
check itself: fifo, spjf, psjf_oracle and srtf_oracle on one GPU against FCFS, SJF, PSJF and SRPT."""

from __future__ import annotations

import itertools
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib import pyplot as plt
from scipy import integrate

from asrpt_bench.collect import collect
from asrpt_bench.composition import compose_run_config
from asrpt_bench.core import Cluster, ConfigError, PreemptionPrice
from asrpt_bench.experiment import run_experiment
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.report import doc_numbers, reproduction
from asrpt_bench.report.figures import FIGURES
from asrpt_bench.report.queueing_plots import plot_queueing_theory, point_confidence, queueing_intervals, queueing_text
from asrpt_bench.report.style import save_figure
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.tasks.queueing import CLOSED_FORMS, trimmed_mean_response
from asrpt_bench.theory.queueing import mean_response_time
from asrpt_bench.workloads.jobs import jobs_from_table
from asrpt_bench.workloads.queueing import mg1_workload, size_distribution
from test_cli import run_app

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT = ROOT / "asrpt_bench" / "conf" / "experiment" / "queueing_theory.yaml"


def nested_mean(policy: str, scv: float, load: float) -> float:
    """E[T] from the per-size formulas integrated as written (Harchol-Balter ch. 29-33): partial moments
    and rho(x) by quadrature of the density, SRPT's residence time as the inner integral of each size;
    nothing shared with theory/queueing.py but the density."""
    d = size_distribution(1.0, scv)
    rate = load / d.mean
    top = 60 * max(d.means)

    def moment(x: float, k: int) -> float:
        return integrate.quad(lambda t: t ** k * d.pdf(t), 0, x, limit=200)[0]

    second = moment(top, 2)

    def per_size(x: float) -> float:
        busy = 1 - rate * moment(x, 1)
        if policy == "fcfs":
            return x + rate * second / (2 * (1 - load))
        if policy == "sjf":
            return x + rate * second / 2 / busy ** 2
        if policy == "psjf":
            return x / busy + rate / 2 * moment(x, 2) / busy ** 2
        residence = integrate.quad(lambda t: 1 / (1 - rate * moment(t, 1)), 0, x, limit=200)[0]
        tail = integrate.quad(d.pdf, x, top, limit=200)[0]
        return residence + rate / 2 * (moment(x, 2) + x * x * tail) / busy ** 2

    points = sorted({0.0, *d.means, *(10 * m for m in d.means), top})
    return sum(integrate.quad(lambda x: per_size(x) * d.pdf(x), a, b, limit=200)[0] for a, b in zip(points, points[1:]))


@pytest.mark.parametrize("policy,scv,load", [("fcfs", 4.0, 0.7), ("sjf", 1.0, 0.8), ("sjf", 4.0, 0.6),
                                             ("psjf", 4.0, 0.8), ("srpt", 1.0, 0.5), ("srpt", 4.0, 0.8)])
def test_closed_forms_match_the_per_size_integrals_computed_as_written(policy, scv, load):
    assert mean_response_time(policy, size_distribution(1.0, scv), load) == pytest.approx(
        nested_mean(policy, scv, load), rel=1e-6)


def test_closed_forms_known_values_and_order():
    """M/M/1 FCFS: E[S] / (1 - rho); every discipline tends to E[S] as the load vanishes; SRPT <= PSJF and
    SJF <= FCFS (SRPT minimises the mean, SJF is the best non-preemptive size rule)."""
    exponential = size_distribution(3.0)
    assert mean_response_time("fcfs", exponential, 0.8) == pytest.approx(15.0)
    variable = size_distribution(1.0, 4.0)
    assert (variable.mean, variable.scv) == (pytest.approx(1.0), pytest.approx(4.0))
    assert mean_response_time("fcfs", variable, 0.5) == pytest.approx(1 + 0.5 * 5 / (2 * 0.5))  # P-K: E[S^2] = 5
    for policy in CLOSED_FORMS.values():
        assert mean_response_time(policy, variable, 1e-6) == pytest.approx(1.0, rel=1e-5)
    for load in (0.5, 0.8):
        value = {policy: mean_response_time(policy, variable, load) for policy in ("fcfs", "sjf", "psjf", "srpt")}
        assert value["srpt"] < value["psjf"] < value["sjf"] < value["fcfs"]
    with pytest.raises(ConfigError, match=r"load must be in \(0, 1\) for a stable M/G/1 queue, got 1.0"):
        mean_response_time("srpt", variable, 1.0)


def test_the_mg1_workload_draws_poisson_arrivals_and_the_size_moments():
    table = mg1_workload(200_000, 3, 0.6, size_distribution(100.0, 4.0))
    sizes = table["iterations"] * table["alpha"]
    gaps = np.diff(table["release"])
    assert (table["gpus"] == 1).all() and table["alpha"].nunique() == 1 and table["release"].iloc[0] == 0.0
    assert sizes.mean() == pytest.approx(100.0, rel=0.02) and sizes.var() / sizes.mean() ** 2 == pytest.approx(4.0, rel=0.1)
    assert gaps.mean() == pytest.approx(100.0 / 0.6, rel=0.01) and gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.02)
    assert mg1_workload(50, 3, 0.6, size_distribution(100.0, 4.0)).equals(mg1_workload(50, 3, 0.6, size_distribution(100.0, 4.0)))
    with pytest.raises(ConfigError, match=r"workload.size_scv must be a number >= 1, got 0.5"):
        size_distribution(1.0, 0.5)


def test_trimmed_mean_leaves_out_both_ends():
    assert trimmed_mean_response(np.arange(10.0), 0.2) == (4.5, 6)
    assert trimmed_mean_response(np.arange(10.0), 0.0) == (4.5, 10)


QUICK = ["workload=mg1", "task=queueing", "predictor=oracle", "cluster.servers=1", "cluster.gpus_per_server=1",
         "preemption.restart_s=0", "workload.arrivals=400", "progress=false", "cache.enabled=false"]


def test_the_queueing_task_sets_each_scheduler_beside_its_closed_form():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_experiment(compose_run_config([*QUICK, "workload.size_scv=4", "workload.load=0.7"]))
    comparison = result.comparison.set_index("scheduler")
    assert list(comparison.index) == list(CLOSED_FORMS) and list(comparison["discipline"]) == list(CLOSED_FORMS.values())
    jobs = result.jobs[result.jobs["scheduler"] == "srtf_oracle"].sort_values("release")
    assert comparison.loc["srtf_oracle", "mean_response_s"] == pytest.approx(jobs["jct"].iloc[40:360].mean())
    assert comparison.loc["srtf_oracle", "formula_mean_response_s"] == pytest.approx(
        mean_response_time("srpt", size_distribution(3600.0, 4.0), 0.7))
    assert (comparison["measured_jobs"] == 320).all() and (comparison["size_distribution"] == "hyperexponential").all()


@pytest.mark.parametrize("override,message", [
    ("workload=csv", "task=queueing needs workload=mg1"),
    ("cluster.servers=2", "task=queueing simulates one GPU: set cluster.servers=1 cluster.gpus_per_server=1, got 2 x 1"),
    ("predictor=noisy", "task=queueing needs predictor=oracle"),
    ("preemption.restart_s=30", "task=queueing needs preemption.restart_s=0 and preemption.min_run_s=0"),
    ("workload.target_load=0.5", "task=queueing simulates the whole M/G/1 stream: workload.target_load must keep its "
                                 "default None, got 0.5"),
])
def test_the_queueing_task_refuses_what_has_no_closed_form(tmp_path, override, message):
    extra = [f"workload.path={tmp_path / 'jobs.csv'}"] if override == "workload=csv" else []
    if extra:
        (tmp_path / "jobs.csv").write_text("job_id,release,gpus,iterations,alpha\na,0,1,1,1\n")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = [item for item in QUICK if not (override.startswith("workload=") and item.startswith("workload."))]
            run_experiment(compose_run_config([*config, override, *extra]))


def collected_table() -> pd.DataFrame:
    """A table shaped as asrpt-bench-collect writes the experiment: two C^2 x two loads x three seeds; every
    scheduler measures its closed form times 1 + 0.01 (seed - 1), except fifo at C^2 4, load 0.8, 20% high."""
    rows = []
    for scv, load, seed in itertools.product([1.0, 4.0], [0.5, 0.8], [0, 1, 2]):
        for name, discipline in CLOSED_FORMS.items():
            formula = 3600 * mean_response_time(discipline, size_distribution(1.0, scv), load)
            off = 1.2 if (name, scv, load) == ("fifo", 4.0, 0.8) else 1 + 0.01 * (seed - 1)
            rows.append({"workload.size_scv": scv, "workload.load": load, "seed": seed, "scheduler": name,
                         "discipline": discipline, "mean_response_s": formula * off, "formula_mean_response_s": formula,
                         "mean_size_s": 3600.0, "experiment": "queueing_theory", "status": "complete"})
    return pd.DataFrame(rows)


def test_intervals_are_family_wise_and_flag_a_closed_form_outside():
    summary = queueing_intervals(collected_table())
    assert len(summary) == 16 and summary.attrs["confidence"] == point_confidence(16) == pytest.approx(1 - 0.05 / 16)
    outside = summary[~summary["inside"]]
    assert list(zip(outside["scheduler"], outside["workload.size_scv"], outside["workload.load"])) == [("fifo", 4.0, 0.8)]
    spread = summary[summary["scheduler"] == "spjf"].iloc[0]
    assert spread["mean"] == pytest.approx(1.0) and spread["high"] - 1 == pytest.approx(
        0.01 * __import__("scipy").stats.t.ppf(1 - 0.05 / 32, 2) / math.sqrt(3))


def test_the_figure_has_one_panel_per_size_variability():
    figure = plot_queueing_theory(collected_table())
    assert [axes.get_title() for axes in figure.axes] == ["exponential sizes, C$^2$ = 1", "hyperexponential sizes, C$^2$ = 4"]
    plt.close(figure)


def test_the_experiment_config_composes(tmp_path):
    (tmp_path / "experiment").mkdir()
    shutil.copy(EXPERIMENT, tmp_path / "experiment")
    done = run_app("--config-dir", str(tmp_path), "experiment=queueing_theory", "--cfg", "job", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "name: queueing" in done.stdout and "name: mg1" in done.stdout and "restart_s: 0.0" in done.stdout


POINTS = [(1.0, 0.5), (1.0, 0.8), (4.0, 0.5), (4.0, 0.8)]
SEEDS, ARRIVALS, TRIM = 6, 10_000, 0.1
DISTINCT = 1.3
"""Disciplines whose closed forms differ by this factor must be told apart: each one's interval excludes
the other's closed form (a simulator that ignored the policy would fail here, not only on one point)."""


@pytest.mark.slow
def test_the_simulator_matches_the_m_g_1_closed_forms():
    """Every closed form lies inside the family-wise 95% interval (Bonferroni over the 16 points) of six
    independent replications of 10,000 jobs, measured on the middle 80%; and the intervals are narrow enough
    to tell apart disciplines whose closed forms differ by 30% (FCFS from the others everywhere, SJF from the
    preemptive ones at C^2 = 4)."""
    rows = []
    for (scv, load), seed in itertools.product(POINTS, range(SEEDS)):
        jobs = jobs_from_table(mg1_workload(ARRIVALS, seed, load, size_distribution(1.0, scv)), "mg1")
        for name, discipline in CLOSED_FORMS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = simulate(jobs, Cluster(1, 1), make_scheduler(name), FirstFitPlacer(),
                                  preemption=PreemptionPrice(restart_s=0.0))
            measured, _ = trimmed_mean_response(np.array([record.jct for record in result.records]), TRIM)
            rows.append({"workload.size_scv": scv, "workload.load": load, "seed": seed, "scheduler": name,
                         "discipline": discipline, "mean_response_s": measured, "mean_size_s": 1.0,
                         "formula_mean_response_s": mean_response_time(discipline, size_distribution(1.0, scv), load)})
    summary = queueing_intervals(pd.DataFrame(rows))
    assert summary["inside"].all(), summary[~summary["inside"]].to_string()
    for _, part in summary.groupby(["workload.size_scv", "workload.load"]):
        for _, row in part.iterrows():
            others = part["formula_mean_response_s"] / row["formula_mean_response_s"]
            distinct = others[(others > DISTINCT) | (others < 1 / DISTINCT)]
            assert ((distinct < row["low"]) | (distinct > row["high"])).all(), row.to_string()


def test_the_findings_line_counts_the_points_inside_per_size_variability():
    assert queueing_text(collected_table()) == (
        "- The simulator against queueing theory (one GPU, Poisson arrivals, loads 0.5-0.8, 3 seeds; fifo, spjf, "
        "psjf_oracle, srtf_oracle against the M/G/1 closed forms of FCFS, SJF, PSJF, SRPT; 99.69% t-intervals, 95% "
        "family-wise over 16 points): C² 1: inside at 8 of 8 points, measured / closed form 1.000-1.000, widest "
        "interval [0.897, 1.103]; C² 4: inside at 7 of 8 points, measured / closed form 1.000-1.200, widest interval "
        "[0.897, 1.103].")


def test_the_experiment_runs_small_collects_and_draws(tmp_path, monkeypatch):
    """The sweep at small scale (200 jobs, two seeds, one load) through the app, collected, checked
    and drawn by its FigureSpec, and summarised by its findings line and report row (the
    table handed over as load_result would, which refuses it here: it is not the whole sweep)."""
    (tmp_path / "experiment").mkdir()
    shutil.copy(EXPERIMENT, tmp_path / "experiment")
    done = run_app("--config-dir", str(tmp_path), "-m", "experiment=queueing_theory", "workload.arrivals=200",
                   "seed=0,1", "workload.load=0.6", "workload.size_scv=1,4", "progress=false",
                   f"hydra.sweep.dir={tmp_path / 'multirun'}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = collect([tmp_path / "multirun"])
    assert len(table) == 16 and (table["status"] == "complete").all()
    spec = next(spec for spec in FIGURES if spec.name == "queueing_theory")
    spec.check(table, tmp_path / "queueing_theory.csv")
    assert save_figure(spec.plot(table), tmp_path / "figures", spec.name)
    monkeypatch.setattr(doc_numbers, "load_result", lambda results, name: table)
    monkeypatch.setattr(reproduction, "load_result", lambda results, name: table)
    assert doc_numbers.BLOCKS["queueing_theory"](tmp_path).startswith(
        "- The simulator against queueing theory (one GPU, Poisson arrivals, loads 0.6-0.6, 2 seeds;")
    claim = reproduction.queueing_claim(tmp_path)
    assert claim.experiment == "queueing_theory" and claim.ours.startswith("C² 1: ") and " of 4 points" in claim.ours
