"""Construction time of a large cache: the seed's class beside each policy.

Building ``EmbeddingCache(num_blocks)`` sets up the whole free pool at once,
so its cost is the one place where a pool of a million blocks shows as a
single pause. Each round builds one cache of every implementation (the order
rotating from round to round: ``rounds.rotating_rounds``), timing only the
constructor call in this thread's CPU time (``rounds.CLOCK``; page faults
count, time spent descheduled does not); a full collection runs before each call, so garbage
from the previous cache is not charged to the next. Medians are reported, and
ratios to the seed are medians of the per-round ratios.
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Sequence
from typing import Any

from . import implementations, rounds, runner

#: Pool size constructed by default (2**20 blocks).
NUM_BLOCKS = 1_048_576


def time_construction(
    factory: implementations.Factory, num_blocks: int, clock: runner.Clock = rounds.CLOCK
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
    clock: runner.Clock = rounds.CLOCK,
) -> dict[str, Any]:
    """Median construction time of the seed and every policy over ``repeat`` rounds.

    O(repeat x implementations x num_blocks).

    Raises:
        ValueError: ``repeat`` < 1, or an unknown policy or allocator.
    """
    impls = implementations.factories(names, allocators=allocators)
    first = next(iter(impls.values()))
    times = rounds.rotating_rounds(
        impls,
        repeat,
        lambda impl, _round: time_construction(impls[impl], num_blocks, clock),
        warm_up=lambda: time_construction(first, num_blocks, clock),  # first-call costs
    )
    seed_runs = times[implementations.SEED]
    rows = [
        {
            "impl": impl,
            "seconds": statistics.median(runs),
            "seconds_runs": runs,
            "vs_seed": rounds.median_ratio(runs, seed_runs),
        }
        for impl, runs in times.items()
    ]
    return {"num_blocks": num_blocks, "repeat": repeat, "rows": rows}
