"""Free pools of a chosen shape, for the allocator tests."""

from __future__ import annotations

from embedding_cache.extent_pool import ExtentPool


def pool_with_extents(lengths: list[int]) -> tuple[ExtentPool, list[tuple[int, ...]]]:
    """A pool whose free extents have ``lengths``, in that order (and in that order in
    their size classes), one used id apart; and each extent's ids."""
    fb = ExtentPool(sum(lengths) + len(lengths))
    everything = fb.take(len(fb))
    extents, at = [], 0
    for length in lengths:
        extents.append(everything[at : at + length])
        at += length + 1
    for ids in extents:
        fb.give(ids)
    return fb, extents
