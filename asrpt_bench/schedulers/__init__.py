"""Schedulers behind one protocol. A built-in scheduler's module is imported when its name is first looked up
(its registry's `declare` below) or its class first read here (exports.py), not by importing this package."""

from __future__ import annotations

from ..exports import lazy_exports
from .base import (SCHEDULERS, DispatchContext, EventKind, JobView, Proposal, QueueScheduler, Scheduler,
                   make_scheduler, register_scheduler)

SCHEDULERS.declare({  # the built-ins: each module is imported when one of its names is first looked up
    "asrpt": "asrpt_bench.schedulers.asrpt",
    "asrpt_oracle": "asrpt_bench.schedulers.asrpt",
    "fifo": "asrpt_bench.schedulers.fifo",
    "las2d": "asrpt_bench.schedulers.las2d",
    "spjf": "asrpt_bench.schedulers.priority",
    "spwf": "asrpt_bench.schedulers.priority",
    "fifo_replan": "asrpt_bench.schedulers.replan",
    "psjf": "asrpt_bench.schedulers.psjf",
    "psjf_oracle": "asrpt_bench.schedulers.psjf",
    "random_order": "asrpt_bench.schedulers.random_order",
    "recorded": "asrpt_bench.schedulers.recorded",
    "srtf": "asrpt_bench.schedulers.srtf",
    "srtf_oracle": "asrpt_bench.schedulers.srtf",
    "wcs_duration": "asrpt_bench.schedulers.wcs",
    "wcs_workload": "asrpt_bench.schedulers.wcs",
    "wcs_subtime": "asrpt_bench.schedulers.wcs",
})

__getattr__, __dir__ = lazy_exports(__name__, {
    "ASRPT": "asrpt_bench.schedulers.asrpt",
    "asrpt_oracle": "asrpt_bench.schedulers.asrpt",
    "FIFO": "asrpt_bench.schedulers.fifo",
    "LAS2D": "asrpt_bench.schedulers.las2d",
    "SPJF": "asrpt_bench.schedulers.priority",
    "SPWF": "asrpt_bench.schedulers.priority",
    "FIFOReplan": "asrpt_bench.schedulers.replan",
    "PSJF": "asrpt_bench.schedulers.psjf",
    "PSJFOracle": "asrpt_bench.schedulers.psjf",
    "RandomOrder": "asrpt_bench.schedulers.random_order",
    "Recorded": "asrpt_bench.schedulers.recorded",
    "SRTF": "asrpt_bench.schedulers.srtf",
    "SRTFOracle": "asrpt_bench.schedulers.srtf",
    "VirtualSRPT": "asrpt_bench.schedulers.virtual_srpt",
    "WCSDuration": "asrpt_bench.schedulers.wcs",
    "WCSSubTime": "asrpt_bench.schedulers.wcs",
    "WCSWorkload": "asrpt_bench.schedulers.wcs",
})

__all__ = ["ASRPT", "asrpt_oracle", "SCHEDULERS", "DispatchContext", "EventKind", "JobView", "Proposal",
           "QueueScheduler", "Scheduler", "make_scheduler", "register_scheduler", "FIFO", "FIFOReplan", "LAS2D", "PSJF",
           "PSJFOracle", "RandomOrder", "Recorded", "SPJF", "SPWF", "SRTF", "SRTFOracle", "VirtualSRPT", "WCSDuration",
           "WCSSubTime", "WCSWorkload"]
