"""The offline reference of ``bench --policies``: policies that know the future.

A policy that sees the whole request stream in advance bounds what an online
policy can reach. Two are computed, over the same stream and pool as the
shipped policies (``hit_ratios.simulate``):

- ``belady``: evict the entry whose next request is farthest away (Belady's
  MIN, optimal when every entry is one block);
- ``belady-size``: evict the entry with the largest size x distance to its
  next request, the blocks-times-time it holds for one future hit.

Both never keep an entry that is not requested again, and admit an entry
only if it outranks every victim it would need (otherwise the request is a
miss that changes nothing: a bypass, counted as an alloc failure). The
reference is the higher of the two request hit ratios. Caching items of
different sizes optimally is NP-hard, so the reference is a *lower bound* on
the optimum: a policy at 80% of the reference is at most 80% of the optimum.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from .counts import HitCounts
from .streams import Stream

#: Position of "never requested again" (beyond every request index).
NEVER = float("inf")

#: A rule ranks the cached entries ``{key: (size, next request)}`` at request ``now``:
#: ``[(score, key, size)]``, the highest score (evicted first) first; and scores one
#: entry the same way.
Ranking = Callable[[dict[str, tuple[int, float]], int], list[tuple[float, str, int]]]
Score = Callable[[int, float, int], float]


def _farthest_next_use(size: int, next_use: float, now: int) -> float:
    return next_use


def _rank_by_next_use(
    cached: dict[str, tuple[int, float]], now: int
) -> list[tuple[float, str, int]]:
    # One comprehension and a C-level sort: the scores are plain floats first in each tuple.
    return sorted([(nxt, key, size) for key, (size, nxt) in cached.items()], reverse=True)


def _size_times_distance(size: int, next_use: float, now: int) -> float:
    return size * (next_use - now)


def _rank_by_size_times_distance(
    cached: dict[str, tuple[int, float]], now: int
) -> list[tuple[float, str, int]]:
    return sorted(
        [(size * (nxt - now), key, size) for key, (size, nxt) in cached.items()], reverse=True
    )


#: The offline rules by name, in report order: (score of one entry, ranking of all).
OFFLINE_RULES: dict[str, tuple[Score, Ranking]] = {
    "belady": (_farthest_next_use, _rank_by_next_use),
    "belady-size": (_size_times_distance, _rank_by_size_times_distance),
}


def next_uses(keys: tuple[str, ...]) -> list[float]:
    """For each request, the index of the next request of the same key (``NEVER`` if none).

    One backward pass: O(requests).
    """
    out: list[float] = [NEVER] * len(keys)
    last: dict[str, int] = {}
    for i in range(len(keys) - 1, -1, -1):
        key = keys[i]
        out[i] = last.get(key, NEVER)
        last[key] = i
    return out


def simulate_offline(stream: Stream, pool: int, rule: str) -> HitCounts:
    """Serve ``stream`` on a pool of ``pool`` blocks with the offline ``rule``; counts
    after the warm-up, as ``hit_ratios.simulate`` counts them.

    A miss that needs space ranks every cached entry by the rule's score, once:
    O(requests + misses x C log C) for C cached entries.

    Raises:
        KeyError: ``rule`` is not in ``OFFLINE_RULES``.
    """
    score, rank = OFFLINE_RULES[rule]
    started = time.process_time()
    following = next_uses(stream.keys)
    cached: dict[str, tuple[int, float]] = {}  # key -> (size, index of its next request)
    used = 0
    hits = blocks_hit = allocs = failures = evictions = 0
    warmup = stream.warmup
    for i, (key, size) in enumerate(zip(stream.keys, stream.sizes, strict=True)):
        if i == warmup:
            hits = blocks_hit = allocs = failures = evictions = 0
        upcoming = following[i]
        if key in cached:
            hits += 1
            blocks_hit += size
            if upcoming == NEVER:  # never requested again: free its blocks now
                del cached[key]
                used -= size
            else:
                cached[key] = (size, upcoming)
            continue
        allocs += 1
        if size > pool or upcoming == NEVER:
            failures += 1  # cannot fit, or not worth keeping: bypass
            continue
        need = used + size - pool
        if need > 0:
            mine = score(size, upcoming, i)
            victims: list[str] = []
            for victim_score, victim, victim_size in rank(cached, i):
                if victim_score <= mine:
                    break  # the newcomer ranks no higher than what would make room
                victims.append(victim)
                need -= victim_size
                if need <= 0:
                    break
            if need > 0:
                failures += 1  # bypass: keep what is cached
                continue
            for victim in victims:
                used -= cached.pop(victim)[0]
            evictions += len(victims)
        cached[key] = (size, upcoming)
        used += size
    counted = stream.sizes[warmup:]
    cpu = time.process_time() - started
    return HitCounts(len(counted), hits, sum(counted), blocks_hit, allocs, failures, evictions, cpu)


def reference_row(counts: Mapping[str, HitCounts]) -> dict[str, Any]:
    """The reference from each rule's counts on one (stream, pool): the rule with the
    higher request hit ratio, and every rule's ratio. O(rules)."""
    best = max(OFFLINE_RULES, key=lambda rule: counts[rule].request_hit_ratio)
    return {
        "rule": best,
        "request_hit_ratio": counts[best].request_hit_ratio,
        "block_hit_ratio": counts[best].block_hit_ratio,
        "miss_ratio": 1.0 - counts[best].request_hit_ratio,
        "by_rule": {
            rule: {
                "request_hit_ratio": counts[rule].request_hit_ratio,
                "block_hit_ratio": counts[rule].block_hit_ratio,
                "evictions": counts[rule].evictions,
                "bypasses": counts[rule].alloc_failures,
                "cpu_seconds": counts[rule].cpu_seconds,
            }
            for rule in OFFLINE_RULES
        },
    }
