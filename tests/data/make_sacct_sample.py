"""Regenerate `asrpt_bench/data/samples/sacct_sample.txt`, the synthetic Slurm log docs/operators.md runs on.

Synthetic, not anonymised: no row comes from a real cluster. It is what
`sacct --allusers --parsable2 --format=JobID,User,Account,Partition,Submit,Start,End,State,AllocTRES,ReqTRES,TimelimitRaw,NNodes`
prints on a made-up cluster of 4 nodes x 8 GPUs (partition `gpu`) and a few CPU nodes (partition `cpu`),
over five days of April 2024 in Europe/Berlin local time. The model, seeded, in the order it is drawn:

- 10 users (u01 ... u10) in three accounts, each with a share of the submissions (Zipf), a habit of GPU
  counts, a median run time and a habitual time limit (1, 4, 12, 24 or 48 h);
- GPU jobs arrive as a Poisson process; each job's limit is its user's habit, drawn before and independently
  of its run time; the run time is lognormal around the user's median, and a job that would run past its
  limit is killed there (TIMEOUT). So a limit says about a run time only what a user's habit and the cap
  say, as in a real log; nothing encodes a job's run time into its limit or its user beyond that;
- outcomes: 10% FAILED and 5% CANCELLED after a uniform fraction of their run time, 1% NODE_FAIL, 3%
  cancelled while queued (no start), the rest run to completion or to their limit;
- 10% of the jobs are held (a dependency) for up to 2 h after submission before they may start;
- the schedule: at every submission, end of a hold and completion, the queue is scanned in submission
  order and every job that fits starts (jobs of up to 8 GPUs on one node, first fit; larger jobs on whole
  free nodes): greedy backfilling without reservations, written here and independent of the simulator;
- 40 CPU-only jobs (partition `cpu`, no GPUs) that the loader leaves out; jobs still queued or running when
  the log is exported (an hour after the last submission) are PENDING or RUNNING; every allocation has its
  `.batch` and `.extern` steps, multi-node jobs a `.0` step, and one job array of 5 tasks.

    python tests/data/make_sacct_sample.py
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[2] / "asrpt_bench" / "data" / "samples" / "sacct_sample.txt"
HEADER = "JobID|User|Account|Partition|Submit|Start|End|State|AllocTRES|ReqTRES|TimelimitRaw|NNodes"
NODES, GPUS_PER_NODE = 4, 8
FIRST_SUBMIT = pd.Timestamp("2024-04-01 08:00:00")
DAYS = 5
GPU_JOBS, CPU_JOBS = 560, 40
LIMITS_H = (1, 4, 12, 24, 48)
SEED = 2024


@dataclass
class Job:
    job_id: str
    user: str
    account: str
    partition: str
    submit: float
    gpus: int
    limit_s: float
    run_s: float
    state: str
    eligible: float
    start: float | None = None
    end: float | None = None
    nodes: list[int] = field(default_factory=list)


def users(rng: np.random.Generator) -> list[dict]:
    accounts = ["vision"] * 4 + ["nlp"] * 3 + ["speech"] * 3
    share = 1.0 / np.arange(1, 11) ** 0.8
    return [{"name": f"u{k + 1:02d}", "account": accounts[k], "share": share[k] / share.sum(),
             "gpus": rng.choice([1, 2, 4, 8, 16], size=3, p=[0.35, 0.25, 0.2, 0.15, 0.05]),
             "median_s": float(rng.choice([900, 1800, 3600, 7200, 14400])),
             "limit_s": 3600.0 * float(rng.choice(LIMITS_H))} for k in range(10)]


def gpu_jobs(rng: np.random.Generator) -> list[Job]:
    people = users(rng)
    arrivals = np.sort(rng.uniform(0, DAYS * 86400.0 - 3 * 3600.0, GPU_JOBS))
    jobs = []
    for k, submit in enumerate(arrivals):
        who = people[rng.choice(len(people), p=[u["share"] for u in people])]
        gpus = int(rng.choice(who["gpus"]))
        limit = who["limit_s"]
        run = float(np.ceil(rng.lognormal(np.log(who["median_s"]), 1.0)))
        outcome = rng.uniform()
        if run >= limit:
            state, run = "TIMEOUT", limit
        elif outcome < 0.10:
            state, run = "FAILED", float(np.ceil(run * rng.uniform(0.02, 0.5)))
        elif outcome < 0.15:
            state, run = "CANCELLED", float(np.ceil(run * rng.uniform(0.05, 0.9)))
        elif outcome < 0.16:
            state = "NODE_FAIL"
        elif outcome < 0.19:
            state, run = "QUEUED_CANCEL", float(rng.uniform(60, 1800))
        else:
            state = "COMPLETED"
        hold = float(rng.uniform(0, 7200)) if rng.uniform() < 0.10 else 0.0
        jobs.append(Job(str(41000 + k), who["name"], who["account"], "gpu", float(np.floor(submit)), gpus, limit,
                        run, state, float(np.floor(submit)) + np.floor(hold)))
    array = [j for j in jobs if j.gpus == 1][:5]
    base = array[0].job_id
    for task, job in enumerate(array):
        job.job_id = f"{base}_{task + 1}"
    return jobs


def schedule(jobs: list[Job]) -> None:
    """Greedy backfilling without reservations on NODES x GPUS_PER_NODE (module doc)."""
    free = [GPUS_PER_NODE] * NODES
    waiting = [j for j in jobs if j.state != "QUEUED_CANCEL"]
    events = sorted({j.eligible for j in waiting})
    heap: list[tuple[float, int]] = []
    queue: list[Job] = []
    pending = sorted(waiting, key=lambda j: j.eligible)
    clock = iter(events)
    now = next(clock, None)
    while now is not None:
        while heap and heap[0][0] <= now:
            _, index = heapq.heappop(heap)
            for node in jobs[index].nodes:
                free[node] += min(jobs[index].gpus, GPUS_PER_NODE)
        while pending and pending[0].eligible <= now:
            queue.append(pending.pop(0))
        queue.sort(key=lambda j: (j.submit, int(j.job_id.split("_")[0])))
        for job in list(queue):
            nodes = _fit(job.gpus, free)
            if nodes is None:
                continue
            for node in nodes:
                free[node] -= min(job.gpus, GPUS_PER_NODE)
            job.start, job.end, job.nodes = now, now + job.run_s, nodes
            heapq.heappush(heap, (job.end, jobs.index(job)))
            queue.remove(job)
        upcoming = [t for t in ([heap[0][0]] if heap else []) + ([pending[0].eligible] if pending else [])]
        now = min(upcoming) if upcoming else None


def _fit(gpus: int, free: list[int]) -> list[int] | None:
    if gpus <= GPUS_PER_NODE:
        node = next((n for n, f in enumerate(free) if f >= gpus), None)
        return None if node is None else [node]
    whole = [n for n, f in enumerate(free) if f == GPUS_PER_NODE]
    needed = gpus // GPUS_PER_NODE
    return whole[:needed] if len(whole) >= needed else None


def cpu_jobs(rng: np.random.Generator) -> list[Job]:
    submits = np.sort(rng.uniform(0, DAYS * 86400.0 - 3 * 3600.0, CPU_JOBS))
    jobs = []
    for k, submit in enumerate(submits):
        run = float(np.ceil(rng.uniform(60, 3 * 3600)))
        job = Job(str(49000 + k), f"u{int(rng.integers(1, 11)):02d}", "vision", "cpu", float(np.floor(submit)), 0,
                  86400.0, run, "COMPLETED", float(np.floor(submit)))
        job.start, job.end = job.submit + float(rng.integers(0, 120)), job.submit + run
        job.end = job.start + run
        jobs.append(job)
    return jobs


def stamp(seconds: float | None) -> str:
    if seconds is None:
        return "Unknown"
    return (FIRST_SUBMIT + pd.Timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def rows(job: Job, export: float) -> list[str]:
    """The allocation row and its steps, as sacct prints them at `export`."""
    nodes = max(1, -(-job.gpus // GPUS_PER_NODE))
    gres = f",gres/gpu={job.gpus}" if job.gpus else ""
    units = max(job.gpus, 1)
    request = f"billing={units * 8},cpu={units * 8}{gres},mem={units * 64}G,node={nodes}"
    limit = int(job.limit_s // 60)
    base = [job.job_id, job.user, job.account, job.partition, stamp(job.submit)]
    if job.state == "QUEUED_CANCEL":
        return ["|".join(base + ["None", stamp(job.submit + job.run_s), "CANCELLED by 1001", "", request,
                                 str(limit), str(nodes)])]
    if job.start is None or job.start > export:
        return ["|".join(base + ["Unknown", "Unknown", "PENDING", "", request, str(limit), str(nodes)])]
    running = job.end is not None and job.end > export
    state = "RUNNING" if running else ("CANCELLED by 1001" if job.state == "CANCELLED" else job.state)
    end = "Unknown" if running else stamp(job.end)
    lines = ["|".join(base + [stamp(job.start), end, state, request, request, str(limit), str(nodes)])]
    step_state = "RUNNING" if running else ("CANCELLED" if job.state in ("CANCELLED", "TIMEOUT") else job.state)
    steps = ["batch", "extern"] + (["0"] if nodes > 1 else [])
    for step in steps:
        tres = f"cpu={max(job.gpus, 1) * 8}{gres},mem={max(job.gpus, 1) * 64}G,node={1 if step == 'batch' else nodes}"
        lines.append("|".join([f"{job.job_id}.{step}", "", job.account, "", stamp(job.start), stamp(job.start), end,
                               step_state, tres, "", "Partition_Limit", str(1 if step == "batch" else nodes)]))
    return lines


def main() -> None:
    rng = np.random.default_rng(SEED)
    jobs = gpu_jobs(rng)
    schedule(jobs)
    everything = sorted(jobs + cpu_jobs(rng), key=lambda j: (j.submit, j.job_id))
    export = max(j.submit for j in everything) + 3600.0
    lines = [HEADER] + [line for job in everything for line in rows(job, export)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
