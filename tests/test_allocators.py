"""The allocator is a constructor choice: the seed's stack (default) or coalesced extents.

Both hand out unique ascending ids, keep BlockConservationInv, and differ only
in which free ids an alloc takes (the spec leaves that open). The stateful
machines draw the allocator per run; here: the choice itself, its errors, and
what each allocator promises about the ids.
"""

from __future__ import annotations

import pytest

from embedding_cache import ALLOCATORS, EVICTION_POLICIES, EmbeddingCache
from embedding_cache.extent_pool import ExtentPool
from embedding_cache.free_stack import FreeStack
from embedding_cache.runs import runs_of


def test_the_default_is_the_seeds_stack() -> None:
    cache = EmbeddingCache(8)
    assert cache.allocator == "stack"
    assert isinstance(cache._state.free, FreeStack)
    assert "allocator='stack'" in repr(cache)


@pytest.mark.parametrize("allocator", sorted(ALLOCATORS))
@pytest.mark.parametrize("eviction", sorted(EVICTION_POLICIES))
def test_each_allocator_under_each_policy(allocator: str, eviction: str) -> None:
    cache = EmbeddingCache(8, eviction=eviction, allocator=allocator)
    assert (cache.allocator, cache.eviction) == (allocator, eviction)
    for i, n in enumerate((3, 2, 3)):
        entry = cache.alloc(f"k{i}", n)
        assert entry is not None and list(entry.block_ids) == sorted(set(entry.block_ids))
        cache.mark_ready(f"k{i}")
    entry = cache.alloc("big", 6)  # evicts by the policy's rule, then takes 6 ids
    assert entry is not None and len(entry.block_ids) == 6
    cache.check()


def test_stack_hands_out_the_seeds_ids() -> None:
    cache = EmbeddingCache(6, allocator="stack")
    a = cache.alloc("a", 2)
    b = cache.alloc("b", 3)
    assert a is not None and b is not None
    assert (a.block_ids, b.block_ids) == ((4, 5), (1, 2, 3))  # the top of the LIFO stack


def test_extents_give_one_run_when_a_freed_run_fits() -> None:
    """After scattered frees the stack would hand out scattered ids; extents coalesce."""
    stack = EmbeddingCache(12, allocator="stack")
    extents = EmbeddingCache(12, allocator="extents")
    for cache in (stack, extents):
        for i in range(6):
            cache.alloc(f"k{i}", 2)
        for i in (1, 2, 4):  # free three pairs; 1 and 2 are neighbours
            cache.discard(f"k{i}")
    got = {}
    for name, cache in (("stack", stack), ("extents", extents)):
        entry = cache.alloc("new", 4)
        assert entry is not None
        got[name] = len(runs_of(entry.block_ids))
        cache.check()
    assert got["extents"] == 1
    assert isinstance(extents._state.free, ExtentPool)


@pytest.mark.parametrize(
    ("allocator", "error", "words"),
    [
        (3, TypeError, "allocator must be a str, not int"),
        ("buddy", ValueError, "unknown allocator 'buddy'; valid: stack, extents"),
    ],
)
def test_a_bad_allocator_is_a_typed_error_naming_it(
    allocator: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        EmbeddingCache(4, allocator=allocator)  # type: ignore[arg-type]


def test_a_million_block_pool_is_one_extent() -> None:
    """Construction with extents: one extent, and the ids an entry gets are the pool's own
    int objects (sliced from one tuple), so an entry costs what the stack's does."""
    cache = EmbeddingCache(1 << 20, allocator="extents")
    free = cache._state.free
    assert isinstance(free, ExtentPool) and free.extents() == [(0, 1 << 20)]
    entry = cache.alloc("a", 3)
    assert entry is not None and entry.block_ids == (1048573, 1048574, 1048575)
    assert all(b is free._ids[b] for b in entry.block_ids)
