"""The job-log loaders (workload=slurm, swf, helios, acme) on fixtures written from the published schemas
(tests/data/joblogs): every kept job's values, what is left out and why, the trace card, time zones, and that
the user's file is never modified."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from asrpt_bench.config import PredictorConfig, RunConfig, TaskConfig, WorkloadConfig
from asrpt_bench.core import Cluster, ConfigError
from asrpt_bench.experiment import run_experiment
from asrpt_bench.workloads.helios import load_acme, load_helios
from asrpt_bench.workloads.slurm import SAMPLE, load_slurm, tres_gpus
from asrpt_bench.workloads.swf import load_swf
from asrpt_bench.workloads.tracecard import format_trace_card, gpu_histogram

LOGS = Path(__file__).parent / "data" / "joblogs"
COLUMNS = ["job_id", "release", "gpus", "duration", "recorded_wait", "time_limit", "user", "group", "partition",
           "state"]
nan = math.nan


def rows(table: pd.DataFrame) -> list[tuple]:
    """The kept jobs as tuples of plain values (None for a missing text, nan for a missing number)."""
    out = []
    for record in table[COLUMNS].itertuples(index=False):
        out.append(tuple(None if (isinstance(v, float) and math.isnan(v) and name in ("user", "group", "partition"))
                         else v for name, v in zip(COLUMNS, record)))
    return out


def same(actual: list[tuple], expected: list[tuple]) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        for g, w in zip(got, want):
            assert (isinstance(w, float) and math.isnan(w) and isinstance(g, float) and math.isnan(g)) or g == w, \
                (got, want)


def test_slurm_folds_steps_and_heterogeneous_components_and_leaves_out_what_cannot_run() -> None:
    table = load_slurm(LOGS / "sacct.txt")
    same(rows(table), [
        ("1001", 0.0, 2, 3600.0, 300.0, 7200.0, "alice", "vision", "gpu", "COMPLETED"),
        ("1002", 600.0, 4, 600.0, 1200.0, 3600.0, "bob", "nlp", "gpu", "CANCELLED"),
        ("1006", 3600.0, 8, 3600.0, 600.0, 3600.0, "dave", "vision", "gpu", "TIMEOUT"),
        ("1007_3", 5400.0, 1, 100.0, 7200.0, nan, "erin", "vision", "gpu", "FAILED"),
        ("1008", 7200.0, 16, 1200.0, 0.0, 1800.0, "erin", None, "debug", "OUT_OF_MEMORY"),
    ])
    card = table.attrs["trace_card"]
    assert card["jobs"] == 9 and card["kept"] == 5
    assert card["dropped"] == {"not_finished": 2, "never_started": 1, "no_gpu": 1, "state_not_selected": 0}
    assert card["read"] == {"rows": 14, "job steps folded into their jobs": 4,
                            "job steps without their job (ignored)": 0, "heterogeneous job components folded": 1}
    assert card["gpu_histogram"] == {"1": 1, "2": 1, "3-4": 1, "5-8": 1, "9-16": 1}
    assert card["run_time_s"] == {"mean": (3600 + 600 + 3600 + 100 + 1200) / 5, "median": 1200.0}
    assert card["queue_time_s"] == {"mean": (300 + 1200 + 600 + 7200 + 0) / 5, "median": 600.0}
    assert card["state_shares"] == {s: 0.2 for s in ("COMPLETED", "CANCELLED", "TIMEOUT", "FAILED", "OUT_OF_MEMORY")}
    assert (card["first_submit_utc"], card["last_submit_utc"]) == ("2024-03-01 08:00:00", "2024-03-01 10:00:00")
    assert table.attrs["recurrence_keys"] == "trace"


def test_the_trace_card_prints_what_was_kept_and_left_out() -> None:
    text = format_trace_card(load_slurm(LOGS / "sacct.txt").attrs["trace_card"])
    assert text.splitlines() == [
        f"trace card: slurm log {LOGS / 'sacct.txt'} (14 rows, 4 job steps folded into their jobs, 1 heterogeneous "
        "job components folded)",
        "  jobs 9: kept 5; left out not finished 2, never started 1, without GPUs 1",
        "  GPUs per job: 1: 1, 2: 1, 3-4: 1, 5-8: 1, 9-16: 1 (mean 6.20, median 4)",
        "  run time: mean 30.3 min, median 20.0 min; queueing delay in the log: mean 31.0 min, median 10.0 min",
        "  states: COMPLETED 20.0%, CANCELLED 20.0%, TIMEOUT 20.0%, FAILED 20.0%, OUT_OF_MEMORY 20.0%",
        "  submissions from 2024-03-01 08:00:00 to 2024-03-01 10:00:00 UTC (0.1 days)",
    ]


def test_a_state_filter_keeps_only_those_states_and_counts_the_rest() -> None:
    table = load_slurm(LOGS / "sacct.txt", states=["COMPLETED", "TIMEOUT"])
    assert table["job_id"].tolist() == ["1001", "1006"]
    assert table["release"].tolist() == [0.0, 3600.0]
    assert table.attrs["trace_card"]["dropped"]["state_not_selected"] == 3
    with pytest.raises(ConfigError, match=r"workload.states: 'DONE' is not a finished state"):
        load_slurm(LOGS / "sacct.txt", states=["DONE"])


@pytest.mark.parametrize("tres, gpus", [
    ("billing=8,cpu=8,gres/gpu=2,mem=64G,node=1", 2),
    ("cpu=4,gres/gpu:a100=4,mem=32G", 4),
    ("gres/gpu:v100=8,gres/gpu:t4=8,node=2", 16),
    ("gres/gpu=3,gres/gpu:a100=3", 3),
    ("cpu=4,mem=1G,node=1", 0),
])
def test_gpus_come_from_gres_gpu_or_the_sum_of_its_typed_counts(tres: str, gpus: int) -> None:
    assert tres_gpus(tres, "here") == gpus


def _sacct(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "sacct.txt"
    path.write_text("JobID|Submit|Start|End|State|AllocTRES\n" + "\n".join(rows) + "\n")
    return path


def test_times_without_a_zone_are_read_in_workload_timezone(tmp_path: Path) -> None:
    """New York moved its clocks forward at 02:00 on 2024-03-10: from 01:00 to 04:00 local is 2 hours."""
    path = _sacct(tmp_path, "1|2024-03-10T01:00:00|2024-03-10T01:00:00|2024-03-10T01:30:00|COMPLETED|gres/gpu=1",
                  "2|2024-03-10T04:00:00|2024-03-10T04:00:00|2024-03-10T04:30:00|COMPLETED|gres/gpu=1")
    assert load_slurm(path)["release"].tolist() == [0.0, 3 * 3600.0]
    assert load_slurm(path, timezone="America/New_York")["release"].tolist() == [0.0, 2 * 3600.0]


def test_a_repeated_daylight_saving_hour_is_read_once_and_noted(tmp_path: Path) -> None:
    """Berlin's 02:30 on 2024-10-27 happened twice; the first (summer-time) one is taken and counted."""
    path = _sacct(tmp_path, "1|2024-10-27T01:30:00|2024-10-27T02:30:00|2024-10-27T03:30:00|COMPLETED|gres/gpu=1")
    table = load_slurm(path, timezone="Europe/Berlin")
    assert table["recorded_wait"].tolist() == [3600.0] and table["duration"].tolist() == [2 * 3600.0]
    assert table.attrs["notes"] == [{
        "key": "log_times_in_repeated_dst_hour", "count": 1,
        "message": f"{path}: 1 time stamp(s) fall in the hour Europe/Berlin repeats when daylight saving time ends; "
                   "each is read as its first (summer-time) occurrence"}]


def test_a_local_time_that_never_existed_is_refused(tmp_path: Path) -> None:
    path = _sacct(tmp_path, "1|2024-03-31T02:30:00|2024-03-31T03:30:00|2024-03-31T04:30:00|COMPLETED|gres/gpu=1")
    with pytest.raises(ConfigError) as error:
        load_slurm(path, timezone="Europe/Berlin")
    assert str(error.value) == (f"{path}: row 1 (line 2), column 'Submit': this local time does not exist in "
                                "Europe/Berlin (the hour skipped when daylight saving time begins), got "
                                "'2024-03-31T02:30:00'")


def test_an_unknown_time_zone_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"workload.timezone must be an IANA time zone name such as 'UTC' or "
                                          r"'Europe/Berlin', got 'Mars/Olympus'"):
        load_slurm(LOGS / "sacct.txt", timezone="Mars/Olympus")


def test_helios_keeps_every_final_state_and_uses_the_virtual_cluster_as_group_and_partition() -> None:
    table = load_helios(LOGS / "cluster_log.csv")
    same(rows(table), [
        ("1425511", 0.0, 1, 36848.0, 0.0, nan, "uXBbc", "vcJkd", "vcJkd", "COMPLETED"),
        ("1425512", 26.0, 4, 249.0, 0.0, nan, "uVMrF", "vchbv", "vchbv", "FAILED"),
        ("1425513", 27.0, 1, 675233.0, 0.0, nan, "uzqls", "vcpDC", "vcpDC", "CANCELLED"),
        ("1425515", 539.0, 16, 86400.0, 1800.0, nan, "uXBbc", "vcJkd", "vcJkd", "TIMEOUT"),
        ("1425517", 1739.0, 2, 3600.0, 30.0, nan, "uVMrF", "vchbv", "vchbv", "NODE_FAIL"),
    ])
    assert table.attrs["trace_card"]["dropped"] == {"not_finished": 0, "never_started": 1, "no_gpu": 1,
                                                    "state_not_selected": 0}


def test_acme_converts_seren_and_kalos_offsets_to_one_clock() -> None:
    seren, kalos = load_acme(LOGS / "trace_seren.csv"), load_acme(LOGS / "trace_kalos.csv")
    same(rows(seren), [
        ("5778432", 0.0, 8, 117.0, 32.0, nan, "u5907", "Other", None, "FAILED"),
        ("5778469", 336.0, 8, 2693.0, 13.0, nan, "u5907", "Other", None, "COMPLETED"),
        ("5778470", 2498.0, 32, 86400.0, 3600.0, nan, "u1234", "Pretrain", None, "COMPLETED"),
        ("5778472", 3098.0, 1, 1800.0, 5.0, nan, "u2222", "SFT", None, "CANCELLED"),
    ])
    same(rows(kalos), [
        ("dlctk696s0jbvitv", 0.0, 64, 8.0, 10.0, nan, "uf794", "Other", None, "FAILED"),
        ("dlc1t2ypl09b8qtp", 1664.0, 64, 70.0, 12.0, nan, "uf794", "Other", None, "CANCELLED"),
        ("dlcaaaaaaaaaaaaa", 3542.0, 8, 7200.0, 20.0, nan, "ua001", "SFT", None, "COMPLETED"),
    ])
    assert seren.attrs["trace_card"]["first_submit_utc"] == "2023-02-28 16:18:22"  # 00:18:22 at +08:00
    assert kalos.attrs["trace_card"]["first_submit_utc"] == "2023-05-17 11:00:58"
    assert seren.attrs["trace_card"]["dropped"]["no_gpu"] == 1
    with pytest.raises(ConfigError, match="not a workload=acme file"):
        load_acme(LOGS / "cluster_log.csv")


def test_swf_reads_partial_executions_processors_as_gpus_and_the_log_start() -> None:
    table = load_swf(LOGS / "small.swf")
    same(rows(table), [
        ("1", 0.0, 4, 100.0, 10.0, 200.0, "u1", "g1", None, "COMPLETED"),
        ("2", 5.0, 2, 50.0, nan, nan, "u2", "g1", None, "FAILED"),
        ("4", 20.0, 6, 300.0, 0.0, nan, "u3", "g2", "p1", "PARTIAL"),
        ("4-2", 400.0, 6, 200.0, 5.0, 1000.0, "u3", "g2", "p1", "PARTIAL_COMPLETED"),
    ])
    card = table.attrs["trace_card"]
    assert card["dropped"] == {"not_finished": 0, "never_started": 1, "no_gpu": 1, "state_not_selected": 0}
    assert card["first_submit_utc"] == "2023-11-14 22:13:20"  # UnixStartTime 1700000000
    assert load_swf(LOGS / "small.swf", gpus_per_processor=0.25)["gpus"].tolist() == [1, 1, 2, 2]


def test_swf_without_a_start_time_has_no_calendar_dates(tmp_path: Path) -> None:
    path = tmp_path / "log.swf"
    path.write_text("1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 -1 -1 -1\n")
    card = load_swf(path).attrs["trace_card"]
    assert card["first_submit_utc"] is None
    assert format_trace_card(card).splitlines()[-1] == "  submissions over 0.0 days (the log gives no calendar date)"


def test_gpu_histogram_bins_by_powers_of_two() -> None:
    assert gpu_histogram(np.array([1, 2, 3, 4, 5, 8, 9, 1024, 1025, 4096])) == {
        "1": 1, "2": 1, "3-4": 2, "5-8": 2, "9-16": 1, "513-1024": 1, ">1024": 2}


@pytest.mark.parametrize("loader, name", [(load_slurm, "sacct.txt"), (load_helios, "cluster_log.csv"),
                                          (load_acme, "trace_seren.csv"), (load_swf, "small.swf")])
def test_loading_never_modifies_the_users_file(loader, name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes((LOGS / name).read_bytes())
    before = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns, sorted(tmp_path.iterdir()))
    loader(path)
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns, sorted(tmp_path.iterdir())) \
        == before


def test_a_run_on_a_log_keeps_user_account_and_partition_per_job_and_the_card_in_the_summary() -> None:
    config = RunConfig(cluster=Cluster(servers=2, gpus_per_server=8),
                       workload=WorkloadConfig("slurm", path=str(LOGS / "sacct.txt"), train_fraction=0.0),
                       predictor=PredictorConfig("oracle"), task=TaskConfig("compare", schedulers=["fifo", "spjf"]),
                       progress=False)
    result = run_experiment(config)
    owners = result.jobs[result.jobs["scheduler"] == "fifo"].set_index("job_id")[["user", "group", "partition"]]
    assert owners.astype(object).where(owners.notna(), None).to_dict("index") == {
        "1001": {"user": "alice", "group": "vision", "partition": "gpu"},
        "1002": {"user": "bob", "group": "nlp", "partition": "gpu"},
        "1006": {"user": "dave", "group": "vision", "partition": "gpu"},
        "1007_3": {"user": "erin", "group": "vision", "partition": "gpu"},
        "1008": {"user": "erin", "group": None, "partition": "debug"}}
    assert result.summary["trace_card"] == load_slurm(LOGS / "sacct.txt").attrs["trace_card"]


def test_the_shipped_sacct_sample_is_what_its_generator_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "data"))
    try:
        import make_sacct_sample
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(make_sacct_sample, "OUT", tmp_path / "sample.txt")
    make_sacct_sample.main()
    assert (tmp_path / "sample.txt").read_bytes() == SAMPLE.read_bytes()
    card = load_slurm(SAMPLE, timezone="Europe/Berlin").attrs["trace_card"]
    assert (card["jobs"], card["kept"], card["dropped"]["no_gpu"]) == (600, 509, 40)


def test_a_state_filter_from_the_command_line_reaches_the_loader_and_its_cache_key() -> None:
    from asrpt_bench.composition import compose_run_config

    config = compose_run_config(["workload=slurm", f"workload.path={LOGS / 'sacct.txt'}",
                                 "workload.states=[COMPLETED,TIMEOUT]", "workload.train_fraction=0", "predictor=oracle", "task=simulate", "cluster.servers=2",
                                 "progress=false"])
    summary = run_experiment(config).summary
    assert summary["num_jobs"] == 2 and summary["trace_card"]["dropped"]["state_not_selected"] == 3
