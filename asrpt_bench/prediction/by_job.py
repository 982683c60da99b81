"""job_id -> predicted iterations of a run's jobs, as one array in the jobs' order rather than a dict of every job:
what a task hands to simulate(), which reads the values whole when its jobs are these (a replay of millions of
jobs then holds 8 bytes a job through the replay and the audit, not a dict entry and its table slot)."""

from __future__ import annotations

import operator
from operator import attrgetter
from typing import Hashable, Iterator, Mapping, Sequence

import numpy as np

from ..core import Job


class JobPredictions(Mapping[Hashable, float]):
    """A read-only mapping job_id -> predicted iterations over `jobs`, in their order (`values[k]` is
    `jobs[k]`'s, a float64 array). `aligned_values` gives them all at once for a list of jobs with the same ids
    in the same order; a lookup by id builds an id -> position index on first use."""

    def __init__(self, jobs: Sequence[Job], values: np.ndarray) -> None:
        if len(jobs) != len(values):
            raise ValueError(f"JobPredictions: {len(values)} values for {len(jobs)} jobs")
        self._jobs = jobs
        self._values = np.asarray(values, dtype=float)
        self._index: dict[Hashable, int] | None = None

    def aligned_values(self, jobs: Sequence[Job]) -> list[float] | None:
        """Each job's prediction, as Python floats, when `jobs` have this mapping's ids in its order; else None."""
        if len(jobs) != len(self._jobs) or not all(map(operator.eq, map(attrgetter("job_id"), jobs),
                                                        map(attrgetter("job_id"), self._jobs))):
            return None
        return self._values.tolist()

    def _position(self) -> dict[Hashable, int]:
        if self._index is None:
            index: dict[Hashable, int] = {}
            for k, job in enumerate(self._jobs):
                index[job.job_id] = k  # as dict(zip(ids, values)): a repeated id keeps its last value
            self._index = index
        return self._index

    def __getitem__(self, job_id: Hashable) -> float:
        return float(self._values[self._position()[job_id]])

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._position()

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._position())

    def __len__(self) -> int:
        return len(self._position())
