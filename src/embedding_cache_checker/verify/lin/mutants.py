"""Caches that are not linearizable, to show the linearizability check can fail.

NEVER used by the cache. Each overrides one public method of
``EmbeddingCache`` with a plausible concurrency mistake and leaves everything
else real. Sequentially (one call at a time) each behaves exactly like the
real cache, so no single-threaded test, contract or model check can tell it
apart; only overlapping calls can. Each mistake has a ``time.sleep(0)`` in
its window (between reading the state and acting on what it read): the
thread yields there, which with a tiny switch interval makes the race show
within a few histories rather than once in a blue moon.

Two kinds:

* split -- one operation done as two critical sections (two lock
  acquisitions), so another call can run between its check and its act;
* unlocked -- one method with its ``with self._lock`` removed.
"""

from __future__ import annotations

import time

from embedding_cache import CacheEntry, CapacityError, DuplicateAllocError, EmbeddingCache
from embedding_cache.verification import (
    NOT_READY,
    lock_of,
    set_pin_count,
    state_of,
    transitions,
    transitions_of,
)


class SplitAlloc(EmbeddingCache):
    """alloc checks and evicts under one acquisition, then takes blocks and inserts under a second.

    Between the two, another alloc can take the blocks it freed (so it gets
    fewer blocks than asked) or insert the same key (so one entry overwrites
    the other and its blocks leak).
    """

    __slots__ = ()

    def alloc(self, key: str, n_blocks: int) -> CacheEntry | None:
        with lock_of(self):
            s = state_of(self)
            if not isinstance(key, str) or type(n_blocks) is not int or n_blocks < 0:
                return transitions_of(self).alloc(s, key, n_blocks)  # let the real one raise
            existing = s.entries.get(key)
            if existing is not None:
                raise DuplicateAllocError(key, existing.state_name())
            if n_blocks > s.num_blocks:
                raise CapacityError(key, "absent", f"{n_blocks} blocks requested")
            if len(s.free) < n_blocks:
                if len(s.free) + s.evictable_blocks < n_blocks:
                    return None
                transitions.evict_until(s, n_blocks)
        time.sleep(0)  # the window: the lock is free here
        with lock_of(self):
            # The bug: assumes the key is still absent and the blocks still free.
            s = state_of(self)
            entry = CacheEntry(s.free.take(min(n_blocks, len(s.free))))
            s.entries[key] = entry
            if s.on_admit is not None:
                s.on_admit(key, n_blocks)
            return entry


class SplitPinIfReady(EmbeddingCache):
    """pin_if_ready reads readiness under one acquisition and pins under a second.

    Between the two, the entry can be evicted (the pin then raises), or
    evicted and re-allocated (the pin lands on the new entry, or raises).
    """

    __slots__ = ()

    def pin_if_ready(self, key: str) -> CacheEntry | None:
        with lock_of(self):
            entry = transitions_of(self).get(state_of(self), key)
        if entry is None or not entry.ready:
            return entry
        time.sleep(0)  # the window: the lock is free here
        with lock_of(self):
            transitions_of(self).pin(
                state_of(self), key
            )  # the bug: pins whatever holds the key now
        return entry


class UnlockedUnpin(EmbeddingCache):
    """unpin without the lock: read the pin count, then write it back minus one.

    Two overlapping unpins of a twice-pinned entry both read 2 and both write
    1: a pin is lost, and the entry stays pinned for ever.
    """

    __slots__ = ()

    def unpin(self, key: str) -> None:
        s = state_of(self)  # the bug: no `with lock_of(self):`
        entry = s.entries.get(key)
        if entry is None or entry.pin_count <= 0:
            with lock_of(self):
                transitions_of(self).unpin(s, key)  # let the real one raise
            return
        count = entry.pin_count
        time.sleep(0)  # the window between the read and the write
        count -= 1
        set_pin_count(entry, count)
        if count == 0:
            size = len(entry.block_ids)
            s.on_release(key, size)
            s.evictable_blocks += size


class UnlockedPinIfReady(EmbeddingCache):
    """pin_if_ready without the lock: check readiness, then pin.

    Between the two, an alloc can evict the entry; the pin then lands on an
    entry that is gone (the policy raises, or the counters drift).
    """

    __slots__ = ()

    def pin_if_ready(self, key: str) -> CacheEntry | None:
        s = state_of(self)  # the bug: no `with lock_of(self):`
        entry = s.entries.get(key)
        if entry is None or entry.pin_count == NOT_READY:
            return entry
        time.sleep(0)  # the window between the check and the act
        transitions.pin_step(s, key, entry)
        return entry


#: Every non-linearizable cache by name: two split, two unlocked.
MUTANTS: dict[str, type[EmbeddingCache]] = {
    "split_alloc": SplitAlloc,
    "split_pin_if_ready": SplitPinIfReady,
    "unlocked_unpin": UnlockedUnpin,
    "unlocked_pin_if_ready": UnlockedPinIfReady,
}
