"""Small-scale versions of the named experiments: the whole pipeline (sweep -> collect -> figure) in
minutes, for `experiments/run_all.sh --quick`, CI and the end-to-end tests. Never for results.

A quick sweep is the experiment on the tiny debug setting (`debug=tiny`: 30 jobs, 8 trees, short
solver limit) with seed 0 only; its first swept key (other than the seed) keeps its first two values
and every other swept key its first value, so each figure is drawn from a real sweep in seconds.

    python -m asrpt_bench.quick --list          # the named experiments, one per line
    python -m asrpt_bench.quick fig6_num_jobs   # its quick overrides, one per line
"""

from __future__ import annotations

import argparse
import sys

import yaml

from .conf import CONFIG_DIR


def experiments() -> list[str]:
    """Every named experiment (conf/experiment/*.yaml), sorted."""
    return sorted(path.stem for path in (CONFIG_DIR / "experiment").glob("*.yaml"))


def quick_overrides(name: str) -> list[str]:
    """`experiment=NAME debug=tiny seed=0`, the experiment's first swept key (except the seed) cut to
    two values and every other one to its first value. A later `seed=0,1` sweeps seeds again."""
    if name not in experiments():
        raise ValueError(f"unknown experiment {name!r}; known: {experiments()}")
    config = yaml.safe_load((CONFIG_DIR / "experiment" / f"{name}.yaml").read_text(encoding="utf-8")) or {}
    params = ((config.get("hydra") or {}).get("sweeper") or {}).get("params") or {}
    swept = [(key, str(values).split(",")) for key, values in params.items() if key != "seed"]
    axes = [f"{key}={','.join(values[:2] if position == 0 else values[:1])}"
            for position, (key, values) in enumerate(swept)]
    return [f"experiment={name}", "debug=tiny", "seed=0", *axes]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m asrpt_bench.quick", description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", help="experiment whose quick overrides to print")
    parser.add_argument("--list", action="store_true", help="print the named experiments")
    args = parser.parse_args(argv)
    if args.list or args.name is None:
        print("\n".join(experiments()))
        return 0
    try:
        print("\n".join(quick_overrides(args.name)))
    except ValueError as error:
        print(f"asrpt_bench.quick: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
