"""Memory per live entry, and the pool's own cost per block: the seed's class beside each policy.

Measured with ``tracemalloc`` (bytes the Python allocators hand out, as
requested): ``pool`` is what constructing an empty cache of ``pool_blocks``
blocks retains, per block; ``entry`` is what filling a fresh cache with
``entries`` ready (allocated and marked ready) entries of ``entry_blocks``
blocks each adds, per entry: the entry objects, their block-id tuples, and
their share of the index and eviction structures. The key strings are built
before tracing starts (they are the caller's). The fill uses a quarter of its
pool, so the free pool's own structure (the seed's list would shrink its
buffer below half) does not move the per-entry figure. ``full`` is the whole
cost of a cache whose pool is exactly filled with such entries (construction
and fill), per block: the two figures above trade against each other (a pool
that keeps no per-id objects hands out fresh int objects in each entry's ids).
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from . import implementations, workload

#: Defaults: the empty pool measured, and the fill.
POOL_BLOCKS = 1_048_576
ENTRIES = 10_000
ENTRY_BLOCKS = 4
#: The fill's pool holds this many times the blocks it allocates.
FILL_HEADROOM = 4


def traced_bytes(action: Callable[[], object]) -> tuple[int, object]:
    """Bytes still allocated after ``action()`` that were not before, and its result.

    Starts ``tracemalloc`` if it is not running (and stops it again afterwards).
    """
    started = not tracemalloc.is_tracing()
    gc.collect()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = action()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        if started:
            tracemalloc.stop()
    return after - before, result


def pool_bytes(factory: implementations.Factory, num_blocks: int) -> int:
    """Bytes an empty cache of ``num_blocks`` blocks retains."""
    cost, cache = traced_bytes(lambda: factory(num_blocks))
    del cache
    return cost


def _fill(cache: workload.Cache, keys: Sequence[str], entry_blocks: int) -> workload.Cache:
    """Allocate and mark ready an entry of ``entry_blocks`` blocks per key; the cache."""
    for key in keys:
        if cache.alloc(key, entry_blocks) is None:
            raise RuntimeError(f"alloc failed for {key!r} in a pool with room for it")
        cache.mark_ready(key)
    if len(cache) != len(keys):
        raise RuntimeError(f"filled {len(cache)} entries, not {len(keys)}")
    return cache


def _keys(entries: int, entry_blocks: int) -> list[str]:
    if entries < 1 or entry_blocks < 1:
        raise ValueError(f"need entries >= 1 and entry_blocks >= 1, got {entries}, {entry_blocks}")
    return [f"entry-{i:08d}" for i in range(entries)]


def entry_bytes(factory: implementations.Factory, entries: int, entry_blocks: int) -> float:
    """Bytes per ready entry of ``entry_blocks`` blocks, over ``entries`` of them."""
    keys = _keys(entries, entry_blocks)
    cache = factory(FILL_HEADROOM * entries * entry_blocks)
    cost, _ = traced_bytes(lambda: _fill(cache, keys, entry_blocks))
    return cost / entries


def full_bytes(factory: implementations.Factory, entries: int, entry_blocks: int) -> float:
    """Bytes per block of a cache built and filled with exactly ``entries`` ready entries."""
    keys = _keys(entries, entry_blocks)
    pool = entries * entry_blocks
    cost, cache = traced_bytes(lambda: _fill(factory(pool), keys, entry_blocks))
    del cache
    return cost / pool


def measure(
    names: Sequence[str] | None = None,
    *,
    allocators: Sequence[str] | None = None,
    pool_blocks: int = POOL_BLOCKS,
    entries: int = ENTRIES,
    entry_blocks: int = ENTRY_BLOCKS,
) -> dict[str, Any]:
    """Pool bytes per block and bytes per live entry for the seed and every policy."""
    impls = implementations.factories(names, allocators=allocators)
    measured = {
        impl: (
            pool_bytes(factory, pool_blocks) / pool_blocks,
            entry_bytes(factory, entries, entry_blocks),
            full_bytes(factory, entries, entry_blocks),
        )
        for impl, factory in impls.items()
    }
    seed_pool, seed_entry, seed_full = measured[implementations.SEED]
    rows = [
        {
            "impl": impl,
            "pool_bytes_per_block": pool,
            "pool_vs_seed": pool / seed_pool if seed_pool else None,
            "entry_bytes": entry,
            "entry_vs_seed": entry / seed_entry if seed_entry else None,
            "full_bytes_per_block": full,
            "full_vs_seed": full / seed_full if seed_full else None,
        }
        for impl, (pool, entry, full) in measured.items()
    ]
    return {
        "pool_blocks": pool_blocks,
        "entries": entries,
        "entry_blocks": entry_blocks,
        "fill_pool_blocks": FILL_HEADROOM * entries * entry_blocks,
        "full_pool_blocks": entries * entry_blocks,
        "rows": rows,
    }
