"""The checker reaches the runtime's internals through one door: ``embedding_cache.verification``.

The rule (``embedding_cache.verification``'s docstring): the checker, the vLLM
plugin and the bench import the runtime only as the package's public names
(``embedding_cache.__all__``), the policy package ``embedding_cache.policies``
with its policy modules, or ``embedding_cache.verification``. Every import
statement counts, at module level, inside a function or under
``TYPE_CHECKING``, and so does ``importlib.import_module`` of a literal name.
O(files x nodes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import embedding_cache
from embedding_cache import verification

SRC = Path(__file__).resolve().parent.parent / "src"
#: The packages that use the runtime from outside (the bench may not be installed).
USERS = ("embedding_cache_checker", "embedding_cache_vllm", "embedding_cache_bench")
RUNTIME = "embedding_cache"
DOOR = f"{RUNTIME}.verification"
POLICIES = f"{RUNTIME}.policies"


def _allowed_module(module: str) -> bool:
    """A runtime module a user may import by name: the package, the door, the policies."""
    return module in (RUNTIME, DOOR, POLICIES) or module.startswith(POLICIES + ".")


def _imported(node: ast.AST) -> list[str]:
    """What one node imports from the runtime, as dotted names: ``embedding_cache.X``
    for ``from embedding_cache import X``, the module otherwise. Relative imports
    stay inside their own package and name nothing here."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        if node.module == RUNTIME:
            return [f"{RUNTIME}.{alias.name}" for alias in node.names]
        return [node.module]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
        in ("import_module", "__import__")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


def bypasses(source: str) -> list[tuple[int, str]]:
    """(line, name) of each import of ``source`` that reaches a runtime internal other
    than through the door. O(nodes)."""
    public = set(embedding_cache.__all__)
    found = []
    for node in ast.walk(ast.parse(source)):
        for name in _imported(node):
            root, _, rest = name.partition(".")
            if root != RUNTIME or _allowed_module(name):
                continue
            if rest in public and "." not in rest:
                continue  # from embedding_cache import <a public name>
            found.append((getattr(node, "lineno", 0), name))
    return found


def _user_files() -> list[Path]:
    return sorted(p for package in USERS for p in (SRC / package).rglob("*.py"))


def test_the_checker_plugin_and_bench_import_the_runtime_only_through_the_door() -> None:
    assert _user_files(), "no checker modules found"
    found = [
        f"{path.relative_to(SRC)}:{line}: {name}"
        for path in _user_files()
        for line, name in bypasses(path.read_text(encoding="utf-8"))
    ]
    assert found == [], (
        "runtime internals imported around embedding_cache.verification (add what is "
        "needed there, with a line in its docstring): " + "; ".join(found)
    )


def test_every_name_taken_from_the_door_is_in_its_list() -> None:
    """What the users take from the door is what it lists (``__all__``), so the
    list says all they rely on."""
    offered = set(verification.__all__)
    taken = {
        (str(path.relative_to(SRC)), alias.name)
        for path in _user_files()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == DOOR
        for alias in node.names
    }
    assert taken, "nothing goes through the door: the walk is broken"
    assert sorted(t for t in taken if t[1] not in offered) == []


@pytest.mark.parametrize(
    "source",
    [
        "from embedding_cache.state import CacheState\n",
        "import embedding_cache.cache\n",
        "from embedding_cache import build\n",  # a module, not a public name
        "from embedding_cache.entry import NOT_READY as N\n",
        "def f():\n    from embedding_cache.allocators import DEFAULT_ALLOCATOR\n",
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from embedding_cache.free_stack import FreeStack\n",
        "import importlib\nimportlib.import_module('embedding_cache.admission')\n",
    ],
)
def test_a_bypass_is_caught_wherever_it_stands(source: str) -> None:
    assert len(bypasses(source)) == 1


def test_the_doors_themselves_pass() -> None:
    source = (
        "import embedding_cache\n"
        "from embedding_cache import EmbeddingCache, CacheEntry, policies, verification\n"
        "from embedding_cache.verification import CacheState\n"
        "from embedding_cache.policies import EVICTION_POLICIES\n"
        "from embedding_cache.policies.s3fifo import SMALL\n"
        "from . import relative\n"
        "import embedding_cache_checker.verify\n"
    )
    assert bypasses(source) == []
