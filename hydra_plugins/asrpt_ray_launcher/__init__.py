"""`hydra/launcher=ray` for asrpt-bench: sweep points run as Ray tasks (see ray_launcher.py)."""
