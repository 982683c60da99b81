"""The running jobs of a preemptive run as compact numpy columns, so a decision reads every running job's
progress in one vectorised step instead of one Python call per job."""

from __future__ import annotations

import math

import numpy as np

DONE, RAN, RUN_START, ALPHA, ITERATIONS, PROTECTED_UNTIL = range(6)
"""Row layout of RunningTable.block: one row per field, one column per running job."""


class RunningTable:
    """One entry per running job: what it had banked when its segment started (`done` iterations, `ran`
    seconds), when progress starts (`run_start`), its per-iteration time, its iterations and the end of its
    protected window. Entries are dense columns of one 2-D block, so writing, moving or reading them is one
    numpy step: a job that stops is replaced by the last entry. Nothing in an entry changes while the job
    runs, so entries are written once per segment."""

    def __init__(self, capacity: int) -> None:
        self.orders = np.zeros(capacity, dtype=np.intp)
        self.block = np.zeros((6, capacity))
        self.rows: dict[int, int] = {}
        self.size = 0

    def add(self, order: int, done: float, ran: float, run_start: float, alpha: float, iterations: float,
            protected_until: float) -> None:
        row = self.size
        self.rows[order] = row
        self.orders[row] = order
        # progress is done + seconds run / alpha; a zero alpha (a job that ends the instant it runs) reads as
        # no progress before then, as the scalar rule does
        self.block[:, row] = (done, ran, run_start, alpha if alpha > 0 else math.inf, iterations, protected_until)
        self.size += 1

    def remove(self, order: int) -> None:
        row = self.rows.pop(order)
        last = self.size - 1
        if row != last:
            moved = int(self.orders[last])
            self.orders[row] = moved
            self.block[:, row] = self.block[:, last]
            self.rows[moved] = row
        self.size = last

    def states(self, now: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(input orders, suspendable, progress, run_seconds) of the running jobs, entry by entry: the same
        floats as the scalar rule (progress = min(iterations, done + seconds run / alpha) once it runs,
        run_seconds = ran + seconds run), since adding a zero leaves a float unchanged."""
        done, ran, run_start, alpha, iterations, protected_until = self.block[:, :self.size]
        running = np.maximum(now - run_start, 0.0)
        progress = np.minimum(iterations, done + running / alpha)
        return self.orders[:self.size], protected_until <= now, progress, ran + running
