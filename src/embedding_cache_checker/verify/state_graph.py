"""Read the state graph TLC dumps with ``-dump dot,actionlabels FILE``.

Each node is a distinct state (its label: ``/\\ var = value`` lines), each edge
a step TLC explored (its label: the action's name). Initial states are the
nodes drawn filled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .tla_values import TlaValue, parse_state

_NODE = re.compile(r'^(-?\d+) \[label="((?:[^"\\]|\\.)*)"(,style = filled)?\]')
_EDGE = re.compile(r'^(-?\d+) -> (-?\d+) \[label="((?:[^"\\]|\\.)*)"')


@dataclass
class StateGraph:
    """States by node id, edges as (source, target, action label), initial node ids."""

    states: dict[str, dict[str, TlaValue]] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    initial: list[str] = field(default_factory=list)


def _unescape(label: str) -> str:
    # dot escapes: \n newline, \" quote, \\ backslash (TLC writes /\ as /\\).
    if "\\" not in label:  # an edge's action name: most of a graph's lines
        return label
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), label)


def parse_dot(text: str) -> StateGraph:
    """Parse TLC's dot dump. O(size of the file)."""
    graph = StateGraph()
    for line in text.splitlines():
        edge = _EDGE.match(line)
        if edge:
            graph.edges.append((edge.group(1), edge.group(2), _unescape(edge.group(3))))
            continue
        node = _NODE.match(line)
        if node:
            graph.states[node.group(1)] = parse_state(_unescape(node.group(2)))
            if node.group(3):
                graph.initial.append(node.group(1))
    return graph


def load_dot(path: Path) -> StateGraph:
    """Parse the dot file at ``path``."""
    return parse_dot(path.read_text())
