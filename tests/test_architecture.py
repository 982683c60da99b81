"""The package keeps the layer order of docs/architecture.md: every module is placed in a layer, no import
goes to a higher layer, and no modules import each other in a cycle. The layer table is read from the doc
itself, and the checker is first tried on a small made-up package, so it is known to catch both faults."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "asrpt_bench"
DOC = ROOT / "docs" / "architecture.md"

ALLOWED: dict[tuple[str, str], str] = {
    ("config", "tasks"): "config loads the built-in tasks when a task group is first parsed; tasks read RunConfig",
}
"""Imports against the layer order still in the code (importer, imported), each with its reason
(docs/architecture.md, Known exceptions)."""


def layer_table(doc: str) -> dict[str, int]:
    """Module name (relative to the package) -> layer, from the rows `| 3 | `a`, `b` | ... |` of the doc."""
    table: dict[str, int] = {}
    for line in doc.splitlines():
        row = re.match(r"^\|\s*(\d+)\s*\|([^|]*)\|", line)
        if row is None:
            continue
        for name in re.findall(r"`([\w.]+)`", row.group(2)):
            if name in table:
                raise AssertionError(f"docs/architecture.md places {name!r} twice")
            table[name] = int(row.group(1))
    return table


def module_names(package: Path) -> dict[str, Path]:
    """Every module of the package by its name relative to it (`placement.ilp`; `__init__` for the root)."""
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imported_modules(name: str, path: Path, modules: dict[str, Path], top: str) -> set[str]:
    """The package's modules that module `name` imports (docs/architecture.md says what counts)."""
    is_package = path.name == "__init__.py"
    own = [] if name == "__init__" else name.split(".")
    package = own if is_package else own[:-1]

    def known(dotted: list[str]) -> str:
        """The module of a dotted name below the package: itself, else its nearest parent package."""
        while dotted and ".".join(dotted) not in modules:
            dotted = dotted[:-1]
        return ".".join(dotted) or "__init__"

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(known(alias.name.split(".")[1:]) for alias in node.names
                         if alias.name.split(".")[0] == top)
        elif isinstance(node, ast.ImportFrom):
            parts = node.module.split(".") if node.module else []
            if node.level:
                target = package[:len(package) - (node.level - 1)] + parts
            elif parts[:1] == [top]:
                target = parts[1:]
            else:
                continue
            for alias in node.names:
                submodule = ".".join(target + [alias.name])
                found.add(submodule if submodule in modules else known(target))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(f"{top}."):
            dotted = node.value[len(top) + 1:]
            if dotted.replace(".", "").replace("_", "").isalnum():
                found.add(known(dotted.split(".")))
    found.discard(name)
    return found


def import_graph(package: Path) -> nx.DiGraph:
    modules = module_names(package)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in imported_modules(name, path, modules, package.name))
    return graph


def layer_of(module: str, table: dict[str, int]) -> int | None:
    """The layer of the longest table name that is the module or one of its packages."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in table:
            return table[".".join(parts[:end])]
    return None


def unplaced(graph: nx.DiGraph, table: dict[str, int]) -> list[str]:
    return sorted(module for module in graph if layer_of(module, table) is None)


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """One cycle per strongly connected group of modules that import each other."""
    return [sorted(group) for group in nx.strongly_connected_components(graph) if len(group) > 1]


def upward_imports(graph: nx.DiGraph, table: dict[str, int]) -> list[tuple[str, str]]:
    """Imports of a higher layer's module, between placed modules (`unplaced` reports the others)."""
    layers = {module: layer_of(module, table) for module in graph}
    return sorted((a, b) for a, b in graph.edges
                  if layers[a] is not None and layers[b] is not None and layers[a] < layers[b])


# --------------------------------------------------------------------------------------------------
# The checker on a made-up package with one fault of each kind


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "toy"
    for relative, text in files.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text, encoding="utf-8")
    return package


def test_the_checker_finds_a_cycle_an_upward_import_and_an_unplaced_module(tmp_path: Path) -> None:
    package = write_package(tmp_path, {
        "__init__.py": "",
        "low.py": "def late():\n    from .high import thing\n",  # upward, inside a function
        "high.py": "from toy.mid import helper\n",
        "mid/__init__.py": "from . import a\n\nhelper = 1\n",
        "mid/a.py": "import importlib\n\nNAME = importlib.import_module('toy.mid.b')\n",
        "mid/b.py": "from ..mid import helper\n",  # mid -> a -> b -> mid, through the string and the package
        "stray.py": "import toy.low\n",
    })
    graph = import_graph(package)
    table = layer_table("| 1 | `__init__`, `low` | x |\n| 2 | `mid` | x |\n| 3 | `high` | x |")
    assert set(graph.edges) == {("low", "high"), ("high", "mid"), ("mid", "mid.a"), ("mid.a", "mid.b"),
                                ("mid.b", "mid"), ("stray", "low")}
    assert upward_imports(graph, table) == [("low", "high")]
    assert cycles(graph) == [["mid", "mid.a", "mid.b"]]
    assert unplaced(graph, table) == ["stray"]


def test_the_table_is_read_from_every_numbered_row() -> None:
    table = layer_table(DOC.read_text(encoding="utf-8"))
    assert table["errors"] == 1 and table["cli"] == max(table.values())
    assert layer_of("report.reproduction", table) == table["report"] < table["cli"]


# --------------------------------------------------------------------------------------------------
# The package


@pytest.fixture(scope="module")
def package() -> tuple[nx.DiGraph, dict[str, int]]:
    return import_graph(PACKAGE), layer_table(DOC.read_text(encoding="utf-8"))


def test_every_module_has_a_layer_and_every_row_names_a_module(package: tuple[nx.DiGraph, dict[str, int]]) -> None:
    graph, table = package
    assert unplaced(graph, table) == [], "add these to the layer table of docs/architecture.md"
    assert sorted(name for name in table if name not in graph) == []


def test_no_import_cycles(package: tuple[nx.DiGraph, dict[str, int]]) -> None:
    graph, _ = package
    known = graph.copy()
    known.remove_edges_from(ALLOWED)
    assert cycles(known) == []


def test_no_import_against_the_layer_order(package: tuple[nx.DiGraph, dict[str, int]]) -> None:
    graph, table = package
    found = [f"{a} (layer {layer_of(a, table)}) imports {b} (layer {layer_of(b, table)})"
             for a, b in upward_imports(graph, table) if (a, b) not in ALLOWED]
    assert found == []


def test_every_allowed_exception_is_still_in_the_code(package: tuple[nx.DiGraph, dict[str, int]]) -> None:
    graph, table = package
    assert sorted(set(ALLOWED) - set(graph.edges)) == [], "remove these from ALLOWED"
