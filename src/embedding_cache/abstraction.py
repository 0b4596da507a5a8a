"""The abstraction function: implementation state -> the spec's abstract state.

This is the one place that says how a CacheState is read as the state of the
specification (spec/SPEC.md, "Abstraction function"; tla/EmbeddingCache.tla).
Block *identities* are abstracted away to counts, because the spec leaves open
which free blocks an alloc takes; the checks that identities are consistent
(BlockConservationInv) live in ``invariants``.
"""

from __future__ import annotations

from typing import NamedTuple

from . import transitions
from .state import CacheState


class AbstractEntry(NamedTuple):
    """One live entry as the spec sees it."""

    pins: int  # -1: not-ready; 0: ready (evictable); k > 0: pinned k times
    blocks: int  # how many blocks it holds


class AbstractState(NamedTuple):
    """The whole cache as the spec sees it; hashable and comparable."""

    entries: tuple[tuple[str, AbstractEntry], ...]  # sorted by key
    queue: tuple[str, ...]  # eviction order, oldest first
    free: int  # number of free blocks
    held: bool  # has_held_entries()

    def entry(self, key: str) -> AbstractEntry | None:
        """The abstract entry of ``key``, or None when absent. O(entries)."""
        for k, e in self.entries:
            if k == key:
                return e
        return None


def abstract_state(s: CacheState) -> AbstractState:
    """Read ``s`` as the spec's state. O(entries log entries + queue)."""
    return AbstractState(
        entries=tuple(
            sorted((k, AbstractEntry(e._pin_count, len(e.block_ids))) for k, e in s.entries.items())
        ),
        queue=tuple(s.queue),
        free=len(s.free),
        held=transitions.has_held_entries(s),
    )


def phase(pins: int | None) -> str:
    """The lifecycle phase of a pin count: absent, not-ready, ready or pinned."""
    if pins is None:
        return "absent"
    if pins < 0:
        return "not-ready"
    return "ready" if pins == 0 else "pinned"
