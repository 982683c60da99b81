"""Job tables -> Jobs, and the named instances."""

from __future__ import annotations

import pandas as pd
import pytest

from asrpt_bench.core import ConfigError, Stage, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.instances import get_instance, list_instances
from asrpt_bench.workloads.jobs import jobs_from_table


def two_stage(model: str, config: str) -> TrainingPlan:
    if model != "toy":
        raise ConfigError(f"unknown model {model!r}")
    return TrainingPlan(model, config, (Stage(0.2, 1e9, 1e8, 2), Stage(0.3, 1e9, 0.0, 2)))


def test_alpha_rows_become_fixed_plans():
    table = pd.DataFrame({"job_id": ["a", "b"], "release": [0, 5.5], "gpus": [1, 4], "iterations": [10, 3],
                          "alpha": [2.0, 0.5], "alpha_max": [None, 1.5], "user": ["u1", None],
                          "group": ["g1", "g2"], "duration": [20.0, None]})
    a, b = jobs_from_table(table, "t.csv")
    assert (a.job_id, a.release, a.gpus, a.iterations, a.user, a.group, a.duration) == ("a", 0.0, 1, 10, "u1", "g1",
                                                                                          20.0)
    assert a.plan == TrainingPlan.fixed(1, 2.0)
    assert b.plan == TrainingPlan.fixed(4, 0.5, 1.5)
    assert (b.user, b.duration) == (None, None)


def test_model_rows_use_the_plan_lookup_once_per_pair():
    calls = []

    def lookup(model, config):
        calls.append((model, config))
        return two_stage(model, config)

    table = pd.DataFrame({"job_id": ["x", "y"], "release": [0, 1], "gpus": [4, 4], "iterations": [5, 6],
                          "model": ["toy", "toy"], "config": ["p2xd2", "p2xd2"]})
    jobs = jobs_from_table(table, "t.csv", plan_lookup=lookup)
    assert [job.plan for job in jobs] == [two_stage("toy", "p2xd2")] * 2
    assert calls == [("toy", "p2xd2")]


def test_default_lookup_is_the_model_zoo():
    table = pd.DataFrame({"job_id": ["v"], "release": [0], "gpus": [4], "iterations": [5],
                          "model": ["vgg19"], "config": ["p2xd2"]})
    (job,) = jobs_from_table(table, "zoo.csv")
    assert (job.plan.model, job.plan.config, job.gpus, len(job.plan.stages)) == ("vgg19", "p2xd2", 4, 2)


@pytest.mark.parametrize("row, message", [
    ({"gpus": 2}, r"t.csv: row 1 \(line 2\), column 'gpus': toy/p2xd2 uses 4 GPUs, the row says 2"),
    ({"model": "nope"}, r"t.csv: row 1 \(line 2\), column 'model': unknown model 'nope'"),
    ({"alpha": 1.0}, r"column 'alpha': give either alpha or model\+config, not both"),
    ({"iterations": None}, r"column 'iterations': value is missing"),
    ({"model": None, "duration": 10.0}, r"column 'model': the job has neither alpha nor model\+config"),
    ({"release": -1}, r"column 'release': must be >= 0"),
])
def test_bad_rows_are_named(row, message):
    base = {"job_id": "x", "release": 0.0, "gpus": 4, "iterations": 5, "model": "toy", "config": "p2xd2"}
    with pytest.raises(ConfigError, match=message):
        jobs_from_table(pd.DataFrame([{**base, **row}]), "t.csv", plan_lookup=two_stage)


def test_duplicate_ids_in_a_table_are_named():
    table = pd.DataFrame({"job_id": ["a", "a"], "release": [0, 1], "gpus": [1, 1], "iterations": [1, 1],
                          "alpha": [1.0, 1.0]})
    with pytest.raises(ConfigError, match=r"t.csv: row 2 \(line 3\), column 'job_id': duplicate job id 'a'"):
        jobs_from_table(table, "t.csv")


def test_instances_are_listed_and_simulate():
    assert {"lemma2_reviewer", "head_of_line"} <= set(list_instances())
    with pytest.raises(ConfigError, match=r"unknown instance 'lemma3'"):
        get_instance("lemma3")
    reviewer = get_instance("lemma2_reviewer")
    assert (reviewer.cluster.total_gpus, [j.gpus for j in reviewer.jobs()]) == (100, [1, 50])
    assert reviewer.perfect_predictions() == {"A": 100000.0, "B": 2000.0}
    for name in list_instances():
        instance = get_instance(name)
        result = simulate(instance.jobs(), instance.cluster, make_scheduler("asrpt"), FirstFitPlacer(),
                          predictions=instance.perfect_predictions())
        assert result.metrics["num_jobs"] == len(instance.table)
