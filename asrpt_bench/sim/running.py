"""The running jobs of a preemptive run as compact numpy columns, so a decision reads every running job's
progress in one vectorised step instead of one Python call per job."""

from __future__ import annotations

import math

import numpy as np

FIELDS = ("done", "ran", "run_start", "alpha", "iterations", "protected_until")


class RunningTable:
    """One row per running job: what it had banked when its segment started (`done` iterations, `ran`
    seconds), when progress starts (`run_start`), its per-iteration time, its iterations and the end of its
    protected window. Rows are dense: a job that stops is replaced by the last row. Nothing in a row changes
    while the job runs, so rows are written once per segment."""

    def __init__(self, capacity: int) -> None:
        self.orders = np.zeros(capacity, dtype=np.intp)
        self.columns = {name: np.zeros(capacity) for name in FIELDS}
        self.rows: dict[int, int] = {}
        self.size = 0

    def add(self, order: int, done: float, ran: float, run_start: float, alpha: float, iterations: float,
            protected_until: float) -> None:
        row = self.size
        self.rows[order] = row
        self.orders[row] = order
        columns = self.columns
        columns["done"][row], columns["ran"][row], columns["run_start"][row] = done, ran, run_start
        # progress is done + seconds run / alpha; a zero alpha (a job that ends the instant it runs) reads as
        # no progress before then, as the scalar rule does
        columns["alpha"][row] = alpha if alpha > 0 else math.inf
        columns["iterations"][row], columns["protected_until"][row] = iterations, protected_until
        self.size += 1

    def remove(self, order: int) -> None:
        row = self.rows.pop(order)
        last = self.size - 1
        if row != last:
            moved = int(self.orders[last])
            self.orders[row] = moved
            for column in self.columns.values():
                column[row] = column[last]
            self.rows[moved] = row
        self.size = last

    def states(self, now: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(input orders, suspendable, progress, run_seconds) of the running jobs, row by row: the same
        floats as the scalar rule (progress = min(iterations, done + seconds run / alpha) once it runs,
        run_seconds = ran + seconds run), since adding a zero leaves a float unchanged."""
        size, columns = self.size, self.columns
        running = np.maximum(now - columns["run_start"][:size], 0.0)
        progress = np.minimum(columns["iterations"][:size], columns["done"][:size] + running / columns["alpha"][:size])
        return (self.orders[:size], columns["protected_until"][:size] <= now, progress,
                columns["ran"][:size] + running)
