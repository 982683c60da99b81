"""The trace card of a job log: what was read, what was kept and what the kept jobs look like, in numbers a
user can hold against the log's published summary (e.g. Acme's `cluster_summary.csv`: GPU jobs, mean and
median run and queue time, mean GPU count, completed / cancelled / failed shares).

`trace_card` computes it as plain JSON values (every run's summary.json keeps it under `trace_card`);
`format_trace_card` prints it in a few lines.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

GPU_BINS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""Upper ends of the GPU-count histogram's bins: 1, 2, 3-4, 5-8, ..., 513-1024, then above 1024."""
REASON_WORDS = {"not_finished": "not finished", "never_started": "never started", "no_gpu": "without GPUs",
                "state_not_selected": "state not selected"}


def gpu_histogram(gpus: np.ndarray) -> dict[str, int]:
    """Jobs per GPU-count bin (GPU_BINS), empty bins left out, in increasing order."""
    counts: dict[str, int] = {}
    low = 1
    for high in (*GPU_BINS, None):
        members = (gpus >= low) & (gpus <= (high if high is not None else np.inf))
        label = f">{low - 1}" if high is None else (str(high) if high == low else f"{low}-{high}")
        if members.any():
            counts[label] = int(members.sum())
        low = (high or 0) + 1
    return counts


def _stats(values: np.ndarray) -> dict[str, float] | None:
    known = values[~np.isnan(values)]
    return {"mean": float(known.mean()), "median": float(np.median(known))} if len(known) else None


def trace_card(log_format: str, source: str, table: pd.DataFrame, *, submit_min: float | None,
               read: dict[str, int], jobs: int, dropped: dict[str, int]) -> dict[str, Any]:
    """The card of a log's kept jobs (`table`, a job table with duration, recorded_wait and state);
    `submit_min` is the first kept submission in seconds since 1970 UTC (None: the log's clock has no known
    origin, so the span has no dates)."""
    gpus = table["gpus"].to_numpy(dtype=float)
    release = table["release"].to_numpy(dtype=float)
    first, last = float(release.min()), float(release.max())
    states = table["state"].astype(str).value_counts(normalize=True, sort=False)
    return {
        "format": log_format,
        "source": source,
        "read": dict(read),
        "jobs": int(jobs),
        "kept": len(table),
        "dropped": dict(dropped),
        "gpu_histogram": gpu_histogram(gpus),
        "gpus": {"mean": float(gpus.mean()), "median": float(np.median(gpus))},
        "run_time_s": _stats(table["duration"].to_numpy(dtype=float)),
        "queue_time_s": _stats(table["recorded_wait"].to_numpy(dtype=float)),
        "state_shares": {state: float(share) for state, share in sorted(states.items(), key=lambda s: -s[1])},
        "first_submit_utc": None if submit_min is None else _utc(submit_min + first),
        "last_submit_utc": None if submit_min is None else _utc(submit_min + last),
        "span_days": (last - first) / 86400.0,
    }


def _utc(seconds: float) -> str:
    return pd.Timestamp(seconds, unit="s", tz="UTC").strftime("%Y-%m-%d %H:%M:%S")


def readable_seconds(seconds: float) -> str:
    """12 s, 3.5 min, 2.1 h or 4.0 days."""
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if abs(seconds) >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.0f} s"


def format_trace_card(card: dict[str, Any]) -> str:
    """The card in a few lines (printed when a run loads the log)."""
    read = ", ".join(f"{count:,} {what}" for what, count in card["read"].items() if count)
    dropped = ", ".join(f"{REASON_WORDS.get(reason, reason)} {count:,}" for reason, count in card["dropped"].items()
                        if count)
    histogram = ", ".join(f"{label}: {count:,}" for label, count in card["gpu_histogram"].items())
    lines = [f"trace card: {card['format']} log {card['source']} ({read})",
             f"  jobs {card['jobs']:,}: kept {card['kept']:,}; left out {dropped or 'none'}",
             f"  GPUs per job: {histogram} (mean {card['gpus']['mean']:.2f}, median {card['gpus']['median']:g})"]
    times = []
    for key, what in (("run_time_s", "run time"), ("queue_time_s", "queueing delay in the log")):
        if card[key] is not None:
            times.append(f"{what}: mean {readable_seconds(card[key]['mean'])}, median "
                         f"{readable_seconds(card[key]['median'])}")
    lines.append("  " + "; ".join(times))
    lines.append("  states: " + ", ".join(f"{state} {share:.1%}" for state, share in card["state_shares"].items()))
    span = f"{card['span_days']:,.1f} days"
    if card["first_submit_utc"] is None:
        lines.append(f"  submissions over {span} (the log gives no calendar date)")
    else:
        lines.append(f"  submissions from {card['first_submit_utc']} to {card['last_submit_utc']} UTC ({span})")
    return "\n".join(lines)
