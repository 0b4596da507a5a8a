"""Pin leases: a pin that ends by itself at a deadline, so that it cannot leak.

A ``Lease`` is the handle ``EmbeddingCache.lease`` returns; the cache's
``LeaseBook`` (one per ``CacheState``) holds the live ones. A live lease holds
exactly one pin of its entry, counted in the entry's pin count beside the
plain pins of ``pin``/``pin_if_ready`` (LeasePinsInv: pin count = plain pins +
live leases). A lease is *due* once the clock is past its deadline
(``now > deadline``); every public call of the cache first expires the due
leases (LeaseDeadlineInv), O(1) when none is due, through the deadline heap
here. The transitions that change leases are in ``lease_transitions``.
"""

from __future__ import annotations

import math
from typing import Protocol


class LeaseOwner(Protocol):
    """What a ``Lease`` calls back into: its cache (which takes its lock)."""

    def release_lease(self, lease: Lease) -> bool: ...

    def renew_lease(self, lease: Lease, seconds: float) -> bool: ...


class Lease:
    """One pin of ``key``'s entry, held until ``deadline`` or until released.

    ``ready`` is False when the key was present but not ready: such a lease
    holds nothing and has no deadline. ``block_ids`` and ``shape`` are the
    entry's, as ``CacheEntry`` has them, for the load the lease was taken for.
    Read the attributes freely; change it only through ``release`` and
    ``renew`` (or the cache's expiry).
    """

    __slots__ = (
        "_book",
        "_deadline",
        "_held",
        "_id",
        "_owner",
        "block_ids",
        "key",
        "ready",
        "shape",
    )

    def __init__(
        self,
        owner: LeaseOwner | None,
        book: LeaseBook,
        lease_id: int,
        key: str,
        block_ids: tuple[int, ...],
        deadline: float | None,
        shape: tuple[int, int] | None = None,
    ) -> None:
        self._owner = owner
        self._book = book
        self._id = lease_id
        #: The entry's key.
        self.key: str = key
        #: The entry's block ids (as ``CacheEntry.block_ids``).
        self.block_ids: tuple[int, ...] = block_ids
        #: The entry's shape (as ``CacheEntry.shape``): what a load dispatched from
        #: the lease restores the encoder output to; None when alloc was given none.
        self.shape: tuple[int, int] | None = shape
        #: True when the lease was granted on a ready entry (it then held a pin).
        self.ready: bool = deadline is not None
        self._deadline = deadline
        self._held = deadline is not None

    @property
    def deadline(self) -> float | None:
        """The clock reading after which the pin is released; None for a not-ready lease. O(1)."""
        return self._deadline

    @property
    def held(self) -> bool:
        """True while the lease holds its pin (not released, not expired). O(1)."""
        return self._held

    def release(self) -> bool:
        """Release the pin now: True if this call released it, False if the lease had
        expired or was released already (it never unpins twice). O(log leases)."""
        return self._require_owner().release_lease(self)

    def renew(self, seconds: float) -> bool:
        """Move the deadline to ``now + seconds``: True while held, False once expired
        or released (a not-ready lease never holds). O(log leases)."""
        return self._require_owner().renew_lease(self, seconds)

    def _require_owner(self) -> LeaseOwner:
        if self._owner is None:
            raise TypeError("Lease: this lease belongs to a bare CacheState, not to a cache")
        return self._owner

    def __repr__(self) -> str:
        state = "held" if self._held else ("not-ready" if not self.ready else "ended")
        return f"Lease(key={self.key!r}, deadline={self._deadline!r}, {state})"


class LeaseBook:
    """The live leases of one cache, their deadlines and their count per key.

    ``heap`` holds ``(deadline, id)`` for every live lease (a renewal pushes a
    new pair and leaves the old one stale; stale pairs are skipped when
    popped and dropped by ``compact``). ``now`` is the clock reading of the
    last call that expired leases: every live deadline is >= it
    (LeaseDeadlineInv).
    """

    __slots__ = ("heap", "live", "next_id", "now", "per_key")

    def __init__(self) -> None:
        #: Lease id -> live (held) lease.
        self.live: dict[int, Lease] = {}
        #: Min-heap of (deadline, lease id); a superset of the live leases' pairs.
        self.heap: list[tuple[float, int]] = []
        #: Key -> number of live leases on its entry (absent when 0).
        self.per_key: dict[str, int] = {}
        #: The clock reading of the last expiry pass (-inf before any).
        self.now: float = -math.inf
        self.next_id: int = 0

    def copy(self, owner: LeaseOwner | None = None) -> LeaseBook:
        """An independent copy: the same ids and deadlines, new handles. O(leases)."""
        twin = LeaseBook()
        for lease_id, lease in self.live.items():
            clone = Lease(
                owner, twin, lease_id, lease.key, lease.block_ids, lease._deadline, lease.shape
            )
            twin.live[lease_id] = clone
        twin.heap = list(self.heap)
        twin.per_key = dict(self.per_key)
        twin.now = self.now
        twin.next_id = self.next_id
        return twin

    def compact(self) -> None:
        """Drop stale heap pairs once they outnumber the live ones (amortized O(1) per renew).

        In place: the cache keeps a reference to ``heap`` for its O(1) check.
        """
        if len(self.heap) > 2 * len(self.live) + 16:
            pairs = [(d, i) for i, lease in self.live.items() if (d := lease._deadline) is not None]
            pairs.sort()
            self.heap[:] = pairs  # a sorted list is a heap

    def __len__(self) -> int:
        return len(self.live)

    def __repr__(self) -> str:
        held = sorted((lease.key, lease._deadline or 0.0) for lease in self.live.values())
        return f"LeaseBook({held!r})"


def lease_seconds(seconds: object, operation: str) -> float:
    """``seconds`` as a float, or a TypeError/ValueError naming what is wrong. O(1).

    A lease lasts a finite, non-negative time: NaN, infinities and negative
    values are refused (an infinite lease is a plain pin; use ``pin``).
    """
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(
            f"EmbeddingCache.{operation}: seconds must be a number, not {type(seconds).__name__}"
        )
    try:
        value = float(seconds)
    except OverflowError:  # an int beyond any float: as good as infinite
        value = math.inf
    if not math.isfinite(value) or value < 0:
        raise ValueError(
            f"EmbeddingCache.{operation}: seconds must be finite and >= 0, got {seconds!r}"
        )
    return value
