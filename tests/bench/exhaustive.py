"""The optimum by exhaustive search, for streams of a few requests: the oracle that the
offline reference (``test_offline``) and the bounds on the optimum (``test_optimum``)
are held to."""

from __future__ import annotations

import functools


def optimum_hits(keys: list[str], sizes: dict[str, int], pool: int) -> int:
    """The most hits any policy can get: every choice of what to keep after each request
    (a subset of what was cached plus the requested item, within the pool), searched."""

    @functools.cache
    def best(i: int, cached: frozenset[str]) -> int:
        if i == len(keys):
            return 0
        key = keys[i]
        hit = 1 if key in cached else 0
        candidates = sorted(cached | {key}) if sizes[key] <= pool else sorted(cached)
        options = []
        for mask in range(1 << len(candidates)):
            kept = frozenset(c for bit, c in enumerate(candidates) if mask >> bit & 1)
            if sum(sizes[c] for c in kept) <= pool:
                options.append(best(i + 1, kept))
        return hit + max(options)

    return best(0, frozenset())
