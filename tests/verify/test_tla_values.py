"""parse_value / parse_state on the forms TLC prints, and on text they must refuse.

The printed forms below are copied from TLC's own output (its state dumps and
``PrintT``), e.g. ``entries = (k1 :> [blocks |-> {0}, pins |-> -1])`` and the
empty function ``<< >>``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from embedding_cache_checker.verify.tla_values import (
    ModelValue,
    TlaFunction,
    TlaParseError,
    parse_state,
    parse_value,
)

from .helpers import plain

# ---------------------------------------------------------------- scalars


@pytest.mark.parametrize(
    ("text", "want"), [("0", 0), ("42", 42), ("-1", -1), ("-17", -17), ("  7  ", 7)]
)
def test_integers(text: str, want: int) -> None:
    value = parse_value(text)
    assert value == want and type(value) is int


@pytest.mark.parametrize(("text", "want"), [("TRUE", True), ("FALSE", False)])
def test_booleans(text: str, want: bool) -> None:
    assert parse_value(text) is want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('"abc"', "abc"),
        ('""', ""),
        ('"none"', "none"),
        (r'"a\"b"', 'a"b'),  # TLC prints a quote as \"
        (r'"a\\b"', "a\\b"),  # and a backslash as \\
        (r'"q\"\\"', 'q"\\'),
        (r'"a\nb\tc"', "a\nb\tc"),
        ('"two words"', "two words"),
    ],
)
def test_strings(text: str, want: str) -> None:
    value = parse_value(text)
    assert value == want and type(value) is str


def test_non_ascii_string_as_tlc_prints_it() -> None:
    assert parse_value('"café"') == "café"


def test_model_value_is_a_str_equal_to_its_name() -> None:
    value = parse_value("k1")
    assert isinstance(value, ModelValue) and value == "k1" and value != "k2"
    # a model value and a string print differently but name the same key for the replay
    assert parse_value('"k1"') == value
    assert type(parse_value('"k1"')) is str


# ---------------------------------------------------------------- sets and sequences


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0..2", frozenset({0, 1, 2})),
        ("-1..1", frozenset({-1, 0, 1})),
        ("3..3", frozenset({3})),
        ("2..1", frozenset()),  # an empty interval
        ("{}", frozenset()),
        ("{0, 1, 2}", frozenset({0, 1, 2})),
        ("{2, 0}", frozenset({0, 2})),
        ('{"a", k1}', frozenset({"a", "k1"})),
        ("{{}, {1}}", frozenset({frozenset(), frozenset({1})})),
    ],
)
def test_sets_and_intervals(text: str, want: frozenset[object]) -> None:
    value = parse_value(text)
    assert value == want and isinstance(value, frozenset)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("<<>>", ()),
        ("<< >>", ()),  # how TLC prints an empty function
        ("<<k1>>", ("k1",)),
        ("<<1, 2, 1>>", (1, 2, 1)),  # order and repeats kept
        ('<<"a", <<>>, {1}>>', ("a", (), frozenset({1}))),
    ],
)
def test_sequences(text: str, want: tuple[object, ...]) -> None:
    value = parse_value(text)
    assert value == want and isinstance(value, tuple)


# ---------------------------------------------------------------- records and functions


def test_record_as_tlc_prints_lastop() -> None:
    value = parse_value('[n |-> 0, op |-> "Init", key |-> "none"]')
    assert isinstance(value, TlaFunction)
    assert dict(value) == {"n": 0, "op": "Init", "key": "none"}
    assert len(value) == 3 and list(value) == ["n", "op", "key"]


def test_function_with_model_value_keys() -> None:
    value = parse_value(
        "(k1 :> [blocks |-> {0}, pins |-> 0] @@ k2 :> [blocks |-> {1, 2}, pins |-> -1])"
    )
    assert isinstance(value, TlaFunction) and set(value) == {"k1", "k2"}
    k2 = value["k2"]
    assert isinstance(k2, TlaFunction)
    assert k2["blocks"] == frozenset({1, 2}) and k2["pins"] == -1
    assert plain(value) == {"k1": {"blocks": frozenset({0}), "pins": 0}, "k2": plain(k2)}
    with pytest.raises(KeyError):
        value["k3"]


def test_single_pair_function_and_non_name_keys() -> None:
    assert plain(parse_value("(k1 :> 1)")) == {"k1": 1}
    assert plain(parse_value('(1 :> "a" @@ 2 :> "b")')) == {1: "a", 2: "b"}
    assert plain(parse_value("(<<1, 2>> :> TRUE)")) == {(1, 2): True}


def test_function_is_read_only() -> None:
    value = parse_value("(k1 :> 1)")
    with pytest.raises(TypeError):
        value[ModelValue("k1")] = 2  # type: ignore[index]


def test_deeply_nested_value() -> None:
    text = '[a |-> <<(x :> {<<1, "s">>}), [b |-> FALSE]>>, c |-> 0..1]'
    value = parse_value(text)
    assert plain(value) == {
        "a": ({"x": frozenset({(1, "s")})}, {"b": False}),
        "c": frozenset({0, 1}),
    }


def test_set_of_records() -> None:
    assert parse_value("{[a |-> 1], [a |-> 2]}") == frozenset(
        {parse_value("[a |-> 1]"), parse_value("[a |-> 2]")}
    )


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "{1,",  # unclosed
        "<<1, 2",
        "[a |-> ]",  # field without a value
        "[a = 1]",  # '=' is not a record's separator
        "[a |-> 1",
        "(k1 :> )",
        "(k1 2)",  # a function pair without :>
        "1 2",  # trailing text
        "<<>> <<>>",
        "@",  # not a token
        "'a'",  # TLA+ strings use double quotes
        '"unterminated',
        "<<1, >>",
        "{,}",
        "}",
        "1..",
    ],
)
def test_malformed_values_raise_parse_error(text: str) -> None:
    with pytest.raises(TlaParseError):
        parse_value(text)


def test_parse_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="cannot read"):
        parse_value("#")


@pytest.mark.parametrize("text", ["{1 2 3}", "<<1 :> 2>>", "{1 @@ 2}", "[a |-> 1 @@ b |-> 2]"])
def test_wrong_separators_raise_parse_error(text: str) -> None:
    with pytest.raises(TlaParseError):
        parse_value(text)


def test_interval_with_non_integer_end_raises_parse_error() -> None:
    with pytest.raises(TlaParseError):
        parse_value("1..x")


# ---------------------------------------------------------------- states


def test_parse_state_as_in_a_dump_label() -> None:
    text = (
        "/\\ evictable = 1\n"
        '/\\ lastOp = [n |-> 0, op |-> "MarkReady", key |-> k1]\n'
        "/\\ free = {1, 2}\n"
        "/\\ queue = <<k1>>\n"
        "/\\ entries = (k1 :> [blocks |-> {0}, pins |-> 0])"
    )
    state = parse_state(text)
    assert list(state) == ["evictable", "lastOp", "free", "queue", "entries"]
    assert state["evictable"] == 1
    assert plain(state["lastOp"]) == {"n": 0, "op": "MarkReady", "key": "k1"}
    assert state["free"] == frozenset({1, 2})
    assert state["queue"] == ("k1",)
    assert plain(state["entries"]) == {"k1": {"blocks": frozenset({0}), "pins": 0}}


def test_parse_state_joins_values_spanning_lines() -> None:
    # TLC wraps long values in counterexamples, indenting the continuation lines.
    text = (
        "/\\ entries = ( k1 :> [blocks |-> {0}, pins |-> 0] @@\n"
        "  k2 :> [blocks |-> {1, 2}, pins |-> -1] )\n"
        "\n"
        "/\\ queue = <<k1>>\n"
    )
    state = parse_state(text)
    assert set(state) == {"entries", "queue"}
    entries = state["entries"]
    assert isinstance(entries, TlaFunction) and set(entries) == {"k1", "k2"}


def test_parse_state_empty_text_and_leading_noise() -> None:
    assert parse_state("") == {}
    assert parse_state("State 3: <Alloc line 130>\n/\\ x = TRUE") == {"x": True}


def test_parse_state_reports_a_bad_value() -> None:
    with pytest.raises(TlaParseError):
        parse_state("/\\ x = 1\n/\\ y = {1,")


def test_every_state_of_a_recorded_counterexample_parses() -> None:
    # A real TLC counterexample (tests/tlc/data), split into its "State n:" blocks.
    out = (
        Path(__file__).parent.parent / "tlc" / "data" / "action_property_violation.out"
    ).read_text()
    blocks = re.split(r"^State \d+: .*$", out, flags=re.M)[1:]
    assert len(blocks) >= 3
    for block in blocks:
        body = block.split("\n\n")[0]
        state = parse_state(body)
        assert set(state) == {"entries", "free", "queue", "evictable", "lastOp"}, body
        last = state["lastOp"]
        assert isinstance(last, TlaFunction) and set(last) == {"op", "key", "n"}


def test_state_of_one_variable_has_no_conjunction() -> None:
    # TLC prints a one-variable state as ``x = 3`` (no ``/\``), e.g. in -dump labels.
    assert parse_state("x = 3") == {"x": 3}
    assert parse_state("x = <<1,\n  2>>") == {"x": (1, 2)}
