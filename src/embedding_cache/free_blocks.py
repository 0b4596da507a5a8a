"""FreeBlocks: the free block ids as runs of consecutive ids, coalesced on free.

vLLM's worker turns each run of consecutive block ids into one transfer
descriptor, so an entry whose ids form one run costs one descriptor instead
of one per block. The seed keeps free ids on a LIFO stack, which scatters
them (5.78 runs per multi-block entry on the shared op mix). Here the free
ids are kept as maximal *extents* [start, end): freeing merges a run with
its free neighbours in O(1), and allocating carves ``n`` ids from the front
of the smallest extent that holds them (segregated fit over power-of-two
size classes), so entries come out as one run whenever any free extent is
long enough, and fragments stay rare.

Every operation costs O(runs touched + log2 of the pool size) plus the
O(n) C-level ``tuple(range(...))`` that materialises the ids; nothing walks
the whole pool except ``__iter__`` (for the invariant sweep).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

#: A run of consecutive block ids [start, end).
Run = tuple[int, int]


def runs_of(ids: Sequence[int]) -> list[Run]:
    """The maximal runs of consecutive ids in ``ids`` (ascending, unique). O(1) for one run.

    An entry allocated here is usually one run: checked in O(1) from its ends,
    so freeing it does not walk its ids.
    """
    if not ids:
        return []
    first, last = ids[0], ids[-1]
    if last - first + 1 == len(ids):
        return [(first, last + 1)]
    out: list[Run] = []
    start = prev = first
    for b in ids[1:]:
        if b != prev + 1:
            out.append((start, prev + 1))
            start = b
        prev = b
    out.append((start, prev + 1))
    return out


def size_class(length: int) -> int:
    """The class of an extent of ``length`` >= 1 ids: floor(log2(length))."""
    return length.bit_length() - 1


class FreeBlocks:
    """The free ids of a pool of ``num_blocks``, as coalesced extents (module docstring)."""

    __slots__ = ("_by_end", "_by_start", "_classes", "_count", "_mask")

    def __init__(self, num_blocks: int) -> None:
        """All of 0 .. num_blocks-1 free, as one extent. O(log num_blocks)."""
        #: start -> end of every free extent.
        self._by_start: dict[int, int] = {}
        #: end -> start of every free extent (for merging with a left neighbour).
        self._by_end: dict[int, int] = {}
        #: Size class c -> starts of the extents whose length is in [2**c, 2**(c+1)).
        self._classes: list[dict[int, None]] = [{} for _ in range(max(1, num_blocks.bit_length()))]
        #: Bit c set iff class c is not empty.
        self._mask = 0
        self._count = 0
        if num_blocks:
            self._insert(0, num_blocks)

    # ------------------------------------------------------------ extents

    def _insert(self, start: int, end: int) -> None:
        self._by_start[start] = end
        self._by_end[end] = start
        c = size_class(end - start)
        self._classes[c][start] = None
        self._mask |= 1 << c
        self._count += end - start

    def _remove(self, start: int) -> int:
        end = self._by_start.pop(start)
        del self._by_end[end]
        c = size_class(end - start)
        members = self._classes[c]
        del members[start]
        if not members:
            self._mask &= ~(1 << c)
        self._count -= end - start
        return end

    # ------------------------------------------------------------ queries

    def __len__(self) -> int:
        """How many ids are free. O(1)."""
        return self._count

    def __iter__(self) -> Iterator[int]:
        """Every free id, ascending. O(free + extents log extents): for sweeps only."""
        for start in sorted(self._by_start):
            yield from range(start, self._by_start[start])

    def extents(self) -> list[Run]:
        """The free extents, ascending. O(extents log extents)."""
        return sorted(self._by_start.items())

    def __repr__(self) -> str:
        shown = ", ".join(f"{a}..{b - 1}" for a, b in self.extents()[:8])
        more = ", ..." if len(self._by_start) > 8 else ""
        return f"FreeBlocks({self._count} free: {shown}{more})"

    # ------------------------------------------------------------ changes

    def give(self, ids: Sequence[int]) -> None:
        """Free ``ids`` (ascending, unique, not free), merging with free neighbours.

        O(runs of ids): one run for an entry this allocator handed out whole.
        """
        by_start, by_end = self._by_start, self._by_end
        for start, end in runs_of(ids):
            if end in by_start:
                end = self._remove(end)
            left = by_end.get(start)
            if left is not None:
                self._remove(left)
                start = left
            self._insert(start, end)

    def take(self, n: int) -> tuple[int, ...]:
        """Allocate ``n`` <= len(self) ids, ascending, in as few runs as the extents allow.

        One run whenever an extent of >= n ids exists: the front of an extent
        from the smallest size class that guarantees n (good fit), else the
        first extent of n's own class that is long enough; otherwise whole
        extents from the largest class down until n are gathered.
        O(log pool + runs) plus the ids' materialisation.
        """
        if n <= 0:
            return ()
        start = self._fit(n)
        if start is not None:
            end = self._remove(start)
            if end - start > n:
                self._insert(start + n, end)
            return tuple(range(start, start + n))
        runs: list[Run] = []
        need = n
        while need:
            c = self._mask.bit_length() - 1  # the largest class left
            start = next(iter(self._classes[c]))
            end = self._remove(start)
            if end - start > need:
                self._insert(start + need, end)
                end = start + need
            runs.append((start, end))
            need -= end - start
        runs.sort()
        ids: list[int] = []
        for a, b in runs:
            ids.extend(range(a, b))
        return tuple(ids)

    def _fit(self, n: int) -> int | None:
        """Start of an extent holding >= n ids, or None. O(log pool) (+ a short scan)."""
        need_class = (n - 1).bit_length()  # every extent of this class or above holds n
        above = self._mask >> need_class
        if above:
            c = need_class + (above & -above).bit_length() - 1
            return next(iter(self._classes[c]))
        c = need_class - 1  # n's own class: lengths in [2**c, 2**(c+1)), some may hold n
        if c >= 0 and self._mask >> c & 1:
            by_start = self._by_start
            for tried, start in enumerate(self._classes[c]):
                if by_start[start] - start >= n:
                    return start
                if tried >= 16:  # bounded: fall back to gathering runs
                    break
        return None

    def copy(self) -> FreeBlocks:
        """An independent copy. O(extents)."""
        twin = FreeBlocks(0)
        twin._by_start = dict(self._by_start)
        twin._by_end = dict(self._by_end)
        twin._classes = [dict(members) for members in self._classes]
        twin._mask = self._mask
        twin._count = self._count
        return twin

    def plan_take(self, n: int, extra: Iterable[int]) -> tuple[int, ...]:
        """What ``give(extra)`` then ``take(n)`` would return, leaving this object unchanged.

        For the checked build's alloc contract (which blocks an alloc must take).
        O(extents): it works on a copy. Used only in checked builds.
        """
        twin = self.copy()
        twin.give(sorted(extra))
        return twin.take(n)
