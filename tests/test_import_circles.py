"""No import circle among the project's modules, counting every import.

Type-only imports (under ``TYPE_CHECKING``) and imports inside functions count as
edges too: each still ties the two modules' meaning together. Importing a submodule
also imports its parent packages. There is none (issue 26): any circle fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

#: The circles allowed: none.
KNOWN: list[frozenset[str]] = []


def module_files() -> dict[str, Path]:
    """Every module under src/ by dotted name (a package by its own name). O(files)."""
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(module: str, node: ast.Import | ast.ImportFrom, is_package: bool) -> list[str]:
    """The project modules one import statement names (the longest known prefix)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")[: None if is_package else -1]
            base = base[: len(base) - node.level + 1]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{alias.name}" for alias in node.names] + [prefix]
    return names


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports, parents of submodules included."""
    files = module_files()
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        edges: set[str] = set()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in imported(module, node, path.name == "__init__.py"):
                while name and name not in files:
                    name = name.rpartition(".")[0]
                parts = name.split(".")
                for i in range(1, len(parts) + 1):
                    target = ".".join(parts[:i])
                    if target in files and target != module and not module.startswith(target + "."):
                        edges.add(target)
        graph[module] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan). O(V + E)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_there_is_no_import_circle() -> None:
    found = circles(import_graph())
    assert sorted(map(sorted, found)) == sorted(map(sorted, KNOWN)), (
        "import circles (every import counted, type-only and function-level too): "
        + "; ".join(" <-> ".join(sorted(c)) for c in found)
    )


def test_a_type_only_and_a_function_level_import_close_a_circle() -> None:
    """The finder counts the imports that matter here: a TYPE_CHECKING import one way
    and an import inside a function the other way make a circle."""
    graph = {"p.a": {"p.b"}, "p.b": {"p.a"}, "p.c": {"p.a"}}
    assert circles(graph) == [frozenset({"p.a", "p.b"})]
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .b import X\n"
        "def f():\n    from . import c\n"
    )
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update(imported("p.a", node, is_package=False))
    assert {"p.b.X", "p.c"} <= names
