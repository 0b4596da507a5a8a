"""Opt-in operation traces: TracedEmbeddingCache records every call under the lock.

``EmbeddingCache`` itself carries no tracing code, so tracing costs nothing
when it is off; construct a ``TracedEmbeddingCache`` to record. Each step is
appended while the lock is held, so the steps of concurrent callers appear in
the order their operations took effect (a linearization). A trace is what
trace validation replays through TLC (``embedding_cache.verify``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from . import transitions
from .abstraction import AbstractState, abstract_state
from .cache import EmbeddingCache
from .entry import CacheEntry
from .state import CacheState


class TraceStep(NamedTuple):
    """One operation as it took effect."""

    op: str  # method name: alloc, mark_ready, pin, pin_if_ready, unpin, discard
    key: str
    n_blocks: int | None  # alloc only
    result: str  # "ok", "none", "entry", "not-ready-entry", or the error's class name
    block_ids: tuple[int, ...] | None  # alloc's new entry's blocks
    post: AbstractState  # the abstract state right after the operation
    thread: str  # name of the calling thread


class TracedEmbeddingCache(EmbeddingCache):
    """An EmbeddingCache that records a TraceStep for every state-changing call.

    Queries (``get``, ``has_held_entries``) change nothing and are not recorded.
    Recording costs O(entries) per call (it snapshots the abstract state).
    """

    __slots__ = ("_operations", "trace")

    def __init__(
        self, num_blocks: int, operations: Mapping[str, Callable[..., Any]] | None = None
    ) -> None:
        """``operations`` replaces the transitions by name (for planted-bug checks only)."""
        super().__init__(num_blocks)
        self._operations = dict(transitions.OPERATIONS if operations is None else operations)
        #: The steps so far, in the order they took effect.
        self.trace: list[TraceStep] = []

    def _record(self, op: str, key: str, n_blocks: int | None = None) -> object:
        """Run operation ``op`` on the state under the lock and record the step."""
        call = self._operations[op]
        with self._lock:
            try:
                if op == "alloc":
                    value = call(self._state, key, n_blocks)
                else:
                    value = call(self._state, key)
            except Exception as exc:
                self._append(op, key, n_blocks, type(exc).__name__, None)
                raise
            if isinstance(value, CacheEntry):
                kind = "entry" if value.ready else "not-ready-entry"
                ids = value.block_ids if op == "alloc" else None
            else:
                kind, ids = ("none" if op in ("alloc", "pin_if_ready") else "ok"), None
            self._append(op, key, n_blocks, kind, ids)
            return value

    def _append(
        self, op: str, key: str, n_blocks: int | None, result: str, ids: tuple[int, ...] | None
    ) -> None:
        name = threading.current_thread().name
        post = abstract_state(self._state)
        self.trace.append(TraceStep(op, key, n_blocks, result, ids, post, name))

    def alloc(self, key: str, n_blocks: int) -> CacheEntry | None:
        """``EmbeddingCache.alloc``, recorded."""
        return _entry_or_none(self._record("alloc", key, n_blocks))

    def mark_ready(self, key: str) -> None:
        """``EmbeddingCache.mark_ready``, recorded."""
        self._record("mark_ready", key)

    def pin(self, key: str) -> None:
        """``EmbeddingCache.pin``, recorded."""
        self._record("pin", key)

    def pin_if_ready(self, key: str) -> CacheEntry | None:
        """``EmbeddingCache.pin_if_ready``, recorded."""
        return _entry_or_none(self._record("pin_if_ready", key))

    def unpin(self, key: str) -> None:
        """``EmbeddingCache.unpin``, recorded."""
        self._record("unpin", key)

    def discard(self, key: str) -> None:
        """``EmbeddingCache.discard``, recorded."""
        self._record("discard", key)

    def initial_state(self) -> AbstractState:
        """The abstract state of an empty cache of this size (the trace's start)."""
        return abstract_state(CacheState(self.num_blocks))


def _entry_or_none(value: object) -> CacheEntry | None:
    """What alloc and pin_if_ready return, typed (a planted body may return anything)."""
    return value if isinstance(value, CacheEntry) else None
