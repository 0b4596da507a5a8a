"""CacheEntry's seed-compatibility mutators: ``mark_ready`` and ``pin`` on the entry itself.

The seed's callers may call them directly (the cache never does: it keeps
its own bookkeeping). They must move the entry through the same states the
cache's transitions do: not-ready -> ready (pin count 0, evictable) -> one
more pin per call.

Found by mutation testing (mutation/SURVIVORS.md): no test called them.
"""

from __future__ import annotations

from embedding_cache import CacheEntry


def test_seed_mark_ready_makes_a_new_entry_ready_and_evictable() -> None:
    entry = CacheEntry((3, 4))
    assert (entry.ready, entry.evictable, entry.pin_count) == (False, False, -1)
    entry.mark_ready()
    assert (entry.ready, entry.evictable, entry.pin_count) == (True, True, 0)
    assert entry.state_name() == "ready"


def test_seed_pin_adds_exactly_one_pin_per_call() -> None:
    entry = CacheEntry((0,))
    entry.mark_ready()
    entry.pin()
    assert (entry.pin_count, entry.evictable, entry.state_name()) == (1, False, "pinned(1)")
    entry.pin()
    assert (entry.pin_count, entry.state_name()) == (2, "pinned(2)")
    assert repr(entry) == "CacheEntry(block_ids=(0,), state='pinned(2)')"
