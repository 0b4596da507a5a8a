"""The allocators a cache chooses from: their names, the default, and the pool each makes.

Two allocators, chosen per cache (``EmbeddingCache(n, allocator=...)``):

- ``"stack"`` (the default): ``free_stack.FreeStack``, the seed's LIFO stack
  of ids, so block ids are the seed's exactly;
- ``"extents"``: ``extent_pool.ExtentPool``, the free ids as coalesced runs,
  cut by best fit, so entries come out as one run of consecutive ids far more
  often (fewer transfer descriptors); in the checked builds its tracked
  variant (``tracked_extent_pool``).

Both are ``free_pool.FreePool``s.
"""

from __future__ import annotations

from .build import CHECKED
from .extent_pool import ExtentPool
from .free_pool import FreePool
from .free_stack import FreeStack
from .tracked_extent_pool import TrackedExtentPool

#: Allocator name -> the free pool it keeps (``EmbeddingCache(n, allocator=...)``).
ALLOCATORS: dict[str, str] = {
    "stack": "the seed's LIFO stack: the seed's block ids exactly; fastest",
    "extents": "coalesced free extents: fewer runs of consecutive ids per entry",
}

#: The allocator a cache uses unless told otherwise.
DEFAULT_ALLOCATOR = "stack"


def make_free_pool(allocator: object, num_blocks: int) -> FreeStack | ExtentPool:
    """All of 0 .. num_blocks-1 free, in the named allocator's pool.

    O(num_blocks), C-level, for both: the stack's list of ids, the extents'
    tuple of ids (plus, in the checked builds, a byte per id so the discard
    contract can check exactly which ids were freed).

    Raises:
        TypeError: ``allocator`` is not a str.
        ValueError: ``allocator`` is not a name in ``ALLOCATORS`` (the message lists them).
    """
    if not isinstance(allocator, str):
        raise TypeError(f"EmbeddingCache: allocator must be a str, not {type(allocator).__name__}")
    if allocator == "stack":
        return FreeStack(range(num_blocks))
    if allocator == "extents":
        return TrackedExtentPool(num_blocks) if CHECKED else ExtentPool(num_blocks)
    raise ValueError(
        f"EmbeddingCache: unknown allocator {allocator!r}; valid: {', '.join(ALLOCATORS)}"
    )


def allocator_name(pool: FreePool) -> str:
    """The ``ALLOCATORS`` name of ``pool``'s kind. O(1)."""
    return "extents" if isinstance(pool, ExtentPool) else "stack"


__all__ = ["ALLOCATORS", "DEFAULT_ALLOCATOR", "allocator_name", "make_free_pool"]
