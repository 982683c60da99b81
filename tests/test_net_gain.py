"""Cost-aware preemption (`scheduler.preempt_rule=net_gain`) for srtf, srtf_oracle, psjf and psjf_oracle: the
issue's hand-worked case, a gang case, and an independent single-GPU implementation of both rules with a
restart price on random integer instances."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asrpt_bench.core import Cluster, ConfigError, Job, PreemptionPrice, TrainingPlan
from asrpt_bench.placement import FirstFitPlacer
from asrpt_bench.schedulers import make_scheduler
from asrpt_bench.sim import simulate

pytestmark = pytest.mark.filterwarnings("ignore:.*need all")


def job(name: str, release: float, gpus: int, size: int) -> Job:
    return Job(name, release, TrainingPlan.fixed(gpus, 1.0), size)


def ends(name: str, rule: str, jobs: list[Job], cluster: Cluster, restart: float) -> dict[str, float]:
    result = simulate(jobs, cluster, make_scheduler(name, preempt_rule=rule), FirstFitPlacer(),
                      preemption=PreemptionPrice(restart_s=restart))
    return {record.job_id: record.end for record in result.records}


@pytest.mark.parametrize("name", ["srtf", "srtf_oracle", "psjf", "psjf_oracle"])
def test_the_issues_case_on_one_gpu(name):
    """Restart 60: A (100) at 0, B (10) at 50. always: B preempts A (50 left), B ends 60, A resumes at 60,
    restores until 120 and ends 170. net_gain: 50 > 10 + 60 fails, so A ends 100 and B 110."""
    jobs = [job("A", 0, 1, 100), job("B", 50, 1, 10)]
    assert ends(name, "always", jobs, Cluster(1, 1), 60.0) == {"A": 170.0, "B": 60.0}
    assert ends(name, "net_gain", jobs, Cluster(1, 1), 60.0) == {"A": 100.0, "B": 110.0}


def test_a_gang_job_displaces_only_jobs_that_lose_more_than_it_gains():
    """Two GPUs, restart 10. j1 (1 GPU, 120) and j2 (1 GPU, 45) at 0, k (2 GPUs, 20) at 20. always: k
    displaces both (100 and 25 left), runs to 40, both resume and restore until 50: j2 75, j1 150. net_gain:
    j2 (25 <= 20 + 10) keeps its GPU, so k does not fit and nobody is suspended; when j2 ends at 45, k
    displaces j1 (75 > 30): k 65, and j1 resumes, restores until 75 and ends 150."""
    jobs = [job("j1", 0, 1, 120), job("j2", 0, 1, 45), job("k", 20, 2, 20)]
    assert ends("srtf_oracle", "always", jobs, Cluster(1, 2), 10.0) == {"j1": 150.0, "j2": 75.0, "k": 40.0}
    assert ends("srtf_oracle", "net_gain", jobs, Cluster(1, 2), 10.0) == {"j1": 150.0, "j2": 45.0, "k": 65.0}


def test_an_unknown_rule_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match=r"scheduler.preempt_rule must be one of \['always', 'net_gain'\]"):
        make_scheduler("srtf", preempt_rule="sometimes")


def reference(spec: list[tuple[int, int]], restart: int, rule: str, order: str) -> list[float]:
    """Single-GPU SRTF (order "srtf") or PSJF ("psjf") on true sizes with a restart price, written from the
    definitions: at every arrival, completion and end of a restore the job of least rank (remaining or
    original size, then release, then index) runs; a restoring job is never suspended; under net_gain the
    running job gives way only if its remaining work exceeds the challenger's plus the restart price."""
    left = [float(size) for _, size in spec]
    started = [False] * len(spec)
    done: list[float | None] = [None] * len(spec)
    running, restore_end, now = None, 0.0, 0.0

    def rank(k: int) -> tuple:
        return (left[k] if order == "srtf" else float(spec[k][1]), spec[k][0], k)

    while any(d is None for d in done):
        ready = [k for k, (release, _) in enumerate(spec) if release <= now and done[k] is None and k != running]
        if running is not None and now >= restore_end and ready:
            challenger = min(ready, key=rank)
            if rank(challenger) < rank(running) and (rule == "always" or left[running] > left[challenger] + restart):
                running = None
                ready = [k for k, (release, _) in enumerate(spec) if release <= now and done[k] is None]
        if running is None and ready:
            running = min(ready, key=rank)
            restore_end = now + (restart if started[running] else 0.0)
            started[running] = True
        events = [float(release) for release, _ in spec if release > now]
        if running is not None:
            events.append(restore_end if now < restore_end else now + left[running])
        step = min(events) - now
        if running is not None and now >= restore_end:
            left[running] -= step
        now += step
        if running is not None and now >= restore_end and left[running] <= 0:
            done[running] = now
            running = None
    return done  # type: ignore[return-value]


instances = st.lists(st.tuples(st.integers(0, 30), st.integers(1, 25)), min_size=1, max_size=7)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(instances, st.sampled_from([0, 3, 10]), st.sampled_from(["always", "net_gain"]),
       st.sampled_from(["srtf", "psjf"]))
def test_both_rules_match_the_independent_single_gpu_implementation(spec, restart, rule, order):
    jobs = [job(f"j{k}", release, 1, size) for k, (release, size) in enumerate(spec)]
    got = ends(f"{order}_oracle", rule, jobs, Cluster(1, 1), float(restart))
    assert [got[f"j{k}"] for k in range(len(spec))] == reference(spec, restart, rule, order)
