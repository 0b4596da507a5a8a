"""Threads: several workers share one cache, each keeping its own calls legal.

Each worker owns the keys it allocates (fresh names, so no duplicate alloc)
and drives them alloc -> mark_ready (or discard) -> pin_if_ready/unpin; all
workers also read each other's keys with pin_if_ready and release what they
pinned. A ready key may be evicted by anyone at any time, so owners re-pin
with pin_if_ready, never pin. At the end: the full sweep passes, no block
leaked (free + owned == N), nothing is held, and no worker saw an error.
"""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Iterator

import pytest
from cache_observe import free_count

from embedding_cache import EmbeddingCache

WORKERS = 6
STEPS = 1500  # per worker; a few seconds in all on 2 cores, checked build included
NUM_BLOCKS = 24


@pytest.fixture(autouse=True)
def _switch_often() -> Iterator[None]:
    """Make the interpreter switch threads far more often, to interleave more."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def worker(
    cache: EmbeddingCache, wid: int, stats: dict[str, int], errors: list[BaseException]
) -> None:
    rng = random.Random(wid)
    saving: list[str] = []  # my not-ready keys
    published: list[str] = []  # my keys that were marked ready (maybe evicted since)
    pinned: list[str] = []  # pins I hold, on anyone's keys
    try:
        for step in range(STEPS):
            roll = rng.random()
            if roll < 0.25:
                key = f"w{wid}-{step}"
                if cache.alloc(key, rng.randint(0, 4)) is not None:
                    saving.append(key)
                    stats["alloc"] += 1
            elif roll < 0.45 and saving:
                key = saving.pop(rng.randrange(len(saving)))
                if rng.random() < 0.15:
                    cache.discard(key)
                else:
                    cache.mark_ready(key)
                    published.append(key)
            elif roll < 0.75:
                # Read anyone's key: a worker's recent step, possibly evicted or not ready.
                other = rng.randrange(WORKERS)
                key = f"w{other}-{rng.randrange(max(1, step))}"
                entry = cache.pin_if_ready(key)
                if entry is not None and entry.ready:
                    assert entry.pin_count >= 1
                    pinned.append(key)
                    stats["shared_hit"] += 1
            elif roll < 0.85 and published:
                key = published[rng.randrange(len(published))]
                entry = cache.pin_if_ready(key)
                if entry is not None:
                    assert entry.ready and entry.pin_count >= 1
                    pinned.append(key)
                else:
                    published.remove(key)  # evicted
            elif pinned:
                cache.unpin(pinned.pop(rng.randrange(len(pinned))))
            if rng.random() < 0.02:
                cache.has_held_entries()
                cache.get(f"w{wid}-0")
        for key in saving:
            cache.mark_ready(key)
        for key in pinned:
            cache.unpin(key)
    except BaseException as exc:  # reported by the test, not lost in the thread
        errors.append(exc)


def run_workers(cache: EmbeddingCache) -> dict[str, int]:
    stats = {"alloc": 0, "shared_hit": 0}
    errors: list[BaseException] = []
    threads = [
        threading.Thread(target=worker, args=(cache, w, stats, errors)) for w in range(WORKERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return stats


def test_workers_share_a_cache_and_leave_it_consistent() -> None:
    cache = EmbeddingCache(NUM_BLOCKS)
    stats = run_workers(cache)
    cache.check()  # the full sweep
    owned = sum(len(e.block_ids) for e in cache._state.entries.values())
    assert free_count(cache) + owned == NUM_BLOCKS, "a block leaked"
    assert cache.has_held_entries() is False
    assert all(e.evictable for e in cache._state.entries.values())
    # Non-vacuity: the run allocated, evicted and shared entries across threads.
    assert stats["alloc"] > WORKERS * STEPS // 10
    assert stats["shared_hit"] > 0
    assert len(cache) < stats["alloc"]  # some entries were evicted or discarded
