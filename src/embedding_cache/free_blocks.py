"""FreeBlocks: the free block ids as runs of consecutive ids, coalesced on free.

vLLM's worker turns each run of consecutive block ids into one transfer
descriptor, so an entry whose ids form one run costs one descriptor instead
of one per block. The seed keeps free ids on a LIFO stack, which scatters
them (5.78 runs per multi-block entry on the shared op mix). Here the free
ids are kept as maximal *extents* [start, end): freeing merges a run with
its free neighbours in O(1), and allocating carves ``n`` ids from the back
of the shortest extent that holds them (best fit, bounded to ``FIT_SCAN``
extents of a power-of-two size class), so entries come out as one run
whenever a free extent is long enough, and the long extents stay whole.
When none is, the longest extents are taken whole until the rest fits in
one, and the rest is carved by best fit again.

Every operation costs O(runs touched + log2 of the pool size) plus the
O(n) C-level slice that hands out the ids; nothing walks the whole pool
except ``__iter__`` (for the invariant sweep). The ids are sliced from one
tuple of all the pool's ids, built once (O(N), C-level, as the stack's list
is), so an entry shares the pool's int objects instead of creating its own:
memory per live entry is the stack's (``bench --memory``).

The cache's allocator is chosen per cache: ``EmbeddingCache(n,
allocator="stack")`` (the default: the seed's LIFO stack, ``FreeStack``, so
block ids are the seed's exactly) or ``allocator="extents"`` (``FreeBlocks``).
Both implement ``FreePool``; the transitions, the alloc contract
(``plan_take``) and the discard contract (``just_freed``) use only that.

Measured (``embedding-cache bench --beyond-seed``; fifo, the shared op mix):
extents give 3.17 runs per multi-block entry against the stack's 5.78, at
about twice the stack's time per alloc (pure-Python dictionaries against a
C-level list slice). Best fit matters: cutting the rest from the longest
extent instead gave 4.00, and choosing at every alloc the fewest runs that
cover n (longest first) 3.88, because it splits long extents that later
allocs needed whole. Under the spec's eviction rule (evict only while fewer
than n ids are free, victims in the policy's order) no allocator reaches
one run per entry: an alloc frees exactly what it needs from wherever the
policy's victims lie (spec/SPEC.md section 10 has what relaxing that rule
would buy).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from .build import CHECKED

#: A run of consecutive block ids [start, end).
Run = tuple[int, int]

#: How many extents of one size class ``FreeBlocks._fit`` compares (bounded best fit).
FIT_SCAN = 16

#: Enough 1-bytes for most runs, so marking a run free copies a slice.
_ONES = b"\x01" * 4096


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


class FreePool(Protocol):
    """What the transitions and contracts need of the free block ids."""

    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[int]: ...
    def take(self, n: int) -> tuple[int, ...]: ...
    def give(self, ids: Sequence[int]) -> None: ...
    def extend(self, ids: Sequence[int]) -> None: ...
    def just_freed(self, ids: Sequence[int]) -> bool: ...
    def has_run(self, n: int) -> bool: ...
    def plan_take(self, n: int, extra: Iterable[Sequence[int]]) -> tuple[int, ...]: ...
    def copy(self) -> FreePool: ...


class FreeBlocks:
    """The free ids of a pool of ``num_blocks``, as coalesced extents (module docstring)."""

    __slots__ = ("_by_end", "_by_start", "_classes", "_count", "_ids", "_map", "_mask")

    def __init__(self, num_blocks: int, *, track: bool = False) -> None:
        """All of 0 .. num_blocks-1 free, as one extent. O(num_blocks), C-level (the ids' tuple).

        ``track`` keeps a byte per id saying whether it is free, so that the
        checked builds' contracts can ask ``just_freed`` exactly (O(N) to build,
        a C-level slice per change); the default build does without.
        """
        #: start -> end of every free extent.
        self._by_start: dict[int, int] = {}
        #: end -> start of every free extent (for merging with a left neighbour).
        self._by_end: dict[int, int] = {}
        #: Size class c -> starts of the extents whose length is in [2**c, 2**(c+1)).
        self._classes: list[dict[int, None]] = [{} for _ in range(max(1, num_blocks.bit_length()))]
        #: Bit c set iff class c is not empty.
        self._mask = 0
        self._count = 0
        #: Every id of the pool, once: what ``take`` slices (shared by copies).
        self._ids: tuple[int, ...] = tuple(range(num_blocks))
        #: One byte per id, 1 when free (only with ``track``; empty otherwise).
        self._map = bytearray(num_blocks) if track else bytearray()
        if num_blocks:
            self._insert(0, num_blocks)

    # ------------------------------------------------------------ extents

    def _insert(self, start: int, end: int) -> None:
        if self._map:  # empty only in plan_take's scratch copy (and a 0-block pool)
            n = end - start
            self._map[start:end] = _ONES[:n] if n <= len(_ONES) else b"\x01" * n
        self._by_start[start] = end
        self._by_end[end] = start
        c = (end - start).bit_length() - 1  # size_class, inlined: the hot path
        self._classes[c][start] = None
        self._mask |= 1 << c
        self._count += end - start

    def _remove(self, start: int) -> int:
        end = self._by_start.pop(start)
        if self._map:
            self._map[start:end] = bytes(end - start)
        del self._by_end[end]
        c = (end - start).bit_length() - 1  # size_class, inlined: the hot path
        members = self._classes[c]
        del members[start]
        if not members:
            self._mask &= ~(1 << c)
        self._count -= end - start
        return end

    def _shrink(self, start: int, end: int, new_end: int) -> None:
        """Cut [new_end, end) off the back of the extent at ``start``: its start key
        stays, so only the end index (and, across a power of two, its class) change."""
        self._by_start[start] = new_end
        del self._by_end[end]
        self._by_end[new_end] = start
        self._count -= end - new_end
        if self._map:
            self._map[new_end:end] = bytes(end - new_end)
        old_c, new_c = (end - start).bit_length() - 1, (new_end - start).bit_length() - 1
        if old_c != new_c:
            members = self._classes[old_c]
            del members[start]
            if not members:
                self._mask &= ~(1 << old_c)
            self._classes[new_c][start] = None
            self._mask |= 1 << new_c

    # ------------------------------------------------------------ queries

    def __len__(self) -> int:
        """How many ids are free. O(1)."""
        return self._count

    def __iter__(self) -> Iterator[int]:
        """Every free id, ascending. O(free + extents log extents): for sweeps only."""
        for start in sorted(self._by_start):
            yield from range(start, self._by_start[start])

    def just_freed(self, ids: Sequence[int]) -> bool:
        """After ``give(ids)``: True when every id in ``ids`` is free.

        Exact with ``track`` (O(len(ids)), C-level per run); without it, only
        that the free count covers them (the full sweep checks identities).
        """
        free_map = self._map
        if not free_map:
            return self._count >= len(ids)
        for a, b in runs_of(ids):
            if a < 0 or b > len(free_map) or free_map.find(0, a, b) != -1:
                return False
        return True

    def extents(self) -> list[Run]:
        """The free extents, ascending. O(extents log extents)."""
        return sorted(self._by_start.items())

    def __repr__(self) -> str:
        shown = ", ".join(f"{a}..{b - 1}" for a, b in self.extents()[:8])
        more = ", ..." if len(self._by_start) > 8 else ""
        return f"FreeBlocks({self._count} free: {shown}{more})"

    # ------------------------------------------------------------ changes

    def extend(self, ids: Sequence[int]) -> None:
        """``give``, under the name a list uses (the seed's free list was one)."""
        self.give(ids)

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

        One run whenever an extent of >= n ids is found: the back of the
        shortest one that fits (``_fit``). Otherwise whole extents, longest
        first, until the rest fits in one extent, which is then carved from
        the shortest that fits, so the long extents left stay whole.
        O(runs x (log pool + FIT_SCAN)) plus the ids' materialisation.
        """
        if n <= 0:
            return ()
        runs: list[Run] = []
        need = n
        while True:
            start = self._fit(need)
            if start is not None:  # the rest fits in one extent
                end = self._by_start[start]
                if end - start == need:
                    self._remove(start)
                else:
                    self._shrink(start, end, end - need)
                if need == n:  # one run: the common case, no gathering
                    return self._ids[end - n : end]
                runs.append((end - need, end))
                break
            # No extent holds the rest, so the longest (the first of the top class,
            # which _fit looked at if that class is the rest's own) is shorter: take it whole.
            start = next(iter(self._classes[self._mask.bit_length() - 1]))
            end = self._remove(start)
            runs.append((start, end))
            need -= end - start
        runs.sort()
        pool = self._ids
        ids: tuple[int, ...] = ()
        for a, b in runs:
            ids += pool[a:b]
        return ids

    def _fit(self, n: int) -> int | None:
        """Start of the shortest extent holding >= ``n`` >= 1 ids among those looked at;
        None only when no free extent holds n.

        Best fit, bounded: among the first ``FIT_SCAN`` extents of n's own size
        class, the shortest that holds n (an exact fit ends the look); if none
        does, the shortest of the first ``FIT_SCAN`` of the smallest non-empty
        class above, every one of which holds n. When no class above is free,
        all of n's own class is looked at. Carving from the shortest extent
        that fits keeps the long ones whole for later allocs (the module
        docstring's figures). O(log pool + FIT_SCAN), or O(extents of n's
        class) when no longer class is free.
        """
        mask = self._mask
        c = n.bit_length() - 1  # n's own class: extents of 2**c .. 2**(c+1)-1 ids
        above = mask >> (c + 1)
        if mask >> c & 1:
            # With no class above, this class is the last chance: look at all of it,
            # so that an extent holding n is always found (has_run is exact).
            start = self._shortest(self._classes[c], n, FIT_SCAN if above else None)
            if start is not None:
                return start
        if not above:
            return None
        return self._shortest(self._classes[c + (above & -above).bit_length()], n, FIT_SCAN)

    def has_run(self, n: int) -> bool:
        """True iff some free extent holds ``n`` consecutive ids (TLA+ HasRun). Exact.

        O(1) when a longer size class than n's is free (the common case: every
        extent there holds n), else O(extents of n's size class), which it scans.
        """
        if n <= 0:
            return True
        c = n.bit_length() - 1
        mask = self._mask
        if mask >> (c + 1):
            return True
        if not mask >> c & 1:
            return False
        by_start = self._by_start
        return any(by_start[start] - start >= n for start in self._classes[c])

    def _shortest(self, members: dict[int, None], n: int, limit: int | None) -> int | None:
        """The start of the shortest extent of >= n ids (the first of equals) among the
        first ``limit`` of ``members`` (a size class; all of it for None), or None.
        O(limit), or O(members)."""
        by_start = self._by_start
        best: int | None = None
        best_length = sys.maxsize
        for start in itertools.islice(members, limit):
            length = by_start[start] - start
            if length == n:  # exact: nothing fits better
                return start
            if n < length < best_length:
                best, best_length = start, length
        return best

    def copy(self, *, with_map: bool = True) -> FreeBlocks:
        """An independent copy. O(extents), plus O(N) for the membership map."""
        twin = FreeBlocks(0)
        twin._ids = self._ids
        twin._by_start = dict(self._by_start)
        twin._by_end = dict(self._by_end)
        twin._classes = [dict(members) for members in self._classes]
        twin._mask = self._mask
        twin._count = self._count
        twin._map = self._map[:] if with_map else bytearray()
        return twin

    def plan_take(self, n: int, extra: Iterable[Sequence[int]]) -> tuple[int, ...]:
        """What ``give(ids)`` for each ``ids`` of ``extra`` in turn, then ``take(n)``, would
        return, leaving this object unchanged.

        For the checked build's alloc contract (which blocks an alloc must take):
        ``extra`` is each victim's ids in eviction order, given back one victim at
        a time as the alloc does, since the order they are merged in decides which
        extent best fit meets first among equals. O(extents): it works on a copy
        without the membership map. Checked builds only.
        """
        twin = self.copy(with_map=False)
        for ids in extra:
            twin.give(ids)
        return twin.take(n)


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
        return FreeBlocks(num_blocks, track=CHECKED)
    raise ValueError(
        f"EmbeddingCache: unknown allocator {allocator!r}; valid: {', '.join(ALLOCATORS)}"
    )


def allocator_name(pool: FreePool) -> str:
    """The ``ALLOCATORS`` name of ``pool``'s kind. O(1)."""
    return "extents" if isinstance(pool, FreeBlocks) else "stack"
