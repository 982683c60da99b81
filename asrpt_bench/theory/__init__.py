"""Theory: Theorem 1's bound, lower bounds on OPT, exact optima of tiny instances, the Lemma 2 checker.
Each name's module is imported when the name is first read (exports.py)."""

from __future__ import annotations

from ..exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    "EPS_BAR_DEFINITIONS": "asrpt_bench.theory.bound",
    "RHO_BAR_DEFINITIONS": "asrpt_bench.theory.bound",
    "per_job_prediction_errors": "asrpt_bench.theory.bound",
    "theorem1_bound": "asrpt_bench.theory.bound",
    "theory_symbols": "asrpt_bench.theory.bound",
    "ExactSchedule": "asrpt_bench.theory.exact",
    "brute_force_optimum": "asrpt_bench.theory.exact",
    "durations_from_table": "asrpt_bench.theory.exact",
    "exact_optimum": "asrpt_bench.theory.exact",
    "Lemma2Report": "asrpt_bench.theory.lemma2",
    "Theorem1Check": "asrpt_bench.theory.lemma2",
    "check_lemma2": "asrpt_bench.theory.lemma2",
    "check_theorem1": "asrpt_bench.theory.lemma2",
    "lemma2_report": "asrpt_bench.theory.lemma2",
    "ALPHA_MIN_SOURCES": "asrpt_bench.theory.lower_bounds",
    "LowerBound": "asrpt_bench.theory.lower_bounds",
    "alpha_min_for_jobs": "asrpt_bench.theory.lower_bounds",
    "lemma1_lower_bound": "asrpt_bench.theory.lower_bounds",
    "lower_bound": "asrpt_bench.theory.lower_bounds",
    "lower_bound_for_jobs": "asrpt_bench.theory.lower_bounds",
    "srpt_completion_times": "asrpt_bench.theory.lower_bounds",
    "trivial_lower_bound": "asrpt_bench.theory.lower_bounds",
})

__all__ = [
    "ALPHA_MIN_SOURCES", "EPS_BAR_DEFINITIONS", "RHO_BAR_DEFINITIONS", "ExactSchedule", "Lemma2Report",
    "LowerBound", "Theorem1Check", "alpha_min_for_jobs", "brute_force_optimum", "check_lemma2",
    "check_theorem1", "durations_from_table", "exact_optimum", "lemma1_lower_bound", "lemma2_report",
    "lower_bound", "lower_bound_for_jobs", "per_job_prediction_errors", "srpt_completion_times",
    "theorem1_bound", "theory_symbols", "trivial_lower_bound",
]
