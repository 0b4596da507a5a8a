"""Threads: several workers share one cache, each keeping its own calls legal.

Each worker owns the keys it allocates (fresh names, so no duplicate alloc)
and drives them alloc -> mark_ready (or discard) -> pin_if_ready/unpin; all
workers also read each other's keys with pin_if_ready (keys just published on a
shared board, and any key of any step) and release what they pinned. They
start together (a barrier) and each runs STEPS steps, longer if no entry has
been shared yet. A ready key may be evicted by anyone at any time, so owners re-pin
with pin_if_ready, never pin. At the end: the full sweep passes, no block
leaked (free + owned == N), nothing is held, and no worker saw an error.

Run once per policy (``cache_observe.POLICY_CASES``: every registered policy,
and gdsf with small parameters): the policies' hooks run under the cache's
lock like the rest of a transition, and the sweep ends with each policy's own
invariants (``EvictionPolicy.check``: EvictableSetInv first).
"""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Iterator

import pytest
from cache_observe import POLICY_CASES, free_count

from embedding_cache import EVICTION_POLICIES, EmbeddingCache
from embedding_cache.policies import PolicySpec
from embedding_cache_checker.verify import planted

WORKERS = 6
STEPS = 1500  # per worker; a few seconds in all on 2 cores, checked build included
#: A worker goes on past STEPS (up to this) until some worker has hit an entry another
#: one published: how much the threads share depends on the schedule, not on the seed.
MAX_STEPS = 4 * STEPS
NUM_BLOCKS = 24


@pytest.fixture(autouse=True)
def _switch_often() -> Iterator[None]:
    """Make the interpreter switch threads far more often, to interleave more."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def worker(
    cache: EmbeddingCache,
    wid: int,
    start: threading.Barrier,
    board: list[str],
    shared: threading.Event,
    stats: dict[str, int],
    errors: list[BaseException],
) -> None:
    """One worker's run; ``stats`` is its own (summed after the join), ``board`` is shared:
    the keys every worker marked ready, newest last (list.append is atomic); ``shared``
    is set once some worker has pinned another's entry."""
    rng = random.Random(wid)
    saving: list[str] = []  # my not-ready keys
    published: list[str] = []  # my keys that were marked ready (maybe evicted since)
    pinned: list[str] = []  # pins I hold, on anyone's keys
    mine = f"w{wid}-"
    try:
        start.wait()  # all start together, so their steps interleave from the first
        for step in range(MAX_STEPS):
            if step >= STEPS and shared.is_set():
                break
            roll = rng.random()
            if roll < 0.25:
                key = f"{mine}{step}"
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
                    board.append(key)
            elif roll < 0.75:
                if board and rng.random() < 0.5:
                    # A key someone published lately: likely still cached.
                    key = board[-1 - rng.randrange(min(len(board), 3))]
                else:
                    # Anyone's key from any step: possibly evicted, not ready or never made.
                    key = f"w{rng.randrange(WORKERS)}-{rng.randrange(max(1, step))}"
                entry = cache.pin_if_ready(key)
                if entry is not None and entry.ready:
                    assert entry.pin_count >= 1
                    pinned.append(key)
                    if not key.startswith(mine):
                        stats["shared_hit"] += 1
                        shared.set()
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
                cache.get(f"{mine}0")
        for key in saving:
            cache.mark_ready(key)
        for key in pinned:
            cache.unpin(key)
    except BaseException as exc:  # reported by the test, not lost in the thread
        errors.append(exc)


def run_workers(cache: EmbeddingCache) -> dict[str, int]:
    """Run WORKERS workers on ``cache`` to the end; their summed counts. Raises if any failed."""
    start = threading.Barrier(WORKERS)
    board: list[str] = []
    shared = threading.Event()
    stats = [{"alloc": 0, "shared_hit": 0} for _ in range(WORKERS)]
    errors: list[BaseException] = []
    threads = [
        threading.Thread(target=worker, args=(cache, w, start, board, shared, stats[w], errors))
        for w in range(WORKERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return {name: sum(s[name] for s in stats) for name in stats[0]}


@pytest.mark.parametrize("eviction", list(POLICY_CASES.values()), ids=list(POLICY_CASES))
def test_workers_share_a_cache_and_leave_it_consistent(eviction: PolicySpec) -> None:
    cache = EmbeddingCache(NUM_BLOCKS, eviction=eviction)
    stats = run_workers(cache)
    cache.check()  # the full sweep, the policy's own invariants included
    owned = sum(len(e.block_ids) for e in cache._state.entries.values())
    assert free_count(cache) + owned == NUM_BLOCKS, "a block leaked"
    assert cache.has_held_entries() is False
    assert all(e.evictable for e in cache._state.entries.values())
    # Non-vacuity: the run allocated, evicted and shared entries across threads. (Under
    # load, 40 runs per policy gave at least 555 allocs; the workers go on past STEPS
    # until they have shared an entry, so the last bound does not hang on the schedule.)
    assert stats["alloc"] > WORKERS * STEPS // 30
    assert stats["shared_hit"] > 0
    assert len(cache) < stats["alloc"]  # some entries were evicted or discarded


@pytest.mark.parametrize("name", list(EVICTION_POLICIES))
def test_a_planted_bug_fails_the_threaded_run(name: str) -> None:
    """Non-vacuity: with the planted bug UnpinForgetsRelease (the last unpin does not hand
    the entry back to the policy; bare bodies, no contracts), the same run fails under
    every policy -- a worker's alloc asks the policy for a victim it does not have, or
    else the final sweep finds the unpinned entry missing from the policy
    (EvictableSetInv). Deterministic: every run unpins."""
    cache = planted.by_name("UnpinForgetsRelease").cache(NUM_BLOCKS, name)
    with pytest.raises(AssertionError, match=r"EvictableSetInv|KeyError|IndexError"):
        run_workers(cache)
        cache.check()
