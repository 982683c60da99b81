"""asrpt_bench: A-SRPT (Luo, Liu, Lee, Shroff, arXiv 2501.05563) reimplemented as a tested toolkit."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("asrpt_bench")
except PackageNotFoundError:
    __version__ = "0.0.0+unknown"
