"""The shared op mix of the seed-comparison tool ``compare.py``, reproduced call for call.

``compare.py`` (with its ``workload.py``) is the project's outside yardstick:
it records a stream on the seed's class (4,096 blocks, 60,000 ops, a
3,000-key catalogue, seed 7) and reports the project's speed and block
contiguity on it. The package may not import that directory, so ``record``
here is its generator without the misuse branch (``misuse=0``): the same
probabilities, the same random draws in the same order (the size draw is
made on every request, as ``sizes.setdefault(k, rng.choice(...))`` does), so
driven by the seed's class it yields exactly compare.py's legal stream.

The differences from ``workload``'s realistic mix (which scales its
catalogue with the pool and resolves saves in due order) are why this is a
module of its own: the figures must be comparable with compare.py's.

Driven by another cache the stream adapts to that cache's answers (a miss
allocates, a ready hit pins); a drop-in for the seed (fifo) answers alike,
so it gets the seed's stream, which ``fingerprint`` lets a caller check.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections import deque
from collections.abc import Sequence

from . import workload

#: compare.py's defaults: pool, operations, catalogue, seed.
NUM_BLOCKS = 4096
N_OPS = 60_000
CATALOGUE = 3000
SEED = 7
#: Item sizes in blocks, drawn uniformly once per key.
ITEM_SIZES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
ZIPF_EXPONENT = 0.9
REQUESTS_PER_STEP = (1, 6)
REMOTE_READ_FRACTION = 0.15
SAVE_FAILURE_RATE = 0.05
SAVE_DELAY = (1, 3)
LOAD_DELAY = (1, 4)
HELD_QUERY_RATE = 0.02


def record(
    cache: workload.Cache, n_ops: int = N_OPS, catalogue: int = CATALOGUE, seed: int = SEED
) -> list[workload.Op]:
    """Run the mix on ``cache`` until at least ``n_ops`` calls; the calls, in order.

    The last engine step is completed, so the stream may run a few calls past
    ``n_ops`` (as compare.py's does). Pending saves and loads are FIFO queues
    served while their head is due (as compare.py's are). O(calls x log catalogue).
    """
    rng = random.Random(seed)
    keys = [f"mm-{i:05d}" for i in range(catalogue)]
    # random.choices(keys, weights) accumulates the weights on every call; accumulating
    # once and passing cum_weights draws the same keys from the same random numbers.
    cum_weights = list(
        itertools.accumulate(1.0 / (i + 1) ** ZIPF_EXPONENT for i in range(catalogue))
    )
    sizes: dict[str, int] = {}
    ops: list[workload.Op] = []
    pending_save: deque[tuple[int, str]] = deque()
    pending_load: deque[tuple[int, str]] = deque()
    step = 0
    while len(ops) < n_ops:
        step += 1
        while pending_save and pending_save[0][0] <= step:
            key = pending_save.popleft()[1]
            name = "discard" if rng.random() < SAVE_FAILURE_RATE else "mark_ready"
            getattr(cache, name)(key)
            ops.append((name, (key,)))
        while pending_load and pending_load[0][0] <= step:
            key = pending_load.popleft()[1]
            cache.unpin(key)
            ops.append(("unpin", (key,)))
        for _ in range(rng.randint(*REQUESTS_PER_STEP)):
            key = rng.choices(keys, cum_weights=cum_weights)[0]
            size = rng.choice(ITEM_SIZES)  # drawn on every request, kept on the first
            n_blocks = sizes.setdefault(key, size)
            if rng.random() < REMOTE_READ_FRACTION:
                entry = cache.pin_if_ready(key)
                ops.append(("pin_if_ready", (key,)))
                if entry is not None and entry.ready:
                    pending_load.append((step + rng.randint(*LOAD_DELAY), key))
                continue
            entry = cache.get(key)
            ops.append(("get", (key,)))
            if entry is None:
                allocated = cache.alloc(key, n_blocks)
                ops.append(("alloc", (key, n_blocks)))
                if allocated is not None:
                    pending_save.append((step + rng.randint(*SAVE_DELAY), key))
            elif entry.ready:
                cache.pin(key)
                ops.append(("pin", (key,)))
                pending_load.append((step + rng.randint(*LOAD_DELAY), key))
        if rng.random() < HELD_QUERY_RATE:
            cache.has_held_entries()
            ops.append(("has_held_entries", ()))
    return ops


def fingerprint(ops: Sequence[workload.Op]) -> str:
    """A short sha256 of the calls: equal streams, equal fingerprints. O(calls)."""
    digest = hashlib.sha256()
    for name, args in ops:
        digest.update(f"{name}{args!r}\n".encode())
    return digest.hexdigest()[:16]
