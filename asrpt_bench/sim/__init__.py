"""The event-driven simulator, its records, metrics and the schedule audit."""

from .audit import ScheduleAuditError, audit_preemptive, audit_schedule
from .engine import EmptyClusterEstimate, SimulationResult, empty_cluster_estimate
from .run import simulate
from .metrics import schedule_metrics
from .records import JobRecord, Segment, records_frame, segments_frame
from .state import ClusterState

__all__ = ["ScheduleAuditError", "audit_preemptive", "audit_schedule", "EmptyClusterEstimate", "SimulationResult",
           "empty_cluster_estimate", "simulate", "schedule_metrics", "JobRecord", "Segment", "records_frame",
           "segments_frame", "ClusterState"]
