"""The modelling choices the paper leaves open, each with the configuration keys that hold ours and their
defaults as `asrpt-bench` composes them with no overrides: the table of REPRODUCTION.md and of
docs/paper.md section 10 (the generated block `open_choices`), so neither can drift from the code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..composition import compose_run_config
from ..core import ConfigError


OPEN_CHOICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("servers x GPUs per server", ("cluster.servers", "cluster.gpus_per_server")),
    ("intra- / inter-server bandwidth (GB/s)", ("cluster.b_intra", "cluster.b_inter")),
    ("exact form of Eqs 4-7", ("timing.pipeline_mode", "timing.allreduce", "timing.fold_p2p_into_stage",
                               "timing.microbatches")),
    ("Heavy-Edge internals", ("placement.mode", "placement.allreduce_edges")),
    ("comm-heavy threshold", ("scheduler.comm_heavy",)),
    ("'consolidated enough' test", ("scheduler.consolidation_test",)),
    ("delay-timer origin", ("scheduler.delay_origin",)),
    ("tau in simulation", ("scheduler.tau",)),
    ("head-of-line blocking", ("scheduler.backfill", "scheduler.dispatch")),
    ("when a job becomes dispatchable", ("scheduler.eligibility",)),
    ("the virtual single machine's discipline (SRPT in the paper)", ("scheduler.virtual",)),
    ("jobs running past their prediction", ("scheduler.overrun", "scheduler.min_estimate_s")),
    ("price of a preemption (preemptive references only)", ("preemption.restart_s", "preemption.min_run_s")),
    ("virtual SRPT tie-break", ("scheduler.srpt_tiebreak",)),
    ("random forest settings", ("predictor.n_estimators", "predictor.features", "predictor.log_target")),
    ("train/test split and unseen jobs", ("workload.train_fraction", "predictor.unseen")),
    ("jobs with g_i >= G", ("workload.drop_oversize",)),
    ("arrival compression", ("workload.time_compression", "workload.target_load")),
    ("trace (PAI 2020 is not available): recurrence keys", ("workload.name", "workload.recurrence.source",
                                                             "workload.recurrence.sigma",
                                                             "workload.recurrence.new_group_share",
                                                             "workload.recurrence.new_group_selection")),
    ("baselines' placer", ("placement.name", "task.baseline_placement")),
    ("ILP solver", ("solver.name", "solver.time_limit_s", "solver.mip_gap")),
    ("rho-bar / epsilon-bar reconstruction, alpha_min of the bound", ("theory.rho_bar_definition",
                                                                     "theory.eps_bar_definition",
                                                                     "theory.alpha_min_source")),
)


def default_values() -> dict[str, Any]:
    """Every key of the configuration `asrpt-bench` composes without overrides, flattened."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else key, inner)
        else:
            flat[prefix] = value

    walk("", compose_run_config([]).to_dict())
    return flat


def yaml_value(value: Any) -> str:
    """A value as it is written on the command line (null, true, false, [a, b])."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return f"[{', '.join(yaml_value(v) for v in value)}]"
    return str(value)


def choices_table() -> list[str]:
    values = default_values()
    rows = ["| left open by the paper | our default (config key = value) |", "|---|---|"]
    for item, keys in OPEN_CHOICES:
        missing = [key for key in keys if key not in values]
        if missing:
            raise ConfigError(f"reproduction report: no config key {missing[0]!r} (OPEN_CHOICES is out of date)")
        rows.append(f"| {item} | {', '.join(f'`{key}={yaml_value(values[key])}`' for key in keys)} |")
    return rows


def open_choices_block(results: Path) -> str:
    """The generated block `open_choices` (docs/paper.md): the table, which needs no results."""
    return "\n".join(choices_table())
