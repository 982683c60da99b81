"""The Hydra config tree (a package so the console script finds it as pkg://asrpt_bench.conf)."""

from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent
"""This folder: config.yaml and one folder per config group (experiment/ holds the named experiments)."""
