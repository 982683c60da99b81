"""Recurrence keys (job groups and users) with an explicit, measurable amount of information.

The predictor of the paper learns iterations from (group, user) of recurring jobs. Philly has only
the virtual cluster (VC), so keys are generated; the generator must not encode the quantity the
forest predicts except through one knob, and must not decide by size or duration which groups are
new. The model (`RecurrenceSpec`, config keys `workload.recurrence.*`):

1. Templates (`source="synthetic"`). Jobs are pooled by (VC, GPU count), both known at submission.
   Each job gets a score log(duration) + sigma * z with z ~ N(0, 1): `sigma = 0` orders a pool by
   duration (perfect recurrence: a template's runs have neighbouring durations), larger sigma blurs
   the order, and `sigma = None` (or inf) uses z alone and never reads a duration (no information).
   The pool's history jobs (the first `train_fraction` of the whole trace in release order, the
   same cut the predictor's chronological split uses) are sorted by score and cut into
   ceil(pool size / jobs_per_template) consecutive templates whose sizes follow a Dirichlet
   (`concentration`) popularity; a later job joins the template whose score interval holds its
   score. Templates get random ids, and ceil(templates / templates_per_user) users of the VC own
   them at random. Values start with `syn-`.
2. New groups. `round(new_group_share * N_test)` jobs after the cut, drawn uniformly at random
   (never by duration or size), get a group first seen after the cut: `syn-new-<their group>`, so
   the new jobs of one template recur among themselves. This applies to every key source. A pool
   with no history job cannot have a seen template; its later jobs are new as well and counted.
   `new_group_selection="gpu_time"` is the labelled biased variant: the new jobs are drawn with
   probability proportional to gpus * duration (long gang jobs become new), reproducing on purpose
   the artefact of keys built from durations.

`source="virtual_cluster"` uses the VC as the group (no user); `source="trace"` keeps the trace's
own group and user (Gavel's job type, PAI groups). `attrs["recurrence_keys"]` names the source and
`attrs["recurrence"]` holds the knob values and the achieved new-group share.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core import ConfigError
from ..params import Params, param
from ..rules import Rule, number, one_of
from .seeding import component_rng
from .slicing import history_size

SYNTHETIC_PREFIX = "syn-"
NEW_PREFIX = f"{SYNTHETIC_PREFIX}new-"
RECURRENCE_SOURCES = ("synthetic", "virtual_cluster", "trace")
NEW_GROUP_SELECTIONS = ("random", "gpu_time")


def _sigma_ok(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                             and not math.isnan(value) and value >= 0)


def _finite_at_least(low: float, what: str) -> Rule:
    return Rule(what, lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                and v >= low)


@dataclass(frozen=True)
class RecurrenceSpec(Params):
    """The recurrence-key model (module doc); hashable, so prepared tables can be cached by it.

    sigma None or inf: keys carry no duration.
    """

    source: str = param("synthetic", one_of(*RECURRENCE_SOURCES),
                        "synthetic templates, the virtual cluster as group, or the trace's own keys")
    sigma: float | None = param(1.0, Rule("null (no information), inf or a number >= 0", _sigma_ok),
                                "log-duration noise of the template order (0: perfect recurrence)")
    new_group_share: float = param(0.1, Rule("a number in [0, 1]", lambda v: _finite_at_least(0.0, "").accepts(v) and v <= 1),
                                   "share of the jobs after the history cut in never-seen groups")
    new_group_selection: str = param("random", one_of(*NEW_GROUP_SELECTIONS),
                                     "new groups drawn at random, or (labelled bias) weighted by GPU time")
    jobs_per_template: float = param(20.0, _finite_at_least(1.0, "a number >= 1"), "mean jobs per template")
    templates_per_user: float = param(4.0, _finite_at_least(1.0, "a number >= 1"), "mean templates per user")
    concentration: float = param(1.0, number(0, strict=True, what="a number"),
                                 "Dirichlet concentration of template popularity (small: a few dominate)")

    def validate(self, prefix: str = "workload.recurrence") -> "RecurrenceSpec":
        self.check(prefix)
        return self

    @property
    def informative(self) -> bool:
        """Whether template keys read durations (sigma finite)."""
        return self.sigma is not None and math.isfinite(self.sigma)

    def summary(self) -> dict[str, Any]:
        """The knob values as reported in summary.json (sigma None stands for no information)."""
        values = asdict(self)
        values["sigma"] = self.sigma if self.informative else None
        return values


def recurrence_keys(table: pd.DataFrame, seed: int, spec: RecurrenceSpec, *, train_fraction: float,
                    by: str = "vc") -> pd.DataFrame:
    """A copy of `table` with `group` and `user` per `spec` (module doc), from (seed, "recurrence").

    table: release, gpus, the pool column `by`, `duration` (read only when sigma is finite or the
    selection is gpu_time), and `group`/`user` for source="trace".
    train_fraction: the history cut; must be the one the predictor's chronological split uses.
    """
    spec.validate()
    if by not in table.columns:
        raise ConfigError(f"recurrence keys: column {by!r} not in the table {list(table.columns)}")
    rng = component_rng(seed, "recurrence")
    order = np.argsort(table["release"].to_numpy(dtype=float), kind="stable")
    later = np.zeros(len(table), dtype=bool)
    later[order[history_size(len(table), train_fraction):]] = True
    noise = rng.standard_normal(len(table))  # drawn whatever sigma is: the streams below never depend on it
    result = table.copy()
    result.attrs.update(table.attrs)
    if spec.source == "synthetic":
        group, user = _templates(table, spec, by, later, noise, rng)
    elif spec.source == "virtual_cluster":
        group, user = table[by].astype(str).to_numpy(dtype=object), np.full(len(table), None, dtype=object)
    else:
        if "group" not in table.columns or table["group"].isna().all():
            raise ConfigError("workload.recurrence.source=trace needs a trace with job groups "
                              "(e.g. workload=gavel or pai2020); use synthetic or virtual_cluster")
        group = table["group"].to_numpy(dtype=object).copy()
        user = table["user"].to_numpy(dtype=object).copy() if "user" in table.columns else np.full(len(table), None)
    chosen = np.zeros(len(table), dtype=bool)
    chosen[_new_jobs(table, spec, later, rng)] = True
    seen_groups = set(group[~later].tolist())
    group[chosen] = [f"{NEW_PREFIX}{g}" if isinstance(g, str) else g for g in group[chosen]]
    new = later & ~pd.Series(group, dtype=object).isin(seen_groups).to_numpy()
    result["group"] = group
    result["user"] = user
    result.attrs["recurrence_keys"] = spec.source
    result.attrs["recurrence"] = {
        **spec.summary(),
        "history_jobs": int((~later).sum()),
        "new_group_share_achieved": float(new.sum() / later.sum()) if later.any() else float("nan"),
        "new_without_history_pool": int((new & ~chosen).sum()),
    }
    return result


def _templates(table: pd.DataFrame, spec: RecurrenceSpec, by: str, later: np.ndarray, noise: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic template and user per job (module doc, step 1)."""
    score = noise.copy()
    if spec.informative:
        if "duration" not in table.columns or table["duration"].isna().any():
            raise ConfigError("workload.recurrence.sigma is finite, so every job needs a duration "
                              "(set workload.recurrence.sigma=null for keys without durations)")
        score = np.log(np.maximum(table["duration"].to_numpy(dtype=float), 1.0)) + spec.sigma * noise
    pools = pd.DataFrame({"pool": table[by].astype(str).to_numpy(dtype=object),
                          "gpus": table["gpus"].to_numpy(dtype=np.int64)})
    group = np.empty(len(table), dtype=object)
    user = np.empty(len(table), dtype=object)
    for vc, vc_rows in sorted(pools.groupby("pool", sort=True).indices.items()):
        templates: list[np.ndarray] = []
        for gpus, rows in sorted(pools.iloc[vc_rows].groupby("gpus", sort=True).indices.items()):
            rows = vc_rows[rows]
            labels, count = _pool_templates(score[rows], later[rows], spec, rng)
            ids = rng.permutation(count)
            for label in range(count):
                members = rows[labels == label]
                if len(members):
                    group[members] = f"{SYNTHETIC_PREFIX}g-{vc}-{gpus}g-{ids[label]}"
                    templates.append(members)
        owners = rng.integers(math.ceil(len(templates) / spec.templates_per_user), size=len(templates))
        for members, owner in zip(templates, owners):
            user[members] = f"{SYNTHETIC_PREFIX}u-{vc}-{owner}"
    return group, user


def _pool_templates(score: np.ndarray, later: np.ndarray, spec: RecurrenceSpec,
                    rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Template label per job of one pool, and the number of templates: the history jobs (all jobs if
    the pool has none) sorted by score, cut into chunks of Dirichlet-multinomial sizes; every job
    joins the chunk whose score interval holds its score, so every template has a history job."""
    anchors = np.flatnonzero(~later) if (~later).any() else np.arange(len(score))
    count = math.ceil(len(score) / spec.jobs_per_template)
    popularity = rng.dirichlet(np.full(count, spec.concentration))
    sizes = rng.multinomial(len(anchors), popularity)
    sizes = sizes[sizes > 0]
    ranked = np.sort(score[anchors], kind="stable")
    labels = np.searchsorted(ranked[np.cumsum(sizes)[:-1]], score, side="right")
    # tied scores can leave an interval without an anchor: its jobs join the next lower anchored one
    anchored = np.unique(labels[anchors])
    return np.maximum(np.searchsorted(anchored, labels, side="right") - 1, 0), len(anchored)


def _new_jobs(table: pd.DataFrame, spec: RecurrenceSpec, later: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row positions of the later jobs whose group becomes new (module doc, step 2)."""
    candidates = np.flatnonzero(later)
    count = round(spec.new_group_share * len(candidates))
    if count == 0:
        return np.empty(0, dtype=np.int64)
    weights = None
    if spec.new_group_selection == "gpu_time":
        work = (table["gpus"].to_numpy(dtype=float) * table["duration"].to_numpy(dtype=float))[candidates]
        if not np.all(np.isfinite(work)) or work.sum() <= 0:
            raise ConfigError("workload.recurrence.new_group_selection=gpu_time needs a positive duration per job")
        weights = work / work.sum()
        if np.count_nonzero(weights) < count:
            raise ConfigError(f"workload.recurrence.new_group_selection=gpu_time: only {np.count_nonzero(weights)} "
                              f"later jobs have gpus * duration > 0, {count} must become new")
    return np.sort(rng.choice(candidates, size=count, replace=False, p=weights))


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
        and not math.isnan(float(value))
