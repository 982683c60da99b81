"""asrpt_bench: A-SRPT (Luo, Liu, Lee, Shroff, arXiv 2501.05563) reimplemented as a tested toolkit."""

from typing import Any


def __getattr__(name: str) -> Any:
    """`__version__`, read from the installed package's metadata on first use (reading it costs every
    import of the package, the command's start-up included, a few hundredths of a second)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("asrpt_bench")
    except PackageNotFoundError:
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found
