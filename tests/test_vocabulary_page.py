"""docs/VOCABULARY.md stays true of the checker: every module of
``src/embedding_cache_checker`` is named on it (as a backticked dotted name below the
package), every module it names exists, and no concept is named twice.

The page's backticked dotted names are also checked to resolve by
tests/test_vocabulary.py (its ``DOCS`` include ``docs/*.md``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "embedding_cache_checker"
PAGE = ROOT / "docs" / "VOCABULARY.md"
#: A table row's first cell, backticked: ``| `name` | ...``.
ROW = re.compile(r"^\| `([^`]+)` \|", re.M)


def checker_modules() -> set[str]:
    """Every module of the checker, by its dotted name below the package (the package
    itself as ``embedding_cache_checker``). O(files)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.add(".".join(parts) or "embedding_cache_checker")
    return found


def page_sections(text: str) -> tuple[str, str]:
    """The page's concepts part and its modules part."""
    concepts, _, modules = text.partition("\n## Modules")
    return concepts, modules


def test_every_checker_module_is_on_the_page_once_and_nothing_else() -> None:
    _, modules = page_sections(PAGE.read_text(encoding="utf-8"))
    named = ROW.findall(modules)
    assert len(named) == len(set(named)), "a module is listed twice"
    assert set(named) == checker_modules()


def test_no_concept_is_named_twice() -> None:
    concepts, _ = page_sections(PAGE.read_text(encoding="utf-8"))
    rows = [line.split("|") for line in concepts.splitlines() if line.startswith("|")]
    names = [row[1].strip().strip("`").lower() for row in rows]
    names = [n for n in names if n not in ("concept", "---")]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_a_missing_or_stale_module_is_caught() -> None:
    """Non-vacuity: a page that leaves a module out, or names one that is gone, fails."""
    _, modules = page_sections(PAGE.read_text(encoding="utf-8"))
    named = set(ROW.findall(modules))
    assert named - {"verify.replay"} != checker_modules()
    assert named | {"verify.repro"} != checker_modules()
