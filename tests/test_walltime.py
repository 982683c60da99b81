"""predictor=walltime: the requested time limit as the duration estimate, on job logs; its accuracy report
is the forest's (task=predictor)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.config import PredictorConfig, RunConfig, TaskConfig, WorkloadConfig
from asrpt_bench.core import Cluster, ConfigError
from asrpt_bench.experiment import run_experiment
from asrpt_bench.prediction import make_predictor

LOGS = Path(__file__).parent / "data" / "joblogs"


def table(limits: list[float], alpha_min: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"job_id": [f"j{i}" for i in range(len(limits))], "time_limit": limits,
                         "alpha_min_estimate": alpha_min, "iterations": [10] * len(limits)})


def test_the_limit_in_iterations_on_the_empty_cluster() -> None:
    history = table([600.0, 7200.0, math.nan], [1.0, 1.0, 1.0])
    test = table([3600.0, math.nan, 90.0], [2.0, 4.0, 0.5])
    fitted = make_predictor("walltime").fit(history)
    assert fitted.predict(test).tolist() == [1800.0, 7200.0 / 4.0, 180.0]
    assert fitted.unseen_mask(test).tolist() == [False, True, False]
    assert make_predictor("walltime", no_limit="zero").fit(history).predict(test).tolist() == [1800.0, 0.0, 180.0]
    assert make_predictor("walltime").fit(history.iloc[:0]).predict(test).tolist() == [1800.0, 0.0, 180.0]


def log_run(task: str, predictor: str = "walltime", **workload: object) -> RunConfig:
    return RunConfig(cluster=Cluster(servers=2, gpus_per_server=8),
                     workload=WorkloadConfig("slurm", path=str(LOGS / "sacct.txt"), **workload),
                     predictor=PredictorConfig(predictor), task=TaskConfig(task), progress=False)


def test_a_job_that_ran_to_its_limit_is_predicted_exactly() -> None:
    """Job 1006 ran 1 h of its 1 h limit (TIMEOUT), 1002 10 min of 1 h, 1008 20 min of 30 min; 1007_3 (100 s)
    has no limit and gets the history's (job 1001's 2 h). Up to the rounding of iterations."""
    result = run_experiment(log_run("predictor", train_fraction=0.2))
    errors = result.tables["prediction_errors"].set_index("job_id")
    ratio = (errors["predicted"] / errors["iterations"]).to_dict()
    assert ratio == pytest.approx({"1002": 6.0, "1006": 1.0, "1007_3": 72.0, "1008": 1.5}, rel=2e-3)
    assert errors["unseen"].to_dict() == {"1002": False, "1006": False, "1007_3": True, "1008": False}
    assert result.summary["unseen_share"] == 0.25 and result.summary["held_out_jobs"] == 4
    assert result.summary["predictor_used"] == "walltime"
    assert {"share_rel_0_0.1", "median_relative_error_seen", "mae"} <= set(result.summary)


def test_walltime_runs_a_comparison_on_a_log_with_every_job_simulated() -> None:
    summary = run_experiment(log_run("compare", train_fraction=0.0)).summary
    assert summary["predictor_used"] == "walltime" and summary["adjustments"] == {}
    assert summary["unseen_share"] == 0.2  # 1007_3 of the five jobs has no limit
    assert np.isfinite(summary["total_jct"])


def test_a_trace_without_time_limits_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,release,gpus,duration\na,0,1,100\nb,5,2,100\n")
    config = RunConfig(workload=WorkloadConfig("csv", path=str(path)), predictor=PredictorConfig("walltime"),
                       task=TaskConfig("simulate"), progress=False)
    with pytest.raises(ConfigError, match=r"^walltime predictor: none of the 2 jobs has a requested time limit "
                                          r"\(column 'time_limit'\); predictor=walltime reads"):
        run_experiment(config)
