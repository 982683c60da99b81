"""Print the zoo summary: `python -m asrpt_bench.profiles [--gpus N] [--gpu-memory-gb GB]`."""

from __future__ import annotations

import argparse
import time

from .summary import zoo_summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gpus", type=int, default=8, help="GPU count of the configurations listed")
    parser.add_argument("--gpu-memory-gb", type=float, default=32.0, help="memory per GPU (1 GB = 1e9 B)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    table = zoo_summary(args.gpus, gpu_memory_gb=args.gpu_memory_gb)
    elapsed = time.perf_counter() - start
    print(table.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    print(f"\n{len(table)} plans in {elapsed:.2f} s (cold caches)")


if __name__ == "__main__":
    main()
