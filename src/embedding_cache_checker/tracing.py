"""Opt-in operation traces: TracedEmbeddingCache records every call under the lock.

``EmbeddingCache`` itself carries no tracing code, so tracing costs nothing
when it is off; construct a ``TracedEmbeddingCache`` (with any eviction
policy) to record. It hooks into the cache's one path into the transitions:
its transition table (``verification.install_transitions``) holds recording wrappers, which
the cache's own methods call with the cache's own lock held. So the steps of
concurrent callers are appended in the order their operations took effect (a
linearization), and no method is re-implemented. A step records the abstract
state after it, the policy's variables included (``abstraction.abstract_state``).
A trace is what trace validation replays through TLC
(``embedding_cache_checker.verify.traces``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from embedding_cache import CacheEntry, EmbeddingCache
from embedding_cache.free_blocks import DEFAULT_ALLOCATOR
from embedding_cache.policies import PolicySpec
from embedding_cache.verification import CacheState, Transitions, install_transitions, transitions

from .abstraction import AbstractState, abstract_state


class TraceStep(NamedTuple):
    """One operation as it took effect."""

    op: str  # method name: alloc, mark_ready, pin, pin_if_ready, unpin, discard
    key: str
    n_blocks: int | None  # alloc only
    result: str  # "ok", "none", "entry", "not-ready-entry", or the error's class name
    block_ids: tuple[int, ...] | None  # alloc's new entry's blocks
    post: AbstractState  # the abstract state right after the operation (policy included)
    thread: str  # name of the calling thread


class TracedEmbeddingCache(EmbeddingCache):
    """An EmbeddingCache that records a TraceStep for every state-changing call.

    Queries (``get``, ``has_held_entries``) change nothing and are not recorded.
    Recording costs O(entries + the policy's ``abstract``) per call (it
    snapshots the abstract state).
    """

    __slots__ = ("_eviction", "trace")

    def __init__(
        self,
        num_blocks: int,
        eviction: PolicySpec = "fifo",
        allocator: str = DEFAULT_ALLOCATOR,
        clock: Callable[[], float] = time.monotonic,
        *,
        operations: Mapping[str, Callable[..., Any]] | None = None,
    ) -> None:
        """``eviction``, ``allocator`` and ``clock`` as for ``EmbeddingCache``;
        ``operations`` replaces the transitions by name (for planted-bug checks only).
        Lease calls run but are not recorded (the trace spec has no lease actions yet)."""
        super().__init__(num_blocks, eviction, allocator, clock)
        self._eviction = eviction
        #: The steps so far, in the order they took effect.
        self.trace: list[TraceStep] = []
        chosen = dict(transitions.OPERATIONS)
        chosen.update(operations or {})
        table = Transitions({name: self._recording(name, func) for name, func in chosen.items()})
        install_transitions(self, table)

    def _recording(self, op: str, call: Callable[..., Any]) -> Callable[..., Any]:
        """``call`` (the transition ``op``), recording each call's step; the cache's
        method calls it with the lock held. O(1) + recording."""

        def record(s: CacheState, key: str, n_blocks: int | None = None) -> object:
            try:
                value = call(s, key) if op != "alloc" else call(s, key, n_blocks)
            except Exception as exc:
                self._append(s, op, key, n_blocks, type(exc).__name__, None)
                raise
            if isinstance(value, CacheEntry):
                kind = "entry" if value.ready else "not-ready-entry"
                ids = value.block_ids if op == "alloc" else None
            else:
                kind, ids = ("none" if op in ("alloc", "pin_if_ready") else "ok"), None
            self._append(s, op, key, n_blocks, kind, ids)
            return value

        record.__name__ = record.__qualname__ = f"traced_{op}"
        return record

    def _append(
        self,
        s: CacheState,
        op: str,
        key: str,
        n_blocks: int | None,
        result: str,
        ids: tuple[int, ...] | None,
    ) -> None:
        name = threading.current_thread().name
        self.trace.append(TraceStep(op, key, n_blocks, result, ids, abstract_state(s), name))

    @property
    def eviction_spec(self) -> PolicySpec:
        """What the cache was built with (``eviction=``): a policy name or a factory. O(1)."""
        return self._eviction
