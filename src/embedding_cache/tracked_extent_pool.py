"""TrackedExtentPool: the extents pool of the checked builds, which knows each id's state.

The discard contract asks whether exactly an entry's ids went back to the pool
(``just_freed``); the extents alone answer that only in O(extents). So the
checked builds' pool also keeps a byte per id (1: free), updated by a C-level
slice per run on every change; the default build's pool does without.
"""

from __future__ import annotations

from collections.abc import Sequence

from .extent_pool import ExtentPool
from .runs import runs_of

#: Enough 1-bytes for most runs, so marking a run free copies a slice.
_ONES = b"\x01" * 4096


class TrackedExtentPool(ExtentPool):
    """ExtentPool plus a byte per id saying whether it is free, so that ``just_freed`` is
    exact: the pool of the checked builds, whose discard contract asks it. Each change
    also copies a C-level slice of the map (O(ids))."""

    __slots__ = ("_map",)

    def __init__(self, num_blocks: int) -> None:
        """All of 0 .. num_blocks-1 free. O(num_blocks)."""
        #: One byte per id, 1 when free.
        self._map = bytearray(b"\x01" * num_blocks)
        super().__init__(num_blocks)

    def _mark(self, ids: Sequence[int], free: bool) -> None:
        free_map = self._map
        for a, b in runs_of(ids):
            n = b - a
            if free:
                free_map[a:b] = _ONES[:n] if n <= len(_ONES) else b"\x01" * n
            else:
                free_map[a:b] = bytes(n)

    def give(self, ids: Sequence[int]) -> int:
        """``ExtentPool.give``, and the map marks ``ids`` free. O(runs + ids)."""
        longest = super().give(ids)
        self._mark(ids, True)
        return longest

    def take_run(self, n: int) -> tuple[int, ...] | None:
        """``ExtentPool.take_run``, and the map marks the ids taken. O(ids) more."""
        ids = super().take_run(n)
        if ids:
            self._mark(ids, False)
        return ids

    def take(self, n: int) -> tuple[int, ...]:
        """``ExtentPool.take``, and the map marks the ids taken. O(ids) more."""
        ids = super().take(n)
        self._mark(ids, False)
        return ids

    def just_freed(self, ids: Sequence[int]) -> bool:
        """After ``give(ids)``: True when every id in ``ids`` is free. O(len(ids)), C-level
        per run."""
        free_map = self._map
        for a, b in runs_of(ids):
            if a < 0 or b > len(free_map) or free_map.find(0, a, b) != -1:
                return False
        return True

    def check(self) -> str | None:
        """``ExtentPool.check``, and the map agrees with the extents. O(N)."""
        detail = super().check()
        if detail is not None:
            return detail
        expected = bytearray(len(self._map))
        for start, end in self._by_start.items():
            expected[start:end] = b"\x01" * (end - start)
        return None if expected == self._map else "the membership map disagrees with the extents"

    def copy(self) -> TrackedExtentPool:
        """An independent copy, the map too. O(N + extents + index)."""
        twin = TrackedExtentPool(0)
        base = ExtentPool.copy(self)
        for name in ExtentPool.__slots__:
            setattr(twin, name, getattr(base, name))
        twin._map = self._map[:]
        return twin
