"""Test helpers: a full observable snapshot of a cache, and builders of entry states.

``observe`` is what the "state unchanged after an error" checks compare
(MisuseUnchangedProp): every entry's pin count and block ids (and the entry
object's identity), the free stack in order, the eviction queue in order, the
evictable counter and ``has_held_entries()``.
"""

from __future__ import annotations

from typing import NamedTuple

from embedding_cache import CacheEntry, EmbeddingCache


class Observation(NamedTuple):
    """Everything a caller can observe of a cache, plus the queue order and counters."""

    num_blocks: int
    free: tuple[int, ...]
    entries: tuple[tuple[str, int, tuple[int, ...], int], ...]  # key, pins, ids, id(entry)
    queue: tuple[str, ...]
    evictable_blocks: int
    held: bool
    length: int


def observe(cache: EmbeddingCache) -> Observation:
    """Snapshot ``cache`` (reads its private state; the cache is idle). O(N + entries)."""
    s = cache._state
    return Observation(
        num_blocks=cache.num_blocks,
        free=tuple(s.free),
        entries=tuple(
            (k, e.pin_count, tuple(e.block_ids), id(e)) for k, e in sorted(s.entries.items())
        ),
        queue=tuple(s.queue),
        evictable_blocks=s.evictable_blocks,
        held=cache.has_held_entries(),
        length=len(cache),
    )


def queue_of(cache: EmbeddingCache) -> list[str]:
    """The eviction queue, oldest first."""
    return list(cache._state.queue)


def free_count(cache: EmbeddingCache) -> int:
    """How many blocks are on the free stack."""
    return len(cache._state.free)


def put_not_ready(cache: EmbeddingCache, key: str, n_blocks: int) -> CacheEntry:
    """Allocate ``key`` (which must fit) and return its not-ready entry."""
    entry = cache.alloc(key, n_blocks)
    assert entry is not None, f"setup: alloc({key!r}, {n_blocks}) did not fit"
    return entry


def put_ready(cache: EmbeddingCache, key: str, n_blocks: int) -> CacheEntry:
    """Allocate ``key`` and mark it ready (it joins the queue's tail)."""
    entry = put_not_ready(cache, key, n_blocks)
    cache.mark_ready(key)
    return entry


def put_pinned(cache: EmbeddingCache, key: str, n_blocks: int, pins: int = 1) -> CacheEntry:
    """Allocate ``key``, mark it ready and pin it ``pins`` times."""
    entry = put_ready(cache, key, n_blocks)
    for _ in range(pins):
        cache.pin(key)
    return entry
