"""Theory: Theorem 1's bound, lower bounds on OPT, exact optima of tiny instances, the Lemma 2 checker."""

from .bound import (EPS_BAR_DEFINITIONS, RHO_BAR_DEFINITIONS, per_job_prediction_errors, theorem1_bound,
                    theory_symbols)
from .exact import ExactSchedule, brute_force_optimum, durations_from_table, exact_optimum
from .lemma2 import Lemma2Report, Theorem1Check, check_lemma2, check_theorem1, lemma2_report
from .lower_bounds import (ALPHA_MIN_SOURCES, LowerBound, alpha_min_for_jobs, lemma1_lower_bound, lower_bound,
                           lower_bound_for_jobs, srpt_completion_times, trivial_lower_bound)

__all__ = [
    "ALPHA_MIN_SOURCES", "EPS_BAR_DEFINITIONS", "RHO_BAR_DEFINITIONS", "ExactSchedule", "Lemma2Report",
    "LowerBound", "Theorem1Check", "alpha_min_for_jobs", "brute_force_optimum", "check_lemma2",
    "check_theorem1", "durations_from_table", "exact_optimum", "lemma1_lower_bound", "lemma2_report",
    "lower_bound", "lower_bound_for_jobs", "per_job_prediction_errors", "srpt_completion_times",
    "theorem1_bound", "theory_symbols", "trivial_lower_bound",
]
