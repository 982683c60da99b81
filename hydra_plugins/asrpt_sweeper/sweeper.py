"""Hydra's basic sweeper, counting: `hydra/sweeper=asrpt` (asrpt-bench's default).

It sweeps exactly as the basic sweeper does (same points, same order, same batches, `params` and
`max_batch_size` alike), and adds what a user watching a long sweep needs, whatever the launcher
(basic, joblib, submitit, Ray):

- before launching, it counts the points and passes the count to every point in the environment
  (asrpt_bench.sweep_points.POINTS_ENV), so each point says "point 3 of 12: ..." when it ends;
- after each batch, one line counts the points complete, skipped because an earlier run already
  completed them, and failed: "sweep: 4 of 4 points done: 1 complete, 3 skipped (complete), 0 failed".
"""

# No `from __future__ import annotations`: Hydra executes plugin modules without registering them in
# sys.modules, and dataclasses then cannot resolve string annotations.
import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper, BasicSweeperConf
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.utils import JobReturn, JobStatus

from asrpt_bench.sweep_points import COMPLETE, FAILED, POINTS_ENV, tally

log = logging.getLogger(__name__)


@dataclass
class AsrptSweeperConf(BasicSweeperConf):
    _target_: str = "hydra_plugins.asrpt_sweeper.sweeper.AsrptSweeper"


ConfigStore.instance().store(group="hydra/sweeper", name="asrpt", node=AsrptSweeperConf, provider="asrpt_bench")


def outcome(result: JobReturn) -> str:
    """A point's outcome: what its task function returned (sweep_points.SKIPPED or COMPLETE), or FAILED."""
    if result.status != JobStatus.COMPLETED:
        return FAILED
    value = result._return_value
    return value if isinstance(value, str) else COMPLETE


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


class AsrptSweeper(BasicSweeper):
    def count_points(self, arguments: List[str]) -> int:
        """The number of points the sweep will launch (as BasicSweeper.sweep builds them)."""
        assert self.hydra_context is not None
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        overrides = parser.parse_overrides(self._parse_config() + list(arguments))
        return sum(len(batch) for batch in self.split_arguments(overrides, None))

    def sweep(self, arguments: List[str]) -> Any:
        assert self.launcher is not None
        points = self.count_points(arguments)
        outcomes: List[str] = []
        launch = self.launcher.launch

        def counted(job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Sequence[JobReturn]:
            results = launch(job_overrides, initial_job_idx=initial_job_idx)
            outcomes.extend(outcome(result) for result in results)
            log.info("%s", tally(outcomes, points))
            return results

        self.launcher.launch = counted  # type: ignore[method-assign]
        try:
            with _environment(POINTS_ENV, str(points)):
                return super().sweep(arguments)
        finally:
            del self.launcher.launch
