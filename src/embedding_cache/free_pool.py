"""FreePool: what every allocator's pool of free block ids offers.

The transitions, the alloc contract (``plan_take``), the discard contract
(``just_freed``) and the contiguity loop (spec/SPEC.md section 14:
``take_run`` and ``give``'s merged length) use only this protocol, so
``CacheState.free`` is typed by it and no caller casts to a concrete pool.
The pools (``allocators`` names them): ``free_stack.FreeStack``, the seed's
LIFO stack, and ``extent_pool.ExtentPool``, coalesced runs. Each method's
cost is stated by each pool.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol


class FreePool(Protocol):
    """The free block ids, as the transitions and contracts use them."""

    def __len__(self) -> int:
        """How many ids are free."""
        ...

    def __iter__(self) -> Iterator[int]:
        """The free ids, in the pool's own order."""
        ...

    def take(self, n: int) -> tuple[int, ...]:
        """``n`` free ids, ascending, no longer free (the caller checked ``n <= len``)."""
        ...

    def take_run(self, n: int) -> tuple[int, ...] | None:
        """``n`` consecutive free ids, no longer free, or None when no run holds them."""
        ...

    def give(self, ids: Sequence[int]) -> int | None:
        """Free ``ids``. A pool that keeps runs returns the length of the longest free
        run this made (the contiguity loop reads it); one that does not, None."""
        ...

    def extend(self, ids: Sequence[int]) -> object:
        """``give``, under the name a list uses (the seed's free list was one)."""
        ...

    def just_freed(self, ids: Sequence[int]) -> bool:
        """After ``give(ids)``: the pool shows exactly ``ids`` just freed."""
        ...

    def has_run(self, n: int) -> bool:
        """True iff ``n`` consecutive ids are free (TLA+ HasRun)."""
        ...

    def plan_take(self, n: int, extra: Iterable[Sequence[int]]) -> tuple[int, ...]:
        """What giving each ``ids`` of ``extra`` in turn, then ``take(n)``, would return."""
        ...

    def copy(self) -> FreePool:
        """An independent copy."""
        ...

    def check(self) -> str | None:
        """What is wrong with the pool's own structure, or None."""
        ...


__all__ = ["FreePool"]
