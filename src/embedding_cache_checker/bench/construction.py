"""Construction time of a large cache: the seed's class beside each policy.

Building ``EmbeddingCache(num_blocks)`` sets up the whole free pool at once,
so its cost is the one place where a pool of a million blocks shows as a
single pause. Each round builds one cache of every implementation (the order
rotating from round to round), timing only the constructor call in this
thread's CPU time (``policies.CLOCK``; page faults count, time spent
descheduled does not); a full collection runs before each call, so garbage
from the previous cache is not charged to the next. Medians are reported, and
ratios to the seed are medians of the per-round ratios.
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Sequence
from typing import Any

from . import implementations, policies, runner

#: Pool size constructed by default (2**20 blocks).
NUM_BLOCKS = 1_048_576


def time_construction(
    factory: implementations.Factory, num_blocks: int, clock: runner.Clock = policies.CLOCK
) -> float:
    """Seconds one ``factory(num_blocks)`` call takes (the cache is dropped afterwards)."""
    gc.collect()
    start = clock()
    cache = factory(num_blocks)
    elapsed = clock() - start
    del cache
    return elapsed / 1e9


def measure(
    names: Sequence[str] | None = None,
    *,
    allocators: Sequence[str] | None = None,
    num_blocks: int = NUM_BLOCKS,
    repeat: int = 5,
    clock: runner.Clock = policies.CLOCK,
) -> dict[str, Any]:
    """Median construction time of the seed and every policy over ``repeat`` rounds."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    impls = implementations.factories(names, allocators=allocators)
    order = list(impls)
    times: dict[str, list[float]] = {impl: [] for impl in order}
    time_construction(impls[order[0]], num_blocks, clock)  # untimed: first-call costs
    for round_ in range(repeat):
        shift = round_ % len(order)
        for impl in order[shift:] + order[:shift]:
            times[impl].append(time_construction(impls[impl], num_blocks, clock))
    seed_runs = times[implementations.SEED]
    rows = [
        {
            "impl": impl,
            "seconds": statistics.median(runs),
            "seconds_runs": runs,
            "vs_seed": statistics.median(
                mine / theirs if theirs else 0.0
                for mine, theirs in zip(runs, seed_runs, strict=True)
            ),
        }
        for impl, runs in times.items()
    ]
    return {"num_blocks": num_blocks, "repeat": repeat, "rows": rows}
