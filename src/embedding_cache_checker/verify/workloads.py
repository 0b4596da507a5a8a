"""Operation streams that produce traces for validation: sequential with misuse, and threaded.

Both drive a ``TracedEmbeddingCache`` with any eviction policy; misuse errors are
swallowed (the trace records them, and trace validation checks the spec
forbids each refused call). Deterministic for a given seed, except the
interleaving of the threaded stream, which the trace records as it happened.
"""

from __future__ import annotations

import contextlib
import random
import threading

from embedding_cache import DEFAULT_ALLOCATOR, CacheError, Lease
from embedding_cache.policies import PolicySpec
from embedding_cache.verification import AdmissionSpec

from ..tracing import TracedEmbeddingCache
from .replay import Operations

#: Operations that take just a key.
KEY_OPERATIONS = ("mark_ready", "pin", "pin_if_ready", "unpin", "discard")


#: Block counts a lifecycle alloc asks for (zero-block entries included).
SIZES = (0, 1, 2, 2, 3, 3, 4)


def random_trace(
    seed: int,
    num_blocks: int = 6,
    steps: int = 250,
    operations: Operations | None = None,
    eviction: PolicySpec = "fifo",
    keys: int = 10,
    misuse: float = 0.3,
    *,
    allocator: str = DEFAULT_ALLOCATOR,
    admission: AdmissionSpec = None,
    contiguity: int = 0,
) -> TracedEmbeddingCache:
    """A sequential stream of every operation, legal or not, on a few keys, on a cache
    built with ``allocator``, ``admission`` and ``contiguity`` (as ``EmbeddingCache``).

    Most calls follow each key's lifecycle as the cache shows it (``get``, a
    query, not recorded): an absent key is allocated, a not-ready one marked
    ready (or sometimes discarded: a failed save), a ready one used (``pin`` or
    ``pin_if_ready``) and released again; so entries keep becoming evictable,
    allocs evict them, keys come back after eviction (s3fifo's ghost) and are
    used again (gdsf's and s3fifo's counters). A ``misuse`` share of the calls
    are drawn blindly (operation, key and size), so refusals are validated as
    much as transitions. Deterministic for a given seed and code; the calls
    follow the results, so a broken cache gets other calls (compare traces by
    re-running a trace's calls, not by seed). O(steps).
    """
    rng = random.Random(seed)
    cache = TracedEmbeddingCache(
        num_blocks,
        eviction,
        allocator,
        operations=operations,
        admission=admission,
        contiguity=contiguity,
    )
    names = [f"k{i}" for i in range(keys)]
    while len(cache.trace) < steps:
        _lifecycle_call(cache, rng, rng.choice(names), misuse)
    return cache


def _lifecycle_call(
    cache: TracedEmbeddingCache, rng: random.Random, key: str, misuse: float
) -> None:
    """One call of ``random_trace``'s stream on ``key``; a refusal is swallowed (the
    trace records it, and that is what gets judged)."""
    n = rng.choice(SIZES)
    entry = cache.get(key)
    roll = rng.random()
    if roll < misuse:
        op = rng.choice(("alloc", *KEY_OPERATIONS))
        n = rng.randint(0, cache.num_blocks + 1)
    elif entry is None:
        op = "alloc"
    elif not entry.ready:
        op = "discard" if roll < misuse + 0.1 else "mark_ready"
    elif entry.pin_count > 0:
        op = "unpin" if roll < 0.75 else rng.choice(("pin", "pin_if_ready"))
    else:
        op = rng.choice(("pin", "pin_if_ready")) if roll < 0.7 else "alloc"  # a duplicate
    with contextlib.suppress(Exception):
        if op == "alloc":
            cache.alloc(key, n)
        else:
            getattr(cache, op)(key)


class ManualClock:
    """A clock that reads whole numbers and moves only when told: lease traces need
    whole-number times (``traces.unit_ticks``). O(1) per call."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> float:
        return self.now

    def advance(self, by: int = 1) -> None:
        """Move the clock ``by`` on."""
        self.now += by


#: The longest lease (and renewal) a lease stream asks for, in clock units.
LEASE_SECONDS = 3


def lease_trace(
    seed: int,
    num_blocks: int = 6,
    steps: int = 250,
    operations: Operations | None = None,
    eviction: PolicySpec = "fifo",
    keys: int = 6,
    misuse: float = 0.2,
) -> TracedEmbeddingCache:
    """``random_trace``'s stream with leases mixed in, on a ``ManualClock``
    (``drive_leases`` on a new traced cache). O(steps)."""
    clock = ManualClock()
    cache = TracedEmbeddingCache(num_blocks, eviction, operations=operations, clock=clock)
    drive_leases(cache, clock, seed, steps, keys, misuse)
    return cache


def drive_leases(
    cache: TracedEmbeddingCache,
    clock: ManualClock,
    seed: int,
    steps: int = 250,
    keys: int = 6,
    misuse: float = 0.2,
) -> None:
    """Drive ``cache`` (built on ``clock``) until its trace has ``steps`` steps.

    Besides the lifecycle calls: ``lease`` of a random key (absent, not ready
    or ready) for 0 to ``LEASE_SECONDS``; ``renew`` and ``release`` of a random
    lease granted so far (held, expired, released or never held alike);
    ``expire_leases()``; and clock moves of 1 or 2, so leases fall due and the
    cache expires them at the next call. Plain ``unpin`` of an entry whose
    pins are all leases is refused, and recorded so. Deterministic for a
    given seed and code. O(steps).
    """
    rng = random.Random(seed)
    names = [f"k{i}" for i in range(keys)]
    granted: list[Lease] = []
    while len(cache.trace) < steps:
        roll = rng.random()
        key = rng.choice(names)
        if roll < 0.12:
            clock.advance(rng.choice((1, 1, 2)))
            continue
        with contextlib.suppress(CacheError):
            if roll < 0.32:
                made = cache.lease(key, rng.randint(0, LEASE_SECONDS))
                if made is not None:
                    granted.append(made)
            elif roll < 0.4 and granted:
                rng.choice(granted).renew(rng.randint(0, LEASE_SECONDS))
            elif roll < 0.5 and granted:
                rng.choice(granted).release()
            elif roll < 0.54:
                cache.expire_leases()
            else:
                _lifecycle_call(cache, rng, key, misuse)


def _worker(
    cache: TracedEmbeddingCache,
    rng: random.Random,
    mine: list[str],
    others: list[str],
    steps: int,
    errors: list[BaseException],
) -> None:
    """One thread: saves of its own keys, and loads/remote reads of everyone's."""
    pinned: list[str] = []
    try:
        for _ in range(steps):
            roll = rng.random()
            key = rng.choice(mine)
            try:
                if roll < 0.3:
                    if cache.alloc(key, rng.randint(1, 3)) is not None:
                        if rng.random() < 0.8:
                            cache.mark_ready(key)
                        else:
                            cache.discard(key)
                elif roll < 0.7:
                    target = rng.choice(mine + others)
                    entry = cache.pin_if_ready(target)
                    if entry is not None and entry.ready:
                        pinned.append(target)
                elif pinned:
                    cache.unpin(pinned.pop(rng.randrange(len(pinned))))
            except CacheError:
                pass  # e.g. alloc of a key this thread still holds
        while pinned:
            cache.unpin(pinned.pop())
    except BaseException as exc:  # surfaced by threaded_trace
        errors.append(exc)


def threaded_trace(
    seed: int,
    num_blocks: int = 8,
    threads: int = 3,
    steps: int = 60,
    operations: Operations | None = None,
    eviction: PolicySpec = "fifo",
) -> TracedEmbeddingCache:
    """Several threads mixing saves, loads and remote reads on one cache.

    Each thread allocates only its own keys (so its saves stay legal) and
    pins anyone's ready entries through ``pin_if_ready``, releasing every pin
    before it ends. The trace is the order the lock granted.
    """
    cache = TracedEmbeddingCache(num_blocks, eviction, operations=operations)
    names = [[f"t{t}k{i}" for i in range(2)] for t in range(threads)]
    errors: list[BaseException] = []
    workers = [
        threading.Thread(
            target=_worker,
            name=f"worker-{t}",
            args=(
                cache,
                random.Random(seed * 1000 + t),
                names[t],
                [k for u in range(threads) if u != t for k in names[u]],
                steps,
                errors,
            ),
        )
        for t in range(threads)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise errors[0]
    return cache
