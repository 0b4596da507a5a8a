"""What EmbeddingCache's repr reports, for the allocator that is not the default.

Found by mutation testing (mutation/SURVIVORS.md): only the default
allocator's repr was checked, so a repr that named "stack" for every pool
passed.
"""

from __future__ import annotations

from cache_observe import put_ready

from embedding_cache import EmbeddingCache


def test_the_repr_names_the_extents_allocator_and_the_counts() -> None:
    cache = EmbeddingCache(6, eviction="s3fifo", allocator="extents")
    put_ready(cache, "k", 2)
    assert repr(cache) == (
        "EmbeddingCache(num_blocks=6, eviction='s3fifo', allocator='extents', "
        "free=4, entries=1, evictable_blocks=2)"
    )
