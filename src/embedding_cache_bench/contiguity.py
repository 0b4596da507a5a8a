"""Block contiguity: runs of consecutive block ids per multi-block entry, per implementation.

vLLM's worker turns each run of consecutive block ids into one transfer
descriptor, so fewer runs per entry means fewer descriptors. The figure is
the seed-comparison tool ``compare.py``'s (kept beside the repository):
over the successful allocs of more than one block, the mean number of
maximal runs in the returned ``block_ids``.

Two streams, each served by the seed's class and by every policy:

- ``shared``: compare.py's op mix (``shared_mix``; 4,096 blocks, sizes 1-32,
  every alloc of the stream counted, as compare.py does);
- the token-sized streams of ``bench --policies`` (``streams.make_stream``:
  items of 64-4,096 blocks, 262,144-block pool by default), served by
  ``hit_ratios.simulate``; only the allocs after the warm-up are counted, so a
  fresh pool's easy contiguity does not flatter the figure.

A ``RunCounter`` wraps each cache and counts the runs of every entry ``alloc``
returns; nothing here is timed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from embedding_cache import CacheEntry, EmbeddingCache
from embedding_cache.verification import runs_of, state_of
from embedding_cache_checker.text_table import numeric_right, render_table

from . import hit_ratios, implementations, shared_mix, streams, workload

#: Workload name of compare.py's op mix in the rows.
SHARED = "shared"
#: Defaults of the token-sized streams.
TOKEN_POOL = 262_144
TOKEN_WARMUP = 5_000
TOKEN_REQUESTS = 20_000


#: The contiguity bounds k measured beside each policy (the issue's trade-off table).
CONTIGUITY_BOUNDS = (1, 2, 4, 8)


def _ratio(value: float, base: float) -> float | None:
    return value / base if base else None


def runs(ids: Sequence[int]) -> int:
    """Maximal runs of consecutive ids in ``ids`` (ascending, as every entry's are)."""
    return len(runs_of(ids))


class RunCounter:
    """A cache wrapper that records, for every successful ``alloc``, its blocks and runs.

    Forwards every call to the wrapped cache unchanged (the ``workload.Cache``
    protocol, plus ``num_blocks``).
    """

    def __init__(self, cache: workload.Cache) -> None:
        self.cache = cache
        self.num_blocks = workload.cache_blocks(cache)
        #: (blocks, runs) of each successful alloc, in order.
        self.allocs: list[tuple[int, int]] = []

    def alloc(self, key: str, n_blocks: int) -> CacheEntry | None:
        entry = self.cache.alloc(key, n_blocks)
        if entry is not None:
            self.allocs.append((len(entry.block_ids), runs(entry.block_ids)))
        return entry

    def get(self, key: str) -> CacheEntry | None:
        return self.cache.get(key)

    def has_held_entries(self) -> bool:
        return self.cache.has_held_entries()

    def mark_ready(self, key: str) -> None:
        self.cache.mark_ready(key)

    def pin(self, key: str) -> None:
        self.cache.pin(key)

    def pin_if_ready(self, key: str) -> CacheEntry | None:
        return self.cache.pin_if_ready(key)

    def unpin(self, key: str) -> None:
        self.cache.unpin(key)

    def discard(self, key: str) -> None:
        self.cache.discard(key)

    def __len__(self) -> int:
        return len(self.cache)


def summarize(allocs: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """Runs per multi-block entry (compare.py's figure) and related counts, from (blocks, runs).

    ``runs_per_entry`` is 0.0 when no alloc had more than one block.
    """
    multi = [count for blocks, count in allocs if blocks > 1]
    return {
        "allocs": len(allocs),
        "multi_block_allocs": len(multi),
        "runs_per_entry": sum(multi) / len(multi) if multi else 0.0,
        "one_run_fraction": sum(count == 1 for count in multi) / len(multi) if multi else 0.0,
        "max_runs": max(multi, default=0),
    }


def shared(
    factory: implementations.Factory,
    *,
    num_blocks: int = shared_mix.NUM_BLOCKS,
    n_ops: int = shared_mix.N_OPS,
) -> dict[str, Any]:
    """Contiguity on compare.py's op mix, served by a fresh cache from ``factory``."""
    counter = RunCounter(factory(num_blocks))
    ops = shared_mix.record(counter, n_ops)
    return {"calls": len(ops), "stream": shared_mix.fingerprint(ops), **summarize(counter.allocs)}


def free_count(cache: workload.Cache) -> int:
    """How many blocks of ``cache`` are free: the package's pool, or the seed's stack."""
    if isinstance(cache, EmbeddingCache):
        return len(state_of(cache).free)
    return len(cast(implementations.SeedCache, cache)._free_blocks)


def token(
    factory: implementations.Factory, stream: streams.Stream, num_blocks: int
) -> dict[str, Any]:
    """Contiguity on a token-sized stream (allocs after its warm-up), its hit ratio, and the
    blocks evicted over the whole stream (allocated minus still held: nothing is discarded)."""
    counter = RunCounter(factory(num_blocks))
    counts = hit_ratios.simulate(stream, counter)
    # The successful allocs after the warm-up are the last ones the counter saw.
    counted = counts.allocs - counts.alloc_failures
    window = counter.allocs[len(counter.allocs) - counted :] if counted else []
    held = num_blocks - free_count(counter.cache)
    return {
        "calls": counts.requests,
        "stream": stream.fingerprint,
        "request_hit_ratio": counts.request_hit_ratio,
        "evicted_blocks": sum(blocks for blocks, _ in counter.allocs) - held,
        **summarize(window),
    }


def measure(
    names: Sequence[str] | None = None,
    *,
    allocators: Sequence[str] | None = None,
    shared_ops: int = shared_mix.N_OPS,
    token_pool: int = TOKEN_POOL,
    token_warmup: int = TOKEN_WARMUP,
    token_requests: int = TOKEN_REQUESTS,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    bounds: Sequence[int] = CONTIGUITY_BOUNDS,
) -> dict[str, Any]:
    """Runs per multi-block entry for the seed and every policy on every stream; a JSON-ready dict.

    Each row carries ``vs_seed`` (its figure over the seed's on the same
    workload); on the shared mix, ``same_stream_as_seed`` says whether the
    implementation was fed exactly the seed's calls (true for a drop-in).
    With ``bounds``, each policy also runs contiguity-aware eviction
    (``"<policy>/extents/k<k>"``, spec/SPEC.md section 14); on the token streams
    such a row carries ``hits_vs_k0`` and ``evicted_vs_k0``, its hit ratio and
    blocks evicted over the same policy's on extents without it.
    """
    impls = implementations.factories(names, allocators=allocators, contiguity=bounds)
    rows: list[dict[str, Any]] = []

    def add(workload_name: str, num_blocks: int, results: dict[str, dict[str, Any]]) -> None:
        base = results[implementations.SEED]
        for impl, result in results.items():
            row = {"workload": workload_name, "num_blocks": num_blocks, "impl": impl, **result}
            row["vs_seed"] = (
                result["runs_per_entry"] / base["runs_per_entry"]
                if base["runs_per_entry"]
                else None
            )
            if workload_name == SHARED:
                row["same_stream_as_seed"] = result["stream"] == base["stream"]
            without = results.get(impl.rsplit("/k", 1)[0]) if "/k" in impl else None
            if without is not None and "request_hit_ratio" in result:
                row["hits_vs_k0"] = _ratio(
                    result["request_hit_ratio"], without["request_hit_ratio"]
                )
                row["evicted_vs_k0"] = _ratio(result["evicted_blocks"], without["evicted_blocks"])
            rows.append(row)

    add(
        SHARED,
        shared_mix.NUM_BLOCKS,
        {impl: shared(factory, n_ops=shared_ops) for impl, factory in impls.items()},
    )
    if progress is not None:
        progress(f"contiguity: shared mix done for {len(impls)} implementations")
    for name in streams.WORKLOADS:
        spec = streams.StreamSpec(name, token_warmup + token_requests, token_warmup, seed)
        stream = streams.make_stream(spec)
        add(name, token_pool, {impl: token(f, stream, token_pool) for impl, f in impls.items()})
        if progress is not None:
            progress(f"contiguity: token stream {name!r} done")
    return {
        "shared": {
            "num_blocks": shared_mix.NUM_BLOCKS,
            "ops": shared_ops,
            "catalogue": shared_mix.CATALOGUE,
            "seed": shared_mix.SEED,
            "item_sizes": list(shared_mix.ITEM_SIZES),
        },
        "token": {
            "num_blocks": token_pool,
            "warmup": token_warmup,
            "requests": token_requests,
            "items": streams.CATALOGUE_ITEMS,
            "item_blocks": list(streams.ITEM_BLOCKS),
            "seed": seed,
        },
        "bounds": list(bounds),
        "rows": rows,
    }


def tradeoff_lines(section: Mapping[str, Any]) -> list[str]:
    """The k trade-off of contiguity-aware eviction, as report lines: per workload and
    policy, runs per entry, hits and blocks evicted by k (none without k rows)."""
    rows = [
        [
            row["workload"],
            row["impl"],
            f"{row['runs_per_entry']:.2f}",
            "-" if row.get("hits_vs_k0") is None else f"{row['hits_vs_k0'] - 1:+.1%}",
            "-" if row.get("evicted_vs_k0") is None else f"{row['evicted_vs_k0']:.2f}x",
            f"{row['request_hit_ratio']:.4f}" if "request_hit_ratio" in row else "-",
        ]
        for row in section["rows"]
        if "/k" in row["impl"] or row["impl"].endswith(f"/{implementations.CONTIGUOUS_ALLOCATOR}")
    ]
    if not any("/k" in row[1] for row in rows):
        return []
    header = ["workload", "impl", "runs/entry", "hits vs k0", "evicted vs k0", "hit ratio"]
    return [
        "contiguity-aware eviction (spec/SPEC.md section 14): <policy>/extents/k<k> evicts up "
        "to k victims beyond need while no free run holds n; hits and blocks evicted relative "
        "to the same policy on extents without it (k = 0), over the whole stream",
        *render_table(header, rows, numeric_right(len(header))).splitlines(),
    ]
