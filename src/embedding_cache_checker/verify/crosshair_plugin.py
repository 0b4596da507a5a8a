"""What CrossHair must be told about this package: how to build a state, which raises are fine.

Loaded only inside the CrossHair worker (``crosshair_check``); never by the cache.

**States.** Left alone, CrossHair builds a ``CacheState`` argument by calling
``CacheState(num_blocks)``, so it only ever sees empty caches. ``install``
registers a factory instead: ``build_state`` maps a handful of small
(symbolic) ints onto a well-formed state -- each block free or owned by one
entry, each entry's pin count in [-1, MAX_PIN], the evictable count the
ready+unpinned entries' blocks -- and a policy (``configure`` picks which)
holding exactly the ready+unpinned entries, in a state of its own that the
choices also describe:

* fifo: the queue lists the evictable keys in key order (``k0``, ``k1``, ...;
  relabelling keys maps any queue order onto this one);
* gdsf: a clock, a use count per ready entry, and per evictable entry how far
  below the clock it joined (so its priority is anything from the clock to the
  clock plus its full weight) and whether it left a stale heap item behind
  (pinned and released before); join order is key order;
* s3fifo: a home (S or M) per live entry, a counter per ready entry, S and M
  listing their evictable keys in key order, and up to three ghost keys
  (``g0``, ...) with their sizes, trimmed to the ghost's capacity.

Every well-formed state with at most ``MAX_BLOCKS`` blocks, ``MAX_ENTRIES``
entries and pins up to ``MAX_PIN`` is reachable this way up to renaming keys
and up to the order of the free stack (ascending or descending; the
contracts compute the blocks an alloc should take from the same stack, so
the order changes which blocks move, not whether a contract holds); the
tests check it against random walks of the real transitions. The
transitions' own preconditions (the full sweep) then confirm each built
state is well-formed, so CrossHair checks the inductive step. With a policy
bug configured, the state is built by the real policy and then re-typed
(``PlantedBug.plant``): one broken step from a good state.

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
import copy
import inspect
import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from embedding_cache import errors
from embedding_cache.entry import CacheEntry
from embedding_cache.free_blocks import FreeStack
from embedding_cache.policies import EVICTION_POLICIES, EvictionPolicy, GdsfPolicy, S3FifoPolicy
from embedding_cache.policies.s3fifo import MAIN, MAX_FREQ, SMALL
from embedding_cache.state import CacheState

from .planted import GDSF_SMALL, PlantedBug

#: Largest pool CrossHair builds: 4 blocks already lets an alloc evict two entries.
MAX_BLOCKS = 4
#: Most entries in a built state: enough for a victim, a survivor and a held entry.
MAX_ENTRIES = 3
#: Highest pin count: 2 lets an unpin leave the entry pinned.
MAX_PIN = 2
#: The keys of built states, in the order the policies list them.
KEYS = tuple(f"k{i}" for i in range(MAX_ENTRIES))
#: s3fifo: most ghost keys in a built state (the ghost holds at most MAX_BLOCKS - 1 blocks).
MAX_GHOSTS = MAX_BLOCKS - 1
#: The ghost keys of built s3fifo states, oldest first.
GHOST_KEYS = tuple(f"g{i}" for i in range(MAX_GHOSTS))

#: The policies of built states, by name: gdsf with small constants, so that
#: counterexamples read easily and the use-count cap is within reach.
POLICY_FACTORIES: dict[str, Callable[[int], EvictionPolicy]] = {
    **EVICTION_POLICIES,
    "gdsf": partial(GdsfPolicy, **GDSF_SMALL),
}


# The states built here keep their free ids in the cache's own ``FreeStack``
# (a ``list`` subclass), which also works around a CrossHair modelling bug
# (0.0.113): slicing an exact ``list`` with a symbolic bound (``free[-n:]``
# in ``take``) yields a lazy view, and the ``del free[-n:]`` that follows
# corrupts it, so ``sort()`` raised IndexError on a correct alloc. CrossHair
# only intercepts exact ``list``s, so a subclass is sliced concretely (the
# bound is realized, one value per path). The solver handles this list far
# better than the extents allocator's dictionaries, so CrossHair checks the
# stack; the extents allocator is checked by the contracts, the stateful
# tests and its own unit tests.


class BuiltState(CacheState):
    """The CacheState ``build_state`` makes: one that copies with its hooks rebound.

    A state's hooks are methods bound to its policy's structures (fifo's are the
    OrderedDict's own, one inside a ``functools.partial``), and ``copy.deepcopy``
    keeps a builtin method bound to the original: a deep copy of a fifo state
    evicts from the original's queue. CrossHair deep-copies arguments (to
    report them, and, realizing symbolic values, to print a counterexample),
    which then met states whose queue and hooks disagreed (a spurious KeyError
    from ``popitem``), or symbolic values it could not print (0.0.113). Both
    copies here copy the fields and bind the hooks afresh.
    """

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> BuiltState:
        return self._twin(lambda value: copy.deepcopy(value, memo))

    def __ch_deep_realize__(self, memo: dict[int, Any]) -> BuiltState:
        from crosshair.copyext import CopyMode, deepcopyext

        return self._twin(lambda value: deepcopyext(value, CopyMode.REALIZE, memo))

    def _twin(self, copy_of: Callable[[Any], Any]) -> BuiltState:
        twin = BuiltState(0, copy_of(self.policy))  # binds the hooks to the copied policy
        twin.num_blocks = copy_of(self.num_blocks)
        twin.free = copy_of(self.free)
        twin.entries = copy_of(self.entries)
        twin.evictable_blocks = copy_of(self.evictable_blocks)
        return twin


#: (key, size, pin count) of each entry of a state being built, in key order.
_Entries = Sequence[tuple[str, int, int]]


def _fifo(policy: EvictionPolicy, entries: _Entries, choices: Sequence[int]) -> None:
    """fifo: no choices; the evictable keys join in key order. O(entries)."""
    for key, size, pin in entries:
        if pin == 0:
            policy.ready(key, size)


def _gdsf(policy: EvictionPolicy, entries: _Entries, choices: Sequence[int]) -> None:
    """gdsf: ``choices`` = clock, then per entry i (MAX_ENTRIES each): use count
    (1..max_freq), how far below the clock it joined (0..clock, cut to its
    weight), whether it left a stale heap item. O(entries log entries)."""
    assert isinstance(policy, GdsfPolicy)
    n = MAX_ENTRIES
    clock, freqs, backs, stales = (
        choices[0],
        choices[1 : 1 + n],
        choices[1 + n : 1 + 2 * n],
        choices[1 + 2 * n :],
    )
    for i, (key, _, pin) in enumerate(entries):
        if pin >= 0:
            policy.freq[key] = freqs[i]
    for i, (key, size, pin) in enumerate(entries):
        if pin >= 0 and stales[i]:  # joined, then pinned: its heap item stays queued
            # Joined earliest, at clock 0: a key's heap item is a lower bound of
            # its later joins (the clock never falls), as in every real run.
            policy.clock = 0
            policy._join(key, size)
            policy.hold(key)
    for i, (key, size, pin) in enumerate(entries):
        if pin == 0:
            weight = policy.scale * freqs[i] // (size if size > 1 else 1)
            back = backs[i]
            if back > weight:
                back = weight  # joined further back would price it below the clock
            policy.clock = clock - back
            policy._join(key, size)
    policy.clock = clock


def _s3fifo(policy: EvictionPolicy, entries: _Entries, choices: Sequence[int]) -> None:
    """s3fifo: ``choices`` = per entry i (MAX_ENTRIES each): home (0: S, 1: M), counter
    (0..3); then the number of ghost keys and each one's size. O(entries + ghosts)."""
    assert isinstance(policy, S3FifoPolicy)
    n = MAX_ENTRIES
    homes, counters, ghosts, sizes = (
        choices[:n],
        choices[n : 2 * n],
        choices[2 * n],
        choices[2 * n + 1 :],
    )
    for j in range(MAX_GHOSTS):
        if j < ghosts:
            policy._remember(GHOST_KEYS[j], sizes[j])  # trims the oldest past capacity
    for i, (key, size, pin) in enumerate(entries):
        policy.home[key] = MAIN if homes[i] else SMALL
        if pin >= 0:
            policy.freq[key] = counters[i]
        if pin == 0:
            policy._join(key, size)


#: Per policy: how ``build_state`` lays out its choices.
_BUILDERS: dict[str, Callable[[EvictionPolicy, _Entries, Sequence[int]], None]] = {
    "fifo": _fifo,
    "gdsf": _gdsf,
    "s3fifo": _s3fifo,
}


Bound = tuple[int, int | None]


def choice_bounds(policy: str) -> list[Bound]:
    """The (low, high) bound of each policy choice ``build_state`` reads (None: unbounded;
    gdsf's "how far below the clock" is also at most the clock). O(MAX_ENTRIES)."""
    n = MAX_ENTRIES
    unbounded: Bound = (0, None)
    flag: Bound = (0, 1)
    if policy == "gdsf":
        use_count: Bound = (1, GDSF_SMALL["max_freq"])
        return [unbounded] + [use_count] * n + [unbounded] * n + [flag] * n
    if policy == "s3fifo":
        counter: Bound = (0, MAX_FREQ)
        ghosts: Bound = (0, MAX_GHOSTS)
        size: Bound = (0, MAX_BLOCKS)
        return [flag] * n + [counter] * n + [ghosts] + [size] * MAX_GHOSTS
    return []


def build_state(
    num_blocks: int,
    num_entries: int,
    owners: Sequence[int],
    pins: Sequence[int],
    free_descending: bool = False,
    policy: str = "fifo",
    choices: Sequence[int] = (),
) -> CacheState:
    """The well-formed state these choices describe. O(num_blocks * num_entries).

    ``owners[b]`` is the index of the entry owning block ``b``, or -1 when
    it is free; ``pins[i]`` is entry ``i``'s pin count; ``policy`` names the
    policy (``POLICY_FACTORIES``) and ``choices`` its state (laid out as
    ``choice_bounds(policy)`` says, see the module docstring). Arguments must
    be in range (``num_blocks <= MAX_BLOCKS``, ``num_entries <= MAX_ENTRIES``,
    ``-1 <= pins[i] <= MAX_PIN``, ``-1 <= owners[b] < num_entries``, each
    choice within its bounds); the factory gives the solver exactly these
    bounds. Called with plain ints (as the tests do) it builds one concrete state.
    """
    s = BuiltState(num_blocks, POLICY_FACTORIES[policy](num_blocks))
    ids = range(num_blocks - 1, -1, -1) if free_descending else range(num_blocks)
    s.free = FreeStack(b for b in ids if owners[b] < 0)
    s.entries = {}
    s.evictable_blocks = 0
    entries = []
    for i in range(num_entries):
        entry = CacheEntry(tuple(b for b in range(num_blocks) if owners[b] == i))
        entry._pin_count = pins[i]
        s.entries[KEYS[i]] = entry
        size = len(entry.block_ids)
        entries.append((KEYS[i], size, pins[i]))
        if pins[i] == 0:
            s.evictable_blocks += size
    _BUILDERS[policy](s.policy, entries, choices)
    s.set_policy(s.policy)
    return s


#: What ``install``'s factory builds: the policy's name, and a policy bug to plant.
_config: dict[str, Any] = {"policy": "fifo", "bug": None}


def configure(policy: str = "fifo", bug: PlantedBug | None = None) -> None:
    """Make the registered factory build states under ``policy``, with ``bug`` planted
    (a policy bug: the state is built by the real policy, then re-typed). O(1)."""
    if policy not in _BUILDERS:
        raise ValueError(f"no CrossHair state builder for policy {policy!r}")
    _config["policy"], _config["bug"] = policy, bug


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

    policy: str = _config["policy"]
    num_blocks = bounded("_num_blocks", 0, MAX_BLOCKS)
    num_entries = bounded("_num_entries", 0, MAX_ENTRIES)
    owners = [bounded(f"_owner{b}", -1, None) for b in range(MAX_BLOCKS)]
    for owner in owners:
        space.add(owner.var < num_entries.var)
    pins = [bounded(f"_pin{i}", -1, MAX_PIN) for i in range(MAX_ENTRIES)]
    free_descending: Any = SymbolicBool(factory.get_suffixed_varname("_free_descending"))
    choices = [bounded(f"_{policy}{i}", lo, hi) for i, (lo, hi) in enumerate(choice_bounds(policy))]
    if policy == "gdsf":  # each "joined this far below the clock" is at most the clock
        for back in choices[1 + MAX_ENTRIES : 1 + 2 * MAX_ENTRIES]:
            space.add(back.var <= choices[0].var)
    with ResumedTracing():  # type: ignore[no-untyped-call]
        s = build_state(num_blocks, num_entries, owners, pins, free_descending, policy, choices)
    bug: PlantedBug | None = _config["bug"]
    if bug is not None:
        bug.plant(s)
    # Bound (again) with tracing off: the hooks are then the plain methods (for fifo,
    # the OrderedDict's own), not whatever CrossHair substitutes while tracing.
    s.set_policy(s.policy)
    return s


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
    """Register the CacheState factory and the ``Raises:`` reader with CrossHair (once).

    The factory builds states as ``configure`` last said (fifo, no bug, by default).
    """
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
