"""The misuse matrix of spec/MISUSE.md: read from that file and checked cell by cell.

``spec/MISUSE.md`` holds one table cell per (method, argument kinds, lifecycle
state of the key), the lease calls' and alloc's shape included, with the outcome SPEC.md
requires: an error (exact class, family, message, attributes, and nothing
changed, leases included) or a result (and the key's state afterwards).
This module parses those tables at import, so the spec file and the test
cannot drift, and runs:

* ``test_cell``: every cell for every policy case (``POLICY_CASES``), in the
  build of this process;
* ``test_matrix_in_build``: this module again in child processes for the
  other builds (checked, full, default under ``python -O``), asserting each
  child ran every cell and failed none (a child never starts children);
* ``test_the_table_covers_*``: the tables cover every public method, every
  state, every argument kind the matrix promises, once each;
* ``test_planted_*``: each check of ``check_cell`` catches a planted bug
  (a transition swapped in through the cache's ``Transitions`` table, or,
  for alloc's shape, which the cache checks before its transition, a cache
  subclass).

Cost: one cell builds a 6-block cache and makes a handful of O(1) calls, so
the whole matrix is O(cells x policies).
"""

from __future__ import annotations

import builtins
import math
import operator
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from argument_kinds import Index, Size
from cache_observe import POLICY_CASES, observe

import embedding_cache
from embedding_cache import (
    EVICTION_POLICIES,
    CacheEntry,
    EmbeddingCache,
    ForeignLeaseError,
    Lease,
    LifecycleError,
    UnknownKeyError,
    transitions,
)
from embedding_cache.leases import lease_seconds
from embedding_cache.policies import PolicySpec
from embedding_cache.state import CacheState
from embedding_cache.verification import Transitions, lease_transitions, unpin_step

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SPEC = ROOT / "spec" / "MISUSE.md"

#: Set in every child process, so the build matrix does not recurse.
CHILD_FLAG = "EMBEDDING_CACHE_MISUSE_CHILD"
#: The build a child was asked for (``BUILD_NAME``, then ``-O`` if optimized).
EXPECT_FLAG = "EMBEDDING_CACHE_MISUSE_EXPECT"

#: Every build the matrix runs in, by the name ``_this_build`` gives it:
#: name -> (python flags, EMBEDDING_CACHE_CHECKED).
BUILDS: dict[str, tuple[list[str], str]] = {
    "default": ([], ""),
    "checked": ([], "1"),
    "full": ([], "full"),
    "default -O": (["-O"], ""),
}


def _this_build() -> str:
    """This process's build: ``BUILD_NAME``, plus " -O" under ``python -O``."""
    return embedding_cache.BUILD_NAME + (" -O" if sys.flags.optimize else "")


STATES = ("absent", "not-ready", "ready", "pinned(1)", "pinned(2)")
#: The well-formed key whose state the columns name.
KEY = "k"
#: The reading of every cell's clock: it stands still, so no lease is ever due.
NOW = 100.0
#: How long the leases the cells take beforehand last (``Granted``, ``Ended``, ``Foreign``).
LEASED_FOR = 5.0
#: The verb a lease call's messages name (the ``Lease`` handle's method names).
VERBS = {"lease": "lease", "renew_lease": "renew_lease", "release_lease": "release_lease"}


# --------------------------------------------------------------------------
# The names the tables' expressions may use (spec/MISUSE.md section 1).


class StrSub(str):
    """A subclass of str (like ``numpy.str_``): a well-formed key."""

    __slots__ = ()


class StrLike:
    """Not a str, but hashes and compares equal to one."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StrLike):
            return self.value == other.value
        return other == self.value

    def __repr__(self) -> str:
        return f"StrLike({self.value!r})"


# --------------------------------------------------------------------------
# Parsing spec/MISUSE.md.


def _tables(text: str) -> dict[str, list[list[str]]]:
    """Each ``<!-- misuse:NAME -->`` marker's table: its body rows, cells stripped of backticks."""
    tables: dict[str, list[list[str]]] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        marker = re.fullmatch(r"<!-- misuse:([a-z-]+) -->", line.strip())
        if marker is None:
            continue
        rows: list[list[str]] = []
        for row in lines[i + 1 :]:
            if not row.startswith("|"):
                if rows or row.strip():
                    break
                continue
            cells = [c.strip().replace("`", "") for c in row.strip().strip("|").split("|")]
            rows.append(cells)
        tables[marker.group(1)] = rows[2:] if len(rows) >= 2 else []  # drop header + rule
    return tables


def _leases(cache: EmbeddingCache | None) -> dict[str, Callable[[str], Lease]]:
    """The lease makers of section 1, taking their leases on ``cache`` (none without one)."""

    def need() -> EmbeddingCache:
        if cache is None:
            raise ValueError("spec/MISUSE.md: a lease expression outside a cell")
        return cache

    def granted(key: str) -> Lease:
        lease = need().lease(key, LEASED_FOR)
        assert lease is not None and lease.held, f"setup: no lease on {key!r}"
        return lease

    def ended(key: str) -> Lease:
        lease = granted(key)
        assert lease.release(), f"setup: the lease on {key!r} did not release"
        return lease

    def foreign(key: str) -> Lease:
        other = EmbeddingCache(1, clock=lambda: NOW)
        other.alloc(key, 1)
        other.mark_ready(key)
        lease = other.lease(key, LEASED_FOR)
        assert lease is not None
        return lease

    return {"Granted": granted, "Ended": ended, "Foreign": foreign}


def _names(pool: int, cache: EmbeddingCache | None = None) -> dict[str, Any]:
    return {
        "__builtins__": {},
        "N": pool,
        "StrSub": StrSub,
        "StrLike": StrLike,
        "Index": Index,
        "Size": Size,
        "nan": math.nan,
        "inf": math.inf,
        **_leases(cache),
    }


def _value(expr: str, pool: int, cache: EmbeddingCache | None = None) -> Any:
    """A key, count, lease or seconds as the table writes it (a Python expression over
    ``_names``; the lease makers take their leases on ``cache``)."""
    return eval(expr, _names(pool, cache))


@dataclass(frozen=True)
class ErrorSpec:
    """One row of the error table: what an error outcome must look like."""

    outcome: str
    exact: type[BaseException]
    family: tuple[type[BaseException], ...]
    message: str


@dataclass(frozen=True)
class Success:
    """A non-error outcome: the result, and the key's state after (None: nothing changes)."""

    result: str  # "None", "entry", "True", "False", "[]", "held lease" or "not-ready lease"
    state_after: str | None
    #: The key ``state_after`` is of: KEY, or another fixture key (``'bg'``).
    of: str = KEY


@dataclass(frozen=True)
class Deviation:
    """A row of section 5: cells where the code departs from SPEC.md, in some builds."""

    ident: str
    builds: frozenset[str]


@dataclass(frozen=True)
class Cell:
    """One cell of the matrix."""

    method: str
    key_expr: str | None  # None: the method takes no key (a lease call's: its lease)
    count_expr: str | None  # alloc's n_blocks, a lease call's seconds, else None
    state: str
    expect: str
    deviation: Deviation | None  # set when section 5 lists the cell
    shape_expr: str | None = None  # alloc's shape (section 4.5), else None: not passed

    def deviates_in(self, build_name: str) -> bool:
        """True when section 5 lists this cell for ``build_name``: a strict xfail there."""
        return self.deviation is not None and build_name in self.deviation.builds

    @property
    def id(self) -> str:
        exprs = (self.key_expr, self.count_expr, self.shape_expr)
        args = ", ".join(a for a in exprs if a is not None)
        return f"{self.method}({args})@{self.state}"


_SUCCESS = re.compile(
    r"(None|entry|True|False|\[\]|held lease|not-ready lease)"
    r"(?:, (unchanged)|(?:, '(\w+)')? → (absent|not-ready|ready|pinned\(\d+\)))"
)


def _class(name: str) -> type[BaseException]:
    found = getattr(embedding_cache, name, None) or getattr(builtins, name, None)
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        raise ValueError(f"spec/MISUSE.md names {name!r}, which is no exception class")
    return found


@dataclass(frozen=True)
class Matrix:
    """Everything spec/MISUSE.md says, parsed."""

    pool: int
    #: key, blocks, shape, state ("column" for KEY)
    fixture: tuple[tuple[str, int, tuple[int, int] | None, str], ...]
    errors: dict[str, ErrorSpec]
    cells: tuple[Cell, ...]

    def outcome(self, cell: Cell) -> ErrorSpec | Success:
        if cell.expect in self.errors:
            return self.errors[cell.expect]
        match = _SUCCESS.fullmatch(cell.expect)
        if match is None:
            raise ValueError(f"spec/MISUSE.md: {cell.id}: unknown outcome {cell.expect!r}")
        if match.group(2):
            return Success(match.group(1), None)
        return Success(match.group(1), match.group(4), match.group(3) or KEY)


def _split(cell: str) -> list[str]:
    return [part.strip() for part in cell.split(",") if part.strip()]


def _deviations(rows: list[list[str]]) -> dict[tuple[str, str, str | None, str], Deviation]:
    """(method, key, count or None, state) -> its deviation, for section 5's cells."""
    found: dict[tuple[str, str, str | None, str], Deviation] = {}
    for ident, methods, key, counts, states, builds, _what in rows:
        chosen = set(BUILDS) if builds == "all" else set(_split(builds))
        assert chosen <= set(BUILDS), f"spec/MISUSE.md {ident}: unknown builds {chosen}"
        deviation = Deviation(ident, frozenset(chosen))
        for method in _split(methods):
            chosen_counts: list[str | None] = [*_split(counts)] or [None]
            for count in chosen_counts:
                for state in _split(states):
                    assert (method, key, count, state) not in found, f"{ident}: listed twice"
                    found[method, key, count, state] = deviation
    return found


def load(path: Path = SPEC) -> Matrix:
    """Parse spec/MISUSE.md. O(size of the file)."""
    text = path.read_text(encoding="utf-8")
    tables = _tables(text)
    pool_line = text.split("<!-- misuse:pool -->", 1)[1]
    pool_match = re.search(r"`N = (\d+)`", pool_line)
    assert pool_match is not None, "spec/MISUSE.md: no `N = ...` after the pool marker"
    pool = int(pool_match.group(1))
    fixture = tuple(
        (
            _value(key, pool),
            int(blocks),
            _value(shape, pool),
            state if state in STATES else "column",
        )
        for key, blocks, shape, state in tables["fixture"]
    )
    errors = {}
    for outcome, exact, family, message in tables["errors"]:
        errors[outcome] = ErrorSpec(
            outcome,
            _class(exact),
            tuple(_class(f.strip()) for f in family.split(",") if f.strip()),
            message,
        )
    deviations = _deviations(tables["deviations"])
    cells: list[Cell] = []

    def add(
        method: str, key: str | None, count: str | None, outcomes: list[str], shape: str = ""
    ) -> None:
        assert len(outcomes) == len(STATES), f"spec/MISUSE.md: {method} {key}: need 5 columns"
        for state, expect in zip(STATES, outcomes, strict=True):
            # Section 5 lists no shape cells (its columns have no shape).
            dev = deviations.pop((method, key, count, state), None) if key and not shape else None
            cells.append(Cell(method, key, count, state, expect, dev, shape or None))

    for method, key, _kind, *outcomes in tables["keyed"]:
        add(method, key, None, outcomes)
    for key, count, _kind, *outcomes in tables["alloc"]:
        add("alloc", key, count, outcomes)
    for key, count, shape, _kind, *outcomes in tables["shape"]:
        add("alloc", key, count, outcomes, shape)
    for method, *outcomes in tables["no-argument"]:
        add(method, None, None, outcomes)
    for key, seconds, _kind, *outcomes in tables["lease"]:
        add("lease", key, seconds, outcomes)
    for lease, seconds, _kind, *outcomes in tables["renew"]:
        add("renew_lease", lease, seconds, outcomes)
    for lease, _kind, *outcomes in tables["release"]:
        add("release_lease", lease, None, outcomes)
    assert not deviations, f"spec/MISUSE.md section 5 lists cells the matrix lacks: {deviations}"
    matrix = Matrix(pool, fixture, errors, tuple(cells))
    for cell in cells:
        matrix.outcome(cell)  # every outcome parses
    return matrix


MATRIX = load()


# --------------------------------------------------------------------------
# Running one cell.


class MismatchError(AssertionError):
    """A cell's outcome differs from spec/MISUSE.md; ``check`` names the failed check."""

    def __init__(self, cell: Cell, check: str, detail: str) -> None:
        self.check = check
        super().__init__(f"{cell.id}: expected {cell.expect!r}; {check}: {detail}")


def build(
    eviction: PolicySpec,
    state: str,
    matrix: Matrix = MATRIX,
    cls: type[EmbeddingCache] = EmbeddingCache,
) -> EmbeddingCache:
    """The cell's cache (a ``cls``): the fixture of spec/MISUSE.md with KEY in ``state``,
    its clock standing at NOW. O(N)."""
    cache = cls(matrix.pool, eviction=eviction, clock=lambda: NOW)
    for key, blocks, shape, fixed in matrix.fixture:
        target = state if fixed == "column" else fixed
        if target == "absent":
            continue
        assert cache.alloc(key, blocks, shape) is not None, f"setup: alloc({key!r}) did not fit"
        if target != "not-ready":
            cache.mark_ready(key)
        pins = re.fullmatch(r"pinned\((\d+)\)", target)
        for _ in range(int(pins.group(1)) if pins else 0):
            cache.pin(key)
    return cache


def state_of(cache: EmbeddingCache, key: str) -> str:
    entry = cache._state.entries.get(key)
    return "absent" if entry is None else entry.state_name()


def lease_book(cache: EmbeddingCache) -> tuple[Any, ...]:
    """The cache's leases as section 2 observes them: every live lease's id, key,
    deadline and held flag, the heap in order, the count per key, the last expiry time
    and the next lease id. O(leases)."""
    book = cache._state.leases
    live = tuple(sorted((i, x.key, x.deadline, x.held) for i, x in book.live.items()))
    return live, tuple(book.heap), tuple(sorted(book.per_key.items())), book.now, book.next_id


def _loose(book: tuple[Any, ...], method: str) -> tuple[Any, ...]:
    """What a call that changes nothing keeps of ``lease_book``: all but the next id (a
    not-ready lease takes one), and for a renewal all but its deadline and heap pair."""
    live, heap, per_key, now, _next_id = book
    if method == "renew_lease":
        return tuple((i, key, held) for i, key, _deadline, held in live), per_key, now
    return live, heap, per_key, now


def _expect(ok: bool, cell: Cell, check: str, detail: str) -> None:
    if not ok:
        raise MismatchError(cell, check, detail)


def _shape_names(shape: Any) -> dict[str, Any]:
    """The shape's names in section 3's messages: its type and length, its items'
    types and values (an ``__index__`` item as the int it stands for)."""
    items = tuple(shape) if isinstance(shape, tuple) else ()
    return {
        "shape_type": type(shape).__name__,
        "shape_len": len(items),
        "dim_types": tuple(type(d).__name__ for d in items),
        "dims": tuple(operator.index(d) if hasattr(d, "__index__") else d for d in items),
    }


def check_error(
    cell: Cell,
    spec: ErrorSpec,
    exc: BaseException | None,
    key: Any,
    n: Any,
    pool: int,
    shape: Any = None,
) -> None:
    """The raised error is the spec's: exact class, family, message, attributes."""
    _expect(exc is not None, cell, "no error", "the call returned normally")
    assert exc is not None
    _expect(type(exc) is spec.exact, cell, "class", f"raised {type(exc).__name__}: {exc}")
    for base in spec.family:
        _expect(isinstance(exc, base), cell, "family", f"{type(exc).__name__} is no {base}")
    message = spec.message.format(
        key=key,
        state=cell.state,
        method=cell.method,
        key_type=type(key).__name__,
        n_type=type(n).__name__,
        n=n,
        N=pool,
        verb=VERBS.get(cell.method, cell.method),
        lease_key=key.key if isinstance(key, Lease) else None,
        **_shape_names(shape),
    )
    _expect(str(exc) == message, cell, "message", f"{str(exc)!r} != {message!r}")
    if isinstance(exc, ForeignLeaseError):
        ok = isinstance(key, Lease) and exc.key == key.key
        _expect(ok, cell, "attributes", repr(exc.__dict__))
    if isinstance(exc, LifecycleError):
        _expect(exc.key == key and exc.state == cell.state, cell, "attributes", repr(exc.__dict__))
    if isinstance(exc, UnknownKeyError):
        ok = exc.key == key and exc.operation == cell.method and exc.args == (key,)
        _expect(ok, cell, "attributes", f"{exc.__dict__!r}, args={exc.args!r}")


def check_cell(cache: EmbeddingCache, cell: Cell, matrix: Matrix = MATRIX) -> None:
    """Make the cell's call on ``cache`` (built by ``build``) and compare with the spec.

    Raises MismatchError naming the first check that fails. O(N + entries).
    """
    spec = matrix.outcome(cell)
    pool = matrix.pool
    key = _value(cell.key_expr, pool, cache) if cell.key_expr is not None else None
    n = _value(cell.count_expr, pool, cache) if cell.count_expr is not None else None
    shape = _value(cell.shape_expr, pool) if cell.shape_expr is not None else None
    passed = ((key, cell.key_expr), (n, cell.count_expr), (shape, cell.shape_expr))
    args = [a for a, expr in passed if expr is not None]
    before = observe(cache)
    leases_before = lease_book(cache)
    entry_before = cache._state.entries.get(KEY)
    exc: BaseException | None = None
    result: object = None
    try:
        result = getattr(cache, cell.method)(*args)
    except Exception as raised:
        exc = raised
    if isinstance(spec, ErrorSpec):
        check_error(cell, spec, exc, key, n, matrix.pool, shape)
        _expect(observe(cache) == before, cell, "state changed", "after the error")
        leases = lease_book(cache)
        _expect(
            leases == leases_before, cell, "state changed", f"leases {leases_before} -> {leases}"
        )
    else:
        _expect(exc is None, cell, "raised", f"{type(exc).__name__}: {exc}")
        check_result(cell, spec, cache, result, entry_before, key, n, shape)
        if spec.state_after is None:
            _expect(observe(cache) == before, cell, "state changed", "after a no-op call")
            kept = _loose(lease_book(cache), cell.method)
            unchanged = kept == _loose(leases_before, cell.method)
            _expect(unchanged, cell, "state changed", "the live leases, after a no-op")
        else:
            after = state_of(cache, spec.of)
            _expect(after == spec.state_after, cell, "state after", f"{spec.of!r} is {after}")
            if spec.of != KEY:
                now = state_of(cache, KEY)
                _expect(now == cell.state, cell, "state after", f"{KEY!r} is {now}")
    try:
        cache.check()
    except AssertionError as broken:
        raise MismatchError(cell, "invariants", str(broken)) from None


def check_result(
    cell: Cell,
    spec: Success,
    cache: EmbeddingCache,
    result: object,
    entry_before: CacheEntry | None,
    key: Any,
    n: Any,
    shape: Any = None,
) -> None:
    """The result is the one the cell names (a renewal's: the deadline it moved)."""
    if spec.result in ("held lease", "not-ready lease"):
        entry = cache._state.entries.get(KEY)
        ok = _is_lease_on(result, entry, key, n, held=spec.result == "held lease")
        _expect(ok, cell, "result", f"returned {result!r}, entry {entry!r}")
    elif spec.result == "[]":
        _expect(result == [] and isinstance(result, list), cell, "result", f"returned {result!r}")
    elif spec.result == "entry":
        live = cache._state.entries.get(KEY)
        detail = f"returned {result!r}, live entry {live!r}, before {entry_before!r}"
        if not isinstance(result, CacheEntry) or result is not live:
            raise MismatchError(cell, "result", detail)
        if cell.method == "alloc":  # a new entry, of n blocks, with the shape as stored
            ok = entry_before is None and len(result.block_ids) == operator.index(n)
            ok = ok and stored_shape(result.shape, shape)
        else:  # the entry that was there
            ok = result is entry_before
        _expect(ok, cell, "result", detail)
    else:
        want = {"None": None, "True": True, "False": False}[spec.result]
        _expect(result is want, cell, "result", f"returned {result!r}")
    if cell.method == "renew_lease" and isinstance(key, Lease):
        # True moved the deadline to now + seconds; an ended lease keeps the one it had.
        deadline = NOW + float(n) if result is True else NOW + LEASED_FOR
        _expect(key.deadline == deadline, cell, "result", f"deadline {key.deadline}")


def _is_lease_on(result: object, entry: CacheEntry | None, key: Any, n: Any, held: bool) -> bool:
    """``result`` is a lease on ``entry`` (its key, block ids and shape), held for ``n``
    seconds from NOW when ``held``, else not-ready, holding nothing. O(1)."""
    return (
        isinstance(result, Lease)
        and entry is not None
        and result.key == key
        and result.block_ids == entry.block_ids
        and result.shape == entry.shape
        and result.ready is held
        and result.held is held
        and result.deadline == (NOW + float(n) if held else None)
    )


def stored_shape(kept: object, given: object) -> bool:
    """``kept`` is how section 4.5 stores ``given``: None for None; ``given`` itself
    for a plain tuple of two plain ints; else a new plain tuple of plain ints. O(1)."""
    if given is None:
        return kept is None
    assert isinstance(given, tuple)
    plain = (operator.index(given[0]), operator.index(given[1]))
    if type(given) is tuple and all(type(d) is int for d in given):
        return kept is given
    return type(kept) is tuple and all(type(d) is int for d in kept) and kept == plain


# --------------------------------------------------------------------------
# The matrix.


def _cell_params() -> Iterator[Any]:
    for cell in MATRIX.cells:
        marks = []
        if cell.deviation is not None and cell.deviates_in(_this_build()):
            reason = f"spec/MISUSE.md section 5, deviation {cell.deviation.ident}"
            marks.append(pytest.mark.xfail(raises=MismatchError, strict=True, reason=reason))
        yield pytest.param(cell, marks=marks, id=cell.id)


@pytest.mark.parametrize("cell", list(_cell_params()))
def test_cell(cell: Cell) -> None:
    """One cell of spec/MISUSE.md, for every policy case (one pytest item per cell keeps
    the run short: pytest's per-item cost is ~10x a cell's). A listed deviation must
    fail for every policy."""
    failed: dict[str, MismatchError] = {}
    for policy, eviction in POLICY_CASES.items():
        try:
            check_cell(build(eviction, cell.state), cell)
        except MismatchError as mismatch:
            failed[policy] = mismatch
    if cell.deviation is not None and cell.deviates_in(_this_build()):
        held = sorted(set(POLICY_CASES) - set(failed))
        ident = cell.deviation.ident
        assert not held, f"{cell.id}: deviation {ident} does not occur for {held}"
    if failed:
        first = next(iter(failed.values()))
        raise MismatchError(cell, first.check, f"policies {sorted(failed)}: {first}")


# --------------------------------------------------------------------------
# The table's coverage: what the matrix promises, each once.

KEY_KINDS = {"'k'", "StrSub('k')", "1", "None", "b'k'", "('k',)", "['k']", "StrLike('k')"}
COUNT_KINDS = {"1", "0", "N - 1", "N", "N + 1", "10**30", "Index(1)", "-1", "True", "False"}
COUNT_KINDS |= {"1.0", "'1'", "None"}
SECONDS_KINDS = {"5", "0", "2.5", "-1", "-0.5", "nan", "inf", "-inf", "10**400", "Index(5)"}
SECONDS_KINDS |= {"'5'", "None", "True", "False"}
LEASE_KINDS = {"Granted('bg')", "Ended('bg')", "Foreign('k')", "None", "'k'", "1"}
#: alloc's shapes (spec/MISUSE.md section 4.5): well-formed, then refused.
GOOD_SHAPES = {"None", "(3, 4)", "(0, 0)", "(10**30, 10**30)", "(Index(3), Index(4))"}
GOOD_SHAPES |= {"Size((3, 4))"}
BAD_SHAPES = {"(-1, 4)", "(3, -1)", "(-1, -1)", "(Index(-1), 4)", "()", "(3,)", "(3, 4, 5)"}
BAD_SHAPES |= {"(3.0, 4, 5)", "(3.0, 4)", "(3, 4.0)", "(True, 4)", "(3, False)", "(3, '4')"}
BAD_SHAPES |= {"(None, 4)", "(-1, 4.0)", "[3, 4]", "'34'", "3"}
#: The shape outcomes, one per error of section 3 a shape can get.
SHAPE_ERRORS = {"TypeError(shape)", "ValueError(shape)"}
SHAPE_ERRORS |= {f"{kind}(shape[{i}])" for kind in ("TypeError", "ValueError") for i in (0, 1)}
#: The methods whose first argument is a lease, not a key.
LEASE_TAKING = {"release_lease", "renew_lease"}


def _public_methods() -> set[str]:
    return {
        name
        for name, value in vars(EmbeddingCache).items()
        if not name.startswith("_") and callable(value)
    }


def test_the_table_covers_every_public_method_and_state_once() -> None:
    assert {cell.method for cell in MATRIX.cells} == _public_methods()
    ids = [cell.id for cell in MATRIX.cells]
    assert len(ids) == len(set(ids)), "a cell appears twice"
    by_call: dict[tuple[str, str | None, str | None], set[str]] = {}
    for cell in MATRIX.cells:
        by_call.setdefault((cell.method, cell.key_expr, cell.count_expr), set()).add(cell.state)
    assert all(states == set(STATES) for states in by_call.values())


def _seconds(method: str, first: str) -> set[str | None]:
    return {c.count_expr for c in MATRIX.cells if c.method == method and c.key_expr == first}


def test_the_table_covers_every_argument_kind() -> None:
    no_key = {"has_held_entries", "check", "expire_leases"}
    for method in _public_methods() - no_key - LEASE_TAKING:
        keys = {c.key_expr for c in MATRIX.cells if c.method == method}
        assert keys == KEY_KINDS, method
    for key in KEY_KINDS:
        counts = {c.count_expr for c in MATRIX.cells if c.method == "alloc" and c.key_expr == key}
        assert counts == COUNT_KINDS, key
    # lease: every kind of seconds for a well-formed key; well-formed and negative for the rest.
    for key in KEY_KINDS:
        well_formed = key in ("'k'", "StrSub('k')")
        assert _seconds("lease", key) == (SECONDS_KINDS if well_formed else {"5", "-1"}), key
    for method in LEASE_TAKING:
        leases = {c.key_expr for c in MATRIX.cells if c.method == method}
        assert leases == LEASE_KINDS, method
    for lease in LEASE_KINDS:
        own = lease in ("Granted('bg')", "Ended('bg')")
        assert _seconds("renew_lease", lease) == (SECONDS_KINDS if own else {"5", "-1"}), lease
        assert _seconds("release_lease", lease) == {None}, lease
    assert set(EVICTION_POLICIES) <= set(POLICY_CASES)


def _shapes(key: str, count: str) -> set[str | None]:
    return {
        c.shape_expr
        for c in MATRIX.cells
        if c.shape_expr is not None and (c.key_expr, c.count_expr) == (key, count)
    }


def test_the_shape_table_covers_every_shape_and_every_order() -> None:
    """Section 4.5: every shape kind with a well-formed key and count; every other key
    and count kind once with ``(3, 4)`` and once with a bad shape; every shape error."""
    assert GOOD_SHAPES.isdisjoint(BAD_SHAPES)
    assert _shapes("'k'", "1") == GOOD_SHAPES | BAD_SHAPES
    others = {(key, "1") for key in KEY_KINDS} | {("'k'", count) for count in COUNT_KINDS}
    for key, count in others - {("'k'", "1")}:
        shapes = _shapes(key, count)
        assert len(shapes) == 2 and "(3, 4)" in shapes, (key, count, shapes)
        assert shapes - {"(3, 4)"} <= BAD_SHAPES, (key, count, shapes)
    pairs = {(c.key_expr, c.count_expr) for c in MATRIX.cells if c.shape_expr is not None}
    assert pairs == others
    assert {c.method for c in MATRIX.cells if c.shape_expr is not None} == {"alloc"}
    outcomes = {c.expect for c in MATRIX.cells if c.shape_expr is not None}
    assert outcomes >= SHAPE_ERRORS
    assert set(MATRIX.errors) >= SHAPE_ERRORS


def test_the_size_section_adds_up() -> None:
    """Section 6's figures are the parsed table's: cells and builds as numbers, the
    policy cases as the registry's policies plus one (so a new policy edits no figure)."""
    text = SPEC.read_text(encoding="utf-8")
    rows = {name: (value, how) for name, value, how, *_ in _tables(text)["size"]}
    assert set(rows) == {"cells", "policy cases", "builds", "cases"}
    assert int(rows["cells"][0].replace(",", "")) == len(MATRIX.cells)
    assert int(rows["builds"][0]) == len(BUILDS)
    assert rows["policy cases"][0] == "policies + 1"
    assert len(POLICY_CASES) == len(EVICTION_POLICIES) + 1
    assert rows["cases"] == (
        "cells x policy cases x builds",
        f"{len(MATRIX.cells)} x (policies + 1) x {len(BUILDS)}",
    )


def test_the_error_table_matches_the_error_classes() -> None:
    """Every lifecycle error's message template carries its class's phrase."""
    for spec in MATRIX.errors.values():
        if issubclass(spec.exact, LifecycleError):
            assert f": {spec.exact.phrase} for key " in spec.message, spec.outcome
            assert set(spec.family) == {LifecycleError, embedding_cache.CacheError, AssertionError}


# --------------------------------------------------------------------------
# The other builds, in child processes.

#: The builds a child runs: all but the one this process is (which test_cell covers).
OTHER_BUILDS = [name for name in BUILDS if name != _this_build()]


def test_build_is_the_one_asked_for() -> None:
    """In a child: the build it asked for is the one it got (a no-op in the parent)."""
    expected = os.environ.get(EXPECT_FLAG, _this_build())
    assert _this_build() == expected
    assert hasattr(transitions.alloc, "__postconditions__") == embedding_cache.CHECKED


@pytest.fixture(scope="module")
def children() -> Iterator[dict[str, subprocess.Popen[str]]]:
    """Start one child per other build, side by side."""
    procs = {}
    for name in OTHER_BUILDS:
        flags, checked = BUILDS[name]
        env = dict(os.environ)
        env.update({CHILD_FLAG: "1", "EMBEDDING_CACHE_CHECKED": checked, EXPECT_FLAG: name})
        cmd = [sys.executable, *flags, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        cmd += [f"{__file__}::test_cell", f"{__file__}::test_build_is_the_one_asked_for"]
        procs[name] = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    yield procs
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def expected_counts(build_name: str) -> tuple[int, int]:
    """(passed, xfailed) a child must report: every cell (each for every policy), plus one."""
    deviating = sum(cell.deviates_in(build_name) for cell in MATRIX.cells)
    return len(MATRIX.cells) - deviating + 1, deviating


@pytest.mark.skipif(os.environ.get(CHILD_FLAG) == "1", reason="inside a misuse-matrix child")
@pytest.mark.parametrize("build_name", OTHER_BUILDS)
def test_matrix_in_build(build_name: str, children: dict[str, subprocess.Popen[str]]) -> None:
    """The child for ``build_name`` ran every cell for every policy, as the parent counts them."""
    proc = children[build_name]
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"{build_name} build failed:\n{out}"
    summary = out.strip().splitlines()[-1]
    found = re.findall(r"(\d+) (\w+)", summary.split(" in ")[0])
    # (pytest warns under -O that plugins' asserts are off; the tests' own are rewritten.)
    counts = {word: int(num) for num, word in found if not word.startswith("warning")}
    passed, xfailed = expected_counts(build_name)
    want = {"passed": passed, **({"xfailed": xfailed} if xfailed else {})}
    assert counts == want, f"{build_name}: expected {want}, got {summary!r}:\n{out[-3000:]}"


# --------------------------------------------------------------------------
# Each check catches a planted bug.


def _planted(
    eviction: PolicySpec,
    state: str,
    cls: type[EmbeddingCache] = EmbeddingCache,
    **overrides: Callable[..., Any],
) -> EmbeddingCache:
    cache = build(eviction, state, cls=cls)
    cache._ops = Transitions(overrides)
    return cache


def _unpin_decrements_first(s: CacheState, key: str) -> None:
    """Writes before it checks: the pin count drops, then the error is raised."""
    entry = s.entries[key]
    state = entry.state_name()
    entry._pin_count -= 1  # the bug: the check below should come first
    if entry._pin_count < 0:
        raise embedding_cache.NotPinnedError(key, state)
    entry._pin_count += 1
    transitions.unpin(s, key)


def _discard_plain_assert(s: CacheState, key: str) -> None:
    """The seed's bare assert: right family, wrong class."""
    entry = s.entries.get(key)
    if entry is not None and entry._pin_count != -1:
        raise AssertionError("discard of ready/pinned entry")
    transitions.discard(s, key)


def _mark_ready_wrong_state(s: CacheState, key: str) -> None:
    """Names a fixed state in its error, whatever the entry's."""
    entry = s.entries.get(key)
    if entry is not None and entry._pin_count != -1:
        raise embedding_cache.AlreadyReadyError(key, "ready")
    transitions.mark_ready(s, key)


def _pin_wrong_attribute(s: CacheState, key: str) -> None:
    """The right message, but ``.state`` rewritten afterwards."""
    try:
        transitions.pin(s, key)
    except LifecycleError as exc:
        exc.state = "absent"
        raise


def _alloc_duplicate_first(s: CacheState, key: str, n_blocks: int) -> Any:
    """Checks duplicate before the count's type (the order of SPEC.md 3 broken)."""
    entry = s.entries.get(key) if isinstance(key, str) else None
    if entry is not None:
        raise embedding_cache.DuplicateAllocError(key, entry.state_name())
    return transitions.alloc(s, key, n_blocks)


def _alloc_fail_fast_first(s: CacheState, key: str, n_blocks: int) -> Any:
    """Fails fast before checking capacity: None instead of CapacityError."""
    if type(n_blocks) is int and n_blocks > len(s.free) + s.evictable_blocks:
        return None
    return transitions.alloc(s, key, n_blocks)


def _pin_if_ready_none_for_not_ready(s: CacheState, key: str) -> Any:
    """Reports a save in flight as a miss."""
    entry = transitions.get(s, key)
    return None if entry is not None and entry._pin_count < 0 else transitions.pin_if_ready(s, key)


def _unpin_releases_all(s: CacheState, key: str) -> None:
    """Drops every pin at once."""
    entry = s.entries.get(key)
    while entry is not None and entry._pin_count > 1:
        entry._pin_count -= 1
    transitions.unpin(s, key)


def _discard_leaks(s: CacheState, key: str) -> None:
    """Forgets to free the discarded entry's blocks (caught by the invariant sweep)."""
    entry = s.entries.get(key)
    transitions.discard(s, key)
    if entry is not None:
        s.free.take(len(entry.block_ids))  # the stack's top: the ids just freed


def _get_counts_a_hit(s: CacheState, key: str) -> Any:
    """A lookup that counts as a use (SPEC.md 4.7: get refreshes nothing)."""
    entry = transitions.get(s, key)
    if entry is not None and s.on_hit is not None:
        s.on_hit(key)
    return entry


def _get_swallows_bad_keys(s: CacheState, key: str) -> Any:
    """Treats a key of the wrong type as a miss."""
    try:
        return transitions.get(s, key)
    except TypeError:
        return None


def _pin_if_ready_raises_not_ready(s: CacheState, key: str) -> Any:
    """Raises like ``pin`` for a save in flight, instead of returning the entry."""
    entry = transitions.get(s, key)
    if entry is not None and entry._pin_count < 0:
        raise embedding_cache.NotReadyError(key, entry.state_name())
    return transitions.pin_if_ready(s, key)


def _lease_drops_the_shape(s: CacheState, key: str, seconds: float, now: float, owner: Any) -> Any:
    """A lease without its entry's shape: the load dispatched from it cannot restore one."""
    granted = lease_transitions.lease(s, key, seconds, now, owner)
    if isinstance(granted, Lease):
        granted.shape = None
    return granted


def _lease_pins_first(s: CacheState, key: str, seconds: float, now: float, owner: Any) -> Any:
    """Pins the entry, then validates the seconds: the pin stays behind the error."""
    entry = s.entries.get(key) if isinstance(key, str) else None
    if entry is not None and entry._pin_count >= 0:
        entry._pin_count += 1  # the bug: the validation below should come first
        lease_seconds(seconds, "lease")  # raises with the pin taken
        entry._pin_count -= 1
    return lease_transitions.lease(s, key, seconds, now, owner)


def _lease_accepts_infinity(s: CacheState, key: str, seconds: float, now: float, owner: Any) -> Any:
    """Takes an infinite lease as a plain pin (no ValueError)."""
    if isinstance(seconds, float) and math.isinf(seconds) and seconds > 0:
        seconds = 1e300
    return lease_transitions.lease(s, key, seconds, now, owner)


def _lease_books_a_not_ready_lease(
    s: CacheState, key: str, seconds: float, now: float, owner: Any
) -> Any:
    """Puts a not-ready lease's deadline on the heap (it holds nothing, has none)."""
    granted = lease_transitions.lease(s, key, seconds, now, owner)
    if isinstance(granted, Lease) and not granted.ready:
        s.leases.heap.append(
            (now + seconds, granted._id)
        )  # the bug: every call now reads the clock
    return granted


def _release_unpins_an_ended_lease(s: CacheState, lease: Lease) -> bool:
    """A release after the lease ended unpins its entry again (the entry may be another's)."""
    if isinstance(lease, Lease) and lease._book is s.leases and not lease.held:
        entry = s.entries.get(lease.key)
        if entry is not None:
            unpin_step(s, lease.key, entry)
        return False
    return lease_transitions.release_lease(s, lease)


def _foreign_is_a_type_error(s: CacheState, lease: Lease) -> bool:
    """Reports a foreign lease as a non-Lease (the wrong class)."""
    if isinstance(lease, Lease) and lease._book is not s.leases:
        raise TypeError(
            f"EmbeddingCache.release_lease: expected a Lease, not {type(lease).__name__}"
        )
    return lease_transitions.release_lease(s, lease)


def _renew_checks_held_first(s: CacheState, lease: Lease, seconds: float, now: float) -> bool:
    """Returns False for an ended lease before checking the seconds (the order broken)."""
    if isinstance(lease, Lease) and lease._book is s.leases and not lease.held:
        return False
    return lease_transitions.renew_lease(s, lease, seconds, now)


def _renew_keeps_the_deadline(s: CacheState, lease: Lease, seconds: float, now: float) -> bool:
    """Says True but moves nothing."""
    if isinstance(lease, Lease) and lease._book is s.leases and lease.held:
        lease_seconds(seconds, "renew_lease")
        return True
    return lease_transitions.renew_lease(s, lease, seconds, now)


#: name -> (policy, transition overrides, the check that must catch it)
PLANTED: dict[str, tuple[str, dict[str, Callable[..., Any]], str]] = {
    "unpin changes state before raising": (
        "fifo",
        {"unpin": _unpin_decrements_first},
        "state changed",
    ),
    "discard raises a bare AssertionError": ("fifo", {"discard": _discard_plain_assert}, "class"),
    "mark_ready names the wrong state": (
        "fifo",
        {"mark_ready": _mark_ready_wrong_state},
        "message",
    ),
    "pin's error has a wrong .state": ("fifo", {"pin": _pin_wrong_attribute}, "attributes"),
    "alloc checks duplicate before the count": ("fifo", {"alloc": _alloc_duplicate_first}, "class"),
    "alloc fails fast before capacity": ("fifo", {"alloc": _alloc_fail_fast_first}, "no error"),
    "pin_if_ready misses a not-ready entry": (
        "fifo",
        {"pin_if_ready": _pin_if_ready_none_for_not_ready},
        "result",
    ),
    "unpin releases every pin": ("fifo", {"unpin": _unpin_releases_all}, "state after"),
    "discard leaks blocks": ("fifo", {"discard": _discard_leaks}, "invariants"),
    "get counts a hit": ("gdsf", {"get": _get_counts_a_hit}, "state changed"),
    "get swallows a bad key": ("fifo", {"get": _get_swallows_bad_keys}, "no error"),
    "pin_if_ready raises for a not-ready entry": (
        "fifo",
        {"pin_if_ready": _pin_if_ready_raises_not_ready},
        "raised",
    ),
    "lease pins before checking the seconds": (
        "fifo",
        {"lease": _lease_pins_first},
        "state changed",
    ),
    "lease accepts infinite seconds": ("fifo", {"lease": _lease_accepts_infinity}, "no error"),
    "lease books a not-ready lease": (
        "fifo",
        {"lease": _lease_books_a_not_ready_lease},
        "state changed",
    ),
    "release after the end unpins again": (
        "fifo",
        {"release_lease": _release_unpins_an_ended_lease},
        "state changed",
    ),
    "a foreign lease is a TypeError": (
        "fifo",
        {"release_lease": _foreign_is_a_type_error},
        "class",
    ),
    "renew checks held before the seconds": (
        "fifo",
        {"renew_lease": _renew_checks_held_first},
        "no error",
    ),
    "renew keeps the deadline": ("fifo", {"renew_lease": _renew_keeps_the_deadline}, "result"),
    "a lease drops its entry's shape": ("fifo", {"lease": _lease_drops_the_shape}, "result"),
}


# alloc's shape is checked and set by the cache around its transition (cache.py), so
# its planted bugs are cache subclasses: each alloc below is the real one but for its bug.


class _StoresAnyShape(EmbeddingCache):
    """The seed's rule: any shape is stored, unchecked."""

    __slots__ = ()

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        entry = super().alloc(key, n_blocks)
        if entry is not None:
            entry.shape = shape
        return entry


class _ChecksShapeAfterAlloc(EmbeddingCache):
    """Allocates, then checks the shape: a bad one raises with the entry made."""

    __slots__ = ()

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        entry = super().alloc(key, n_blocks)
        dims = None if shape is None else transitions.entry_shape(shape)
        if entry is not None:
            entry.shape = dims
        return entry


class _ChecksShapeFirst(EmbeddingCache):
    """Checks the shape before the key and the count (the order of SPEC.md 3 broken)."""

    __slots__ = ()

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        if shape is not None:
            transitions.entry_shape(shape)
        return super().alloc(key, n_blocks, shape)


class _ChecksShapeAfterDuplicate(EmbeddingCache):
    """Reports a live key before a bad shape (the order of SPEC.md 3 broken)."""

    __slots__ = ()

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        entry = self._state.entries.get(key) if isinstance(key, str) else None
        if entry is not None and type(n_blocks) is int and n_blocks >= 0:
            raise embedding_cache.DuplicateAllocError(key, entry.state_name())
        return super().alloc(key, n_blocks, shape)


class _DropsTheShape(EmbeddingCache):
    """Checks the shape but keeps none."""

    __slots__ = ()

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        entry = super().alloc(key, n_blocks, shape)
        if entry is not None:
            entry.shape = None
        return entry


class _KeepsTheCallersTuple(EmbeddingCache):
    """Checks the shape but keeps the caller's object (a tuple subclass, int-likes)."""

    __slots__ = ()

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        entry = super().alloc(key, n_blocks, shape)
        if entry is not None:
            entry.shape = shape
        return entry


#: name -> (the cache class with the bug, the check that must catch it)
PLANTED_SHAPE: dict[str, tuple[type[EmbeddingCache], str]] = {
    "alloc stores any shape": (_StoresAnyShape, "no error"),
    "alloc checks the shape after allocating": (_ChecksShapeAfterAlloc, "state changed"),
    "alloc checks the shape before the key": (_ChecksShapeFirst, "message"),
    "alloc checks a live key before the shape": (_ChecksShapeAfterDuplicate, "class"),
    "alloc drops the shape": (_DropsTheShape, "result"),
    "alloc keeps the caller's tuple": (_KeepsTheCallersTuple, "result"),
}


def caught(
    policy: str,
    overrides: dict[str, Callable[..., Any]],
    cls: type[EmbeddingCache] = EmbeddingCache,
) -> dict[str, set[str]]:
    """check -> ids of the cells (of the overridden methods; alloc's for a ``cls`` with a
    planted alloc) it flags on the planted cache."""
    methods = set(overrides) | ({"alloc"} if cls is not EmbeddingCache else set())
    flagged: dict[str, set[str]] = {}
    for cell in MATRIX.cells:
        if cell.method not in methods or cell.deviation is not None:  # (all builds)
            continue
        try:
            check_cell(_planted(POLICY_CASES[policy], cell.state, cls, **overrides), cell)
        except MismatchError as mismatch:
            flagged.setdefault(mismatch.check, set()).add(cell.id)
    return flagged


@pytest.mark.parametrize("bug", list(PLANTED))
def test_planted_bug_is_caught(bug: str) -> None:
    policy, overrides, check = PLANTED[bug]
    flagged = caught(policy, overrides)
    assert check in flagged, f"{bug}: not caught by {check!r}; flagged {flagged}"


@pytest.mark.parametrize("bug", list(PLANTED_SHAPE))
def test_planted_shape_bug_is_caught(bug: str) -> None:
    cls, check = PLANTED_SHAPE[bug]
    flagged = caught("fifo", {}, cls)
    assert check in flagged, f"{bug}: not caught by {check!r}; flagged {flagged}"
    # Only the cells with a shape see it: the two-argument alloc cells pass.
    with_shape = {cell.id for cell in MATRIX.cells if cell.shape_expr is not None}
    assert set().union(*flagged.values()) <= with_shape, flagged


def test_planted_family_check() -> None:
    """The family check flags a class that lost a base (errors.py edited), the message check
    a reworded message: both on a hand-made error, since the real classes pass."""
    cell = next(c for c in MATRIX.cells if c.method == "unpin" and c.state == "ready")
    spec = MATRIX.errors["NotPinnedError"]
    impostor = type("NotPinnedError", (embedding_cache.CacheError,), {})
    lost_base = ErrorSpec(spec.outcome, impostor, spec.family, spec.message)
    with pytest.raises(MismatchError) as info:
        check_error(cell, lost_base, impostor("x"), KEY, None, MATRIX.pool)
    assert info.value.check == "family"
    exc = embedding_cache.NotPinnedError(KEY, "ready", "extra detail")
    with pytest.raises(MismatchError) as info:
        check_error(cell, spec, exc, KEY, None, MATRIX.pool)
    assert info.value.check == "message"


def test_a_wrong_table_cell_fails(tmp_path: Path) -> None:
    """The spec file drives the test: a copy with one cell edited parses, and that cell
    then fails (a wrong outcome, a wrong state after, a wrong error), others still pass."""
    text = SPEC.read_text(encoding="utf-8")
    pin_row = "| `pin` | `'k'` | str | UnknownKeyError | NotReadyError | None → pinned(1) |"
    alloc_row = "| `'k'` | `N` | pool size: fails fast here | None, unchanged |"
    get_row = "| `get` | `['k']` | list (unhashable) | TypeError(key) |"
    for row, edited, cell_id in (
        (pin_row, pin_row.replace("None → pinned(1)", "None → ready"), "pin('k')@ready"),
        (alloc_row, alloc_row.replace("None, unchanged", "CapacityError"), "alloc('k', N)@absent"),
        (get_row, get_row.replace("TypeError(key)", "UnknownKeyError"), "get(['k'])@absent"),
    ):
        assert text.count(row) == 1, row
        copy = tmp_path / "MISUSE.md"
        copy.write_text(text.replace(row, edited), encoding="utf-8")
        matrix = load(copy)
        cells = {cell.id: cell for cell in matrix.cells}
        with pytest.raises(MismatchError):
            check_cell(build("fifo", cells[cell_id].state, matrix), cells[cell_id], matrix)
        other = cells["pin('k')@pinned(1)"]
        check_cell(build("fifo", other.state, matrix), other, matrix)
