"""FreeStack: the seed's free list, a LIFO stack of block ids (``allocator="stack"``).

The default allocator (``allocators``). A ``free_pool.FreePool``; it keeps
no runs, so the run queries (``has_run``, ``take_run``) sort the free ids:
a cache with contiguity uses the extents pool (``validate_contiguity``), and
these serve the checkers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class FreeStack(list[int]):
    """The seed's free list: a LIFO stack of ids (``allocator="stack"``, the default).

    ``take(n)`` pops the top n and sorts them, ``give`` pushes; so the ids an
    alloc gets are the seed's exactly, scattered as the seed's are. Kept for
    exact seed compatibility and for CrossHair, whose solver handles a list
    far better than the extent dictionaries. Same interface as ExtentPool.
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

    #: Push ``ids`` on top, in order; None, as the stack keeps no runs (``FreePool.give``).
    #: O(len(ids)). (list.extend itself: a C-level call, on the default build's hot path.)
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

    def take_run(self, n: int) -> tuple[int, ...] | None:
        """``n`` consecutive free ids, ascending, taken from the lowest run that holds
        them, or None when none does (nothing changes then). O(free log free): the
        stack keeps no runs (a cache with contiguity uses extents); for checkers."""
        if n <= 0:
            return ()
        length, prev = 0, -2
        for b in sorted(self):
            length = length + 1 if b == prev + 1 else 1
            if length >= n:
                run = range(b - n + 1, b + 1)
                self[:] = [i for i in self if i not in run]  # the rest keep their order
                return tuple(run)
            prev = b
        return None

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


__all__ = ["FreeStack"]
