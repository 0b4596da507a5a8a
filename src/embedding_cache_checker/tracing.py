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

Leases are recorded too, as tla/leases/EmbeddingCacheLeases.tla takes them:
``lease``, ``renew_lease`` and ``release_lease`` calls; each lease the cache
expires (lazily at the start of a call, or in ``expire_leases()``) as one
``expire`` step, in the order the cache released them; and each advance of the
clock the cache read, as ``tick`` steps (the recorder wraps the clock: the
cache reads it under its lock, so a tick lands where the call that saw it
did). Every step then also records the leases' state after it
(``LeaseState``), the clock counted from its reading at construction. A
lease's ``expire`` steps but the last of one call record no state: the code
shows none between them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from embedding_cache import DEFAULT_ALLOCATOR, CacheEntry, EmbeddingCache
from embedding_cache.policies import PolicySpec
from embedding_cache.verification import (
    LEASE_OPERATIONS,
    AdmissionSpec,
    CacheState,
    Lease,
    Transitions,
    install_clock,
    install_transitions,
    lease_id,
    state_of,
    transitions,
)

from .abstraction import AbstractState, abstract_state


class LeaseState(NamedTuple):
    """The leases' part of the state after a step (tla/leases: now, lease, plain)."""

    now: float  # the clock, minus its reading when the cache was built
    held: tuple[tuple[int, str, float], ...]  # (lease id, key, deadline) of every live lease
    plain: tuple[tuple[str, int], ...]  # (key, plain pins) of every key holding any


class TraceStep(NamedTuple):
    """One operation as it took effect."""

    op: str  # alloc, mark_ready, pin, pin_if_ready, unpin, discard; lease, renew_lease,
    #: release_lease; expire (one lease the cache released); tick (the clock moved)
    key: str
    n_blocks: int | None  # alloc's blocks; lease's and renew's seconds; tick's new clock
    result: str  # "ok", "none", "entry", "not-ready-entry", "lease", "not-ready-lease",
    #: "true", "false", or the error's class name
    block_ids: tuple[int, ...] | None  # alloc's new entry's blocks
    post: AbstractState  # the abstract state right after the step (policy included)
    thread: str  # name of the calling thread
    lease: int | None = None  # the lease's id (lease, renew_lease, release_lease, expire)
    leases: LeaseState | None = None  # the leases after the step
    #: False for an expire step the code shows no state after (all but the last of one
    #: call's): its post and leases are the call's end state, not the step's.
    seen: bool = True
    #: The admission filter's door after the step, oldest first (TLA+ ``door``; empty
    #: without a filter).
    door: tuple[str, ...] = ()


#: The steps only a cache with leases records.
LEASE_STEPS = frozenset({"lease", "renew_lease", "release_lease", "expire", "tick"})


def lease_state(s: CacheState, now: float, origin: float = 0.0) -> LeaseState:
    """The leases of ``s`` as the lease spec reads them, at clock ``now``, times counted
    from ``origin``. O(entries + leases)."""
    book = s.leases
    held = tuple(
        sorted((i, lease.key, lease.deadline - origin) for i, lease in book.live.items())  # type: ignore[operator]
    )
    plain = []
    for key, entry in s.entries.items():
        count = entry.pin_count - book.per_key.get(key, 0)
        if entry.pin_count > 0 and count:
            plain.append((key, count))
    return LeaseState(now, held, tuple(sorted(plain)))


class TracedEmbeddingCache(EmbeddingCache):
    """An EmbeddingCache that records a TraceStep for every state-changing call.

    Queries (``get``, ``has_held_entries``) change nothing and are not recorded.
    Recording costs O(entries + the policy's ``abstract``) per call (it
    snapshots the abstract state).
    """

    __slots__ = ("_eviction", "_now", "_origin", "trace")

    def __init__(
        self,
        num_blocks: int,
        eviction: PolicySpec = "fifo",
        allocator: str = DEFAULT_ALLOCATOR,
        clock: Callable[[], float] = time.monotonic,
        *,
        operations: Mapping[str, Callable[..., Any]] | None = None,
        admission: AdmissionSpec = None,
        contiguity: int = 0,
    ) -> None:
        """``eviction``, ``allocator``, ``clock``, ``admission`` and ``contiguity`` as for
        ``EmbeddingCache``; ``operations`` replaces the transitions by name (for
        planted-bug checks only). Trace validation of leases needs a clock that reads
        whole numbers (a fake one)."""
        super().__init__(num_blocks, eviction, allocator, clock, admission, contiguity)
        self._eviction = eviction
        #: The steps so far, in the order they took effect.
        self.trace: list[TraceStep] = []
        self._origin = clock()
        self._now = 0.0  # the clock as last read, from the origin
        install_clock(self, self._recording_clock(clock))
        chosen = {**transitions.OPERATIONS, **LEASE_OPERATIONS}
        chosen.update(operations or {})
        table = Transitions({name: self._recording(name, func) for name, func in chosen.items()})
        install_transitions(self, table)

    def _recording_clock(self, clock: Callable[[], float]) -> Callable[[], float]:
        """``clock``, recording a tick step whenever a reading is later than the last
        (the cache reads it with its lock held). O(1) + recording."""

        def read() -> float:
            value = clock()
            now = value - self._origin
            if now > self._now:
                self._now = now
                s = state_of(self)
                self._append(s, "tick", "", int(now) if now == int(now) else None, "ok", None)
            return value

        return read

    def _recording(self, op: str, call: Callable[..., Any]) -> Callable[..., Any]:
        """``call`` (the transition ``op``), recording each call's step; the cache's
        method calls it with the lock held. O(1) + recording."""

        if op in LEASE_OPERATIONS:
            return self._recording_lease(op, call)

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

    def _recording_lease(self, op: str, call: Callable[..., Any]) -> Callable[..., Any]:
        """The lease transition ``call``, recording its step (or, for ``expire_leases``,
        one ``expire`` step per lease it released). O(1) + recording."""

        def record(s: CacheState, *args: Any) -> object:
            if op == "expire_leases":
                before = dict(s.leases.live)
                keys = call(s, *args)
                gone = sorted(  # the order the cache released them: by deadline, then id
                    (lease.deadline, i) for i, lease in before.items() if i not in s.leases.live
                )
                for number, (_, i) in enumerate(gone, start=1):
                    seen = number == len(gone)
                    self._append(s, "expire", before[i].key, None, "ok", None, i, seen)
                return keys
            subject = args[0]
            key = subject if op == "lease" else getattr(subject, "key", "")
            seconds = args[1] if len(args) > 1 and op != "release_lease" else None
            whole = (
                int(seconds)
                if isinstance(seconds, (int, float)) and seconds == int(seconds)
                else None
            )
            try:
                value = call(s, *args)
            except Exception as exc:
                self._append(s, op, str(key), whole, type(exc).__name__, None)
                raise
            if op == "lease":
                kind = "none" if value is None else "lease" if value.ready else "not-ready-lease"
                granted = None if value is None else lease_id(value)
            else:
                kind = "true" if value else "false"
                granted = lease_id(subject) if isinstance(subject, Lease) else None
            self._append(s, op, str(key), whole, kind, None, granted)
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
        lease: int | None = None,
        seen: bool = True,
    ) -> None:
        name = threading.current_thread().name
        view = lease_state(s, self._now, self._origin)
        door = () if s.admission is None else s.admission.abstract()
        post = abstract_state(s)
        step = TraceStep(op, key, n_blocks, result, ids, post, name, lease, view, seen, door)
        self.trace.append(step)

    @property
    def eviction_spec(self) -> PolicySpec:
        """What the cache was built with (``eviction=``): a policy name or a factory. O(1)."""
        return self._eviction
