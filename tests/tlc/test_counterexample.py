"""Failures are named and shown as step tables, from captured real TLC outputs.

``data/counterexample/`` holds TLC 2.15 outputs of a deliberately broken
refinement (``MCBrokenRefinement``: fifo evicting one entry too many, checked
against ``CoreSpec``), a deliberately deadlocking model (``MCDeadlockDemo``)
and a distributed server's unnamed invariant violation, with the module
files they refer to (snapshots, so positions stay valid whatever tla/ does).
"""

from __future__ import annotations

from pathlib import Path

from embedding_cache.tlc.counterexample import (
    SourcePosition,
    enclosing_definition,
    explain_failure,
    identify_violation,
    parse_position,
    source_excerpt,
)

DATA = Path(__file__).parent / "data" / "counterexample"


def _read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


MODULE = """---- MODULE M ----
EXTENDS Naturals
\\* a comment
Inv == x > 0
Op(a, b) ==
    /\\ a = b
    /\\ x' = x
RECURSIVE F(_)
F(n) == IF n = 0 THEN 0 ELSE F(n - 1)
----
Spec == Init /\\ [][Next]_x
====
"""


def test_enclosing_definition_finds_the_definition_around_a_position() -> None:
    assert enclosing_definition(MODULE, 4, 9) == "Inv"
    assert enclosing_definition(MODULE, 7, 8) == "Op"
    assert enclosing_definition(MODULE, 9, 12) == "F"
    assert enclosing_definition(MODULE, 11, 17) == "Spec"
    assert enclosing_definition(MODULE, 2, 3) is None  # before any definition
    assert enclosing_definition(MODULE, 10, 1) is None  # a separator
    assert enclosing_definition(MODULE, 99, 1) is None


def test_position_and_excerpt() -> None:
    pos = parse_position("<Action line 11, col 16 to line 11, col 26 of module M>")
    assert pos == SourcePosition("M", 11, 16, 11, 26)
    assert source_excerpt(MODULE, pos) == "[][Next]_x"


def test_refinement_failure_is_named_and_shows_its_behaviour() -> None:
    raw = _read("refinement_violation.out")
    violation = identify_violation(raw, [DATA], ["CoreSpec"])
    assert violation is not None
    assert violation.kind == "action-property"
    assert violation.name == "CoreSpec = EmbeddingCache!Spec"
    assert violation.excerpt == "[][Next]_vars"
    text = explain_failure(raw, [DATA], ["CoreSpec"])
    assert text is not None
    assert text.startswith("Action property CoreSpec = EmbeddingCache!Spec is violated")
    # every step, named by its enclosing definition and the operation it did
    assert "CheckSpec: Alloc(k1, 0)" in text
    assert "CheckSpec: MarkReady(k1)" in text
    assert "CheckSpec: Alloc(k2, 3)" in text  # the step that evicted k1 although 3 were free
    assert "free' = {}" in text


def test_refinement_failure_without_properties_names_the_definition() -> None:
    violation = identify_violation(_read("refinement_violation.out"), [DATA])
    assert violation is not None and violation.name == "EmbeddingCache!Spec"
    # without the module files the position is still reported
    unknown = identify_violation(_read("refinement_violation.out"), [DATA / "absent"])
    assert unknown is not None and unknown.name is None and unknown.position is not None


def test_deadlock_shows_its_behaviour() -> None:
    text = explain_failure(_read("deadlock.out"), [DATA])
    assert text is not None
    assert text.startswith("Deadlock reached")
    assert "CacheAllocAny: Alloc(k2, 0)" in text
    assert text.count("\n   ") >= 2  # steps 1..3 in the table


def test_unnamed_distributed_violation_still_shows_its_behaviour() -> None:
    text = explain_failure(_read("distributed_invariant_server.out"), [DATA])
    assert text is not None
    assert "did not name" in text
    assert "Discard(k1)" in text


def test_invariant_and_pass_outputs() -> None:
    invariant = identify_violation("Error: Invariant TypeOK is violated.\n", [])
    assert invariant is not None and invariant.name == "TypeOK"
    assert identify_violation("Model checking completed. No error has been found.\n", []) is None
    assert explain_failure("Model checking completed. No error has been found.\n", []) is None
