"""Deliberately broken caches, to show each verification layer catches a real bug.

Each class overrides one method of ``EmbeddingCache`` with a plausible
mistake, working on the cache's state directly (so no contract sees it):
what catches it is the layer under test -- the stateful model comparison,
the differential test against the seed, or the invariant sweep.
"""

from __future__ import annotations

from embedding_cache import CacheEntry, EmbeddingCache, transitions


class EvictNewestFirst(EmbeddingCache):
    """alloc evicts the newest evictable entry instead of the oldest (LIFO, not FIFO).

    Every state invariant still holds; only EvictOldestFirstProp breaks.
    """

    def alloc(self, key: str, n_blocks: int) -> CacheEntry | None:
        with self._lock:
            s = self._state
            legal = isinstance(key, str) and key not in s.entries and type(n_blocks) is int
            if legal and len(s.free) < n_blocks <= min(
                s.num_blocks, len(s.free) + s.evictable_blocks
            ):
                while len(s.free) < n_blocks:
                    victim, _ = s.queue.popitem(last=True)  # the bug: last=False
                    blocks = s.entries.pop(victim).block_ids
                    s.evictable_blocks -= len(blocks)
                    s.free.extend(blocks)
            return transitions.alloc(s, key, n_blocks)


class PinIfReadyForgetsToPin(EmbeddingCache):
    """pin_if_ready returns a ready entry without pinning it. Invariants still hold."""

    def pin_if_ready(self, key: str) -> CacheEntry | None:
        with self._lock:
            return transitions.get(self._state, key)


class UnpinRequeuesAtHead(EmbeddingCache):
    """The last unpin puts the entry at the queue's head, not its tail. Invariants hold."""

    def unpin(self, key: str) -> None:
        with self._lock:
            transitions.unpin(self._state, key)
            entry = self._state.entries[key]
            if entry.pin_count == 0:
                self._state.queue.move_to_end(key, last=False)  # the bug


class DiscardLeaksBlocks(EmbeddingCache):
    """discard forgets to return the entry's blocks to the free stack."""

    def discard(self, key: str) -> None:
        with self._lock:
            s = self._state
            entry = s.entries.get(key)
            if entry is None or entry.pin_count != -1:
                transitions.discard(s, key)  # let the real one raise
                return
            del s.entries[key]  # the bug: s.free.extend(entry.block_ids) is missing


#: Every planted bug, for parametrised tests.
PLANTED: tuple[type[EmbeddingCache], ...] = (
    EvictNewestFirst,
    PinIfReadyForgetsToPin,
    UnpinRequeuesAtHead,
    DiscardLeaksBlocks,
)
