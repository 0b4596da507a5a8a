"""Failures are named and shown as step tables, from captured real TLC outputs.

``data/counterexample/`` holds TLC 2.15 outputs of a deliberately broken
refinement (``MCBrokenRefinement``: fifo evicting one entry too many, checked
against ``CoreSpec``), a deliberately deadlocking model (``MCDeadlockDemo``)
and a distributed server's unnamed invariant violation, with the module
files they refer to (snapshots, so positions stay valid whatever tla/ does).
``data/counterexample/glue/`` holds outputs of the spec as it is now (one glue
module reached through each policy's bare ``INSTANCE``): a broken refinement
checked on ``CacheSpec`` (``MCBrokenFifoRefinesCore``, every step labelled
with the ``INSTANCE`` line), the deadlock demo on ``CacheSpec`` and a
liveness counterexample (a lasso).
"""

from __future__ import annotations

from pathlib import Path

from embedding_cache_checker.tlc.counterexample import (
    SourcePosition,
    enclosing_definition,
    explain_failure,
    identify_violation,
    instance_action,
    instanced_module,
    operation_call,
    parse_position,
    source_excerpt,
)

DATA = Path(__file__).parent / "data" / "counterexample"
GLUE = DATA / "glue"


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
Last == x
INSTANCE Other
Core == INSTANCE Core WITH x <- 1
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
    assert enclosing_definition(MODULE, 13, 1) is None  # a bare INSTANCE ends Last
    assert enclosing_definition(MODULE, 14, 9) == "Core"  # a named instance is a definition


def test_instance_lines_name_the_module_they_import() -> None:
    assert instanced_module(MODULE, 13) == "Other"
    assert instanced_module(MODULE, 14) == "Core"
    assert instanced_module(MODULE, 12) is None
    assert instanced_module(MODULE, 99) is None


def test_operation_call_reads_last_op() -> None:
    assert operation_call('[n |-> 3, op |-> "Alloc", key |-> k2]') == ("Alloc", "Alloc(k2, 3)")
    assert operation_call('[op |-> "Unpin", key |-> k1, n |-> 0]') == ("Unpin", "Unpin(k1)")
    assert operation_call('[op |-> "Init", key |-> "none", n |-> 0]') is None
    assert operation_call("<<>>") is None


def test_instance_action_follows_the_glue_naming_rule() -> None:
    assert instance_action("EmbeddingCachePolicy", "Alloc", [GLUE]) == "CacheAlloc"
    assert instance_action("EmbeddingCachePolicy", "PinIfReady", [GLUE]) == "CachePinIfReady"
    assert instance_action("EmbeddingCache", "MarkReady", [GLUE]) == "MarkReady"
    assert instance_action("EmbeddingCachePolicy", "Nothing", [GLUE]) is None
    assert instance_action("Absent", "Alloc", [GLUE]) is None


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


def test_glue_refinement_failure_names_each_step_by_its_action() -> None:
    # TLC labels every step "line 44, col 1 to line 44, col 29 of module
    # EmbeddingCacheFifo": the policy module's INSTANCE EmbeddingCachePolicy.
    raw = _read("glue/refinement_violation.out")
    assert raw.count("line 44, col 1 to line 44, col 29 of module EmbeddingCacheFifo") == 3
    violation = identify_violation(raw, [GLUE], ["CoreSpec"])
    assert violation is not None and violation.kind == "action-property"
    assert violation.name == "CoreSpec = EmbeddingCache!Spec"
    text = explain_failure(raw, [GLUE], ["CoreSpec"])
    assert text is not None
    assert text.startswith("Action property CoreSpec = EmbeddingCache!Spec is violated")
    assert "CacheAlloc: Alloc(k1, 0)" in text
    assert "CacheMarkReady: MarkReady(k1)" in text
    assert "CacheAlloc: Alloc(k2, 3)" in text  # evicts k1 although 3 blocks were free
    assert "INSTANCE" not in text and "EmbeddingCacheFifo:44" not in text


def test_temporal_failure_shows_its_lasso_with_named_actions() -> None:
    raw = _read("glue/liveness_violation.out")
    violation = identify_violation(raw, [GLUE], ["SaveResolvesProp"])
    assert violation is not None and violation.kind == "temporal"
    assert violation.name == "SaveResolvesProp"
    text = explain_failure(raw, [GLUE], ["SaveResolvesProp"])
    assert text is not None
    assert text.startswith("Temporal property SaveResolvesProp is violated")
    assert "(TLC printed no behaviour)" not in text
    step2 = next(line for line in text.splitlines() if line.startswith("   2  "))
    # a callers' step that records no cache operation shows no stale one
    assert step2.split()[1:3] == ["SaverStart", "saver'"]
    assert "SaverAlloc: Alloc(k1, 3)" in text
    assert "SaverAllocFail: AllocFail(k2, 1)" in text
    assert "ReaderPinIfReady: PinIfReady(k1)" in text
    assert text.rstrip().endswith("Back to state 5")


def test_glue_deadlock_names_each_step_by_its_action() -> None:
    raw = _read("glue/deadlock.out")
    assert "of module EmbeddingCacheFifo>" in raw  # TLC's label: the INSTANCE line
    text = explain_failure(raw, [GLUE])
    assert text is not None
    assert text.startswith("Deadlock reached")
    assert "CacheAlloc: Alloc(k1, 0)" in text
    assert "CacheAlloc: Alloc(k2, 0)" in text
