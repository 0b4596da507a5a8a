"""One vocabulary: every invariant and property has one name, found in all four places.

spec/NAMES.md promises that ``grep -rn NAME`` finds each invariant and property
in spec/, tla/, the code (contracts, sweep, policies) and the tests. The names
are collected from the code and the manifest, never listed here: the sweep's
invariants, every name a contract reports under, every policy's order
property (the registry), and every property a TLC model must report violated.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from embedding_cache import EVICTION_POLICIES, contracts, invariants
from embedding_cache_checker.tlc.manifest import PASS, find_tla_dir, load_manifest

ROOT = Path(__file__).resolve().parent.parent
#: A name of an invariant or property, as NAMES.md spells them.
NAME = re.compile(r"\b[A-Z][A-Za-z]+(?:Inv|Prop|TypeOK)\b|\bTypeOK\b")
#: Names that are not modelled in TLA+, with the reason (spec/SPEC.md section 5).
NOT_IN_TLA = {"MisuseUnchangedProp": "misuse is not an action: a raising call changes nothing"}


def _liveness() -> set[str]:
    """The temporal properties (the liveness models'): checked in tla/ only, since
    Python checks finite runs (spec/NAMES.md, "Liveness")."""
    return {m.expect for m in load_manifest(find_tla_dir()) if "liveness" in m.tags} - {PASS}


def _names() -> set[str]:
    found = set(invariants.INVARIANTS)
    found |= set(NAME.findall(Path(contracts.__file__).read_text(encoding="utf-8")))
    found |= {cls.order_property for cls in EVICTION_POLICIES.values()}
    for model in load_manifest(find_tla_dir()):
        if model.expect != PASS:
            found.add(model.expect)
    return found


def _text(folder: str, suffixes: tuple[str, ...], skip: Path | None = None) -> str:
    return "\n".join(
        path.read_text(encoding="utf-8")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in suffixes and path.is_file() and path != skip
    )


PLACES = {
    "spec": _text("spec", (".md",)),
    "tla": _text("tla", (".tla", ".cfg")),
    "src": _text("src", (".py",)),
    "tests": _text("tests", (".py",), skip=Path(__file__).resolve()),
}


def test_the_names_are_collected_from_the_code_and_the_manifest() -> None:
    names = _names()
    assert {"BlockConservationInv", "EvictOnlyAsNeededProp", "HeldBlocksStableProp"} <= names
    assert all(cls.order_property in names for cls in EVICTION_POLICIES.values())
    assert {"PinReleasedProp", "SaveResolvesProp"} <= _liveness() <= names


def missing_places(name: str, places: dict[str, str]) -> list[str]:
    """The places (of ``places``) whose text does not name ``name`` as a word. O(text)."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    return [
        place
        for place, text in places.items()
        if not word.search(text)
        and not (place == "tla" and name in NOT_IN_TLA)
        and not (place in ("src", "tests") and name in _liveness())
    ]


@pytest.mark.parametrize("name", sorted(_names()))
def test_every_name_is_found_in_spec_tla_code_and_tests(name: str) -> None:
    assert missing_places(name, PLACES) == [], f"{name} is not named everywhere"


def test_a_name_spelled_differently_in_one_place_is_caught() -> None:
    """Non-vacuity: with the spec's spelling changed, the spec is reported as missing it."""
    renamed = {**PLACES, "spec": PLACES["spec"].replace("QuiescenceInv", "QuiescentInv")}
    assert missing_places("QuiescenceInv", renamed) == ["spec"]
