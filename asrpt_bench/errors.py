"""The one exception for bad user input, at the bottom of the layer order so every module can raise it."""

from __future__ import annotations


class ConfigError(ValueError):
    """A value given by the user (config key, file, row, job) is invalid; the message names it."""
