"""A variant entry (`fifo+easy`) and the scheduler group: the entry's rule wins, the group configures every
entry it applies to where each key acts, and summary.json records what each scheduler ran with."""

from __future__ import annotations

import pytest

from asrpt_bench.build import build_placer, build_scheduler
from asrpt_bench.composition import compose_run_config
from asrpt_bench.config import PredictorConfig, RunConfig, SchedulerConfig, TaskConfig, WorkloadConfig
from asrpt_bench.core import Cluster, ConfigError
from asrpt_bench.experiment import run_experiment
from asrpt_bench.prepare import fit_predictions, load_workload
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.schedulers.base import SCHEDULERS
from asrpt_bench.sim import simulate


def scheduler_state(config: RunConfig, name: str) -> tuple[str, str]:
    scheduler = build_scheduler(config, name)
    return scheduler.dispatch_rule, scheduler.overrun


def test_the_entry_rule_wins_and_the_group_configures_the_others() -> None:
    config = compose_run_config(["scheduler=fifo", "scheduler.dispatch=conservative", "scheduler.overrun=double",
                                 "task.schedulers=[fifo,fifo+easy,fifo+greedy]"])
    assert scheduler_state(config, "fifo") == ("conservative", "double")
    assert scheduler_state(config, "fifo+easy") == ("easy", "double")
    assert scheduler_state(config, "fifo+greedy") == ("greedy", "none")  # overrun acts on no greedy scan
    assert build_scheduler(config, "fifo+easy").name == "fifo+easy"


def test_a_key_that_acts_only_on_a_variant_is_taken() -> None:
    """overrun under the group's strict dispatch would change nothing for fifo, but acts on fifo+easy."""
    config = compose_run_config(["scheduler=fifo", "scheduler.overrun=double", "scheduler.min_estimate_s=5",
                                 "task.schedulers=[fifo,fifo+easy]"])
    easy, strict = config.scheduler_params("fifo+easy"), config.scheduler_params("fifo")
    assert (easy.dispatch, easy.overrun, easy.min_estimate_s) == ("easy", "double", 5.0)
    assert (strict.dispatch, strict.overrun, strict.min_estimate_s) == ("strict", "none", 0.0)
    assert make_scheduler("fifo+easy", overrun="double").overrun == "double"  # once refused as strict


@pytest.mark.parametrize("overrides, message", [
    (["scheduler=fifo", "scheduler.dispatch=conservative", "task.schedulers=[fifo+easy]"],
     r"^scheduler=fifo is not among task.schedulers|^scheduler.dispatch='conservative' conflicts"),
    (["scheduler.dispatch=greedy", "task.schedulers=[asrpt+easy,asrpt_oracle+easy]"],
     r"^scheduler.dispatch='greedy' conflicts with task.schedulers \['asrpt\+easy', 'asrpt_oracle\+easy'\]"),
    (["scheduler.backfill=true", "task.schedulers=[asrpt,asrpt+easy]"],
     r"^scheduler.backfill=true means scheduler.dispatch=greedy.*\(task.schedulers entry 'asrpt\+easy' sets "
     r"dispatch 'easy'\)$"),
])
def test_conflicts_are_refused(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        compose_run_config(overrides)


def test_the_summary_records_what_each_scheduler_ran_with() -> None:
    config = RunConfig(cluster=Cluster(servers=2, gpus_per_server=4), progress=False,
                       workload=WorkloadConfig("synthetic", synthetic_jobs=60, job_cap=12),
                       predictor=PredictorConfig("oracle"),
                       scheduler=SchedulerConfig("fifo", dispatch="conservative", overrun="double"),
                       task=TaskConfig("compare", schedulers=["fifo", "fifo+easy", "wcs_subtime"]))
    result = run_experiment(config)
    ran = {name: scalars["scheduler_params"] for name, scalars in result.summary["per_scheduler"].items()}
    assert ran["fifo"]["dispatch"] == "conservative" and ran["fifo+easy"]["dispatch"] == "easy"
    assert ran["fifo+easy"]["overrun"] == ran["fifo"]["overrun"] == "double"
    assert ran["wcs_subtime"] == {"dispatch": "greedy", "duration_source": "predicted", "overrun": "none",
                                  "min_estimate_s": 0.0}
    workload = load_workload(config)
    direct = simulate(workload.jobs, workload.cluster, make_scheduler("fifo", dispatch="easy", overrun="double"),
                      build_placer(config), predictions=fit_predictions(config, workload))
    compared = result.jobs[result.jobs["scheduler"] == "fifo+easy"]
    assert list(compared["start"]) == [record.start for record in direct.records]


@pytest.mark.parametrize("name", ["fifo", "fifo+strict"])
def test_the_registry_refuses_a_key_that_would_change_nothing_unless_told_a_group_checks_it(name) -> None:
    """SCHEDULERS.parse refuses an inert key itself (what a plugin whose constructor checks nothing relies
    on); the config layer, which checks a group against every entry it configures, parses with acts=False."""
    with pytest.raises(ConfigError, match=r"^scheduler\.overrun acts only on backfilling estimates"):
        SCHEDULERS.parse(name, {"overrun": "double"})
    assert SCHEDULERS.parse(name, {"overrun": "double"}, acts=False).overrun == "double"
