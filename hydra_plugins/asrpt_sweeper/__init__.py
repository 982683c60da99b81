"""`hydra/sweeper=asrpt` for asrpt-bench: Hydra's basic sweeper that counts points (see sweeper.py)."""
