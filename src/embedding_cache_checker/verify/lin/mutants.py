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

Two of the split ones are the lease calls': a release that checks the lease
is held, then ends it (an expiry in between makes it unpin a second time),
and a lease that reads the entry and the clock, then grants (the entry may be
gone, or the reading stale, by then). They need the clock to move between
their two acquisitions: a lease of 0 steps is due at the next reading.
"""

from __future__ import annotations

import time

from embedding_cache import CacheEntry, CapacityError, DuplicateAllocError, EmbeddingCache
from embedding_cache.verification import (
    NOT_READY,
    Lease,
    clock_of,
    end_lease,
    expire_due,
    lease_book,
    lock_of,
    set_pin_count,
    state_of,
    transitions,
    transitions_of,
    unpin_step,
)


class SplitAlloc(EmbeddingCache):
    """alloc checks and evicts under one acquisition, then takes blocks and inserts under a second.

    Between the two, another alloc can take the blocks it freed (so it gets
    fewer blocks than asked) or insert the same key (so one entry overwrites
    the other and its blocks leak).
    """

    __slots__ = ()

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        with lock_of(self):
            s = state_of(self)
            if not isinstance(key, str) or type(n_blocks) is not int or n_blocks < 0:
                return transitions_of(self).alloc(s, key, n_blocks)  # let the real one raise
            # The shape as the real alloc checks and keeps it: the bug is the split alone.
            dims = None if shape is None else transitions.alloc_shape(key, n_blocks, shape)
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
            entry = CacheEntry(s.free.take(min(n_blocks, len(s.free))), dims)
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


class SplitReleaseLease(EmbeddingCache):
    """release_lease checks that the lease is held under one acquisition, ends it under a second.

    If another call expires the lease between the two, the second finds its
    pin already gone and unpins the entry again (the release after expiry
    that unpins twice): a pin of someone else is taken, or a ready entry
    turns "not ready", or the entry is gone and the call raises.
    """

    __slots__ = ()

    def release_lease(self, lease: Lease) -> bool:
        with lock_of(self):
            s = state_of(self)
            expire_due(self)
            if not isinstance(lease, Lease) or lease_book(lease) is not s.leases or not lease.held:
                return transitions_of(self).release_lease(s, lease)  # raises, or False
        time.sleep(0)  # the window: the lock is free here
        with lock_of(self):
            s = state_of(self)
            if lease.held:
                end_lease(s, lease)
            else:  # the bug: it was held when looked at, so its pin is released regardless
                unpin_step(s, lease.key, s.entries[lease.key])
            return True


class SplitLease(EmbeddingCache):
    """lease reads the clock and the entry under one acquisition, grants under a second.

    Between the two the entry can be evicted or discarded (the grant then
    raises: it trusted the first look), and other calls can read the clock
    later than this lease's reading, which it still grants at.
    """

    __slots__ = ()

    def lease(self, key: str, seconds: float) -> Lease | None:
        with lock_of(self):
            s = state_of(self)
            now = clock_of(self)()
            if s.leases.heap and s.leases.heap[0][0] < now:
                transitions_of(self).expire_leases(s, now)
            entry = s.entries.get(key) if isinstance(key, str) else None
            if entry is None or entry.pin_count == NOT_READY:
                return transitions_of(self).lease(s, key, seconds, now, self)
        time.sleep(0)  # the window: the lock is free here
        with lock_of(self):
            s = state_of(self)
            current = s.entries.get(key)
            if current is None or current.pin_count == NOT_READY:
                transitions_of(self).pin(s, key)  # the bug: it was ready; pin raises for it
            return transitions_of(self).lease(s, key, seconds, now, self)


#: Every non-linearizable cache by name: four split (two of them lease calls), two unlocked.
MUTANTS: dict[str, type[EmbeddingCache]] = {
    "split_alloc": SplitAlloc,
    "split_pin_if_ready": SplitPinIfReady,
    "unlocked_unpin": UnlockedUnpin,
    "unlocked_pin_if_ready": UnlockedPinIfReady,
    "split_release_lease": SplitReleaseLease,
    "split_lease": SplitLease,
}
