"""Per-operation cost against pool size: does any operation grow with the pool?

The mix is ``workload``'s realistic one, which scales with the pool on
purpose: item sizes stay 1-32 blocks at every size from 256 blocks up (so
each call moves the same number of blocks), and the catalogue holds
``workload.CATALOGUE_PRESSURE`` pools' worth of blocks (so every size is under
the same eviction pressure, with a similar hit ratio, and the warm-up fills
the pool before anything is timed). Per-call work is then the same at every
size; what can still make ns/op grow is a cost that depends on the pool (a
scan of the free ids, of the entries, of the policy's queue) or the memory
hierarchy (a catalogue of 388,000 keys misses the CPU caches more than one of
380). The seed's class runs the same mix as the yardstick for the second.

For each implementation in turn (``implementations.factories``: the seed,
then every policy with every allocator): one script per size
(``workload.record`` on that implementation, ``repeat + 1`` windows of
``n_ops`` calls after the warm-up); then every size's warm-up is replayed,
untimed, on a fresh cache, and all the warmed caches stay alive while
``repeat`` rounds each time the next window at every size (sizes in rotating
order: ``rounds.rotating_rounds``; ``runner.time_calls``), and a last window is timed call by call
(``runner.time_each_call``) for the per-operation breakdown. A warm-up at
2**20 blocks is about 1.6 million calls, so it is replayed once per size, not
once per round. ``vs_smallest`` is the median of the per-round ratios to the
smallest pool (window k against window k); ``same_mix_vs_smallest`` weights
both sizes' per-call costs by the smallest pool's operation counts (the same
work at both sizes); ``vs_seed`` is ns/op over the seed's at that size (medians,
taken in different loops); ``growth_over_seeds`` is ``vs_smallest`` over the
seed's: the seed's operations do not depend on the pool size, so its own
growth is the memory hierarchy's, and what an implementation grows beyond it
is its own doing.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from . import implementations, rounds, runner, workload

#: Pool sizes measured by default: 2**10, 2**14, 2**18, 2**20 blocks.
SIZES = (1_024, 16_384, 262_144, 1_048_576)


def _warmed(script: workload.Script, factory: implementations.Factory) -> workload.Cache:
    """A fresh cache that has made the script's warm-up calls (untimed)."""
    cache = factory(script.shape.num_blocks)
    methods: dict[str, Callable[..., object]] = {}
    for op, args in script.ops[: script.warmup]:
        method = methods.get(op)
        if method is None:
            method = methods[op] = getattr(cache, op)
        method(*args)
    return cache


def time_windows(
    scripts: Sequence[workload.Script],
    factory: implementations.Factory,
    n_ops: int,
    repeat: int,
    clock: runner.Clock = rounds.CLOCK,
) -> tuple[list[list[float]], list[dict[str, float]]]:
    """Per script: ns/op of windows 0 .. repeat-1, and ns per call by operation of window repeat.

    Each script must hold ``repeat + 1`` windows of ``n_ops`` calls after its
    warm-up. Round k times window k of every script (``rounds.rotating_rounds``),
    each on the cache its warm-up and windows 0 .. k-1 left behind.
    O(total calls of the scripts).
    """
    with rounds.frozen_gc():  # the scripts stay put: each window's gc.collect() skips them
        caches = [_warmed(script, factory) for script in scripts]

        def window(i: int, k: int) -> list[workload.BoundCall]:
            start = scripts[i].warmup + k * n_ops
            return workload.bind(scripts[i].ops[start : start + n_ops], caches[i])

        timed = rounds.rotating_rounds(
            range(len(scripts)), repeat, lambda i, k: runner.time_calls(window(i, k), clock)
        )
        kinds = []
        for i, script in enumerate(scripts):
            start = script.warmup + repeat * n_ops
            names = [op for op, _ in script.ops[start : start + n_ops]]
            kinds.append(runner.time_each_call(window(i, repeat), names, clock))
    return list(timed.values()), kinds


def impl_rows(
    impl: str,
    factory: implementations.Factory,
    sizes: Sequence[int],
    n_ops: int,
    repeat: int,
    seed: int,
    clock: runner.Clock = rounds.CLOCK,
) -> list[dict[str, Any]]:
    """One row per pool size for one implementation, ratios against its smallest size."""
    ordered = sorted(set(sizes))
    scripts = [workload.record(size, (repeat + 1) * n_ops, seed, factory) for size in ordered]
    runs, by_kind = time_windows(scripts, factory, n_ops, repeat, clock)
    counts = [_op_counts(script, n_ops, repeat) for script in scripts]
    rows = []
    for i, script in enumerate(scripts):
        stats = script.stats()
        rows.append(
            {
                "impl": impl,
                "num_blocks": script.shape.num_blocks,
                "catalogue": script.shape.catalogue,
                "item_sizes": list(script.shape.item_sizes),
                "warmup_ops": script.warmup,
                "ops": n_ops,
                "ns_per_op": statistics.median(runs[i]),
                "ns_per_op_runs": runs[i],
                "vs_smallest": rounds.median_ratio(runs[i], runs[0]),
                "same_mix_vs_smallest": rounds.same_mix_ratio(counts[0], by_kind[0], by_kind[i]),
                "ns_per_call_by_op": by_kind[i],
                "by_op_vs_smallest": {
                    op: by_kind[i][op] / by_kind[0][op] for op in by_kind[i] if by_kind[0].get(op)
                },
                "op_counts": counts[i],
                "hit_ratio": stats.hit_ratio,
                "evictions": stats.evictions,
                "alloc_failures": stats.alloc_failures,
            }
        )
    return rows


def _op_counts(script: workload.Script, n_ops: int, repeat: int) -> dict[str, int]:
    """Calls of each operation in the window timed call by call (the last one)."""
    start = script.warmup + repeat * n_ops
    return workload.op_counts(script.ops[start : start + n_ops])


def measure(
    names: Sequence[str] | None = None,
    *,
    allocators: Sequence[str] | None = None,
    sizes: Sequence[int] = SIZES,
    n_ops: int = 60_000,
    repeat: int = 5,
    seed: int = 0,
    clock: runner.Clock = rounds.CLOCK,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Rows for the seed and every implementation (default: all) at every size; JSON-ready.

    Implementations run one after the other, so only one's scripts and caches
    are alive at a time (a 2**20-block script holds about two million calls).
    """
    if repeat < 1 or n_ops < 1:
        raise ValueError(f"repeat and n_ops must be >= 1, got {repeat}, {n_ops}")
    impls = implementations.factories(names, allocators=allocators)
    rows: list[dict[str, Any]] = []
    for impl, factory in impls.items():
        rows += impl_rows(impl, factory, sizes, n_ops, repeat, seed, clock)
        if progress is not None:
            progress(f"scale: {impl} timed at {len(set(sizes))} pool sizes")
    seed_rows = {row["num_blocks"]: row for row in rows if row["impl"] == implementations.SEED}
    for row in rows:
        base = seed_rows.get(row["num_blocks"])
        row["vs_seed"] = row["ns_per_op"] / base["ns_per_op"] if base else None
        # The seed's ops do not depend on the pool size, so its growth is the memory
        # hierarchy's: what an implementation grows beyond it is its own doing.
        row["growth_over_seeds"] = (
            row["vs_smallest"] / base["vs_smallest"] if base and base["vs_smallest"] else None
        )
    return {"sizes": sorted(set(sizes)), "ops": n_ops, "repeat": repeat, "seed": seed, "rows": rows}
