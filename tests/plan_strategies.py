"""Hypothesis strategy shared by the placement tests: small random training plans."""

from __future__ import annotations

from hypothesis import strategies as st

from asrpt_bench.core import GB, Stage, TrainingPlan


def small_plans(max_stages: int) -> st.SearchStrategy[TrainingPlan]:
    """Plans of 1..max_stages stages, 1-3 replicas each, random compute, parameters and activations
    (the last stage sends nothing on)."""
    return st.lists(
        st.tuples(st.integers(1, 3), st.floats(0.05, 0.5), st.floats(0.0, 4.0), st.floats(0.0, 0.5)),
        min_size=1, max_size=max_stages,
    ).map(lambda rows: TrainingPlan("h", "cfg", tuple(
        Stage(c * m, p * GB, a * GB if s < len(rows) - 1 else 0.0, m) for s, (m, c, p, a) in enumerate(rows))))
