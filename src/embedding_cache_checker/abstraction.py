"""The abstraction function: implementation state -> the spec's abstract state.

This is the one place that says how a CacheState is read as the state of the
specification (spec/SPEC.md, "Abstraction function"; tla/core/EmbeddingCache.tla).
Block *identities* are abstracted away to counts, because the spec leaves open
which free blocks an alloc takes; the checks that identities are consistent
(BlockConservationInv) live in ``invariants``. Where the identities matter to
what the cache does next (contiguity-aware eviction reads where the free blocks
lie: spec/SPEC.md section 14), ``block_state`` reads them too: the state-graph
replay's block-exact mode follows, of the spec's choices of ids, the code's.
An admission filter's state (the doorkeeper's door: section 13) is part of the
abstract state when the cache has a filter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from embedding_cache.verification import CacheState, has_held_entries


class AbstractEntry(NamedTuple):
    """One live entry as the spec sees it."""

    pins: int  # -1: not-ready; 0: ready (evictable); k > 0: pinned k times
    blocks: int  # how many blocks it holds


#: A policy's variables as its TLA+ module names them, made hashable: sorted
#: (name, value) pairs; a dict value becomes sorted (key, value) pairs.
PolicyView = tuple[tuple[str, Any], ...]


class AbstractState(NamedTuple):
    """The whole cache as the spec sees it; hashable and comparable."""

    entries: tuple[tuple[str, AbstractEntry], ...]  # sorted by key
    policy: PolicyView  # the eviction policy's variables (tla/README.md)
    free: int  # number of free blocks
    held: bool  # has_held_entries()
    #: The admission filter's state (TLA+ ``door``: the doorkeeper's keys, oldest
    #: first); empty when the cache has no filter (the spec no door), as a trace's door.
    door: tuple[str, ...] = ()

    @property
    def queue(self) -> tuple[str, ...]:
        """fifo's queue, oldest first (empty for other policies). O(1)."""
        for name, value in self.policy:
            if name == "queue":
                return tuple(value)
        return ()

    def entry(self, key: str) -> AbstractEntry | None:
        """The abstract entry of ``key``, or None when absent. O(entries)."""
        for k, e in self.entries:
            if k == key:
                return e
        return None


def policy_view(variables: Mapping[str, Any]) -> PolicyView:
    """A policy's variables (``PolicyChecks.abstract``) in hashable, canonical form."""
    return tuple(sorted((name, _hashable(value)) for name, value in variables.items()))


#: Leaf types ``_hashable`` returns as they are, tested by exact type first: the
#: replay reads millions of states, and an ABC isinstance per value was a fifth of it.
_LEAVES = frozenset({int, str, bool, float, type(None)})


def _hashable(value: Any) -> Any:
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is tuple:
        # A tuple of leaves (a queue) is already in canonical form: the common case.
        for item in value:
            if type(item) not in _LEAVES:
                return tuple(_hashable(v) for v in value)
        return value
    if kind is list:
        return tuple(_hashable(v) for v in value)
    if kind is dict or isinstance(value, Mapping):
        # Keys are unique, so the sort never compares two values.
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


def abstract_state(s: CacheState) -> AbstractState:
    """Read ``s`` as the spec's state. O(entries log entries + the policy's abstract)."""
    return AbstractState(
        entries=tuple(
            sorted((k, AbstractEntry(e.pin_count, len(e.block_ids))) for k, e in s.entries.items())
        ),
        policy=policy_view(s.checks.abstract()),
        free=len(s.free),
        held=has_held_entries(s),
        door=() if s.admission is None else s.admission.abstract(),
    )


#: ``raw_view``'s reading of a state: each entry's (pins, size), the policy's variables as
#: ``PolicyChecks.abstract`` returns them, the free count, the evictable count, the door.
RawView = tuple[dict[str, tuple[int, int]], Mapping[str, Any], int, int, tuple[str, ...]]


def raw_view(s: CacheState) -> RawView:
    """A cheaper reading of ``s`` than ``abstract_state``, for telling whether a call
    changed it: equal raw views imply equal abstract states (every field the abstraction
    reads is here, unsorted and uncanonicalized, and ``has_held_entries`` is a function
    of the entry and evictable counts); unequal ones decide nothing, so the caller
    compares the abstract states then. The replay checks ~20 refused calls per state.
    O(entries + the policy's abstract)."""
    return (
        {k: (e.pin_count, len(e.block_ids)) for k, e in s.entries.items()},
        s.checks.abstract(),
        len(s.free),
        s.evictable_count(),
        () if s.admission is None else s.admission.abstract(),
    )


class BlockState(NamedTuple):
    """The block ids of a state: what the abstract state counts, by identity."""

    entries: tuple[tuple[str, frozenset[int]], ...]  # each live key's ids, sorted by key
    free: frozenset[int]  # the free ids

    def victims(self, after: BlockState) -> tuple[str, ...]:
        """The keys live here and not in ``after`` (an alloc's victims), sorted. O(entries)."""
        gone = {k for k, _ in self.entries} - {k for k, _ in after.entries}
        return tuple(sorted(gone))


def block_state(s: CacheState) -> BlockState:
    """The block ids of ``s``: each entry's and the free pool's. O(N + entries log entries)."""
    return BlockState(
        entries=tuple(sorted((k, frozenset(e.block_ids)) for k, e in s.entries.items())),
        free=frozenset(s.free),
    )
