"""ExtentPool: the free block ids as maximal runs (extents), coalesced on free, best fit on take.

vLLM's worker turns each run of consecutive block ids into one transfer
descriptor, so an entry whose ids form one run costs one descriptor instead
of one per block. The seed keeps free ids on a LIFO stack, which scatters
them (5.78 runs per multi-block entry on the shared op mix). Here the free
ids are kept as maximal *extents* [start, end): freeing merges a run with
its free neighbours in O(1), and allocating carves ``n`` ids from the back
of the shortest extent that holds them (best fit), so entries come out as
one run whenever a free extent is long enough, and the long extents stay
whole. When none is, the longest extents are taken whole until the rest fits
in one, and the rest is carved by best fit again.

**The index.** Best fit must not scan the extents: each extent's start sits
on a stack of its exact length (lengths up to ``EXACT_LENGTHS``; a bit per
length says which stacks are not empty, so the shortest length >= n that has
an extent is two integer operations) or, when longer, on the stack of its
power-of-two size class (a bit per class; best fit bounded to ``FIT_SCAN``
extents of a class, all of it when no longer class is free, so a run is
never missed: ``has_run`` is exact). The stacks are *lazy*: merging or
cutting an extent does not look for its old entry; an entry is live iff its
start still begins an extent of its stack's length (class), and stale
entries are dropped when met. That makes ``give`` a handful of dictionary
operations, and the index is rebuilt when stale entries outnumber the
extents (O(extents), so O(1) amortized). Among extents of one length, the
most recently indexed is cut first.

Every operation costs O(runs touched + log N) amortized, plus the O(n)
C-level slice that hands out the ids; nothing walks the whole pool except
``__iter__`` and ``check`` (for the invariant sweep). The ids are sliced
from one tuple of all the pool's ids, built once (O(N), C-level, as the
stack's list is), so an entry shares the pool's int objects instead of
creating its own: memory per live entry is the stack's (``bench --memory``).

Measured (``embedding-cache bench --beyond-seed``, the shared op mix; fifo):
extents give about 3.1 runs per multi-block entry against the stack's 5.78.
Best fit matters: cutting the rest from the longest extent instead gave 4.00,
and choosing at every alloc the fewest runs that cover n (longest first)
3.88, because it splits long extents that later allocs needed whole. Under
the spec's eviction rule (evict only while fewer than n ids are free) no
allocator reaches one run per entry: spec/SPEC.md section 14 relaxes it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

from .extent_index import COMPACT_SLACK, EXACT_LENGTHS, ExtentIndex
from .runs import Run, runs_of


class ExtentPool(ExtentIndex):
    """The free ids of a pool of ``num_blocks``, as coalesced extents (module docstring)."""

    __slots__ = (
        "_by_end",
        "_by_start",
        "_count",
        "_ids",
    )

    def __init__(self, num_blocks: int) -> None:
        """All of 0 .. num_blocks-1 free, as one extent. O(num_blocks), C-level (the ids' tuple)."""
        #: start -> end of every free extent.
        self._by_start: dict[int, int] = {}
        #: end -> start of every free extent (for merging with a left neighbour).
        self._by_end: dict[int, int] = {}
        #: Lengths up to this are indexed exactly (``EXACT_LENGTHS``, or the pool's size).
        self._exact_limit = min(num_blocks, EXACT_LENGTHS)
        #: Length -> a stack of starts of extents of that length (some stale); a missing
        #: length reads as an empty stack (C-level, unlike ``dict.get``).
        self._exact: defaultdict[int, list[int]] = defaultdict(list)
        #: Bit L set iff ``_exact[L]`` is not empty.
        self._lengths = 0
        #: Size class c -> a stack of starts of extents longer than the exact limit whose
        #: length is in [2**c, 2**(c+1)) (some stale).
        self._classes: defaultdict[int, list[int]] = defaultdict(list)
        #: Bit c set iff ``_classes[c]`` is not empty.
        self._class_mask = 0
        #: How many ids are free.
        self._count = 0
        #: An upper bound on the index's entries: the count at the last rebuild
        #: (``_compact``) or recount (``_due``), plus the pushes since; and the bound at
        #: which they are recounted: twice the extents at a rebuild (thrice at a
        #: recount), plus slack, so that stale entries never outnumber live ones by
        #: much and a rebuild's O(extents) is paid for by as many pushes.
        self._pushes = 0
        self._compact_at = COMPACT_SLACK
        #: Every id of the pool, once: what ``take`` slices (shared by copies).
        self._ids: tuple[int, ...] = tuple(range(num_blocks))
        if num_blocks:
            self._by_start[0] = num_blocks
            self._by_end[num_blocks] = 0
            self._count = num_blocks
            self._index(0, num_blocks)

    def _unlink(self, start: int, end: int) -> None:
        """Forget the free extent [start, end) (its index entry goes stale). O(1)."""
        del self._by_start[start]
        del self._by_end[end]
        self._count -= end - start

    # ------------------------------------------------------------ queries

    def __len__(self) -> int:
        """How many ids are free. O(1)."""
        return self._count

    def __iter__(self) -> Iterator[int]:
        """Every free id, ascending. O(free + extents log extents): for sweeps only."""
        for start in sorted(self._by_start):
            yield from range(start, self._by_start[start])

    def just_freed(self, ids: Sequence[int]) -> bool:
        """After ``give(ids)``: only that the free count covers them (untracked: the full
        sweep checks identities; ``TrackedExtentPool`` checks each id). O(1)."""
        return self._count >= len(ids)

    def extents(self) -> list[Run]:
        """The free extents, ascending. O(extents log extents)."""
        return sorted(self._by_start.items())

    def has_run(self, n: int) -> bool:
        """True iff some free extent holds ``n`` consecutive ids (TLA+ HasRun). Exact.

        O(1) amortized up to the exact limit (the lengths' bits, stale entries
        dropped on the way); above it, O(extents of n's size class) when no longer
        class is free.
        """
        if n <= 0:
            return True
        if n <= self._exact_limit:
            lengths = self._lengths >> n
            by_start, exact = self._by_start, self._exact
            while lengths:
                low = lengths & -lengths
                length = n + low.bit_length() - 1
                stack = exact[length]
                while stack:
                    start = stack[-1]
                    if by_start.get(start) == start + length:
                        return True
                    stack.pop()  # stale: drop it
                self._lengths ^= 1 << length
                lengths ^= low
        return bool(self._class_mask) and self._find_in_classes(n) is not None

    def __repr__(self) -> str:
        shown = ", ".join(f"{a}..{b - 1}" for a, b in self.extents()[:8])
        more = ", ..." if len(self._by_start) > 8 else ""
        return f"ExtentPool({self._count} free: {shown}{more})"

    def check(self) -> str | None:
        """The pool's own consistency, for the invariant sweep: extents disjoint, maximal
        and in range, mirrored by end, counted, and each one live in the index whose
        bits are exact. None when it holds, else what is wrong. O(extents + index)."""
        by_start, by_end = self._by_start, self._by_end
        if len(by_end) != len(by_start) or any(by_end.get(e) != s for s, e in by_start.items()):
            return "the extents by end do not mirror the extents by start"
        previous_end = -1
        for start, end in sorted(by_start.items()):
            if not previous_end < start < end <= len(self._ids):
                return f"extent [{start}, {end}) overlaps, touches or leaves the pool"
            previous_end = end
            length = end - start
            if length <= self._exact_limit:
                if start not in self._exact.get(length, ()):
                    return f"extent [{start}, {end}) is not on its length's stack"
            elif start not in self._classes.get(length.bit_length() - 1, ()):
                return f"extent [{start}, {end}) is not on its size class's stack"
        if sum(e - s for s, e in by_start.items()) != self._count:
            return f"the free count {self._count} is not the extents' total"
        for bits, stacks, what in (
            (self._lengths, self._exact, "length"),
            (self._class_mask, self._classes, "size class"),
        ):
            if any(bool(bits >> key & 1) != bool(stack) for key, stack in stacks.items()) or any(
                key not in stacks for key in range(bits.bit_length()) if bits >> key & 1
            ):
                return f"the {what} bits disagree with the {what} stacks"
        return None

    # ------------------------------------------------------------ changes

    def extend(self, ids: Sequence[int]) -> int:
        """``give``, under the name a list uses (the seed's free list was one)."""
        return self.give(ids)

    def give(self, ids: Sequence[int]) -> int:
        """Free ``ids`` (ascending, unique, not free), merging with free neighbours; the
        length of the longest extent this made (0 for no ids).

        The contiguity loop reads that length: before this call no free extent
        held its n ids, so one does now iff this one does. O(runs of ids), amortized:
        one run for an entry this allocator handed out whole.
        """
        count = len(ids)
        if not count:
            return 0
        start, end = ids[0], ids[-1] + 1
        if end - start != count:
            return self._give_runs(runs_of(ids), count)
        # One run, the common case (an entry this allocator handed out whole): the
        # loop of _give_runs unrolled, without its tuple of runs, as a give is on
        # every eviction's path.
        # Merge a free extent right after, then one right before. Tested with ``in``
        # first: most runs meet neither, and a miss is then cheaper than a pop.
        by_start, by_end = self._by_start, self._by_end
        if end in by_start:
            end = by_start.pop(end)
            del by_end[end]
        if start in by_end:
            start = by_end.pop(start)
            del by_start[start]
        by_start[start] = end
        by_end[end] = start
        self._count += count
        # Index it (the merged neighbours' entries go stale): _index, inlined for
        # the exact lengths (the common case; a call costs a fifth of a give).
        length = end - start
        if length <= self._exact_limit:
            stack = self._exact[length]
            if not stack:
                self._lengths |= 1 << length
            stack.append(start)
            self._pushes += 1
        else:
            self._index(start, length)
        if self._pushes > self._compact_at:
            self._due()
        return length

    def _give_runs(self, runs: list[Run], count: int) -> int:
        """``give`` of ``count`` ids in several ``runs``: each merged and indexed as
        ``give`` does one; the longest extent made. O(runs), amortized."""
        by_start, by_end, exact = self._by_start, self._by_end, self._exact
        limit = self._exact_limit
        longest = 0
        for start, end in runs:
            if end in by_start:
                end = by_start.pop(end)
                del by_end[end]
            if start in by_end:
                start = by_end.pop(start)
                del by_start[start]
            by_start[start] = end
            by_end[end] = start
            length = end - start
            if length <= limit:
                stack = exact[length]
                if not stack:
                    self._lengths |= 1 << length
                stack.append(start)
                self._pushes += 1
            else:
                self._index(start, length)
            if length > longest:
                longest = length
        self._count += count
        if self._pushes > self._compact_at:
            self._due()
        return longest

    def take_run(self, n: int) -> tuple[int, ...] | None:
        """``n`` ids in one run, cut from the back of the shortest free extent that holds
        them (best fit), or None when no free extent does (nothing changes then).
        O(1) amortized up to the exact limit, else O(FIT_SCAN) or O(n's size class)."""
        if n <= 0:
            return ()
        # Best fit: the shortest indexed length >= n with a live entry (popped), else the
        # size classes' (whose entry is left: it goes stale when the extent is cut).
        if n <= self._exact_limit:
            lengths = self._lengths >> n
            by_start, exact = self._by_start, self._exact
            while lengths:
                low = lengths & -lengths
                length = n + low.bit_length() - 1
                stack = exact[length]
                while stack:
                    start = stack.pop()
                    end = start + length
                    if by_start.get(start) == end:  # live
                        if not stack:
                            self._lengths ^= 1 << length
                        # _cut, inlined (take_run is on every contiguous alloc's path, and
                        # a call is a good part of its cost): the rest is shorter than
                        # this exact length, so it is indexed exactly.
                        del self._by_end[end]
                        self._count -= n
                        rest = length - n
                        if rest:
                            by_start[start] = start + rest
                            self._by_end[start + rest] = start
                            stack = exact[rest]
                            if not stack:
                                self._lengths |= 1 << rest
                            stack.append(start)
                            self._pushes += 1
                            if self._pushes > self._compact_at:
                                self._due()
                        else:
                            del by_start[start]
                        return self._ids[end - n : end]
                self._lengths ^= 1 << length  # only stale entries were left
                lengths ^= low
        if not self._class_mask:
            return None
        found = self._find_in_classes(n)
        if found is None:
            return None
        return self._cut(found[0], found[1], n)

    def _cut(self, start: int, length: int, n: int) -> tuple[int, ...]:
        """Take ``n`` ids from the back of the free extent [start, start+length), whose
        index entry the caller has popped or left to go stale; the front stays free
        (its start key is kept, only the end moves). O(1) amortized."""
        end = start + length
        del self._by_end[end]
        self._count -= n
        if length == n:
            del self._by_start[start]
        else:
            self._by_start[start] = end - n
            self._by_end[end - n] = start
            self._index(start, length - n)
            if self._pushes > self._compact_at:
                self._due()
        return self._ids[end - n : end]

    def take(self, n: int) -> tuple[int, ...]:
        """Allocate ``n`` <= len(self) ids, ascending, in as few runs as the extents allow.

        One run whenever a free extent holds n (``take_run``). Otherwise whole
        extents, longest first, until the rest fits in one extent, which is then
        cut by best fit, so the long extents left stay whole.
        O(runs x (log N + FIT_SCAN)) amortized, plus the ids' materialisation.
        """
        if n <= 0:
            return ()
        # take_run finds nothing, and changes nothing, when no length bit is at or above
        # n and no size class is free (the bits bound the lengths): then no call. After
        # a contiguity loop that ended without a run, that is the common case.
        if self._class_mask or n < self._lengths.bit_length():
            ids = self.take_run(n)
            if ids is not None:
                return ids
        pool = self._ids
        pieces: list[tuple[int, tuple[int, ...]]] = []  # (start, its ids), the rest last
        need = n
        while True:
            # No extent holds the rest: take the longest whole.
            start, end = self._pop_longest()
            pieces.append((start, pool[start:end]))
            need -= end - start
            # The same test as above, for the rest.
            if self._class_mask or need < self._lengths.bit_length():
                rest = self.take_run(need)
                if rest is not None:
                    pieces.append((rest[0], rest))
                    break
        if len(pieces) == 2:  # the common case: one tuple concatenation, in id order
            (a, first), (b, second) = pieces
            return first + second if a < b else second + first
        pieces.sort()
        taken: list[int] = []  # extended, then one tuple: adding tuples copies each time
        for _, ids in pieces:
            taken += ids
        return tuple(taken)

    def _pop_longest(self) -> Run:
        """Take the longest free extent out of the pool (of the longest size class above
        the exact limit, any of it): (start, end). The pool is not empty. O(1) amortized."""
        by_start = self._by_start
        while self._class_mask:
            c = self._class_mask.bit_length() - 1
            stack = self._classes[c]
            while stack:
                start = stack.pop()
                if self._class_live(start, c):
                    if not stack:
                        self._class_mask ^= 1 << c
                    end = by_start[start]
                    self._unlink(start, end)
                    return start, end
            self._class_mask ^= 1 << c
        exact = self._exact
        while True:  # the longest exact length with a live entry
            length = self._lengths.bit_length() - 1
            stack = exact[length]
            while stack:
                start = stack.pop()
                if by_start.get(start) == start + length:
                    if not stack:
                        self._lengths ^= 1 << length
                    del by_start[start]
                    del self._by_end[start + length]
                    self._count -= length
                    return start, start + length
            self._lengths ^= 1 << length

    def copy(self) -> ExtentPool:
        """An independent copy, index and all (so it cuts what this pool would). O(extents
        + index entries)."""
        twin = ExtentPool(0)
        twin._ids = self._ids
        twin._by_start = dict(self._by_start)
        twin._by_end = dict(self._by_end)
        twin._exact_limit = self._exact_limit
        twin._exact = defaultdict(list, {length: stack[:] for length, stack in self._exact.items()})
        twin._lengths = self._lengths
        twin._classes = defaultdict(list, {c: stack[:] for c, stack in self._classes.items()})
        twin._class_mask = self._class_mask
        twin._count = self._count
        twin._pushes = self._pushes
        twin._compact_at = self._compact_at
        return twin

    def plan_take(self, n: int, extra: Iterable[Sequence[int]]) -> tuple[int, ...]:
        """What ``give(ids)`` for each ``ids`` of ``extra`` in turn, then ``take(n)``, would
        return, leaving this object unchanged.

        For the checked build's alloc contract (which blocks an alloc must take):
        ``extra`` is each victim's ids in eviction order, given back one victim at
        a time as the alloc does, since the order they are indexed in decides which
        extent best fit meets first among equals. O(extents + index): it works on
        a copy. Checked builds only.
        """
        twin = ExtentPool.copy(self)
        for ids in extra:
            twin.give(ids)
        return twin.take(n)
