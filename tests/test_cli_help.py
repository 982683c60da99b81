"""`asrpt-bench --help`: the app's own text (not Hydra's stock one), its groups without the internal
`schema/*` ones, and every key of the composed configuration described from the component's own
parameter docs and rules."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from asrpt_bench.composition import compose_run_config
from asrpt_bench.schedulers.asrpt import ASRPTParams
from asrpt_bench.schedulers.fifo import FIFOParams
from test_cli import run_app


def flat(text: str) -> str:
    return " ".join(text.split())


def keys(values: dict, prefix: str = "") -> list[str]:
    """Every leaf key of a nested config dict, dotted."""
    found = []
    for key, value in values.items():
        name = f"{prefix}{key}"
        found.extend(keys(value, f"{name}.") if isinstance(value, dict) and value else [name])
    return found


def test_help_lists_groups_and_every_key_with_its_own_docs(tmp_path: Path) -> None:
    done = run_app("--help", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    text = done.stdout
    assert text.startswith("asrpt-bench: A-SRPT (Luo et al., arXiv 2501.05563)")
    assert "Powered by Hydra" not in text and "== Config ==" not in text and "schema/" not in text
    assert "  scheduler   [asrpt] asrpt_oracle fifo" in text and "  task        adversarial [compare]" in text
    for item in dataclasses.fields(ASRPTParams):  # the scheduler's own docs and rules, each key once
        line = f"scheduler.{item.name}={str(getattr(ASRPTParams, item.name)).lower()}"
        assert text.count(f"    {line}") == 1, line
        assert flat(item.metadata["doc"]) in flat(text) and flat(item.metadata["rule"].describe()) in flat(text)
    config = compose_run_config([]).to_dict()
    words = [line.split()[0] for line in text.splitlines() if line.startswith("  ") and line.strip()]
    shown = {word.split("=", 1)[0] for word in words if "=" in word}
    missing = [key for key in keys(config) if key.rsplit(".", 1)[-1] != "name" and key not in shown]
    assert missing == []


def test_help_follows_the_chosen_options(tmp_path: Path) -> None:
    done = run_app("scheduler=fifo", "task=simulate", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "[fifo]" in done.stdout and "[simulate]" in done.stdout and "scheduler.tau" not in done.stdout
    assert all(f"    scheduler.{name}=" in done.stdout for name in FIFOParams.names())


def test_a_dollar_in_a_value_survives_hydras_template(tmp_path: Path) -> None:
    """Hydra fills the help into a string.Template, where `$x` would be a placeholder: cli_app.py escapes it."""
    done = run_app("cache.dir=/tmp/$x", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "    cache.dir=/tmp/$x " in done.stdout and "null: $XDG_CACHE_HOME/asrpt_bench" in done.stdout
