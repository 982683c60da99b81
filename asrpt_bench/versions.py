"""Installed versions of distributions, each looked up once per process (the run's provenance and the cache
key both record some), reading only the metadata's header lines up to the `Version` field."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import metadata

_HEADER = re.compile(r"[\041-\071\073-\176]+:")
"""A header line as the email parser knows one: a name of printable characters but ':' and space, then ':'."""


@lru_cache(maxsize=None)
def installed_version(name: str) -> str:
    """What `importlib.metadata.version(name)` gives (its PackageNotFoundError too). `version()` parses
    the whole metadata file as an email message, long description included (pandas': 60 kB), which cost a
    run some tens of milliseconds over the libraries it records; the `Version` field is one of the first
    header lines. Read as the parser reads it (any case, blanks after the colon dropped, trailing ones
    kept); a header the parser could read otherwise (a folded value, a line that is no header or ends in a
    lone carriage return, before the field) goes through `version()`'s parser."""
    distribution = metadata.distribution(name)
    text = distribution.read_text("METADATA") or distribution.read_text("PKG-INFO") or ""
    lines = text.split("\n")
    for k, line in enumerate(lines):
        line = line[:-1] if line.endswith("\r") else line
        if "\r" in line or not line or not (_HEADER.match(line) or line[0] in " \t"):
            break
        key, _, value = line.partition(":")
        if key.lower() == "version":
            if k + 1 < len(lines) and lines[k + 1][:1] in (" ", "\t"):
                break
            return value.lstrip(" \t")
    return distribution.version
