"""Parse the TLA+ values TLC prints (in state dumps and counterexamples) into Python.

Grammar covered: integers, strings, TRUE/FALSE, model values (bare names),
integer intervals ``a..b``, sets ``{...}``, sequences/tuples ``<<...>>``,
records ``[f |-> v, ...]`` and functions ``(k :> v @@ ...)``. Sets become
frozensets, sequences tuples, records and functions ``TlaFunction`` (a
read-only dict), model values ``ModelValue`` (a str subclass, so ``k1`` in a
dump and the key ``"k1"`` given to the cache compare equal).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Union

TlaValue = Union[int, str, bool, frozenset["TlaValue"], tuple["TlaValue", ...], "TlaFunction"]


class ModelValue(str):
    """A TLC model value such as ``k1``; equal to the str of its name."""

    __slots__ = ()


class TlaFunction(Mapping[object, "TlaValue"]):
    """A TLA+ function or record, as an immutable mapping."""

    __slots__ = ("_items",)

    def __init__(self, items: dict[object, TlaValue]) -> None:
        self._items = items

    def __getitem__(self, key: object) -> TlaValue:
        return self._items[key]

    def __iter__(self) -> Iterator[object]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"TlaFunction({self._items!r})"

    def __hash__(self) -> int:
        # TLA+ values are immutable, and sets of records occur (e.g. {[a |-> 1]}).
        return hash(frozenset(self._items.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other.items())
        return NotImplemented


class TlaParseError(ValueError):
    """The text is not a TLA+ value this parser knows."""


#: TLA+ string escapes (TLC prints other characters, non-ASCII included, as they are).
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r", "f": "\f"}


def _unescape_string(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


_TOKEN = re.compile(
    r"\s*(?:(?P<str>\"(?:[^\"\\]|\\.)*\")|(?P<int>-?\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op><<|>>|\|->|:>|@@|\.\.|[{}\[\](),]))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise TlaParseError(f"cannot read TLA+ value at {text[pos : pos + 30]!r}")
        kind = m.lastgroup
        assert kind is not None
        out.append((kind, m.group(kind)))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.text = text

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise TlaParseError(f"expected {value or 'a value'} in {self.text!r}")
        self.i += 1
        return tok

    def value(self) -> TlaValue:
        kind, tok = self.take()
        if kind == "int":
            start = int(tok)
            nxt = self.peek()
            if nxt is not None and nxt[1] == "..":
                self.take("..")
                end_kind, end = self.take()
                if end_kind != "int":
                    raise TlaParseError(f"interval {start}..{end} needs an integer end")
                return frozenset(range(start, int(end) + 1))
            return start
        if kind == "str":
            return _unescape_string(tok[1:-1])
        if kind == "name":
            if tok in ("TRUE", "FALSE"):
                return tok == "TRUE"
            return ModelValue(tok)
        if tok == "{":
            return frozenset(self._items("}"))
        if tok == "<<":
            return tuple(self._items(">>"))
        if tok == "[":
            return self._record()
        if tok == "(":
            return self._function()
        raise TlaParseError(f"unexpected {tok!r} in {self.text!r}")

    def _items(self, close: str) -> list[TlaValue]:
        items: list[TlaValue] = []
        tok = self.peek()
        if tok is not None and tok[1] == close:
            self.take(close)
            return items
        while True:
            items.append(self.value())
            if self._separator(close):
                return items

    def _record(self) -> TlaFunction:
        fields: dict[object, TlaValue] = {}
        while True:
            name = self.take()[1]
            self.take("|->")
            fields[name] = self.value()
            if self._separator("]"):
                return TlaFunction(fields)

    def _function(self) -> TlaFunction:
        pairs: dict[object, TlaValue] = {}
        while True:
            key = self.value()
            self.take(":>")
            pairs[key] = self.value()
            if self._separator(")", "@@"):
                return TlaFunction(pairs)

    def _separator(self, close: str, between: str = ",") -> bool:
        """Consume the separator after an item: True at ``close``, False at ``between``."""
        tok = self.take()[1]
        if tok == close:
            return True
        if tok != between:
            raise TlaParseError(f"expected {between!r} or {close!r}, got {tok!r} in {self.text!r}")
        return False


@lru_cache(maxsize=1 << 16)
def parse_value(text: str) -> TlaValue:
    """Parse one TLA+ value as TLC prints it. O(len(text)); a text parsed before is
    answered from a cache, since values are immutable: a state graph's 47,000 states
    (MCReplaySieve) print 466,000 variable lines, of which about 600 differ."""
    parser = _Parser(text)
    value = parser.value()
    if parser.peek() is not None:
        raise TlaParseError(f"trailing text after value in {text!r}")
    return value


_ASSIGNMENT = re.compile(r"^/\\\s*(\w+)\s*=\s*(.*)$")
#: A state of one variable is printed without the conjunction: ``var = value``.
_ONLY_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(.*)$")


def parse_state(text: str) -> dict[str, TlaValue]:
    """Parse a state as TLC prints it: lines ``/\\ var = value`` (values may span lines),
    or ``var = value`` for a state of one variable."""
    state: dict[str, TlaValue] = {}
    name: str | None = None
    buffer: list[str] = []
    for line in text.splitlines():
        m = _ASSIGNMENT.match(line.strip())
        if m is None and name is None and not state:
            m = _ONLY_ASSIGNMENT.match(line.strip())
        if m:
            if name is not None:
                state[name] = parse_value(" ".join(buffer))
            name, buffer = m.group(1), [m.group(2)]
        elif name is not None and line.strip():
            buffer.append(line.strip())
    if name is not None:
        state[name] = parse_value(" ".join(buffer))
    return state
