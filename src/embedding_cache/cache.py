"""EmbeddingCache: the thread-safe, drop-in cache class.

It owns a CacheState and a lock, and each public method only takes the lock
and calls the matching function in ``transitions``; everything the cache
does, and every contract it checks, lives there.
"""

from __future__ import annotations

import operator
import threading
import time
from collections.abc import Callable

from . import invariants, transitions
from .admission import AdmissionSpec, make_admission
from .allocators import DEFAULT_ALLOCATOR, allocator_name
from .entry import CacheEntry
from .leases import Lease
from .policies import DEFAULT_POLICY, PolicySpec, make_policy
from .state import CacheState
from .transition_table import REAL, Transitions


def validate_num_blocks(num_blocks: object) -> int:
    """The pool size as an int, or a TypeError/ValueError naming what is wrong."""
    if isinstance(num_blocks, bool) or not hasattr(num_blocks, "__index__"):
        raise TypeError(
            f"EmbeddingCache: num_blocks must be an int, not {type(num_blocks).__name__}"
        )
    n = operator.index(num_blocks)
    if n < 0:
        raise ValueError(f"EmbeddingCache: num_blocks must be >= 0, got {n}")
    return int(n)


def validate_contiguity(contiguity: object, allocator: object) -> int:
    """The contiguity bound k as an int, or a TypeError/ValueError naming what is wrong.

    k > 0 needs ``allocator="extents"``: only that pool keeps runs to look
    for (spec/SPEC.md section 14). O(1).
    """
    if isinstance(contiguity, bool) or not isinstance(contiguity, int):
        raise TypeError(
            f"EmbeddingCache: contiguity must be an int, not {type(contiguity).__name__}"
        )
    if contiguity < 0:
        raise ValueError(f"EmbeddingCache: contiguity must be >= 0, got {contiguity}")
    if contiguity and allocator != "extents":
        raise ValueError(
            f"EmbeddingCache: contiguity={contiguity} needs allocator='extents', "
            f"not {allocator!r}: only the extents pool keeps runs of ids to look for"
        )
    return int(contiguity)


class EmbeddingCache:
    """Fixed-size block cache with swappable eviction (drop-in for vLLM's EmbeddingCache).

    Entries are keyed by content identity (e.g. mm_hash). Blocks are
    allocated from a free pool; when space is needed, ready + unpinned
    entries are evicted by the policy: by default ("fifo", the seed's)
    oldest-first. All public methods are thread-safe. The caller decides
    *when* to call ``mark_ready`` (after the write landed).

    Pin leases (``lease``) are opt-in: a leased pin ends by itself at its
    deadline, read from ``clock``. Every public call first releases the
    leases that are due, O(1) when none is (a deadline heap); a cache that
    never grants a lease never reads its clock.
    """

    __slots__ = ("_clock", "_fixed", "_heap", "_lock", "_ops", "_state")

    def __init__(
        self,
        num_blocks: int,
        eviction: PolicySpec = DEFAULT_POLICY,
        allocator: str = DEFAULT_ALLOCATOR,
        clock: Callable[[], float] = time.monotonic,
        admission: AdmissionSpec = None,
        contiguity: int = 0,
    ) -> None:
        """A cache over block ids 0 .. num_blocks-1, all free.

        ``eviction`` names the policy (a key of ``embedding_cache.EVICTION_POLICIES``;
        "fifo", the seed's, by default), or is a factory taking ``num_blocks``
        and returning an ``EvictionPolicy``.
        ``allocator`` names how free ids are kept and handed out
        (``embedding_cache.ALLOCATORS``): "stack", the seed's and the default,
        or "extents", coalesced runs for fewer runs of consecutive ids per entry.
        ``clock`` is what lease deadlines are read against (seconds, never
        decreasing): ``time.monotonic`` by default; tests pass a fake one.
        ``admission`` names an admission filter (``embedding_cache.ADMISSION_FILTERS``),
        or is a factory taking ``num_blocks``: an alloc that would have to evict
        may then be declined (None, nothing changes; spec/SPEC.md section 13).
        None, the default, is the seed's rule.
        ``contiguity`` is k: an alloc that has to evict may evict up to k further
        victims, in the policy's order, while no free run of ids holds its blocks
        (spec/SPEC.md section 14); k > 0 needs ``allocator="extents"``. 0, the
        default, is the seed's rule: evict exactly as needed.
        O(num_blocks), C-level, with either allocator (the pool's ids).

        Raises:
            TypeError: ``num_blocks`` is not an int (or is a bool); ``eviction``
                is neither a name nor a factory; ``allocator`` is not a str;
                ``clock`` is not callable; ``admission`` is neither None, a name
                nor a factory of an ``AdmissionFilter``; ``contiguity`` is not an
                int (or is a bool).
            ValueError: ``num_blocks`` is negative; ``eviction``, ``allocator``
                or ``admission`` is an unknown name (the message lists the valid ones);
                ``contiguity`` is negative, or positive with an allocator other
                than "extents".
        """
        n = validate_num_blocks(num_blocks)
        if not callable(clock):
            raise TypeError(f"EmbeddingCache: clock must be callable, not {type(clock).__name__}")
        k = validate_contiguity(contiguity, allocator)
        door = make_admission(admission, n)
        self._state = CacheState(n, make_policy(eviction, n), allocator, door, k)
        self._lock = threading.Lock()
        # What __repr__ shows without the lock: none of it changes after construction.
        self._fixed = (
            f"num_blocks={n}, eviction={self._state.policy.name!r}, "
            f"allocator={allocator_name(self._state.free)!r}"
            + ("" if door is None else f", admission={door.name!r}")
            + (f", contiguity={k}" if k else "")
        )
        # Every public method calls its transition through this table, with the
        # lock held: the one path tracing and planted bugs hook into.
        self._ops: Transitions = REAL
        self._clock = clock
        # The lease book's deadline heap, kept here too so that the check every
        # public call makes ("is any lease due?") is one slot load when none is
        # held: the book never rebinds it (LeaseBook.compact works in place).
        self._heap = self._state.leases.heap

    def _expire_due(self) -> None:
        """Release the leases that are due (the lock is held; the heap is not empty)."""
        now = self._clock()
        if self._heap[0][0] < now:
            self._ops.expire_leases(self._state, now)

    @property
    def num_blocks(self) -> int:
        """Size of the block pool. O(1)."""
        return self._state.num_blocks

    @property
    def eviction(self) -> str:
        """The eviction policy's name. O(1)."""
        return self._state.policy.name

    @property
    def admission(self) -> str | None:
        """The admission filter's name (``ADMISSION_FILTERS``), or None. O(1)."""
        door = self._state.admission
        return None if door is None else door.name

    @property
    def contiguity(self) -> int:
        """How many victims beyond need an alloc may evict for a free run (0: none). O(1)."""
        return self._state.contiguity

    @property
    def allocator(self) -> str:
        """The allocator's name (``ALLOCATORS``). O(1)."""
        return allocator_name(self._state.free)

    def get(self, key: str) -> CacheEntry | None:
        """Return the entry for ``key``, or None if not present. O(1)."""
        with self._lock:
            if self._heap:
                self._expire_due()
            return self._ops.get(self._state, key)

    def has_held_entries(self) -> bool:
        """True if any entry is not-ready or pinned (an in-flight transfer). O(1)."""
        with self._lock:
            if self._heap:
                self._expire_due()
            return self._ops.has_held_entries(self._state)

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        """Allocate ``n_blocks`` for ``key``, evicting as needed; None if they cannot fit.

        ``shape``, ``(rows, width)`` of the encoder output the blocks will hold, or
        None (the default), is kept on the new entry (``CacheEntry.shape``) for a load
        to read back; nothing the cache decides depends on it, and it is not checked
        against ``n_blocks`` (the cache knows no dtype or block size).

        O(n_blocks log n_blocks + blocks evicted), plus O(1) for the shape check.
        See ``transitions.alloc``.

        Raises:
            TypeError: ``key`` is not a str; ``n_blocks`` is not an int (or is a
                bool); ``shape`` is neither None nor a tuple, or a dimension is not
                an int (or is a bool).
            ValueError: ``n_blocks`` is negative; ``shape`` has not 2 dimensions,
                or one is negative.
            DuplicateAllocError, CapacityError: as ``transitions.alloc``.
            The checks run in that order (key, n_blocks, shape, then the key's
            state), each before anything changes (spec/SPEC.md section 3).
        """
        with self._lock:
            if self._heap:
                self._expire_due()
            if shape is None:
                return self._ops.alloc(self._state, key, n_blocks)
            # Checked before the transition, so a bad shape changes nothing; set on the
            # entry it returns under the same lock, so no caller sees it without one.
            # The transition keeps its (state, key, n_blocks) signature: tracing, the
            # planted bugs, the contracts and the TLA+ conformance checks hook into it.
            dims = transitions.alloc_shape(key, n_blocks, shape)
            entry = self._ops.alloc(self._state, key, n_blocks)
            if entry is not None:
                entry.shape = dims
            return entry

    def mark_ready(self, key: str) -> None:
        """Mark an entry as ready (data is CPU-visible); it becomes evictable. O(1)."""
        with self._lock:
            if self._heap:
                self._expire_due()
            self._ops.mark_ready(self._state, key)

    def pin(self, key: str) -> None:
        """Pin a ready entry (prevent eviction); pins nest. O(1)."""
        with self._lock:
            if self._heap:
                self._expire_due()
            self._ops.pin(self._state, key)

    def pin_if_ready(self, key: str) -> CacheEntry | None:
        """Atomically pin ``key`` if present and ready; return its entry (None if absent). O(1)."""
        with self._lock:
            if self._heap:
                self._expire_due()
            return self._ops.pin_if_ready(self._state, key)

    def unpin(self, key: str) -> None:
        """Release one pin; the last one makes the entry evictable again. O(1)."""
        with self._lock:
            if self._heap:
                self._expire_due()
            self._ops.unpin(self._state, key)

    def discard(self, key: str) -> None:
        """Remove a not-ready in-flight entry, returning its blocks to the pool. O(blocks)."""
        with self._lock:
            if self._heap:
                self._expire_due()
            self._ops.discard(self._state, key)

    def lease(self, key: str, seconds: float) -> Lease | None:
        """Pin ``key`` for ``seconds`` if it is present and ready: ``pin_if_ready`` with a deadline.

        Returns None when the key is absent; a ``Lease`` with ``ready`` False,
        holding nothing, when its save is in flight; else a held ``Lease``
        whose pin the cache releases itself once ``clock()`` passes
        ``deadline`` (unless ``Lease.release`` or ``renew`` comes first).
        Leased and plain pins nest on one entry. O(log leases).

        Raises:
            TypeError: ``key`` is not a str, or ``seconds`` is not a number.
            ValueError: ``seconds`` is negative, NaN or infinite.
        """
        with self._lock:
            now = self._clock()
            if self._heap and self._heap[0][0] < now:
                self._ops.expire_leases(self._state, now)
            return self._ops.lease(self._state, key, seconds, now, self)

    def release_lease(self, lease: Lease) -> bool:
        """``lease.release()``: True if this call released its pin, else False. O(log leases).

        Raises:
            TypeError: ``lease`` is not a Lease.
            ForeignLeaseError: another cache granted ``lease`` (a ValueError).
        """
        with self._lock:
            if self._heap:
                self._expire_due()
            return self._ops.release_lease(self._state, lease)

    def renew_lease(self, lease: Lease, seconds: float) -> bool:
        """``lease.renew(seconds)``: the deadline becomes now + ``seconds``; False once
        the lease holds no pin. O(log leases).

        Raises:
            TypeError: ``lease`` is not a Lease, or ``seconds`` is not a number.
            ForeignLeaseError: another cache granted ``lease`` (a ValueError).
            ValueError: ``seconds`` is negative, NaN or infinite.
        """
        with self._lock:
            now = self._clock()
            if self._heap and self._heap[0][0] < now:
                self._ops.expire_leases(self._state, now)
            return self._ops.renew_lease(self._state, lease, seconds, now)

    def expire_leases(self) -> list[str]:
        """Release every lease that is due now; the keys released, by deadline.

        Every public call does this first; call it to release due pins when
        the cache is otherwise idle. O(1) when none is due, else
        O(log leases) per lease released.
        """
        with self._lock:
            if not self._heap:
                return []
            return self._ops.expire_leases(self._state, self._clock())

    def check(self) -> None:
        """Sweep every named invariant; raise InvariantViolationError naming the first broken one.

        O(num_blocks + entries): for tests and teardown, not for hot paths.
        """
        with self._lock:
            if self._heap:
                self._expire_due()
            invariants.check(self._state)

    def __len__(self) -> int:
        """Number of live entries. O(1)."""
        with self._lock:
            if self._heap:
                self._expire_due()
            return len(self._state.entries)

    def __repr__(self) -> str:
        """The pool's size, policy and counters. O(1).

        Never waits for the lock: a contract violation raised inside a public
        method describes its arguments, the cache among them, while that
        method holds the (non-reentrant) lock. Then the repr shows what was
        fixed at construction (kept outside the state, so it is read without
        the lock) and says the cache was busy.
        """
        if not self._lock.acquire(blocking=False):
            return f"EmbeddingCache({self._fixed}, busy)"
        try:
            s = self._state
            return (
                f"EmbeddingCache({self._fixed}, free={len(s.free)}, "
                f"entries={len(s.entries)}, evictable_blocks={s.evictable_blocks})"
            )
        finally:
            self._lock.release()
