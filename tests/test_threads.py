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
invariants (``PolicyChecks.check``: EvictableSetInv first).
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


class Worker:
    """One worker's run (``run``). ``stats`` is its own (summed after the join);
    ``board`` is shared: the keys every worker marked ready, newest last
    (list.append is atomic); ``shared`` is set once some worker has pinned
    another's entry. One method per kind of step, drawn as ``run`` rolls."""

    def __init__(
        self,
        cache: EmbeddingCache,
        wid: int,
        board: list[str],
        shared: threading.Event,
        stats: dict[str, int],
    ) -> None:
        self.cache, self.board, self.shared, self.stats = cache, board, shared, stats
        self.rng = random.Random(wid)
        self.saving: list[str] = []  # my not-ready keys
        self.published: list[str] = []  # my keys that were marked ready (maybe evicted since)
        self.pinned: list[str] = []  # pins I hold, on anyone's keys
        self.mine = f"w{wid}-"

    def run(self, start: threading.Barrier, errors: list[BaseException]) -> None:
        """Up to MAX_STEPS steps (at least STEPS, then until an entry was shared), then
        finish every save and release every pin. An exception is reported, not lost."""
        try:
            start.wait()  # all start together, so their steps interleave from the first
            for step in range(MAX_STEPS):
                if step >= STEPS and self.shared.is_set():
                    break
                self.step(step)
            for key in self.saving:
                self.cache.mark_ready(key)
            for key in self.pinned:
                self.cache.unpin(key)
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    def step(self, step: int) -> None:
        """One random step: save, finish a save, read anyone's, read mine, or release."""
        roll = self.rng.random()
        if roll < 0.25:
            self.save(step)
        elif roll < 0.45 and self.saving:
            self.finish()
        elif roll < 0.75:
            self.read_anyones(step)
        elif roll < 0.85 and self.published:
            self.read_mine()
        elif self.pinned:
            self.cache.unpin(self.pinned.pop(self.rng.randrange(len(self.pinned))))
        if self.rng.random() < 0.02:
            self.cache.has_held_entries()
            self.cache.get(f"{self.mine}0")

    def save(self, step: int) -> None:
        key = f"{self.mine}{step}"
        if self.cache.alloc(key, self.rng.randint(0, 4)) is not None:
            self.saving.append(key)
            self.stats["alloc"] += 1

    def finish(self) -> None:
        key = self.saving.pop(self.rng.randrange(len(self.saving)))
        if self.rng.random() < 0.15:
            self.cache.discard(key)
        else:
            self.cache.mark_ready(key)
            self.published.append(key)
            self.board.append(key)

    def read_anyones(self, step: int) -> None:
        board, rng = self.board, self.rng
        if board and rng.random() < 0.5:
            # A key someone published lately: likely still cached.
            key = board[-1 - rng.randrange(min(len(board), 3))]
        else:
            # Anyone's key from any step: possibly evicted, not ready or never made.
            key = f"w{rng.randrange(WORKERS)}-{rng.randrange(max(1, step))}"
        entry = self.cache.pin_if_ready(key)
        if entry is not None and entry.ready:
            assert entry.pin_count >= 1
            self.pinned.append(key)
            if not key.startswith(self.mine):
                self.stats["shared_hit"] += 1
                self.shared.set()

    def read_mine(self) -> None:
        key = self.published[self.rng.randrange(len(self.published))]
        entry = self.cache.pin_if_ready(key)
        if entry is not None:
            assert entry.ready and entry.pin_count >= 1
            self.pinned.append(key)
        else:
            self.published.remove(key)  # evicted


def run_workers(cache: EmbeddingCache) -> dict[str, int]:
    """Run WORKERS workers on ``cache`` to the end; their summed counts. Raises if any failed."""
    start = threading.Barrier(WORKERS)
    board: list[str] = []
    shared = threading.Event()
    stats = [{"alloc": 0, "shared_hit": 0} for _ in range(WORKERS)]
    errors: list[BaseException] = []
    threads = [
        threading.Thread(target=Worker(cache, w, board, shared, stats[w]).run, args=(start, errors))
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
