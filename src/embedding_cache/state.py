"""CacheState: the plain state the transitions act on.

Ints, a list, a dict and an ordered dict; no lock, no behaviour. The
thread-safe ``EmbeddingCache`` owns one and hands it to the functions in
``transitions`` with its lock held; CrossHair and the conformance checks
build states directly.
"""

from __future__ import annotations

from collections import OrderedDict

from .entry import CacheEntry


class CacheState:
    """The cache's whole state (see spec/ for the mapping to the TLA+ variables)."""

    __slots__ = ("entries", "evictable_blocks", "free", "num_blocks", "queue")

    def __init__(self, num_blocks: int) -> None:
        #: Size of the block pool; block ids are 0 .. num_blocks-1.  (TLA+: N)
        self.num_blocks: int = num_blocks
        #: Free block ids, used as a LIFO stack.  (TLA+: free)
        self.free: list[int] = list(range(num_blocks))
        #: Key -> live entry in any state.  (TLA+: entries)
        self.entries: dict[str, CacheEntry] = {}
        #: Ready+unpinned keys, oldest first: the FIFO eviction queue.  (TLA+: queue)
        self.queue: OrderedDict[str, None] = OrderedDict()
        #: Total blocks of the queued entries, for the fail-fast check.  (TLA+: evictable)
        self.evictable_blocks: int = 0

    def __repr__(self) -> str:
        return (
            f"CacheState(num_blocks={self.num_blocks}, free={self.free!r}, "
            f"entries={self.entries!r}, queue={list(self.queue)!r}, "
            f"evictable_blocks={self.evictable_blocks})"
        )
