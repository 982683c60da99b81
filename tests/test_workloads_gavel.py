"""Gavel trace loader: both formats exactly on hand-made files, every shared Gavel file, malformed
rows naming file/line/field, a fuzz test that only ConfigError escapes, and the packaged throughputs."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asrpt_bench import io
from asrpt_bench.adjustments import RunNotes
from asrpt_bench.core import ConfigError
from asrpt_bench.workloads.slicing import history_size
from asrpt_bench.workloads.gavel import load_gavel
from asrpt_bench.workloads.gavel_throughputs import derive_throughput_table, job_types, packaged_throughputs
from asrpt_bench.workloads.recurrence import RecurrenceSpec

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "tests" / "data" / "gavel"
"""The four smallest of Gavel's per-VC Philly traces (seed 0) and Gavel's simulation_throughputs.json,
unchanged (tests/data/README.md), so these tests run on a fresh clone."""
SHARED = ROOT.parent / "shared" / "data"
"""A development machine may also hold every Gavel file; the test over all of them then covers those too."""
GAVEL_FILES = sorted(SHIPPED.glob("*.trace")) + sorted(
    path for path in [*(SHARED / "traces" / "gavel-philly-vc" / "seed0").glob("*.trace"),
                      *(SHARED / "traces" / "gavel-generated").glob("*.trace")]
    if not (SHIPPED / path.name).exists())

# Gavel's measured V100 throughputs (iterations/s, simulation_throughputs.json at commit c4fa400)
A3C_1 = 7.175767179667988
RESNET50_BS64_4 = 9.451949566394442
RESNET50_BS64_8, RESNET50_BS64_8_SPREAD = 17.303172756892167, 19.757330902241037
LM_BS20_2, LM_BS20_2_SPREAD = 132.17413449742747, 30.43655149451939

PER_VC = ("ResNet-50 (batch size 64)\tpython3 main.py --batch_size 64\t--num_steps\t1\t1000\t10.500000\t4\n"
          "A3C\tcd %s/rl && python3 main.py\t--max-steps\t0\t500\t0.000000\t1\n"
          "LM (batch size 20)\tpython3 main.py --batch_size 20\t--steps\t1\t2500\t3.250000\t2\n")
GENERATOR = ("LM (batch size 20)\tpython3 main.py\tlanguage_modeling\t--steps\t1\t2500\t2\t1\t-1.000000\t7.5\n"
             "A3C\tpython3 main.py\trl\t--max-steps\t0\t500\t1\t1\t-1.000000\t2.0\n"
             "ResNet-50 (batch size 64)\tpython3 main.py\timagenet\t--num_steps\t1\t1000\t4\t1\t-1.000000\t100\n")


def write(tmp_path: Path, text: str, name: str = "vc1.trace") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def columns(table: pd.DataFrame) -> list[tuple]:
    return list(zip(table["job_type"] if "job_type" in table else table["group"], table["release"], table["gpus"],
                    table["iterations"], table["alpha"], table["alpha_max"]))


def test_per_vc_format_exactly(tmp_path):
    table = load_gavel(write(tmp_path, PER_VC), train_fraction=0.0)
    assert columns(table) == [
        ("A3C", 0.0, 1, 500, 1 / A3C_1, 1 / A3C_1),
        ("LM (batch size 20)", 3.25, 2, 2500, 1 / LM_BS20_2, 1 / LM_BS20_2),
        ("ResNet-50 (batch size 64)", 10.5, 4, 1000, 1 / RESNET50_BS64_4, 1 / RESNET50_BS64_4),
    ]
    assert table["job_id"].tolist() == ["gavel-vc1-00002", "gavel-vc1-00003", "gavel-vc1-00001"]
    assert table["duration"].tolist() == pytest.approx([500 / A3C_1, 2500 / LM_BS20_2, 1000 / RESNET50_BS64_4])
    assert table["user"].tolist() == ["vc1"] * 3 and table.attrs["recurrence_keys"] == "trace"
    assert table.attrs["gavel_alpha_extrapolated"] == 0


def test_generator_format_exactly_with_spread_alpha_max(tmp_path):
    table = load_gavel(write(tmp_path, GENERATOR, "gen.trace"), train_fraction=0.0, alpha_max="unconsolidated")
    assert columns(table) == [
        ("A3C", 0.0, 1, 500, 1 / A3C_1, 1 / A3C_1),
        ("LM (batch size 20)", 5.5, 2, 2500, 1 / LM_BS20_2, 1 / LM_BS20_2_SPREAD),
        ("ResNet-50 (batch size 64)", 98.0, 4, 1000, 1 / RESNET50_BS64_4, 1 / RESNET50_BS64_4),
    ]


def test_directory_merges_files_by_arrival_and_names_the_vc(tmp_path):
    write(tmp_path, PER_VC, "aaa.trace")
    write(tmp_path, GENERATOR, "bbb.trace")
    (tmp_path / "notes.txt").write_text("ignored: not a .trace file")
    table = load_gavel(tmp_path, train_fraction=0.0)
    assert table["release"].tolist() == [0.0, 2.0, 3.25, 7.5, 10.5, 100.0]
    assert table["vc"].tolist() == ["aaa", "bbb", "aaa", "bbb", "aaa", "bbb"]


def test_unmeasured_scale_is_extrapolated_warned_and_counted(tmp_path):
    text = "ResNet-50 (batch size 64)\tcmd\t--num_steps\t1\t1000\t0\t16\n"
    with pytest.warns(UserWarning, match="1 job\\(s\\) have a \\(job type, scale factor\\) Gavel did not measure"):
        table = load_gavel(write(tmp_path, text), train_fraction=0.0, alpha_max="unconsolidated")
    assert table["alpha"].iloc[0] == 1 / (RESNET50_BS64_8 * 2)
    assert table["alpha_max"].iloc[0] == 1 / (RESNET50_BS64_8 * 2)  # spread is faster here: alpha_max >= alpha
    assert table.attrs["gavel_alpha_extrapolated"] == 1


def test_default_priority_and_no_slo_say_nothing(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = load_gavel(write(tmp_path, GENERATOR, "gen.trace"), train_fraction=0.0)
    assert table.attrs["gavel_priority_slo_ignored"] == 0


def test_priority_weights_and_slos_are_warned_once_and_counted(tmp_path):
    rows = GENERATOR.splitlines(keepends=True)
    weighted = rows[0].replace("\t1\t-1.000000\t", "\t2\t-1.000000\t")
    with_slo = rows[1].replace("\t1\t-1.000000\t", "\t1\t1.500000\t")
    with RunNotes() as notes:
        table = load_gavel(write(tmp_path, weighted + with_slo + rows[2], "gen.trace"), train_fraction=0.0)
    assert table.attrs["gavel_priority_slo_ignored"] == 2
    assert [(a.key, a.count) for a in notes.adjustments] == [("gavel_priority_slo_ignored", 2)]
    assert "2 job(s) have a priority_weight other than 1 or an SLO; A-SRPT and the baselines ignore both" \
        in notes.adjustments[0].message


def test_a_run_reports_ignored_priority_weights_in_its_summary(tmp_path):
    path = write(tmp_path, GENERATOR.replace("\t1\t-1.000000\t7.5", "\t3\t-1.000000\t7.5"), "gen.trace")
    run_dir = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", "task=simulate", "predictor=oracle",
                           "workload=gavel", f"workload.path={path}", "workload.train_fraction=0", "progress=false",
                           "cache.enabled=false", f"hydra.run.dir={run_dir}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["adjustments"]["gavel_priority_slo_ignored"] == 1
    assert summary["gavel_priority_slo_ignored"] == 1
    assert "A-SRPT and the baselines ignore both" in done.stderr


def test_synthetic_keys_and_new_groups_apply_to_gavel(tmp_path):
    table = load_gavel(recurrence=RecurrenceSpec(source="synthetic", sigma=None, new_group_share=0.2))
    assert table["group"].str.startswith("syn-").all() and table.attrs["recurrence_keys"] == "synthetic"
    assert table.attrs["recurrence"]["new_group_share_achieved"] == pytest.approx(0.2, abs=0.002)


@pytest.mark.parametrize(("text", "message"), [
    (PER_VC.replace("\t1000\t", "\t1e3\t"), r"vc1\.trace: row 1 \(line 1\), column 'total_steps': must be an integer"),
    (PER_VC.replace("\t2500\t3.250000", "\t2500\tsoon"), r"row 3 \(line 3\), column 'arrival_time': must be a finite"),
    (PER_VC.replace("\t3.250000\t2", "\t3.250000\t0"), r"row 3 \(line 3\), column 'scale_factor': must be an integer >= 1"),
    (PER_VC.replace("\t0\t500", "\t2\t500"), r"row 2 \(line 2\), column 'needs_data_dir': must be 0 or 1"),
    (PER_VC.replace("A3C", "GPT-5"), r"row 2 \(line 2\), column 'job_type': job type 'GPT-5' has no measured"),
    (PER_VC + "A3C\tcmd\n", r"vc1\.trace: line 4 has 2 tab-separated field\(s\), expected 7 \(Gavel per-VC"),
    ("\n" + PER_VC.replace("A3C", "\nGPT-5"), r"row 2 \(line 4\), column 'job_type': job type 'GPT-5' has no"),
    ("A3C\tcmd\t3\n", r"vc1\.trace: line 1 has 3 tab-separated field\(s\); a Gavel trace has 7"),
    ("", r"vc1\.trace: the trace has no jobs"),
    (GENERATOR.replace("-1.000000\t7.5", "nan\t7.5"), r"row 1 \(line 1\), column 'SLO': must be a finite number"),
])
def test_malformed_rows_name_file_line_and_field(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_gavel(write(tmp_path, text))


def test_blank_lines_are_no_rows(tmp_path):
    """A file ending in a blank line (or with blank and CRLF lines in between) is the same trace; job ids keep
    their line numbers."""
    plain = load_gavel(write(tmp_path, PER_VC), train_fraction=0.0)
    spaced = PER_VC.replace("\n", "\r\n", 1).replace("\nLM", "\n  \nLM") + "\n\n"
    table = load_gavel(write(tmp_path, spaced), train_fraction=0.0)
    assert columns(table) == columns(plain)
    assert table["job_id"].tolist() == ["gavel-vc1-00002", "gavel-vc1-00004", "gavel-vc1-00001"]


def test_a_directory_of_gzipped_traces_loads_as_the_plain_one(tmp_path):
    for directory in ("plain", "packed"):
        (tmp_path / directory).mkdir()
    write(tmp_path, PER_VC, "plain/aaa.trace")
    (tmp_path / "packed" / "aaa.trace.gz").write_bytes(gzip.compress(PER_VC.encode()))
    packed = load_gavel(tmp_path / "packed", train_fraction=0.0)
    assert columns(packed) == columns(load_gavel(tmp_path / "plain", train_fraction=0.0))
    assert set(packed["vc"]) == {"aaa"}


def test_missing_paths(tmp_path):
    with pytest.raises(ConfigError, match="nothing.trace: file not found"):
        load_gavel(tmp_path / "nothing.trace")
    with pytest.raises(ConfigError, match="no \\*.trace or \\*.trace.gz files in this directory"):
        load_gavel(tmp_path)
    with pytest.raises(ConfigError, match="gavel_alpha_max must be one of"):
        load_gavel(write(tmp_path, PER_VC), alpha_max="spread")


LINE = st.lists(st.sampled_from(["A3C", "LM (batch size 20)", "0", "1", "7", "-3", "2.5", "1e9", "nan", "inf", "",
                                 "x", "\r", " 4 ", "16"]), min_size=1, max_size=11).map("\t".join)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(st.binary(max_size=400), st.lists(LINE, min_size=1, max_size=6).map(
    lambda lines: "\n".join(lines).encode("utf-8"))))
def test_fuzzed_input_raises_only_config_error(tmp_path, data):
    path = tmp_path / "fuzz.trace"
    path.write_bytes(data)
    try:
        table = load_gavel(path, train_fraction=0.5)
    except ConfigError:
        return
    assert (table["gpus"] >= 1).all() and (table["alpha"] > 0).all() and (table["release"] >= 0).all()


def test_packaged_throughputs_are_gavels_v100_columns(tmp_path):
    table = packaged_throughputs()
    assert len(table) == 83 and len(job_types()) == 26
    source = tmp_path / "simulation_throughputs.json"
    source.write_bytes(gzip.decompress((SHIPPED / "simulation_throughputs.json.gz").read_bytes()))
    pd.testing.assert_frame_equal(table, derive_throughput_table(source))


def test_packaged_generator_trace_is_gavels_trace_byte_for_byte():
    """The packaged trace is the file its README names (sha256 of the uncompressed bytes), and loads as
    the 2,297 jobs it holds."""
    packaged = ROOT / "asrpt_bench" / "data" / "traces" / "gavel_generated_seed0.trace.gz"
    recorded = re.search(r"gavel_generated_seed0.*?sha256 of the\s+uncompressed file `([0-9a-f]{64})`",
                         (packaged.parent / "README.md").read_text(encoding="utf-8"), flags=re.S)
    assert recorded and hashlib.sha256(gzip.decompress(packaged.read_bytes())).hexdigest() == recorded[1]
    table = load_gavel()
    assert len(table) == 2297 and table["gpus"].value_counts().to_dict() == {1: 1621, 4: 363, 2: 210, 8: 103}


@pytest.mark.parametrize("path", GAVEL_FILES, ids=[p.name for p in GAVEL_FILES])
def test_every_gavel_file_loads(path):
    lines = path.read_text().count("\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the extrapolation warning is tested above
        table = load_gavel(path)
    assert len(table) == lines and (table["alpha"] > 0).all() and table["release"].min() == 0.0


@pytest.mark.parametrize("name", ["795a4c.trace", "51b7ef.trace"])
def test_small_gavel_files_simulate_end_to_end(name, tmp_path):
    path = SHIPPED / name
    run_dir = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "asrpt_bench.cli", "workload=gavel", f"workload.path={path}",
                           "predictor.n_estimators=5", "progress=false", f"hydra.run.dir={run_dir}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert io.run_status(run_dir) == "complete"
    comparison = pd.read_csv(run_dir / "comparison.csv")
    jobs = path.read_text().count("\n")
    assert (comparison["num_jobs"] + comparison["dropped"] == jobs - history_size(jobs, 0.8)).all()
    assert comparison["offered_load"].notna().all() or jobs - history_size(jobs, 0.8) == 1
