"""The size-class index of an ``ExtentPool``'s free extents: best fit without a scan.

``ExtentPool`` (``extent_pool.py``, whose docstring describes the index as a
whole) keeps its free ids as extents; this base class holds the part that finds
an extent of at least n ids: stacks of extent starts by exact length (up to
``EXACT_LENGTHS``) or by power-of-two size class, a bit mask of the non-empty
stacks, lazy deletion, and the rebuild (``_compact``) that keeps stale entries
from piling up. Its fields are slots of this class, set by
``ExtentPool.__init__``; the extents themselves are the pool's. A method here
costs what it cost on the pool.
"""

from __future__ import annotations

from collections import defaultdict

from .runs import Run

#: Extents up to this many ids are indexed by their exact length (best fit in O(1));
#: longer ones by their power-of-two size class.
EXACT_LENGTHS = 4096

#: How many extents of one size class best fit compares (above ``EXACT_LENGTHS``).
FIT_SCAN = 16

#: Index entries beyond twice the extents that make the index rebuild (``_compact``);
#: its pushes are counted until then, and the entries recounted (``_due``).
COMPACT_SLACK = 64


class ExtentIndex:
    """The index's methods over the fields ``ExtentPool`` declares (module docstring)."""

    # The index's own fields (``ExtentPool.__init__`` sets them; their meaning is
    # written there); the extents themselves are the pool's, read here.
    __slots__ = (
        "_class_mask",
        "_classes",
        "_compact_at",
        "_exact",
        "_exact_limit",
        "_lengths",
        "_pushes",
    )

    _exact_limit: int
    _exact: defaultdict[int, list[int]]
    _lengths: int
    _classes: defaultdict[int, list[int]]
    _class_mask: int
    _pushes: int
    _compact_at: int
    _by_start: dict[int, int]
    _by_end: dict[int, int]

    def _index(self, start: int, length: int) -> None:
        """Push the extent [start, start+length) on its length's (or class's) stack. O(1)."""
        self._pushes += 1
        if length <= self._exact_limit:
            stack = self._exact[length]
            if not stack:
                self._lengths |= 1 << length
            stack.append(start)
        else:
            c = length.bit_length() - 1
            stack = self._classes[c]
            if not stack:
                self._class_mask |= 1 << c
            stack.append(start)

    def _class_live(self, start: int, c: int) -> int:
        """The length of the extent at ``start`` if it is a live entry of class ``c``, else 0."""
        end = self._by_start.get(start)
        if end is None:
            return 0
        length = end - start
        return length if length > self._exact_limit and length.bit_length() - 1 == c else 0

    def _best_in_class(self, c: int, n: int, limit: int | None) -> Run | None:
        """The shortest live extent of class ``c`` holding >= n ids among the first
        ``limit`` live ones from the top of its stack (all for None): (start, length).
        Stale entries on top are dropped. O(limit + stale entries met)."""
        stack = self._classes[c]
        while stack and not self._class_live(stack[-1], c):
            stack.pop()
        if not stack:
            self._class_mask &= ~(1 << c)
            return None
        best: Run | None = None
        seen = 0
        for start in reversed(stack):
            length = self._class_live(start, c)
            if not length:
                continue
            if length >= n and (best is None or length < best[1]):
                best = (start, length)
                if length == n:  # exact: nothing fits better
                    break
            seen += 1
            if limit is not None and seen >= limit:
                break
        return best

    def _find_in_classes(self, n: int) -> Run | None:
        """Best fit among the extents longer than the exact limit: the shortest of the first
        ``FIT_SCAN`` live ones of n's own class that holds n, else of the smallest class
        above with a live one (every one of which holds n), else, when no longer extent
        is free, the shortest of all of n's class that holds n (so a run is never
        missed). O(FIT_SCAN), or O(n's class)."""
        c = n.bit_length() - 1
        own = self._class_mask >> c & 1
        if own:
            found = self._best_in_class(c, n, FIT_SCAN)
            if found is not None:
                return found
        above = self._class_mask >> (c + 1)
        while above:
            low = above & -above
            found = self._best_in_class(c + low.bit_length(), n, FIT_SCAN)
            if found is not None:
                return found
            above ^= low
        if own and self._class_mask >> c & 1:  # nothing longer is free: all of n's class
            return self._best_in_class(c, n, None)
        return None

    def _due(self) -> None:
        """The pushes since the last count passed ``_compact_at``: count the index's
        entries, live or stale (C-level, O(stacks)), and rebuild it (``_compact``) only
        when they pass twice the extents plus half the slack, or its stacks pass thrice
        the extents plus the slack; else the count restarts from them, due again at
        thrice the extents plus the slack, so after at least the extents plus half the
        slack of pushes. Either way O(1) amortized per push: the count's O(stacks) and
        the rebuild's O(index entries + stacks) are both bounded by what the pushes
        since the last count paid for, and the index by thrice the extents plus slack.

        Why count before rebuilding: pops drop stale entries too (best fit pops the
        ones it meets), so on a pool whose lengths keep being taken most are gone when
        the pushes come due (compare.py's mix: about 50 entries for 29 extents), and a
        rebuild, O(index entries) in one call, is a spike in the call that meets it:
        the p99 of vLLM's scheduler step.
        """
        extents = len(self._by_start)
        due_at = 3 * extents + COMPACT_SLACK
        exact, classes = self._exact, self._classes
        # The count walks the emptied stacks too (their keys stay until a rebuild), so
        # they are bounded as the pushes are; most are short-lived lengths, left empty
        # by best fit's pops (vLLM's 1 GiB stream: about 80 stacks, 18 not empty).
        if len(exact) + len(classes) <= due_at:
            entries = sum(map(len, exact.values())) + sum(map(len, classes.values()))
            if entries <= 2 * extents + COMPACT_SLACK // 2:
                self._pushes = entries
                self._compact_at = due_at
                return
        self._compact()

    def _compact(self) -> None:
        """Rebuild the index, dropping stale entries and duplicates. O(index entries).

        Each stack keeps its live entries in order (a start's top-most one), so the
        extent cut first among equals stays the most recently indexed: rebuilt in the
        extents' dict order, it was the one whose start was freed first.
        """
        by_start = self._by_start
        met: set[int] = set()  # a start is live on one stack at most: keep its top entry
        self._pushes = 0
        for stacks, is_exact in ((self._exact, True), (self._classes, False)):
            bits = 0
            for key in list(stacks):
                kept: list[int] = []
                for start in reversed(stacks[key]):
                    if start in met:
                        continue
                    if (
                        by_start.get(start) == start + key
                        if is_exact
                        else self._class_live(start, key)
                    ):
                        met.add(start)
                        kept.append(start)
                if kept:
                    kept.reverse()
                    stacks[key] = kept
                    bits |= 1 << key
                    self._pushes += len(kept)
                else:
                    del stacks[key]
            if is_exact:
                self._lengths = bits
            else:
                self._class_mask = bits
        self._compact_at = 2 * self._pushes + COMPACT_SLACK
