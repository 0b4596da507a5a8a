"""EmbeddingCache: the thread-safe, drop-in cache class.

It owns a CacheState and a lock, and each public method only takes the lock
and calls the matching function in ``transitions``; everything the cache
does, and every contract it checks, lives there.
"""

from __future__ import annotations

import threading

from . import invariants, transitions
from .entry import CacheEntry
from .free_blocks import DEFAULT_ALLOCATOR, allocator_name
from .policies import DEFAULT_POLICY, PolicySpec, make_policy
from .state import CacheState


class EmbeddingCache:
    """Fixed-size block cache with swappable eviction (drop-in for vLLM's EmbeddingCache).

    Entries are keyed by content identity (e.g. mm_hash). Blocks are
    allocated from a free pool; when space is needed, ready + unpinned
    entries are evicted by the policy: by default ("fifo", the seed's)
    oldest-first. All public methods are thread-safe. The caller decides
    *when* to call ``mark_ready`` (after the write landed).
    """

    __slots__ = ("_lock", "_ops", "_state")

    def __init__(
        self,
        num_blocks: int,
        eviction: PolicySpec = DEFAULT_POLICY,
        allocator: str = DEFAULT_ALLOCATOR,
    ) -> None:
        """A cache over block ids 0 .. num_blocks-1, all free.

        ``eviction`` names the policy (a key of ``embedding_cache.EVICTION_POLICIES``;
        "fifo", the seed's, by default), or is a factory taking ``num_blocks``
        and returning an ``EvictionPolicy``.
        ``allocator`` names how free ids are kept and handed out
        (``embedding_cache.ALLOCATORS``): "stack", the seed's and the default,
        or "extents", coalesced runs for fewer runs of consecutive ids per entry.
        O(num_blocks), C-level, with either allocator (the pool's ids).

        Raises:
            TypeError: ``num_blocks`` is not an int (or is a bool); ``eviction``
                is neither a name nor a factory; ``allocator`` is not a str.
            ValueError: ``num_blocks`` is negative; ``eviction`` or ``allocator``
                is an unknown name (the message lists the valid ones).
        """
        n = transitions.validate_num_blocks(num_blocks)
        self._state = CacheState(n, make_policy(eviction, n), allocator)
        self._lock = threading.Lock()
        # Every public method calls its transition through this table, with the
        # lock held: the one path tracing and planted bugs hook into.
        self._ops: transitions.Transitions = transitions.REAL

    @property
    def num_blocks(self) -> int:
        """Size of the block pool. O(1)."""
        return self._state.num_blocks

    @property
    def eviction(self) -> str:
        """The eviction policy's name. O(1)."""
        return self._state.policy.name

    @property
    def allocator(self) -> str:
        """The allocator's name (``ALLOCATORS``). O(1)."""
        return allocator_name(self._state.free)

    def get(self, key: str) -> CacheEntry | None:
        """Return the entry for ``key``, or None if not present. O(1)."""
        with self._lock:
            return self._ops.get(self._state, key)

    def has_held_entries(self) -> bool:
        """True if any entry is not-ready or pinned (an in-flight transfer). O(1)."""
        with self._lock:
            return self._ops.has_held_entries(self._state)

    def alloc(self, key: str, n_blocks: int) -> CacheEntry | None:
        """Allocate ``n_blocks`` for ``key``, evicting as needed; None if they cannot fit.

        O(n_blocks log n_blocks + blocks evicted). See ``transitions.alloc``.
        """
        with self._lock:
            return self._ops.alloc(self._state, key, n_blocks)

    def mark_ready(self, key: str) -> None:
        """Mark an entry as ready (data is CPU-visible); it becomes evictable. O(1)."""
        with self._lock:
            self._ops.mark_ready(self._state, key)

    def pin(self, key: str) -> None:
        """Pin a ready entry (prevent eviction); pins nest. O(1)."""
        with self._lock:
            self._ops.pin(self._state, key)

    def pin_if_ready(self, key: str) -> CacheEntry | None:
        """Atomically pin ``key`` if present and ready; return its entry (None if absent). O(1)."""
        with self._lock:
            return self._ops.pin_if_ready(self._state, key)

    def unpin(self, key: str) -> None:
        """Release one pin; the last one makes the entry evictable again. O(1)."""
        with self._lock:
            self._ops.unpin(self._state, key)

    def discard(self, key: str) -> None:
        """Remove a not-ready in-flight entry, returning its blocks to the pool. O(blocks)."""
        with self._lock:
            self._ops.discard(self._state, key)

    def check(self) -> None:
        """Sweep every named invariant; raise InvariantViolationError naming the first broken one.

        O(num_blocks + entries): for tests and teardown, not for hot paths.
        """
        with self._lock:
            invariants.check(self._state)

    def __len__(self) -> int:
        """Number of live entries. O(1)."""
        with self._lock:
            return len(self._state.entries)

    def __repr__(self) -> str:
        with self._lock:
            s = self._state
            return (
                f"EmbeddingCache(num_blocks={s.num_blocks}, eviction={s.policy.name!r}, "
                f"allocator={allocator_name(s.free)!r}, "
                f"free={len(s.free)}, entries={len(s.entries)}, "
                f"evictable_blocks={s.evictable_blocks})"
            )
