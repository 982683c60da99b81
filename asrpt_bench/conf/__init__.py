"""The Hydra config tree (a package so the console script finds it as pkg://asrpt_bench.conf)."""
