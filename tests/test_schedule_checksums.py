"""Schedules stay byte-identical: every scheduler with Heavy-Edge on a frozen job table.

`data/fixed_jobs.csv` (400 Philly jobs with models assigned, 70% multi-GPU, see
`data/make_fixed_jobs.py`) runs on 8 x 8 GPUs with oracle predictions under every registered
scheduler and a few A-SRPT variants, and the backfilling rules and the predicted preemptive reference
also with predictions off by a seeded log-normal factor (`[noisy]`: running jobs overrun their estimates),
and greedy and EASY also on 64 GPUs split into three pools of GPU types (`[typed]`). Each schedule is
serialised canonically (one line per job in
input order: job_id, start, end, placement, floats as exact reprs) and hashed; the hashes in
`data/schedule_checksums.json` were committed before the simulator's speed work, so any change to
when or where a job runs fails here. After an intended behaviour change, regenerate with
`python tests/test_schedule_checksums.py` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

from asrpt_bench.core import Cluster
from asrpt_bench.placement import HeavyEdgePlacer
from asrpt_bench.schedulers import SCHEDULERS, make_scheduler
from asrpt_bench.sim import simulate
from asrpt_bench.workloads.csv_table import load_csv
from asrpt_bench.workloads.jobs import jobs_from_table

DATA = Path(__file__).resolve().parent / "data"
TABLE = DATA / "fixed_jobs.csv"
CHECKSUMS = DATA / "schedule_checksums.json"
CLUSTER = Cluster(servers=8, gpus_per_server=8)
# name -> (registered scheduler, parameters): every scheduler with its defaults, plus the A-SRPT
# variants whose code paths the defaults do not reach (no delay budget, backfill, budget from the head).
VARIANTS = {name: (name, {}) for name in sorted(SCHEDULERS) if name != "recorded"} | {  # recorded: test_recorded.py
    "asrpt[tau=0]": ("asrpt", {"tau": 0.0}),
    "asrpt[tau=4]": ("asrpt", {"tau": 4.0}),
    "asrpt[backfill]": ("asrpt", {"backfill": True}),
    "asrpt[delay_origin=head,consolidation_test=servers]": ("asrpt", {"delay_origin": "head",
                                                                      "consolidation_test": "servers"}),
    # dispatch rules and eligibility of issue 18 (checksums taken when they were added)
    "asrpt[dispatch=easy]": ("asrpt", {"dispatch": "easy"}),
    "asrpt[dispatch=conservative]": ("asrpt", {"dispatch": "conservative"}),
    "asrpt[eligibility=release]": ("asrpt", {"eligibility": "release"}),
    "asrpt[eligibility=release,dispatch=easy]": ("asrpt", {"eligibility": "release", "dispatch": "easy"}),
    "spjf[dispatch=easy]": ("spjf", {"dispatch": "easy"}),
    "fifo[dispatch=conservative]": ("fifo", {"dispatch": "conservative"}),
    # the virtual order of issue 26
    "asrpt[virtual=psjf]": ("asrpt", {"virtual": "psjf"}),
    "asrpt[eligibility=release,virtual=psjf]": ("asrpt", {"eligibility": "release", "virtual": "psjf"}),
    "asrpt[eligibility=reservation]": ("asrpt", {"eligibility": "reservation"}),
    "asrpt[eligibility=reservation,dispatch=easy]": ("asrpt", {"eligibility": "reservation", "dispatch": "easy"}),
}
# variants also run with noisy predictions (added with the decision instants of issue 25)
NOISY = ("asrpt[dispatch=easy]", "asrpt[dispatch=conservative]", "asrpt[eligibility=release]",
         "asrpt[eligibility=release,dispatch=easy]", "asrpt[backfill]", "spjf[dispatch=easy]",
         "fifo[dispatch=conservative]", "srtf")
VARIANTS |= {f"{name}[noisy]": VARIANTS[name] for name in NOISY}
# greedy and EASY on a cluster of three pools (added with issue 25's typed EASY speed-up, checksums taken
# on the code before it): the jobs no pool holds (32 GPUs) are dropped
TYPED = {"fifo[dispatch=easy][typed]": ("fifo", {"dispatch": "easy"}),
         "spjf[dispatch=easy][typed]": ("spjf", {"dispatch": "easy"}),
         "asrpt[dispatch=easy][typed]": ("asrpt", {"dispatch": "easy"}),
         "wcs_duration[typed]": ("wcs_duration", {})}
VARIANTS |= TYPED | {f"{name}[noisy]": TYPED[name] for name in TYPED if "easy" in name}
TYPED_CLUSTER = Cluster(pools=[{"type": "v100", "servers": 3}, {"type": "p100", "servers": 3},
                               {"type": "k80", "servers": 2}])
VARIANTS |= {"asrpt[eligibility=release,dispatch=conservative][noisy]":
             ("asrpt", {"eligibility": "release", "dispatch": "conservative"}),
             "spjf[dispatch=conservative][noisy]": ("spjf", {"dispatch": "conservative"})}


def noisy_predictions(jobs) -> dict:
    """True iterations times a log-normal factor (sigma 1), from a fixed seed."""
    rng = random.Random(25)
    return {job.job_id: job.iterations * rng.lognormvariate(0.0, 1.0) for job in jobs}


def schedule_text(variant: str) -> str:
    """The canonical serialisation of one variant's schedule on the fixed table."""
    name, params = VARIANTS[variant]
    jobs = jobs_from_table(load_csv(TABLE), str(TABLE))
    predictions = (noisy_predictions(jobs) if variant.endswith("[noisy]")
                   else {job.job_id: float(job.iterations) for job in jobs})
    typed = "[typed]" in variant
    result = simulate(jobs, TYPED_CLUSTER if typed else CLUSTER, make_scheduler(name, **params), HeavyEdgePlacer(),
                      predictions=predictions, drop_oversize=typed)
    return "".join(f"{r.job_id},{r.start!r},{r.end!r},{' '.join(map(str, r.placement))}\n" for r in result.records)


def checksum(variant: str) -> str:
    return hashlib.sha256(schedule_text(variant).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_schedule_matches_committed_checksum(variant):
    committed = json.loads(CHECKSUMS.read_text(encoding="utf-8"))
    assert variant in committed, f"no committed checksum for {variant!r}; regenerate {CHECKSUMS.name}"
    assert checksum(variant) == committed[variant], f"{variant}: the schedule on {TABLE.name} changed"


def test_fixed_table_exercises_placement_and_delay():
    """The table is only a guard if placement and A-SRPT's delay budget change its schedules."""
    texts = {variant: schedule_text(variant) for variant in ("asrpt", "asrpt[tau=0]", "asrpt[tau=4]")}
    assert len(set(texts.values())) == 3
    spread = [line for line in texts["asrpt"].splitlines() if len(set(line.split(",")[3].split())) > 1]
    assert len(spread) >= 10


if __name__ == "__main__":
    payload = {variant: checksum(variant) for variant in sorted(VARIANTS)}
    CHECKSUMS.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {CHECKSUMS} ({len(payload)} schedules)", file=sys.stderr)
