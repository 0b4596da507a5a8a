"""The free pools: where an alloc's block ids come from, and where freed ones go back.

Two allocators, chosen per cache (``EmbeddingCache(n, allocator=...)``):

- ``"stack"`` (the default): ``FreeStack``, the seed's LIFO stack of ids, so
  block ids are the seed's exactly;
- ``"extents"``: ``FreeBlocks`` (``extents``), the free ids as coalesced runs,
  cut by best fit, so entries come out as one run of consecutive ids far more
  often (fewer transfer descriptors).

Both implement ``FreePool``; the transitions, the alloc contract
(``plan_take``) and the discard contract (``just_freed``) use only that, and
the contiguity loop (spec/SPEC.md section 14) the extents' ``take_run`` and
the merged length ``give`` returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from .build import CHECKED
from .extents import EXACT_LENGTHS, FIT_SCAN, FreeBlocks
from .runs import Run, runs_of, size_class
from .tracked_extents import TrackedFreeBlocks


class FreePool(Protocol):
    """What the transitions and contracts need of the free block ids."""

    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[int]: ...
    def take(self, n: int) -> tuple[int, ...]: ...
    def give(self, ids: Sequence[int]) -> object: ...
    def extend(self, ids: Sequence[int]) -> object: ...
    def just_freed(self, ids: Sequence[int]) -> bool: ...
    def has_run(self, n: int) -> bool: ...
    def plan_take(self, n: int, extra: Iterable[Sequence[int]]) -> tuple[int, ...]: ...
    def copy(self) -> FreePool: ...
    def check(self) -> str | None: ...


class FreeStack(list[int]):
    """The seed's free list: a LIFO stack of ids (``allocator="stack"``, the default).

    ``take(n)`` pops the top n and sorts them, ``give`` pushes; so the ids an
    alloc gets are the seed's exactly, scattered as the seed's are. Kept for
    exact seed compatibility and for CrossHair, whose solver handles a list
    far better than the extent dictionaries. Same interface as FreeBlocks.
    """

    __slots__ = ()

    def take(self, n: int) -> tuple[int, ...]:
        """The top ``n`` ids, ascending. O(n log n)."""
        if n <= 0:
            return ()
        taken = self[-n:]
        del self[-n:]
        taken.sort()
        return tuple(taken)

    #: Push ``ids`` on top, in order. O(len(ids)). (list.extend itself: a C-level call.)
    give = list.extend

    def has_run(self, n: int) -> bool:
        """True iff ``n`` consecutive ids are free (TLA+ HasRun). O(free log free): the
        stack keeps no runs (a cache with contiguity uses extents); for checkers."""
        if n <= 0:
            return True
        length, prev = 0, -2
        for b in sorted(self):
            length = length + 1 if b == prev + 1 else 1
            if length >= n:
                return True
            prev = b
        return False

    def just_freed(self, ids: Sequence[int]) -> bool:
        """After ``give(ids)``: the top of the stack is exactly ``ids``. O(len(ids))."""
        return not ids or self[-len(ids) :] == list(ids)

    def plan_take(self, n: int, extra: Iterable[Sequence[int]]) -> tuple[int, ...]:
        """What giving each ``ids`` of ``extra`` in turn, then ``take(n)``, would return.
        O(n + ids in extra)."""
        if n <= 0:
            return ()
        pool = self[-n:] + [b for ids in extra for b in ids]
        return tuple(sorted(pool[len(pool) - n :]))

    def copy(self) -> FreeStack:
        """An independent copy. O(N)."""
        return FreeStack(self)

    def check(self) -> str | None:
        """The stack keeps no structure beyond its ids (the sweep checks those): None. O(1)."""
        return None


#: Allocator name -> the free pool it keeps (``EmbeddingCache(n, allocator=...)``).
ALLOCATORS: dict[str, str] = {
    "stack": "the seed's LIFO stack: the seed's block ids exactly; fastest",
    "extents": "coalesced free extents: fewer runs of consecutive ids per entry",
}

#: The allocator a cache uses unless told otherwise.
DEFAULT_ALLOCATOR = "stack"


def make_free_pool(allocator: object, num_blocks: int) -> FreeStack | FreeBlocks:
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
        return TrackedFreeBlocks(num_blocks) if CHECKED else FreeBlocks(num_blocks)
    raise ValueError(
        f"EmbeddingCache: unknown allocator {allocator!r}; valid: {', '.join(ALLOCATORS)}"
    )


def allocator_name(pool: FreePool) -> str:
    """The ``ALLOCATORS`` name of ``pool``'s kind. O(1)."""
    return "extents" if isinstance(pool, FreeBlocks) else "stack"


__all__ = [
    "ALLOCATORS",
    "DEFAULT_ALLOCATOR",
    "EXACT_LENGTHS",
    "FIT_SCAN",
    "FreeBlocks",
    "FreePool",
    "FreeStack",
    "Run",
    "TrackedFreeBlocks",
    "allocator_name",
    "make_free_pool",
    "runs_of",
    "size_class",
]
