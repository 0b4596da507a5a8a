"""No two modules of the checker define the same public class or type name.

Issue 26, "one vocabulary for the checker": a name means one thing. A public
top-level class (``class X``) or type alias (``X = tuple[...]``, a CapWords
name bound at module level) is defined in exactly one module of
``src/embedding_cache_checker``; every other module imports it from there.
Imports and re-exports are not definitions, so ``from .bug import X`` in a
package's ``__init__`` is fine. Nothing is allowed twice: ``ALLOWED`` is empty,
and an entry there must say why the two are one name on purpose.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

CHECKER = Path(__file__).resolve().parents[1] / "src" / "embedding_cache_checker"

#: CapWords, not ALL_CAPS: a class or a type alias, not a constant.
TYPE_NAME = re.compile(r"^[A-Z][a-z0-9]\w*$")

#: Names two checker modules may both define, each with why. None today.
ALLOWED: dict[str, str] = {}


def type_names(source: str) -> set[str]:
    """The public class and type-alias names ``source`` defines at top level. O(len(source))."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if TYPE_NAME.match(name)}


def duplicates(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each type name defined by more than one module (name -> its modules, sorted),
    leaving out ``ALLOWED``. O(total source)."""
    where: dict[str, list[str]] = defaultdict(list)
    for module, source in sorted(sources.items()):
        for name in type_names(source):
            where[name].append(module)
    return {n: ms for n, ms in sorted(where.items()) if len(ms) > 1 and n not in ALLOWED}


def checker_sources() -> dict[str, str]:
    """Every module of the checker by dotted name, with its text. O(files)."""
    out = {}
    for path in sorted(CHECKER.rglob("*.py")):
        parts = path.relative_to(CHECKER.parent).with_suffix("").parts
        out[".".join(parts)] = path.read_text(encoding="utf-8")
    return out


def test_no_two_checker_modules_define_one_type_name() -> None:
    assert duplicates(checker_sources()) == {}


def test_a_planted_duplicate_is_caught() -> None:
    sources = checker_sources()
    assert "embedding_cache_checker.tlc.output" in sources
    # The collision issue 26 found: a TLC counterexample's state named like verify's step.
    sources["embedding_cache_checker.tlc.output"] += "\n\nclass Step:\n    pass\n"
    assert duplicates(sources) == {
        "Step": ["embedding_cache_checker.tlc.output", "embedding_cache_checker.verify.step_table"]
    }
    # A type alias counts as a type name; a constant and a private name do not.
    planted = "Outcome = int\nKEYS = 3\n_Row = tuple[int, int]\n"
    found = duplicates({"a": planted, "b": planted})
    assert found == {"Outcome": ["a", "b"]}


def test_every_allowed_duplicate_says_why_and_still_exists() -> None:
    where: dict[str, int] = defaultdict(int)
    for source in checker_sources().values():
        for name in type_names(source):
            where[name] += 1
    for name, why in ALLOWED.items():
        assert why.strip(), name
        assert where[name] > 1, f"{name} is allowed twice but no longer is: drop it"
