"""Reader for PipeDream / DAPPLE per-layer profiles (`graph.txt`), collapsed to a layer chain.

Node lines: `nodeN -- desc -- forward_compute_time=F, backward_compute_time=B, activation_size=A,
parameter_size=P` (F, B in ms per profiled mini-batch; A, P in bytes; A may be `[a; b; ...]`, summed).
Edge lines are indented: `nodeX -- nodeY`. Source nodes (no incoming edge) are the inputs: their
compute is data loading, so it is zeroed. Branchy graphs become a chain in networkx's lexicographical
topological order by node number; the bytes crossing the cut after chain position k are the summed
outputs of nodes at positions <= k with an edge to a node after k (skip connections count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import ConfigError
from .model import Layer, ModelProfile

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import networkx as nx

_NODE_ID = re.compile(r"node(\d+)")
_ATTRIBUTE = re.compile(r"\s*(\w+)=(\[[^\]]*\]|[^,]*)\s*(?:,|$)")
_REQUIRED = ("forward_compute_time", "backward_compute_time", "activation_size", "parameter_size")


@dataclass(frozen=True)
class _Node:
    number: int
    description: str
    forward_ms: float
    backward_ms: float
    output_bytes: float
    param_bytes: float


def read_graph_txt(path: str | Path | Traversable, name: str | None = None,
                   batch_size: int | None = None) -> ModelProfile:
    """Read a graph.txt file into a ModelProfile in the source GPU's seconds (no speed factor)."""
    if isinstance(path, str):
        path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read profile file {path}: {error}") from error
    label = name or path.name.split(".")[0]
    return parse_graph_txt(text, source=str(path), name=label, batch_size=batch_size)


def parse_graph_txt(text: str, source: str, name: str, batch_size: int | None = None) -> ModelProfile:
    """Parse graph.txt `text`; `source` names the file in error messages."""
    import networkx as nx  # here, not at the top: most runs read no graph.txt, and NetworkX costs ~70 ms to import

    nodes: dict[int, _Node] = {}
    edges: list[tuple[int, int, int]] = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}, line {line_number}"
        if line[0].isspace():
            edges.append((*_parse_edge(line, where), line_number))
        else:
            node = _parse_node(line, where)
            if node.number in nodes:
                raise ConfigError(f"{where}: node{node.number} is defined twice")
            nodes[node.number] = node
    if not nodes:
        raise ConfigError(f"{source}: no node lines found")
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    for tail, head, line_number in edges:
        for end in (tail, head):
            if end not in nodes:
                raise ConfigError(f"{source}, line {line_number}: edge refers to undefined node{end}")
        graph.add_edge(tail, head)
    if not nx.is_directed_acyclic_graph(graph):
        raise ConfigError(f"{source}: the layer graph has a cycle: {nx.find_cycle(graph)}")
    return ModelProfile(name=name, layers=_chain(graph, nodes), source=source, batch_size=batch_size)


def _chain(graph: nx.DiGraph, nodes: dict[int, _Node]) -> tuple[Layer, ...]:
    import networkx as nx

    order = list(nx.lexicographical_topological_sort(graph))
    position = {number: k for k, number in enumerate(order)}
    last_consumer = {n: max((position[m] for m in graph.successors(n)), default=-1) for n in order}
    layers = []
    for k, number in enumerate(order):
        node = nodes[number]
        compute_ms = 0.0 if graph.in_degree(number) == 0 else node.forward_ms + node.backward_ms
        crossing = sum(nodes[n].output_bytes for n in order[:k + 1] if last_consumer[n] > k)
        layers.append(Layer(name=f"node{number} {node.description}", compute_s=compute_ms / 1000.0,
                            output_bytes=node.output_bytes, boundary_bytes=float(crossing),
                            param_bytes=node.param_bytes))
    return tuple(layers)


def _parse_edge(line: str, where: str) -> tuple[int, int]:
    parts = [part.strip() for part in line.split("--")]
    numbers = [_NODE_ID.fullmatch(part) for part in parts]
    if len(parts) != 2 or not all(numbers):
        raise ConfigError(f"{where}: expected an edge line 'nodeX -- nodeY', got {line.strip()!r}")
    return int(numbers[0].group(1)), int(numbers[1].group(1))


def _parse_node(line: str, where: str) -> _Node:
    head, _, rest = line.partition(" -- ")
    description, _, attributes = rest.rpartition(" -- ")
    number = _NODE_ID.fullmatch(head.strip())
    if number is None or not description:
        raise ConfigError(f"{where}: expected a node line 'nodeN -- description -- key=value, ...', "
                          f"got {line.strip()[:80]!r}")
    values = _parse_attributes(attributes, where)
    return _Node(number=int(number.group(1)), description=description.strip(),
                 forward_ms=values["forward_compute_time"], backward_ms=values["backward_compute_time"],
                 output_bytes=values["activation_size"], param_bytes=values["parameter_size"])


def _parse_attributes(attributes: str, where: str) -> dict[str, float]:
    raw: dict[str, str] = {}
    position = 0
    attributes = attributes.strip()
    while position < len(attributes):
        match = _ATTRIBUTE.match(attributes, position)
        if match is None or match.end() == position:
            raise ConfigError(f"{where}: cannot parse attributes {attributes[position:]!r}")
        raw[match.group(1)] = match.group(2).strip()
        position = match.end()
    missing = [key for key in _REQUIRED if key not in raw]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}")
    return {key: _number(key, raw[key], where) for key in _REQUIRED}


def _number(key: str, value: str, where: str) -> float:
    parts = value[1:-1].split(";") if value.startswith("[") and value.endswith("]") else [value]
    try:
        total = sum(float(part) for part in parts)
    except ValueError:
        raise ConfigError(f"{where}: {key}={value!r} is not a number or a [a; b] list") from None
    if not total >= 0 or total == float("inf"):
        raise ConfigError(f"{where}: {key}={value!r} must be a finite non-negative number")
    return total
