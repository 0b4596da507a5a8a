"""Timing contenders side by side in rotating rounds, and the ratios taken from those rounds.

Every side-by-side figure of the bench is measured by ``rotating_rounds``:
the builds' pool sizes (``runner``), the policies' costs (``policy_costs``),
and ``bench --beyond-seed``'s construction, speed and scale sections. There
are ``repeat`` rounds; each times every contender once, and the contenders'
order rotates one step per round, so none is always the first (just after the
previous round's garbage) or always the last, and a burst of machine noise
hits several contenders rather than one (``bench --vllm`` steps its
engines in lockstep instead, the order of each step rotated:
``embedding_cache_checker.engine_loop.report.lockstep``). ``median_ratio`` turns two
contenders' per-round figures into one ratio (a slow round slows both, so the
per-round ratio cancels it), and ``same_mix_ratio`` compares two contenders'
per-call costs over the same operation counts. ``CLOCK`` is the cost clock.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeVar

#: The cost clock: this thread's CPU time in integer nanoseconds, so that time spent
#: descheduled (other processes on a busy machine) is not charged to whichever
#: contender was running.
CLOCK = time.thread_time_ns

K = TypeVar("K")
T = TypeVar("T")


def rotated(keys: Sequence[K], shift: int) -> list[K]:
    """``keys`` rotated left by ``shift`` places (modulo their number); [] for none. O(len)."""
    if not keys:
        return []
    shift %= len(keys)
    return [*keys[shift:], *keys[:shift]]


def rotating_rounds(
    contenders: Iterable[K],
    repeat: int,
    measure: Callable[[K, int], T],
    *,
    warm_up: Callable[[], object] | None = None,
) -> dict[K, list[T]]:
    """``measure(contender, round)`` for every contender in each of ``repeat`` rounds.

    Round ``r`` takes the contenders in their given order rotated left by ``r``.
    ``warm_up`` (if given) runs once, untimed, before round 0: the interpreter's
    first pass over the timed code (specialisation, allocator arenas) is slower,
    and would be charged to whichever contender came first. Returns, per
    contender in the given order, its ``repeat`` results in round order.
    O(repeat x contenders) calls of ``measure``.

    Raises:
        ValueError: ``repeat`` < 1.
    """
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    order = list(contenders)
    results: dict[K, list[T]] = {key: [] for key in order}
    if warm_up is not None:
        warm_up()
    for round_ in range(repeat):
        for key in rotated(order, round_):
            results[key].append(measure(key, round_))
    return results


@contextmanager
def frozen_gc() -> Iterator[None]:
    """Within the block, the collector leaves alone every object alive on entry.

    ``gc.freeze`` moves them to the permanent generation: the scripts and warmed
    caches stay put while contenders are timed, and each timed loop's
    ``gc.collect()`` (``runner.time_calls``) need not walk them again and again.
    O(1) on entry and exit.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def median_ratio(mine: Sequence[float], base: Sequence[float]) -> float:
    """Median over the rounds of ``mine[r] / base[r]`` (0.0 for a round whose base is 0).

    O(rounds log rounds).

    Raises:
        ValueError: the two have different numbers of rounds.
        statistics.StatisticsError: there are no rounds.
    """
    return statistics.median(a / b if b else 0.0 for a, b in zip(mine, base, strict=True))


def same_mix_ratio(
    counts: Mapping[str, int], base_costs: Mapping[str, float], costs: Mapping[str, float]
) -> float:
    """Per-call ``costs`` over ``base_costs``, both weighted by the same ``counts``.

    ``counts`` maps an operation to its calls (the base's mix); the costs map an
    operation to its ns per call. Operations missing from either cost table are
    left out. The plain ns/op ratio moves when the mix shifts (a policy that hits
    more, or a bigger pool, makes fewer, costlier allocs); this one compares the
    same work. 0.0 when the weighted base costs nothing. O(operations).
    """
    shared = [op for op in counts if op in costs and op in base_costs]
    base = sum(counts[op] * base_costs[op] for op in shared)
    mine = sum(counts[op] * costs[op] for op in shared)
    return mine / base if base else 0.0
