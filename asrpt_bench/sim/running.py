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
    while the job runs, so rows are written once per segment, each in one numpy step: the fields are the
    rows of one 2-D array (`data`, a field's values contiguous), a job's row its column there."""

    def __init__(self, capacity: int) -> None:
        self.orders = np.zeros(capacity, dtype=np.intp)
        self.data = np.zeros((len(FIELDS), capacity))
        self.columns = dict(zip(FIELDS, self.data))
        self.rows: dict[int, int] = {}
        self.row_of = np.zeros(0, dtype=np.intp)  # input order -> row, valid for running jobs
        self.size = 0

    def add(self, order: int, done: float, ran: float, run_start: float, alpha: float, iterations: float,
            protected_until: float) -> None:
        row = self.size
        self.rows[order] = row
        self.orders[row] = order
        if order >= len(self.row_of):
            self.row_of = np.concatenate([self.row_of, np.zeros(max(order + 1, 2 * len(self.row_of), 64)
                                                                 - len(self.row_of), dtype=np.intp)])
        self.row_of[order] = row
        # progress is done + seconds run / alpha; a zero alpha (a job that ends the instant it runs) reads as
        # no progress before then, as the scalar rule does
        self.data[:, row] = (done, ran, run_start, alpha if alpha > 0 else math.inf, iterations, protected_until)
        self.size += 1

    def remove(self, order: int) -> None:
        row = self.rows.pop(order)
        last = self.size - 1
        if row != last:
            moved = int(self.orders[last])
            self.orders[row] = moved
            self.data[:, row] = self.data[:, last]
            self.rows[moved] = row
            self.row_of[moved] = row
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

    def states_of(self, picked: np.ndarray, now: float) -> tuple[np.ndarray, np.ndarray]:
        """(progress, run_seconds) of the running jobs with input orders `picked`, in that order: the floats of
        `states`, from those rows only (read in one step)."""
        done, ran, run_start, alpha, iterations, _ = self.data[:, self.row_of[picked]]
        running = np.maximum(now - run_start, 0.0)
        return np.minimum(iterations, done + running / alpha), ran + running
