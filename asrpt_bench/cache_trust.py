"""Cache entries that cannot run foreign code: every entry is signed with the user's own key.

Entries are pickles, and unpickling runs code. Each entry therefore starts with an HMAC-SHA256 of
its kind, key and bytes under a secret key kept in the user's config directory
(`$XDG_CONFIG_HOME/asrpt_bench/cache.key`, else `~/.config/asrpt_bench/cache.key`, created with
mode 0600). An entry is unpickled only after its signature checks, so an entry planted by anyone
without the key is never loaded: it is a miss (recomputed and rewritten) with one warning. A cache
directory writable by every user is refused unless `ASRPT_BENCH_CACHE_ALLOW_WRITABLE=1` says the
user accepts it (the signatures still hold there).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from functools import lru_cache
from pathlib import Path

from .errors import ConfigError

MAGIC = b"asrpt-bench-cache-entry v1\n"
SIGNATURE_BYTES = 64  # hex of SHA-256
ALLOW_WRITABLE = "ASRPT_BENCH_CACHE_ALLOW_WRITABLE"


class UntrustedEntry(Exception):
    """An entry without a valid signature under this user's key."""


def key_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "asrpt_bench" / "cache.key"


@lru_cache(maxsize=4)
def _key_at(path: Path) -> bytes:
    """The key at `path`, made (32 random bytes, mode 0600, atomically) if there is none yet."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(handle, secrets.token_hex(32).encode("ascii"))
        finally:
            os.close(handle)
        try:
            os.link(tmp, path)  # fails if another process made the key first: then use theirs
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"{path}: the cache signing key is readable or writable by others "
                          f"(mode {stat.S_IMODE(mode):04o}); chmod 600 it")
    key = path.read_bytes().strip()
    if len(key) < 32:
        raise ConfigError(f"{path}: the cache signing key is too short ({len(key)} bytes); delete it to make a new one")
    return key


def signing_key() -> bytes:
    return _key_at(key_path())


def _mac(kind: str, key: str, payload: bytes) -> bytes:
    digest = hmac.new(signing_key(), f"{kind}/{key}\0".encode("utf-8"), hashlib.sha256)
    digest.update(payload)
    return digest.hexdigest().encode("ascii")


def sign(kind: str, key: str, payload: bytes) -> bytes:
    """The bytes of a signed entry: MAGIC, the signature, a newline, the payload."""
    return MAGIC + _mac(kind, key, payload) + b"\n" + payload


def verify(kind: str, key: str, data: bytes) -> bytes:
    """The payload of a signed entry; UntrustedEntry if it is unsigned or signed under another key."""
    head = len(MAGIC) + SIGNATURE_BYTES + 1
    if not data.startswith(MAGIC) or len(data) < head or data[head - 1:head] != b"\n":
        raise UntrustedEntry("not signed")
    signature, payload = data[len(MAGIC):head - 1], data[head:]
    if not hmac.compare_digest(signature, _mac(kind, key, payload)):
        raise UntrustedEntry("its signature does not match this user's key")
    return payload


def check_directory(root: Path) -> None:
    """Refuse a cache directory (or a kind folder in it) that every user may write to."""
    if os.environ.get(ALLOW_WRITABLE, "") not in ("", "0"):
        return
    for path in [root, *(p for p in root.iterdir() if p.is_dir())] if root.is_dir() else []:
        mode = path.stat().st_mode
        if mode & stat.S_IWOTH:
            raise ConfigError(f"cache.dir: {path} is writable by every user (mode {stat.S_IMODE(mode):04o}); "
                              f"use a private directory, or set {ALLOW_WRITABLE}=1 to accept it (entries stay "
                              "signed with your key)")
