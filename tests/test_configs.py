"""Every option of every config group composes and validates; bad values fail naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from asrpt_bench.composition import CONFIG_DIR, compose_run_config, to_run_config
from asrpt_bench.config import RunConfig, SchedulerConfig
from asrpt_bench.tasks.compare import ALL_SCHEDULERS
from asrpt_bench.core import ConfigError
from asrpt_bench.provenance import config_hash

GROUPS = sorted(p.name for p in CONFIG_DIR.iterdir() if p.is_dir())
OPTIONS = [(group, path.stem) for group in GROUPS for path in sorted((CONFIG_DIR / group).glob("*.yaml"))]


def test_every_design_group_has_its_options() -> None:
    options = {group: {o for g, o in OPTIONS if g == group} for group in GROUPS}
    assert {"asrpt", "spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime", "fifo"} <= options["scheduler"]
    assert options["predictor"] >= {"forest", "oracle", "noisy"}
    assert options["placement"] >= {"heavy_edge", "ilp", "first_fit", "random"}
    assert options["solver"] >= {"highs", "cbc", "cpsat", "gurobi"}
    assert options["workload"] >= {"philly", "pai2020", "csv", "synthetic", "lemma2_reviewer"}
    assert options["task"] >= {"compare", "simulate", "placement", "predictor"}
    assert {"cluster", "experiment", "timing"} <= set(GROUPS)


@pytest.mark.parametrize(("group", "option"), OPTIONS, ids=[f"{g}={o}" for g, o in OPTIONS])
def test_every_option_composes_and_validates(group: str, option: str) -> None:
    from hydra import compose, initialize_config_dir

    compared = group != "scheduler" or option in ALL_SCHEDULERS
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"{group}={option}"] + ([] if compared else ["task=simulate"]))
    if group == "workload" and option in ("csv", "pai2020", "slurm", "swf", "helios", "acme"):  # must say which key to set
        with pytest.raises(ConfigError, match=r"workload\.path is required for this workload: .*\(workload\.path=\.\.\.\)"):
            to_run_config(cfg)
        return
    run = to_run_config(cfg)
    if group in ("scheduler", "predictor", "placement", "solver", "task", "workload"):
        assert getattr(run, group).name == option
    if not compared:  # the default compare task does not run it: refused, not ignored
        with pytest.raises(ConfigError, match=rf"^scheduler={option} is not among task\.schedulers \["):
            compose_run_config([f"scheduler={option}"])


def test_defaults_match_design() -> None:
    run = compose_run_config([])
    assert run.task.name == "compare" and run.scheduler.name == "asrpt"
    assert run.scheduler.comm_heavy == 1.5
    assert (run.cluster.servers, run.cluster.gpus_per_server) == (8, 8)
    assert (run.cluster.b_intra, run.cluster.b_inter) == (300.0, 12.5)
    assert run.workload.name == "philly" and run.workload.num_jobs == 2000
    assert run.predictor.name == "forest" and run.seed == 0


@pytest.mark.parametrize(("override", "key"), [
    ("scheduler.comm_heavy=0.5", "scheduler.comm_heavy"),
    ("scheduler.tau=-1", "scheduler.tau"),
    ("predictor=noisy predictor.epsilon=-0.1", "predictor.epsilon"),
    ("cluster.servers=0", "cluster.servers"),
    ("cluster.servers=abc", "cluster.servers"),
    ("cluster.b_inter=fast", "cluster.b_inter"),
    ("workload.single_gpu_share=1.5", "workload.single_gpu_share"),
    ("+scheduler.bogus=1", "scheduler.bogus"),
    ("seed=-3", "seed"),
    ("theory.rho_bar_definition=typo", "theory.rho_bar_definition"),
    ("theory.eps_bar_definition=typo", "theory.eps_bar_definition"),
    ("theory.alpha_min_source=heavy_edge", "theory.alpha_min_source"),
    ("workload.recurrence.sigma=-1", "workload.recurrence.sigma"),
    ("workload.recurrence.new_group_share=1.5", "workload.recurrence.new_group_share"),
    ("workload.recurrence.new_group_selection=longest", "workload.recurrence.new_group_selection"),
    ("workload.recurrence.source=trace", "workload.recurrence.source"),
    ("+workload.recurrence.bins=3", "workload.recurrence.bins"),
    ("workload.target_load=0", "workload.target_load"),
    ("workload.inject_jobs=-1", "workload.inject_jobs"),
    ("workload.inject_duration=0", "workload.inject_duration"),
    ("workload=gavel workload.gavel_alpha_max=spread", "workload.gavel_alpha_max"),
])
def test_bad_values_fail_naming_the_key(override: str, key: str) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        compose_run_config(override.split())


def test_unknown_option_lists_the_available_ones() -> None:
    with pytest.raises(ConfigError, match="scheduler/nope"):
        compose_run_config(["scheduler=nope"])


def test_recurrence_knobs_compose_per_workload() -> None:
    philly = compose_run_config(["workload.recurrence.sigma=null", "workload.recurrence.new_group_share=0.3"])
    assert philly.workload.recurrence.sigma is None and philly.workload.recurrence.new_group_share == 0.3
    assert compose_run_config(["workload.recurrence.sigma=inf"]).workload.recurrence.summary()["sigma"] is None
    gavel = compose_run_config(["workload=gavel"]).workload.recurrence
    assert (gavel.source, gavel.new_group_share) == ("trace", 0.0)
    regime = compose_run_config(["experiment=regime_map", "workload=gavel"])
    assert regime.workload.recurrence.source == "synthetic" and regime.task.schedulers[:2] == ["asrpt", "asrpt_oracle"]


def test_named_experiments_set_their_task() -> None:
    assert compose_run_config(["experiment=fig4_prediction_error"]).task.name == "predictor"
    assert compose_run_config(["experiment=sensitivity"]).predictor.name == "noisy"
    fig7 = compose_run_config(["experiment=fig7_single_gpu_share"])
    assert fig7.workload.num_jobs == 1000 and fig7.workload.resample_replace


def test_config_hash_tracks_results_not_progress() -> None:
    base = RunConfig()
    assert config_hash(base) == config_hash(RunConfig())
    quiet = RunConfig(progress=False)
    assert config_hash(quiet) == config_hash(base)
    assert config_hash(RunConfig(scheduler=SchedulerConfig(tau=2.0))) != config_hash(base)


def test_a_group_holds_only_its_components_parameters() -> None:
    assert SchedulerConfig(tau=0.5).to_dict() == {"name": "asrpt", "tau": 0.5, "comm_heavy": 1.5,
                                                  "consolidation_test": "alpha", "delay_origin": "enqueue",
                                                  "srpt_tiebreak": "release_id", "backfill": False,
                                                  "dispatch": "strict", "eligibility": "virtual", "overrun": "none",
                                                  "min_estimate_s": 0.0, "virtual": "srpt"}
    assert SchedulerConfig("fifo").to_dict() == {"name": "fifo", "dispatch": "strict", "duration_source": "predicted",
                                                 "overrun": "none", "min_estimate_s": 0.0}
    with pytest.raises(ConfigError, match=r"^scheduler\.tau: scheduler 'fifo' has no parameter 'tau'; its "
                                          r"parameters: \['dispatch', 'duration_source', 'overrun', 'min_estimate_s'\]$"):
        SchedulerConfig("fifo", tau=0.5)


def test_config_json_round_trips() -> None:
    config = compose_run_config(["experiment=regime_map", "workload=gavel", "predictor=noisy"])
    assert RunConfig.from_dict(config.to_dict()) == config


def test_conf_tree_is_inside_the_package() -> None:
    assert (Path(__file__).resolve().parents[1] / "asrpt_bench" / "conf" / "config.yaml") == CONFIG_DIR / "config.yaml"


def test_the_top_level_conf_shows_the_config_groups() -> None:
    root = Path(__file__).resolve().parents[1]
    assert (root / "conf" / "config.yaml").resolve() == CONFIG_DIR / "config.yaml"
    assert (root / "conf" / "experiment" / "compare_default.yaml").is_file()
