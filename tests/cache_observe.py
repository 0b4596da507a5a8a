"""Test helpers: a full observable snapshot of a cache, builders of entry states, policies.

``observe`` is what the "state unchanged after an error" checks compare
(MisuseUnchangedProp): every entry's pin count, block ids and shape (and the
entry object's identity), the free stack in order, the eviction policy's variables
(``PolicyChecks.abstract``: fifo's queue, gdsf's priorities and clock,
s3fifo's queues, ghost and counters), the evictable counter and
``has_held_entries()``.

``POLICY_CASES`` is what every per-policy test is parametrised over: each
policy of ``EVICTION_POLICIES`` by its name, plus gdsf with small parameters
so that its priorities tie and its use counts reach their cap.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from embedding_cache import EVICTION_POLICIES, CacheEntry, EmbeddingCache, GdsfPolicy
from embedding_cache.policies import PolicySpec
from embedding_cache.verification import state_of
from embedding_cache_checker.abstraction import PolicyView, policy_view

#: id -> the ``eviction=`` argument: every registered policy by name, and small-parameter gdsf.
POLICY_CASES: dict[str, PolicySpec] = {
    **{name: name for name in EVICTION_POLICIES},
    "gdsf-small": functools.partial(GdsfPolicy, scale=4, max_freq=2),
}


class Observation(NamedTuple):
    """Everything a caller can observe of a cache, plus the policy's state and counters."""

    num_blocks: int
    free: tuple[int, ...]
    #: key, pins, ids, shape, id(entry): the shape before the identity, so that
    #: ``e[:3]`` stays what a cache's blocks decide and ``e[:4]`` all a caller reads.
    entries: tuple[tuple[str, int, tuple[int, ...], tuple[int, int] | None, int], ...]
    policy: PolicyView
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
            (k, e.pin_count, tuple(e.block_ids), e.shape, id(e))
            for k, e in sorted(s.entries.items())
        ),
        policy=policy_view(s.checks.abstract()),
        evictable_blocks=s.evictable_blocks,
        held=cache.has_held_entries(),
        length=len(cache),
    )


def policy_vars(cache: EmbeddingCache) -> dict[str, Any]:
    """The policy's variables as its TLA+ module names them (``PolicyChecks.abstract``)."""
    return state_of(cache).checks.abstract()


def queue_of(cache: EmbeddingCache) -> list[str]:
    """fifo's eviction queue, oldest first (fifo caches only)."""
    assert cache.eviction == "fifo", f"queue_of reads fifo's queue, not {cache.eviction}'s"
    return list(policy_vars(cache)["queue"])


def evictable_keys(cache: EmbeddingCache) -> list[str]:
    """The keys the policy holds as evictable, sorted (any policy)."""
    return sorted(cache._state.policy.evictable_keys())


def free_count(cache: EmbeddingCache) -> int:
    """How many blocks are on the free stack."""
    return len(cache._state.free)


def put_not_ready(cache: EmbeddingCache, key: str, n_blocks: int) -> CacheEntry:
    """Allocate ``key`` (which must fit) and return its not-ready entry."""
    entry = cache.alloc(key, n_blocks)
    assert entry is not None, f"setup: alloc({key!r}, {n_blocks}) did not fit"
    return entry


def put_ready(cache: EmbeddingCache, key: str, n_blocks: int) -> CacheEntry:
    """Allocate ``key`` and mark it ready (it joins the evictable set)."""
    entry = put_not_ready(cache, key, n_blocks)
    cache.mark_ready(key)
    return entry


def put_pinned(cache: EmbeddingCache, key: str, n_blocks: int, pins: int = 1) -> CacheEntry:
    """Allocate ``key``, mark it ready and pin it ``pins`` times."""
    entry = put_ready(cache, key, n_blocks)
    for _ in range(pins):
        cache.pin(key)
    return entry


def cache_with_every_state(eviction: str) -> EmbeddingCache:
    """An 8-block cache under ``eviction`` with an entry in every state: ready r (2 blocks)
    and q (1), p (2) pinned once, n (1) not ready; 2 blocks free."""
    cache = EmbeddingCache(8, eviction=eviction)
    put_ready(cache, "r", 2)
    put_ready(cache, "q", 1)
    put_pinned(cache, "p", 2)
    put_not_ready(cache, "n", 1)
    return cache
