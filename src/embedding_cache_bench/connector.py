"""``bench --connector``: the engine's protocol on the real cache, today's order and safe ones.

An engine step schedules one request of 1 to ``ITEMS_PER_REQUEST[1]`` multimodal
items (Zipf over the catalogue of ``streams``, the vLLM-shaped one of
``bench --policies``) and calls the cache as vLLM's scheduler and EC connector
do, in one of ``ORDERS``:

- ``today``: check every item (``get`` + ``ready``: a checked hit is ready), then
  ``alloc`` the misses (the computed items; this may evict a checked hit), then
  ``pin`` the checked hits. A checked hit found absent or not ready at pin time is
  *lost before pin*: it is neither loaded nor computed, and the producer side
  allocs it again, not ready, and dispatches a save of an output never computed
  (``uncomputed_saves``; the save then completes like any other).
- ``pin-at-check``: ``pin_if_ready`` at check time, then alloc the misses; the hit
  is already pinned for its load.
- ``lease``: ``lease(key, seconds)`` at check time, then alloc the misses; the
  lease is the load's pin, released when the load completes (spec/PROTOCOLS.md:
  a second pin would tell the policy of two uses). Only when the build has leases.

A present, not-ready item (a save in flight) is computed and not saved again.
Transfers complete after a fixed number of later requests (``delay`` 0: at the
end of the request that dispatched them): a load's ``unpin``; a save's
``mark_ready``, or ``discard`` with probability ``save_failure_rate``. After the
last request every pending transfer completes (``has_held_entries`` is then
asked: a pin left behind would show). For ``lease``, a reader then takes
``dead_reader_items`` leases and dies; the fake clock reaches the deadline (the
blocks are still held: not due) and passes it; one call runs; the blocks its
leases still hold are counted (``DeadReader``). Deterministic: fixed seed, fake
clock (``FakeClock``), no timing.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from . import streams, workload
from .connector_leases import (
    TICK_SECONDS,
    FakeClock,
    Lease,
    LeasingCache,
    dead_reader,
    leases_available,
    make_cache,
)

#: The protocol orders, in report order; ``lease`` needs ``leases_available()``.
ORDERS = ("today", "pin-at-check", "lease")
#: Items per request, drawn uniformly (a request's duplicates are dropped).
ITEMS_PER_REQUEST = (1, 4)
#: Defaults of the command: lease length, transfer delays in requests, save failure
#: rate, leases of the dead reader.
LEASE_SECONDS = 30.0
LOAD_DELAY = 1
SAVE_DELAY = 1
SAVE_FAILURE_RATE = 0.0
DEAD_READER_ITEMS = 16


def orders() -> tuple[str, ...]:
    """The orders this build can run: ``ORDERS``, without ``lease`` if it has none."""
    return ORDERS if leases_available() else ORDERS[:-1]


@dataclass(frozen=True)
class RequestSpec:
    """Everything the request stream is generated from (picklable, for worker processes)."""

    requests: int  # total, warm-up included
    warmup: int
    seed: int
    items: int = streams.CATALOGUE_ITEMS
    item_blocks: tuple[int, int] = streams.ITEM_BLOCKS


@dataclass(frozen=True)
class Requests:
    """A pre-generated stream of requests: each a tuple of (key, blocks) items."""

    spec: RequestSpec
    requests: tuple[tuple[tuple[str, int], ...], ...]
    fingerprint: str  # sha256 of the requests: equal streams, equal fingerprints


@functools.lru_cache(maxsize=2)
def make_requests(spec: RequestSpec) -> Requests:
    """The requests ``spec`` describes, over ``streams.catalogue``. O(requests x log items).

    Raises:
        ValueError: a count or size out of range.
    """
    low, high = spec.item_blocks
    if spec.items < 1 or not 0 <= spec.warmup < spec.requests or not 1 <= low <= high:
        raise ValueError(f"need items >= 1, 0 <= warmup < requests, 1 <= blocks, got {spec}")
    keys, sizes, cum_weights = streams.catalogue(spec.seed, spec.items, spec.item_blocks)
    total = cum_weights[-1]
    rng = random.Random(f"{spec.seed}:connector")
    out = []
    digest = hashlib.sha256()
    for _ in range(spec.requests):
        ranks = [
            min(bisect.bisect_right(cum_weights, rng.random() * total), spec.items - 1)
            for _ in range(rng.randint(*ITEMS_PER_REQUEST))
        ]
        request = tuple((keys[rank], sizes[rank]) for rank in dict.fromkeys(ranks))
        out.append(request)
        digest.update(repr(request).encode())
    return Requests(spec, tuple(out), digest.hexdigest()[:16])


@dataclass(frozen=True)
class Options:
    """How the engine runs one (policy, pool, order): transfers, leases, the dead reader."""

    load_delay: int = LOAD_DELAY
    save_delay: int = SAVE_DELAY
    save_failure_rate: float = SAVE_FAILURE_RATE
    lease_seconds: float = LEASE_SECONDS
    dead_reader_items: int = DEAD_READER_ITEMS


@dataclass
class Counts:
    """What one run answered, over the requests after the warm-up (``held_after_drain``:
    after every transfer completed, at the very end)."""

    requests: int = 0
    items: int = 0
    checked_hits: int = 0
    lost_before_pin: int = 0
    in_flight: int = 0  # present, not ready at check: computed, not saved again
    allocs: int = 0
    alloc_failures: int = 0
    evictions: int = 0
    uncomputed_saves: int = 0
    #: Loads whose lease had expired before the load completed (its pin gone early).
    leases_ended_in_load: int = 0
    failed_saves: int = 0
    held_after_drain: bool = False
    dead_reader: dict[str, Any] | None = field(default=None)

    @property
    def hit_ratio(self) -> float:
        """Checked hits over items checked."""
        return self.checked_hits / self.items if self.items else 0.0

    @property
    def lost_ratio(self) -> float:
        """Checked hits lost before pin over checked hits."""
        return self.lost_before_pin / self.checked_hits if self.checked_hits else 0.0


class _Engine:
    """One run's engine: the protocol's calls, and transfers pending by due request."""

    def __init__(self, cache: workload.Cache, order: str, options: Options, seed: int) -> None:
        if order not in orders():
            raise ValueError(f"unknown or unavailable order {order!r}; choose from {orders()}")
        self.cache, self.order, self.options = cache, order, options
        self.rng = random.Random(f"{seed}:transfers")
        # due -> [(is_save, key, the load's lease or None)]
        self.pending: dict[int, list[tuple[bool, str, Lease | None]]] = {}
        self.counts = Counts()
        self.now = 0

    def _dispatch(self, is_save: bool, key: str, lease: Lease | None = None) -> None:
        delay = self.options.save_delay if is_save else self.options.load_delay
        self.pending.setdefault(self.now + delay, []).append((is_save, key, lease))

    def complete(self, due: int) -> None:
        """Complete the transfers due at request ``due``: saves resolve, loads unpin (or
        release the lease that was their pin)."""
        for is_save, key, lease in self.pending.pop(due, ()):
            if lease is not None:
                if not lease.release():
                    self.counts.leases_ended_in_load += 1
            elif not is_save:
                self.cache.unpin(key)
            elif self.rng.random() < self.options.save_failure_rate:
                self.counts.failed_saves += 1
                self.cache.discard(key)
            else:
                self.cache.mark_ready(key)

    def _alloc(self, key: str, size: int) -> None:
        """The producer side: alloc ``key`` if absent, and dispatch its save if it fit."""
        cache, counts = self.cache, self.counts
        if cache.get(key) is not None:
            return
        counts.allocs += 1
        before = len(cache)
        if size > workload.cache_blocks(cache) or cache.alloc(key, size) is None:
            counts.alloc_failures += 1
            return
        counts.evictions += before + 1 - len(cache)
        self._dispatch(True, key)

    def request(self, items: tuple[tuple[str, int], ...]) -> None:
        """Schedule one request in this engine's order. O(items) cache calls."""
        cache, counts, order = self.cache, self.counts, self.order
        counts.requests += 1
        counts.items += len(items)
        hits: list[tuple[str, int, Lease | None]] = []
        misses: list[tuple[str, int]] = []
        for key, size in items:  # the check: has_cache_item
            lease: Lease | None = None
            if order == "lease":
                lease = cast(LeasingCache, cache).lease(key, self.options.lease_seconds)
                ready = None if lease is None else lease.ready
            else:
                entry = cache.get(key) if order == "today" else cache.pin_if_ready(key)
                ready = None if entry is None else entry.ready
            if ready is None:
                misses.append((key, size))
            elif ready:
                hits.append((key, size, lease))
            else:
                counts.in_flight += 1
        counts.checked_hits += len(hits)
        for key, size in misses:  # update_state_after_alloc: the computed items first
            self._alloc(key, size)
        for key, size, lease in hits:  # ... then the loaded ones
            entry = cache.get(key)
            if entry is None or not entry.ready:
                counts.lost_before_pin += 1
                before = counts.allocs
                self._alloc(key, size)  # producer side: re-allocs it, not ready
                counts.uncomputed_saves += counts.allocs - before
                continue
            if order == "today":  # pin_if_ready or the lease pinned it at the check
                cache.pin(key)
            self._dispatch(False, key, lease)  # the lease is the load's pin: one use, not two
        self.complete(self.now)
        self.now += 1

    def drain(self) -> None:
        """Complete every pending transfer, in due order."""
        for due in sorted(self.pending):
            self.complete(due)


def simulate(
    requests: Requests,
    policy: str,
    num_blocks: int,
    order: str,
    options: Options = Options(),
    make: Callable[[str, int, FakeClock], workload.Cache] = make_cache,
) -> Counts:
    """Run every request on a fresh cache in ``order``; the counts after the warm-up.

    O(requests x items per request) cache calls.
    """
    clock = FakeClock()
    engine = _Engine(make(policy, num_blocks, clock), order, options, requests.spec.seed)
    for i, items in enumerate(requests.requests):
        if i == requests.spec.warmup:
            engine.counts = Counts()
        engine.request(items)
        clock.now += TICK_SECONDS
    engine.drain()
    counts = engine.counts
    counts.held_after_drain = engine.cache.has_held_entries()
    if order == "lease":
        spec = requests.spec
        keys = streams.catalogue(spec.seed, spec.items, spec.item_blocks)[0]  # by popularity
        counts.dead_reader = dead_reader(
            cast(LeasingCache, engine.cache),
            clock,
            keys,
            options.lease_seconds,
            options.dead_reader_items,
        )
    return counts
