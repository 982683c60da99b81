"""versions.installed_version reads a distribution's version from its metadata header: it must give what
importlib.metadata.version gives, for every installed distribution, and refuse a missing one the same way."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from asrpt_bench import versions
from asrpt_bench.versions import installed_version


def test_every_installed_distribution_has_the_version_importlib_gives() -> None:
    names = {distribution.metadata["Name"] for distribution in metadata.distributions()}
    assert {"numpy", "pandas", "pyarrow"} <= names
    for name in sorted(names):
        assert installed_version(name) == metadata.version(name), name


def test_a_missing_distribution_raises_what_importlib_raises() -> None:
    with pytest.raises(metadata.PackageNotFoundError):
        installed_version("no-such-distribution-asrpt")


def write_distribution(tmp_path: Path, text: str) -> metadata.Distribution:
    folder = tmp_path / "made-1.0.dist-info"
    folder.mkdir()
    (folder / "METADATA").write_text(text, encoding="utf-8")
    return metadata.PathDistribution(folder)


@pytest.mark.parametrize("text, expected", [
    # blanks after the value kept, as the parser keeps them; the description's line is not the header's
    ("Metadata-Version: 2.1\nName: made\nVersion: 1.2.3  \n\nVersion: 9.9 (the description)\n", "1.2.3  "),
    ("Metadata-Version: 2.1\nName: made\n\nVersion: 9.9 (in the description, not the header)\n", None),
    ("Metadata-Version: 2.1\r\nName: made\r\nVERSION:\t4.5\r\n", "4.5"),  # any case, CRLF lines
    ("Metadata-Version: 2.1\nName: made\nVersion: 1.0\n  folded\n", ...),  # folded: as the parser unfolds it
    ("Metadata-Version: 2.1\nNot a header\nVersion: 2.0\n", None),  # the header ended before the field
])
def test_the_header_is_read_as_the_email_parser_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         text: str, expected: object) -> None:
    made = write_distribution(tmp_path, text)
    monkeypatch.setattr(versions.metadata, "distribution", lambda name: made)
    versions.installed_version.cache_clear()
    try:
        assert installed_version("made") == made.version
        assert expected is ... or made.version == expected
    finally:
        versions.installed_version.cache_clear()
