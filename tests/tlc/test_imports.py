"""The import graph of ``embedding_cache_checker.tlc`` has no cycle, counting the imports
inside functions (a function-level import hides a cycle from the interpreter, not from
the reader). Static: every ``import``/``from`` of every module, read with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import embedding_cache_checker.tlc as tlc

PACKAGE = Path(tlc.__file__).parent
NAME = tlc.__name__

Graph = dict[str, set[str]]


def imported_modules(source: str) -> set[str]:
    """The package's modules that ``source`` imports, wherever the import stands
    (relative, or absolute through ``embedding_cache_checker.tlc``). O(len(source))."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:  # from . import x
                found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith(f"{NAME}."):
                found.add(node.module[len(NAME) + 1 :].split(".")[0])
            elif node.module == NAME:
                found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {
                a.name[len(NAME) + 1 :].split(".")[0]
                for a in node.names
                if a.name.startswith(f"{NAME}.")
            }
    return found


def import_graph(sources: dict[str, str]) -> Graph:
    """Module -> the package's modules it imports. O(total size)."""
    return {name: imported_modules(text) & set(sources) for name, text in sources.items()}


def cycles(graph: Graph) -> list[list[str]]:
    """Every elementary cycle, once each (as a path back to its start). O(paths)."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(path: list[str]) -> None:
        for target in sorted(graph[path[-1]]):
            if target in path:
                cycle = path[path.index(target) :]
                if frozenset(cycle) not in seen:
                    seen.add(frozenset(cycle))
                    found.append([*cycle, target])
            else:
                walk([*path, target])

    for start in sorted(graph):
        walk([start])
    return found


def package_sources() -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(PACKAGE.glob("*.py"))}


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph(package_sources())
    assert {"runner", "output", "counterexample", "report"} <= set(graph)
    assert cycles(graph) == []


def test_function_level_imports_count() -> None:
    """The check sees an import inside a function: the cycle the package once had
    (``counterexample`` importing ``report`` inside ``step_table``) is reported."""
    sources = package_sources()
    sources["counterexample"] += "\n\ndef late() -> None:\n    from .report import results_table\n"
    found = cycles(import_graph(sources))
    assert found and all("counterexample" in c for c in found)
    assert any(c[:2] == ["counterexample", "report"] for c in found)
