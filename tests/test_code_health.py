"""Code health, measured and kept: no import cycle, small modules, simple functions, no dead code.

* **No import cycle** among the modules of the runtime and the checker,
  counting the imports inside functions (a function-level import hides a
  cycle from the interpreter, not from the reader). Static: every ``import``
  of every module, read with ``ast`` and resolved to the module it loads;
  only the imports under ``if TYPE_CHECKING:`` are left out, since they never
  run (annotations may name a type of a module that imports this one).
* **No module of src/ over 500 lines.**
* **No function above radon's grade C** (cyclomatic complexity over 20), in
  src/, tests/ or mutation/.
* **No dead code** by vulture at 60% confidence beyond ``vulture_whitelist.py``,
  where each entry says why it is alive.

Each check is shown to fail on a planted defect.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGES = ("embedding_cache", "embedding_cache_checker", "embedding_cache_vllm")
MAX_MODULE_LINES = 500
#: radon's grade C ends at 20; D starts at 21.
MAX_COMPLEXITY = 20

Graph = dict[str, set[str]]


def module_files() -> dict[str, Path]:
    """Dotted module name -> its file, for every module of both packages. O(files)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((SRC / package).rglob("*.py")):
            parts = path.relative_to(SRC).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _is_package(name: str, files: dict[str, Path]) -> bool:
    return name in files and files[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom, files: dict[str, Path]) -> str:
    """The absolute module an ``ImportFrom`` in ``module`` names (``from ..x import``)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if _is_package(module, files) else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *(node.module.split(".") if node.module else [])])


def imports_of(module: str, source: str, files: dict[str, Path]) -> set[str]:
    """The modules of ``files`` that ``source`` (the text of ``module``) imports,
    wherever the import stands: ``from X import a`` loads ``X.a`` when that is a
    module, else ``X``. O(len(source))."""
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, files)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in files else target)
    return {name for name in found if name in files and name != module}


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:``. O(nodes)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                todo.extend(child.orelse)
            else:
                todo.append(child)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_graph(sources: dict[str, str], files: dict[str, Path]) -> Graph:
    """Module -> the modules it imports. O(total size)."""
    return {name: imports_of(name, text, files) for name, text in sources.items()}


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one module (each one holds
    a cycle), by Tarjan's algorithm. O(modules + imports)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _sources(files: dict[str, Path]) -> dict[str, str]:
    return {name: path.read_text(encoding="utf-8") for name, path in files.items()}


# ---------------------------------------------------------------- import cycles


def test_no_import_cycle_counting_function_level_imports() -> None:
    files = module_files()
    graph = import_graph(_sources(files), files)
    assert "embedding_cache.transitions" in graph["embedding_cache.cache"]
    assert cycles(graph) == []


def test_a_function_level_import_cycle_is_found() -> None:
    """Non-vacuity: the cycle the runtime once had (``invariants`` importing
    ``transitions`` inside a function, while ``transitions`` imports ``contracts``,
    which imports ``invariants``) is reported."""
    files = module_files()
    sources = _sources(files)
    planted = "\n\ndef held(s):\n    from .transitions import alloc\n    return alloc\n"
    sources["embedding_cache.invariants"] += planted
    found = cycles(import_graph(sources, files))
    assert any(
        {"embedding_cache.invariants", "embedding_cache.transitions"} <= set(c) for c in found
    )


def test_a_type_checking_import_makes_no_cycle() -> None:
    """Only imports that run count: the same import under ``if TYPE_CHECKING:`` is none."""
    files = module_files()
    sources = _sources(files)
    planted = "\nif TYPE_CHECKING:\n    from .transitions import alloc\n"
    sources["embedding_cache.invariants"] += planted
    assert cycles(import_graph(sources, files)) == cycles(import_graph(_sources(files), files))


# ---------------------------------------------------------------- size and complexity


def long_modules(files: Iterable[Path]) -> list[str]:
    """The files of more than MAX_MODULE_LINES lines, with their length. O(text)."""
    out = []
    for path in files:
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_MODULE_LINES:
            out.append(f"{path.relative_to(ROOT)}: {lines} lines")
    return out


def test_no_module_of_src_is_over_500_lines() -> None:
    assert long_modules(module_files().values()) == []


def complex_functions(paths: Iterable[Path]) -> list[str]:
    """Every function or method above radon's grade C, with its complexity. O(text)."""
    from radon.complexity import cc_rank, cc_visit

    out = []
    for path in paths:
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if block.complexity > MAX_COMPLEXITY:
                where = f"{path.relative_to(ROOT)}:{block.lineno} {block.name}"
                out.append(f"{where}: {cc_rank(block.complexity)} ({block.complexity})")
    return out


def _python_files() -> list[Path]:
    return sorted(p for d in ("src", "tests", "mutation") for p in (ROOT / d).rglob("*.py"))


def test_no_function_is_above_grade_c() -> None:
    pytest.importorskip("radon")
    assert complex_functions(_python_files()) == []


def test_a_function_above_grade_c_is_found(tmp_path: Path) -> None:
    """Non-vacuity: a function of 21 branches is reported as grade D."""
    pytest.importorskip("radon")
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(21))
    planted = tmp_path / "planted.py"
    planted.write_text(f"def f(x):\n{branches}    return -1\n", encoding="utf-8")
    found = [line.split(": ", 1)[1] for line in _complex_in(planted)]
    assert found == ["D (22)"]


def _complex_in(path: Path) -> list[str]:
    from radon.complexity import cc_rank, cc_visit

    return [
        f"{path.name}: {cc_rank(b.complexity)} ({b.complexity})"
        for b in cc_visit(path.read_text(encoding="utf-8"))
        if b.complexity > MAX_COMPLEXITY
    ]


# ---------------------------------------------------------------- dead code


def _vulture(*paths: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "vulture", "--min-confidence", "60", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode in (0, 3), result.stderr  # 3: dead code found
    return [line for line in result.stdout.splitlines() if line.strip()]


def test_no_dead_code_beyond_the_whitelist() -> None:
    pytest.importorskip("vulture")
    whitelist = ROOT / "vulture_whitelist.py"
    assert _vulture(SRC, ROOT / "tests", ROOT / "mutation", whitelist) == []


def test_dead_code_is_found(tmp_path: Path) -> None:
    """Non-vacuity: a function nobody calls is reported."""
    pytest.importorskip("vulture")
    planted = tmp_path / "planted.py"
    planted.write_text("def never_called():\n    return 1\n", encoding="utf-8")
    assert any("never_called" in line for line in _vulture(planted))
