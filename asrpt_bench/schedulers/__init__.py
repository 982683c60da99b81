"""Schedulers behind one protocol; importing this package registers every built-in scheduler."""

from .asrpt import ASRPT, asrpt_oracle
from .base import (SCHEDULERS, DispatchContext, EventKind, JobView, Proposal, QueueScheduler, Scheduler,
                   make_scheduler, register_scheduler)
from .fifo import FIFO
from .las2d import LAS2D
from .priority import SPJF, SPWF
from .psjf import PSJF, PSJFOracle
from .random_order import RandomOrder
from .recorded import Recorded
from .srtf import SRTF, SRTFOracle
from .virtual_srpt import VirtualSRPT
from .wcs import WCSDuration, WCSSubTime, WCSWorkload

__all__ = ["ASRPT", "asrpt_oracle", "SCHEDULERS", "DispatchContext", "EventKind", "JobView", "Proposal",
           "QueueScheduler", "Scheduler", "make_scheduler", "register_scheduler", "FIFO", "LAS2D", "PSJF", "PSJFOracle",
           "RandomOrder", "Recorded", "SPJF", "SPWF", "SRTF", "SRTFOracle", "VirtualSRPT", "WCSDuration", "WCSSubTime",
           "WCSWorkload"]
