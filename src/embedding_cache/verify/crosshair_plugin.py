"""What CrossHair must be told about this package: how to build a state, which raises are fine.

Loaded only inside the CrossHair worker (``crosshair_check``); never by the cache.

**States.** Left alone, CrossHair builds a ``CacheState`` argument by calling
``CacheState(num_blocks)``, so it only ever sees empty caches. ``install``
registers a factory instead: ``build_state`` maps a handful of small
(symbolic) ints onto a well-formed state -- each block free or owned by one
entry, each entry's pin count in [-1, MAX_PIN], the queue holding exactly the
ready+unpinned entries and the evictable count their blocks. Every
well-formed state with at most ``MAX_BLOCKS`` blocks and ``MAX_ENTRIES``
entries is reachable up to renaming keys (keys are ``k0``, ``k1``, ... and the
queue lists them in that order: relabelling keys maps any queue order onto
this one) and up to the order of the free stack (ascending or descending;
the contracts compute the blocks an alloc should take from the same stack,
so the order changes which blocks move, not whether a contract holds). The
transitions' own preconditions (the full sweep) then confirm each built
state is well-formed, so CrossHair checks the inductive step.

**Raises.** CrossHair accepts an exception only when the docstring lists it
in Sphinx form (``:raises X:``); the transitions document theirs in a
Google-style ``Raises:`` section, which it ignores, so every misuse call
(``mark_ready`` of an absent key, ...) would be reported. ``install`` makes
it read that section too, except ``TypeError``: its documented triggers (a key
that is not a str, an ``n_blocks`` that is not an int) cannot occur when
CrossHair builds arguments from the annotations, so a ``TypeError`` can only
be a bug and stays reported. Accepted raises are not checked further: icontract
runs no postcondition when the call raises, so ``MisuseUnchangedProp`` is
left to the tests.
"""

from __future__ import annotations

import builtins
import inspect
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from .. import errors
from ..entry import CacheEntry
from ..state import CacheState

#: Largest pool CrossHair builds: 4 blocks already lets an alloc evict two entries.
MAX_BLOCKS = 4
#: Most entries in a built state: enough for a victim, a survivor and a held entry.
MAX_ENTRIES = 3
#: Highest pin count: 2 lets an unpin leave the entry pinned.
MAX_PIN = 2
#: The keys of built states, in queue order.
KEYS = tuple(f"k{i}" for i in range(MAX_ENTRIES))


class FreeStack(list[int]):
    """A plain list, for the free stack of the states CrossHair builds.

    Works around a CrossHair modelling bug (0.0.113): slicing a ``list`` with
    a symbolic bound (``free[-n:]`` in ``alloc``) yields a lazy view of the
    list, and the ``del free[-n:]`` that follows corrupts that view, so
    ``taken.sort()`` raises IndexError on a correct alloc. CrossHair only
    intercepts exact ``list``s, so a subclass is sliced concretely (the bound
    is realized, one value per path) and behaves as the cache's list does.
    """


def build_state(
    num_blocks: int,
    num_entries: int,
    owners: Sequence[int],
    pins: Sequence[int],
    free_descending: bool = False,
) -> CacheState:
    """The well-formed state these choices describe. O(num_blocks * num_entries).

    ``owners[b]`` is the index of the entry owning block ``b``, or -1 when
    it is free; ``pins[i]`` is entry ``i``'s pin count. Arguments must be in
    range (``num_blocks <= MAX_BLOCKS``, ``num_entries <= MAX_ENTRIES``,
    ``-1 <= pins[i] <= MAX_PIN``, ``-1 <= owners[b] < num_entries``); the
    factory gives the solver exactly these bounds. Called with plain ints
    (as the tests do) it builds one concrete state.
    """
    s = CacheState(num_blocks)
    ids = range(num_blocks - 1, -1, -1) if free_descending else range(num_blocks)
    s.free = FreeStack(b for b in ids if owners[b] < 0)
    s.entries = {}
    s.queue = OrderedDict()
    s.evictable_blocks = 0
    for i in range(num_entries):
        entry = CacheEntry(tuple(b for b in range(num_blocks) if owners[b] == i))
        entry._pin_count = pins[i]
        s.entries[KEYS[i]] = entry
        if pins[i] == 0:
            s.queue[KEYS[i]] = None
            s.evictable_blocks += len(entry.block_ids)
    return s


def _symbolic_state(factory: Any) -> CacheState:
    """CrossHair's factory for CacheState: bounded symbolic choices, then ``build_state``."""
    from crosshair.libimpl.builtinslib import SymbolicBool, SymbolicInt
    from crosshair.tracers import ResumedTracing

    space = factory.space

    def bounded(suffix: str, lo: int, hi: int | None) -> Any:
        # A solver-side bound: no path is spent on (and discarded for) out-of-range values.
        value = SymbolicInt(factory.get_suffixed_varname(suffix))
        space.add(value.var >= lo)
        if hi is not None:
            space.add(value.var <= hi)
        return value

    num_blocks = bounded("_num_blocks", 0, MAX_BLOCKS)
    num_entries = bounded("_num_entries", 0, MAX_ENTRIES)
    owners = [bounded(f"_owner{b}", -1, None) for b in range(MAX_BLOCKS)]
    for owner in owners:
        space.add(owner.var < num_entries.var)
    pins = [bounded(f"_pin{i}", -1, MAX_PIN) for i in range(MAX_ENTRIES)]
    free_descending: Any = SymbolicBool(factory.get_suffixed_varname("_free_descending"))
    with ResumedTracing():  # type: ignore[no-untyped-call]
        return build_state(num_blocks, num_entries, owners, pins, free_descending)


_RAISES_SECTION = re.compile(r"^[ \t]*Raises:[ \t]*\n((?:[ \t]+\S.*(?:\n|$))+)", re.MULTILINE)
_RAISES_ITEM = re.compile(r"^[ \t]+(\w+):", re.MULTILINE)


def documented_raises(fn: Callable[..., Any]) -> set[type[BaseException]]:
    """The exception types a Google-style ``Raises:`` section lists, minus TypeError."""
    found: set[type[BaseException]] = set()
    names = getattr(inspect.unwrap(fn), "__globals__", {})
    for section in _RAISES_SECTION.findall(getattr(fn, "__doc__", None) or ""):
        for name in _RAISES_ITEM.findall(section):
            # The function's module, then the builtins, then this package's typed errors.
            exc = names.get(name) or getattr(builtins, name, None) or getattr(errors, name, None)
            if isinstance(exc, type) and issubclass(exc, BaseException) and exc is not TypeError:
                found.add(exc)
    return found


_installed = False


def install() -> None:
    """Register the CacheState factory and the ``Raises:`` reader with CrossHair (once)."""
    global _installed
    if _installed:
        return
    # Importing core_and_libs (re)sets CrossHair's type registry: do it before registering.
    import crosshair.condition_parser as parser
    import crosshair.core_and_libs  # noqa: F401
    from crosshair.core import register_type

    register_type(CacheState, _symbolic_state)
    sphinx_raises = parser.parse_sphinx_raises

    def all_raises(fn: Callable[..., Any]) -> set[type[BaseException]]:
        return set(sphinx_raises(fn)) | documented_raises(fn)

    # The icontract parser looks this name up in its module at each call.
    parser.parse_sphinx_raises = all_raises
    _installed = True
