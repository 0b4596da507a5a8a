"""Runs of consecutive block ids: what a transfer engine sends as one descriptor each."""

from __future__ import annotations

from collections.abc import Sequence

#: A run of consecutive block ids [start, end).
Run = tuple[int, int]


#: Up to this many ids, ``runs_of`` walks them (cheapest for short entries); longer
#: ones are searched run by run.
WALK_LIMIT = 64


def runs_of(ids: Sequence[int]) -> list[Run]:
    """The maximal runs of consecutive ids in ``ids`` (ascending, unique).

    O(1) for one run (checked from its ends: an entry allocated from extents
    usually is one). Otherwise a walk over the ids when there are at most
    ``WALK_LIMIT``, else O(runs x log run length): ``ids[j] - j`` never falls
    along ascending unique ids and stays constant exactly within a run, so each
    run's end is found by galloping, then binary search, not by a walk, and the
    last run by its ends alone.
    """
    count = len(ids)
    if not count:
        return []
    first, last = ids[0], ids[-1]
    if last - first + 1 == count:
        return [(first, last + 1)]
    out: list[Run] = []
    if count <= WALK_LIMIT:
        start = prev = first
        for b in ids[1:]:
            if b != prev + 1:
                out.append((start, prev + 1))
                start = b
            prev = b
        out.append((start, prev + 1))
        return out
    i = 0
    while i < count:
        start = ids[i]
        base = start - i  # ids[j] - j == base exactly for the j of this run
        if last - (count - 1) == base:  # so is the last id's: the rest is one run
            out.append((start, last + 1))
            return out
        lo, step = i, 1  # ids[lo] is in the run; gallop until an index is not
        while i + step < count and ids[i + step] - (i + step) == base:
            lo = i + step
            step <<= 1
        hi = min(i + step, count) - 1  # the run ends in [lo, hi]
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if ids[mid] - mid == base:
                lo = mid
            else:
                hi = mid - 1
        out.append((start, ids[lo] + 1))
        i = lo + 1
    return out


def size_class(length: int) -> int:
    """The class of an extent of ``length`` >= 1 ids: floor(log2(length))."""
    return length.bit_length() - 1
