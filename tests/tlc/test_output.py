"""The TLC output parser, on outputs recorded from real TLC runs (data/)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from embedding_cache_checker.tlc import jar
from embedding_cache_checker.tlc.output import TlcOutcome, parse_output

DATA = Path(__file__).parent / "data"


def _parse(name: str):  # type: ignore[no-untyped-def]
    return parse_output((DATA / name).read_text(encoding="utf-8"))


def test_pass_gives_statistics() -> None:
    out = _parse("pass_smoke.out")
    assert out.outcome is TlcOutcome.PASS
    assert out.violated is None
    assert out.distinct_states == 2293
    assert out.states_generated == 11849
    assert out.depth == 10
    assert out.version is not None and out.version.startswith("2.15")
    assert out.trace == []
    assert out.initial_states == 1


def test_initial_states_are_read_with_a_symmetry_and_without() -> None:
    """The inductive models' tables print them (``tlc.inductive``); with a SYMMETRY, TLC
    counts the distinct ones apart from those generated."""
    with_symmetry = (
        "Finished computing initial states: 37,396 states generated, with 6,308 of them "
        "distinct at 2026-12-06 02:01:34."
    )
    assert parse_output(with_symmetry).initial_states == 6308
    plain = (
        "Finished computing initial states: 5489 distinct states generated at 2026-12-06 01:43:04."
    )
    assert parse_output(plain).initial_states == 5489


def test_invariant_violation_names_invariant_and_trace() -> None:
    out = _parse("invariant_violation.out")
    assert out.outcome is TlcOutcome.INVARIANT
    assert out.violated == "BlockConservationInv"
    assert [s.action for s in out.trace] == ["Init", "Alloc", "DiscardKeepsBlocks"]
    init, alloc, discard = out.trace
    assert set(init.changed) == {"entries", "free", "queue", "evictable", "lastOp"}
    assert set(alloc.changed) == {"entries", "free", "lastOp"}
    # the defect: the discarded entry is gone but free did not grow back
    assert discard.changed["entries"] == "<< >>"
    assert "free" not in discard.changed
    assert out.distinct_states is not None and out.depth == 3


def test_action_property_violation() -> None:
    out = _parse("action_property_violation.out")
    assert out.outcome is TlcOutcome.ACTION_PROPERTY
    assert out.violated == "EvictOldestFirstProp"
    assert out.trace[0].action == "Init"
    assert out.trace[-1].action == "Alloc"
    assert all(s.number == i + 1 for i, s in enumerate(out.trace))


def test_temporal_violation_keeps_lasso() -> None:
    out = _parse("temporal_violation.out")
    assert out.outcome is TlcOutcome.TEMPORAL
    assert out.violated is None  # TLC does not name the property
    assert out.trace[-1].action.startswith("Back to state")
    assert "saver" in out.trace[0].state
    assert out.depth is not None


def test_parse_error() -> None:
    out = _parse("parse_error.out")
    assert out.outcome is TlcOutcome.PARSE_ERROR
    assert "Semantic errors" in out.message or "Parsing" in out.message
    assert out.trace == []


@pytest.mark.parametrize("text", ["", "TLC2 Version 2.15\nStarting...\n"])
def test_truncated_output_is_incomplete(text: str) -> None:
    assert parse_output(text).outcome is TlcOutcome.INCOMPLETE


def test_multiline_values_are_joined() -> None:
    text = (
        "Error: Invariant Foo is violated.\n"
        "Error: The behavior up to this point is:\n"
        "State 1: <Initial predicate>\n"
        "/\\ x = [a |-> 1,\n"
        "   b |-> 2]\n"
        "/\\ y = 0\n"
        "\n"
        "State 2: <Step line 3, col 1 to line 4, col 9 of module M>\n"
        "/\\ x = [a |-> 1,\n"
        "   b |-> 2]\n"
        "/\\ y = 1\n"
        "\n"
    )
    out = parse_output(text)
    assert out.trace[0].state["x"] == "[a |-> 1, b |-> 2]"
    assert out.trace[1].action == "Step"
    assert out.trace[1].changed == {"y": "1"}


def test_action_property_reported_by_position_keeps_its_behaviour() -> None:
    """A whole specification checked as a property (``CoreSpec == Core!Spec``) is
    reported by the position of its expansion: an action-property violation whose name
    ``counterexample`` finds, with the behaviour parsed like any other violation's."""
    out = parse_output((DATA / "counterexample" / "refinement_violation.out").read_text())
    assert out.outcome is TlcOutcome.ACTION_PROPERTY
    assert out.violated is None  # a position is no name
    assert [s.number for s in out.trace] == [1, 2, 3, 4]
    assert out.message.startswith("Error: Action property line 289, col 17")


def test_one_version_pattern_for_the_parser_and_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """The version probe (``jar.tlc_version``) and the parser read the same banner alike."""
    banner = "TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)\n"

    def fake_run(*_args: object, **_kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess([], 1, stdout=banner, stderr="")

    monkeypatch.setattr(subprocess, "run", fake_run)
    probed = jar.tlc_version(Path("java"), Path("tla2tools.jar"))
    assert probed == parse_output(banner).version == "2.15 of Day Month 20?? (rev: d5b5a7f)"
