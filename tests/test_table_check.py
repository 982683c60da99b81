"""A collected table's derived columns follow from the raw ones, each run's reduction relative to its own
reference scheduler (a preemption-price run with scheduler=srtf is relative to srtf)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from asrpt_bench.core import ConfigError
from asrpt_bench.report.table_check import check_derived


def table() -> pd.DataFrame:
    rows = []
    for run, reference in (("a", "asrpt"), ("b", "srtf")):
        totals = {"asrpt": 10.0, "srtf": 5.0, "fifo": 20.0}
        for name, total in totals.items():
            rows.append({"run_dir": run, "scheduler": name, "total_jct": total, "reference_scheduler": reference,
                         "asrpt_reduction": 1 - totals[reference] / total})
    return pd.DataFrame(rows)


def test_each_run_is_checked_against_its_own_reference():
    check_derived(table(), Path("t.csv"))
    edited = table()
    edited.loc[5, "asrpt_reduction"] = 0.5  # run b's fifo: 1 - 5 / 20 = 0.75
    with pytest.raises(ConfigError, match=r"t.csv: row 6 \(line 7\), column 'asrpt_reduction': 0.5 does not follow"):
        check_derived(edited, Path("t.csv"))


def test_a_table_without_the_reference_column_is_relative_to_asrpt():
    check_derived(table()[table()["run_dir"] == "a"].drop(columns="reference_scheduler"), Path("t.csv"))
