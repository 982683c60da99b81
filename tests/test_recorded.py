"""scheduler=recorded: a job log's own start times replayed as a schedule, checked against an independent
count of the GPUs held at every instant, and added to every comparison on a log with start times."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.config import PredictorConfig, RunConfig, SchedulerConfig, TaskConfig, WorkloadConfig
from asrpt_bench.core import Cluster, ConfigError, Job, TrainingPlan
from asrpt_bench.experiment import run_experiment
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.sim.records import JobRecord
from asrpt_bench.sim.replay import capacity_excess

LOGS = Path(__file__).parent / "data" / "joblogs"


def held_after(records: list[JobRecord], t: float) -> int:
    """GPUs held just after instant t: the jobs with start <= t < end."""
    return sum(r.gpus for r in records if r.start <= t < r.end)


def brute_force_excess(records: list[JobRecord], total: int) -> dict[str, float | int]:
    instants = sorted({r.start for r in records} | {r.end for r in records})
    over = [t for t in instants if held_after(records, t) > total]
    seconds = sum(later - t for t, later in zip(instants, instants[1:]) if held_after(records, t) > total)
    return {"over_capacity_instants": len(over), "over_capacity_s": float(seconds),
            "peak_gpus": max(held_after(records, t) for t in instants)}


def record(start: float, end: float, gpus: int) -> JobRecord:
    return JobRecord(job_id=f"{start}-{end}-{gpus}", release=0.0, eligible=0.0, start=start, end=end, gpus=gpus,
                     model="m", config="c", servers_used=1, alpha=1.0, alpha_min=1.0, alpha_max=1.0, iterations=1,
                     predicted_iterations=1.0, comm_ratio=1.0, placement=(), gpu_ids=(), preemptions=0, restore_s=0.0,
                     service_s=end - start)


def test_capacity_excess_of_no_records_is_zero():
    assert capacity_excess([], Cluster(1, 4)) == {"over_capacity_instants": 0, "over_capacity_s": 0.0, "peak_gpus": 0}


@settings(deadline=None, derandomize=True, max_examples=200)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10), st.integers(1, 6)), min_size=1, max_size=12),
       st.integers(1, 12))
def test_capacity_excess_agrees_with_a_count_at_every_instant(jobs: list[tuple[int, int, int]], total: int) -> None:
    records = [record(float(start), float(start + length), gpus) for start, length, gpus in jobs]
    assert capacity_excess(records, Cluster(1, total)) == brute_force_excess(records, total)


def test_a_job_ending_when_another_starts_frees_its_gpus_first() -> None:
    records = [record(0.0, 10.0, 4), record(10.0, 20.0, 4)]
    assert capacity_excess(records, Cluster(1, 4)) == {"over_capacity_instants": 0, "over_capacity_s": 0.0,
                                                       "peak_gpus": 4}
    overlapping = [record(0.0, 10.0, 4), record(5.0, 20.0, 4), record(6.0, 8.0, 1)]
    assert capacity_excess(overlapping, Cluster(1, 4)) == {"over_capacity_instants": 3, "over_capacity_s": 5.0,
                                                           "peak_gpus": 9}


def test_the_replay_starts_every_job_at_its_recorded_wait_whatever_the_cluster_holds() -> None:
    plan = TrainingPlan.fixed(3, 2.0)
    jobs = [Job("a", 0.0, plan, 10, recorded_wait=5.0), Job("b", 1.0, plan, 4, recorded_wait=0.0),
            Job("c", 2.0, plan, 1, recorded_wait=30.0)]
    result = simulate(jobs, Cluster(1, 4), make_scheduler("recorded"), FirstFitPlacer())
    assert [(r.job_id, r.start, r.end, r.placement) for r in result.records] == [
        ("a", 5.0, 25.0, ()), ("b", 1.0, 9.0, ()), ("c", 32.0, 34.0, ())]
    # no placement, so each record's alpha is the job's empty-cluster one
    assert {(r.alpha, r.alpha_min) for r in result.records} == {(2.0, 2.0)}
    # a [5, 25) and b [1, 9) overlap on [5, 9) with 6 GPUs on a 4-GPU cluster
    assert (result.metrics["over_capacity_instants"], result.metrics["over_capacity_s"],
            result.metrics["peak_gpus"]) == (1, 4.0, 6)
    assert result.metrics["total_jct"] == 25.0 + 8.0 + 32.0


def test_a_replayed_record_names_the_servers_of_its_empty_cluster_placement() -> None:
    """The log says not where a job ran: its record's servers_used is what its placement on the empty cluster
    spans (one server for a job that fits one, two for 6 GPUs on servers of 4), beside no placement."""
    jobs = [Job("one", 0.0, TrainingPlan.fixed(3, 1.0), 2, recorded_wait=0.0),
            Job("two", 0.0, TrainingPlan.fixed(6, 1.0), 2, recorded_wait=1.0)]
    result = simulate(jobs, Cluster(2, 4), make_scheduler("recorded"), FirstFitPlacer())
    assert [(r.job_id, r.servers_used, r.placement) for r in result.records] == [("one", 1, ()), ("two", 2, ())]


def test_a_job_without_a_recorded_start_is_refused() -> None:
    jobs = [Job("a", 0.0, TrainingPlan.fixed(1, 1.0), 3)]
    with pytest.raises(ConfigError, match=r"job 'a' has no recorded start: scheduler=recorded replays"):
        simulate(jobs, Cluster(1, 4), make_scheduler("recorded"), FirstFitPlacer())


def log_run(**task: object) -> RunConfig:
    return RunConfig(cluster=Cluster(servers=1, gpus_per_server=8),
                     workload=WorkloadConfig("slurm", path=str(LOGS / "sacct.txt"), train_fraction=0.0),
                     predictor=PredictorConfig("oracle"), task=TaskConfig(**task), progress=False)


def test_the_replay_of_a_slurm_log_starts_jobs_when_the_log_says() -> None:
    config = log_run(name="simulate")
    config.scheduler = SchedulerConfig("recorded")
    replay = run_experiment(config)
    starts = dict(zip(replay.jobs["job_id"], replay.jobs["start"]))
    ends = dict(zip(replay.jobs["job_id"], replay.jobs["end"]))
    # Start and End - the first Submit (08:00): 08:05-09:05, 08:30-08:40, 09:10-10:10, 11:30-11:31:40;
    # job 1008 (16 GPUs) is dropped
    assert starts == {"1001": 300.0, "1002": 1800.0, "1006": 4200.0, "1007_3": 12600.0}
    assert ends == {"1001": 3900.0, "1002": 2400.0, "1006": 7800.0, "1007_3": 12700.0}
    assert replay.summary["dropped"] == 1 and replay.summary["over_capacity_instants"] == 0


def test_every_comparison_on_a_log_with_start_times_has_the_recorded_schedule() -> None:
    result = run_experiment(log_run(name="compare", schedulers=["fifo", "spjf"]))
    assert result.comparison["scheduler"].tolist() == ["fifo", "spjf", "recorded"]
    assert result.summary["recorded_schedule"] == "added" and result.summary["reference_scheduler"] == "fifo"
    listed = run_experiment(log_run(name="compare", schedulers=["recorded", "fifo"]))
    assert listed.comparison["scheduler"].tolist() == ["recorded", "fifo"]
    assert listed.summary["recorded_schedule"] == "listed"


def test_a_rescaled_log_is_compared_without_its_schedule_and_says_why() -> None:
    config = log_run(name="compare", schedulers=["fifo"])
    config.workload = config.workload.replace(target_load=0.5)
    result = run_experiment(config)
    assert result.comparison["scheduler"].tolist() == ["fifo"]
    assert result.summary["recorded_schedule"] == ("not replayed: workload.target_load rescales the releases the "
                                                   "log's start times are relative to")
    config.scheduler = SchedulerConfig("recorded")
    config.task = TaskConfig("simulate")
    with pytest.raises(ConfigError, match="^scheduler=recorded cannot replay the log: workload.target_load"):
        run_experiment(config)


def test_a_trace_without_start_times_gets_no_recorded_schedule(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,release,gpus,iterations,alpha\na,0,1,10,1.0\nb,5,2,10,1.0\n")
    config = RunConfig(cluster=Cluster(servers=1, gpus_per_server=4),
                       workload=WorkloadConfig("csv", path=str(path)), predictor=PredictorConfig("oracle"),
                       task=TaskConfig("compare", schedulers=["fifo"]), progress=False)
    result = run_experiment(config)
    assert result.comparison["scheduler"].tolist() == ["fifo"] and "recorded_schedule" not in result.summary
    config.task = TaskConfig("compare", schedulers=["fifo", "recorded"])
    with pytest.raises(ConfigError, match=r"^scheduler=recorded cannot replay the log: 2 of the 2 simulated jobs "
                                          r"have no recorded start \(first: 'a'\)"):
        run_experiment(config)


def test_a_job_table_with_recorded_waits_is_replayed(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,release,gpus,iterations,alpha,recorded_wait\na,0,1,10,1.0,4\nb,5,2,10,1.0,0\n")
    config = RunConfig(cluster=Cluster(servers=1, gpus_per_server=4),
                       workload=WorkloadConfig("csv", path=str(path)), predictor=PredictorConfig("oracle"),
                       scheduler=SchedulerConfig("recorded"), task=TaskConfig("simulate"), progress=False)
    jobs = run_experiment(config).jobs
    assert np.array_equal(jobs["start"].to_numpy(), [4.0, 5.0]) and np.array_equal(jobs["end"].to_numpy(), [14.0, 15.0])
