"""Lazy re-exports for a package: `from asrpt_bench.schedulers import FIFO` keeps working while importing the
package imports none of its submodules; a name's submodule is imported when the name is first read (PEP 562).
Registries know their built-in names without these imports (registry.Registry.declare, called by each
package), so a run imports only the components it names."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, str], submodules: tuple[str, ...] = ()
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose name N lives in its submodule `exports[N]`
    (e.g. "asrpt_bench.schedulers.fifo"), and whose `submodules` are read as attributes too (`package.compare`); a name
    read once stays an attribute of the package."""

    def __getattr__(name: str) -> Any:
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")  # the import sets the package's attribute
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*exports, *submodules, *vars(sys.modules[package])})

    return __getattr__, __dir__
