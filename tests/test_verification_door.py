"""The checker reaches the runtime's internals through one door: ``embedding_cache.verification``.

The rule (``embedding_cache.verification``'s docstring): the checker, the vLLM
plugin and the bench import the runtime only as the package's public names
(``embedding_cache.__all__``), the policy package ``embedding_cache.policies``
with its policy modules, or ``embedding_cache.verification``. Every import
statement counts, at module level, inside a function or under
``TYPE_CHECKING``, and so does ``importlib.import_module`` of a literal name.

The door holds for attributes too: no module outside the runtime touches an
underscored attribute of a runtime object (``lease._id``, ``entry._pin_count``,
``getattr(x, "_id")``); ``embedding_cache.verification`` gives an accessor
instead. The rule and its one allowance are spelt out above ``touches``.
O(files x nodes).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from pathlib import Path

import pytest

import embedding_cache
from embedding_cache import verification

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
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


# ------------------------------------------------------------------ attributes
#
# The same door for attributes. A runtime object's underscored attribute is one whose
# name the runtime defines with a single leading underscore (a slot, ``self._x = ...``,
# a method, a module's private name: ``runtime_private_names``). The name is the walk's
# only clue to an object's type; the runtime defines them all, so none is missed, and
# an object of the checker's own that shared one would be reported, not passed. An
# access is a touch when such a name is read, written or deleted, as ``obj._x`` or as
# ``getattr``/``setattr``/``hasattr``/``delattr`` of a literal, on anything but
# ``self``, ``cls`` or ``super()`` (a class's own attributes: a helper class of the
# checker may have a ``self._lock`` of its own).
#
# ``self`` is no way round: in a class derived from a runtime class, ``self._x`` and
# ``def _x`` of the runtime's names are touches too, with one allowance: a subclass
# of a policy class (``embedding_cache.policies``; a planted bug is the real policy
# with one step changed) may use and override its base's helpers, the single
# underscore's meaning (the class and its subclasses).

RUNTIME_DIR = SRC / RUNTIME
#: A single leading underscore, then a name (not ``_`` alone, not a dunder).
PRIVATE = re.compile(r"_[A-Za-z0-9]\w*")
ATTRIBUTE_CALLS = ("getattr", "setattr", "hasattr", "delattr")


def runtime_private_names(folder: Path = RUNTIME_DIR) -> frozenset[str]:
    """Every single-underscore name the runtime defines: slots, attributes assigned,
    classes, functions and methods, module-level names. O(runtime nodes)."""
    found: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                found.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
            elif isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__slots__" for target in node.targets
            ):
                found.update(
                    c.value
                    for c in ast.walk(node.value)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                )
    return frozenset(name for name in found if PRIVATE.fullmatch(name))


def _runtime_bases(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a module imports from the runtime (any of them may be a base class),
    and those of them imported from the policy package. O(nodes)."""
    names: set[str] = set()
    policies: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and node.module
            and node.module.partition(".")[0] == RUNTIME
        ):
            bound = {alias.asname or alias.name for alias in node.names}
            names |= bound
            if node.module == POLICIES or node.module.startswith(POLICIES + "."):
                policies |= bound
    return names, policies


def _is_own(node: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``: the object a method belongs to."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


class _Toucher(ast.NodeVisitor):
    """The walk of one module, with the class it is inside (``touches``)."""

    def __init__(self, private: Collection[str], tree: ast.Module) -> None:
        self.private = private
        self.runtime, self.policies = _runtime_bases(tree)
        #: For each enclosing class: derived from a runtime class without the allowance.
        self.strict: list[bool] = []
        self.found: list[tuple[int, str]] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = {ast.unparse(base).partition("[")[0] for base in node.bases}
        runtime = {b for b in bases if b in self.runtime or b.startswith(RUNTIME + ".")}
        self.strict.append(bool(runtime) and not runtime & self.policies)
        for item in node.body:
            if (
                isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and item.name in self.private
                and self.strict[-1]
            ):
                self.found.append((item.lineno, f"{node.name} overrides {item.name}"))
        self.generic_visit(node)
        self.strict.pop()

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in self.private and (
            not _is_own(node.value) or (self.strict and self.strict[-1])
        ):
            self.found.append((node.lineno, f"{ast.unparse(node.value)}.{node.attr}"))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in ATTRIBUTE_CALLS
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in self.private
            and (not _is_own(node.args[0]) or (self.strict and self.strict[-1]))
        ):
            self.found.append((node.lineno, f"{node.func.id}(..., {node.args[1].value!r})"))
        self.generic_visit(node)


def touches(source: str, private: Collection[str]) -> list[tuple[int, str]]:
    """(line, what) of each touch of a runtime object's underscored attribute in
    ``source``, by the rule above; ``private`` is ``runtime_private_names()``. O(nodes)."""
    tree = ast.parse(source)
    walker = _Toucher(private, tree)
    walker.visit(tree)
    return sorted(walker.found)


def _outside_files() -> list[Path]:
    """Every module outside the runtime that may hold a touch: the users' packages,
    their tests (tests/'s folders) and the mutation tools. tests/'s top-level files
    are the runtime's own white-box tests (``cache._state``, the pools' indexes) and
    the meta tests, left out."""
    folders = [folder for folder in (ROOT / "tests").iterdir() if folder.is_dir()]
    tests = [path for folder in folders for path in folder.rglob("*.py")]
    return sorted([*_user_files(), *tests, *(ROOT / "mutation").rglob("*.py")])


PRIVATE_NAMES = runtime_private_names()


def test_nothing_outside_the_runtime_touches_a_runtime_objects_underscored_attribute() -> None:
    assert {"_pin_count", "_id", "_deadline", "_held", "_book", "_state"} <= PRIVATE_NAMES
    files = _outside_files()
    assert len(files) > len(_user_files()), "the walk finds no tests or tools"
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in files
        for line, what in touches(path.read_text(encoding="utf-8"), PRIVATE_NAMES)
    ]
    assert found == [], (
        "runtime attributes touched around embedding_cache.verification (add an "
        "accessor there, typed, with its cost): " + "; ".join(found)
    )


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("def f(lease):\n    return lease._id\n", "lease._id"),
        ("def f(handle):\n    handle._held = False\n", "handle._held"),
        ("def f(cache):\n    del cache._ops\n", "cache._ops"),
        ("def f(x):\n    return getattr(x, '_deadline', None)\n", "getattr(..., '_deadline')"),
        (
            "from embedding_cache import EmbeddingCache\n"
            "class Split(EmbeddingCache):\n"
            "    def pin(self, key):\n        return self._state.entries[key]\n",
            "self._state",
        ),
        (
            "import embedding_cache\n"
            "class Late(embedding_cache.EmbeddingCache):\n"
            "    def _expire_due(self):\n        pass\n",
            "Late overrides _expire_due",
        ),
    ],
)
def test_a_touch_is_caught_read_written_or_through_self(source: str, what: str) -> None:
    """Non-vacuity: each planted touch is reported, once, as what it is."""
    assert [found for _, found in touches(source, PRIVATE_NAMES)] == [what]


def test_the_allowed_accesses_pass() -> None:
    """A class's own attributes, a policy subclass's use of its base's helpers (a planted
    bug), and underscored names the runtime does not define (vLLM's, a named tuple's)."""
    source = (
        "from embedding_cache.policies import GdsfPolicy\n"
        "class Clock:\n"
        "    def __init__(self):\n        self._lock = None\n"
        "    def read(self):\n        return self._lock, getattr(self, '_lock')\n"
        "class JoinIgnoresClock(GdsfPolicy):\n"
        "    def _join(self, key, size):\n        super()._join(key, size)\n"
        "def f(scheduler, step):\n"
        "    return scheduler._cache, step._replace(key=''), os._exit\n"
    )
    assert touches(source, PRIVATE_NAMES) == []
