"""Bounds on the optimal hit count of a request stream with items of many sizes.

After Berger, Sundarrajan, Harchol-Balter et al., "Practical Bounds on Optimal
Caching with Variable Object Sizes" (SIGMETRICS 2018). A stream is a list of
(key, size) requests served by a pool of ``pool`` blocks; a request is a hit
when its key stayed cached since the key's previous request. Between two
consecutive requests of a key lies an *interval*: keeping the key cached over it
costs its size in blocks at every point in between and earns one hit. An
offline optimum (OPT) picks the intervals to keep so that no point holds more
than ``pool`` blocks; it may decline to cache a key at all (a bypass), as the
project's admission filters do. Choosing them is NP-hard for sizes that differ,
so OPT is bracketed:

- ``foo_upper``: the linear relaxation of that choice (each interval kept in a
  fraction x in [0, 1]), solved exactly as the paper's FOO min-cost flow: the
  blocks in use between requests t and t+1 flow along a central path of
  capacity ``pool``, and each interval's blocks either ride it (cached) or
  bypass it (a miss). Its optimum is at least OPT: an **upper bound on OPT's
  hits** (the paper's FOO-L, a lower bound on the miss ratio).
- ``foo_lower``: the intervals the relaxation keeps whole, then every other
  interval that still fits, tried cheapest first (size x length). That is a
  schedule a cache can follow, so its hits are at most OPT: a **lower bound on
  OPT's hits** (the paper's FOO-U rounding, tightened by the fill).
- ``resource_upper``: the paper's PFOO-L: only the total of size x length over
  the stream is limited (to ``pool`` x its length), and intervals are taken
  cheapest first. Looser than ``foo_upper`` but O(n log n) and needs no solver.

The paper names its bounds by the miss ratio, so its "-L" is this module's upper
bound on hits and its "-U" the lower one. Where the stream is drawn independently
of the past from known probabilities (``streams``' Zipf workloads), a third figure
caps every *online* policy, one that cannot see the future: ``online_bound``.

Only requests at index ``warmup`` or later are counted, as ``hit_ratios.simulate``
counts them; the warm-up still fills the pool. Pins, saves in flight and the
pool's block ids are not modelled: an online cache carries those as well, so
OPT here is at least what any of the project's configurations can reach.

The linear program needs ``scipy`` (HiGHS) and ``numpy``: the ``bounds`` extra,
never the runtime. ``foo_bounds`` is O(n) variables and constraints for n
requests; HiGHS solves the stream of ``bench --policies`` (160,000 requests) in
seconds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: An interval counts as kept whole when the relaxation keeps this much of it.
WHOLE = 1.0 - 1e-7


class BoundsUnavailableError(RuntimeError):
    """scipy or numpy is missing: install the ``bounds`` extra."""


@dataclass(frozen=True)
class Intervals:
    """The stream's intervals: for each, the index of the request that opens it, of
    the request that closes it (a hit if kept), and the key's size. Only intervals
    whose key fits the pool and whose closing request is counted are listed."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    sizes: tuple[int, ...]
    requests: int  # the stream's length
    counted: int  # requests at index warmup or later


def intervals(keys: Sequence[str], sizes: Sequence[int], pool: int, warmup: int = 0) -> Intervals:
    """The intervals of a stream, for a pool of ``pool`` blocks. One pass: O(n).

    Raises:
        ValueError: ``keys`` and ``sizes`` differ in length, a size is below 1,
            or ``warmup`` is outside [0, len(keys)].
    """
    if len(keys) != len(sizes):
        raise ValueError(f"{len(keys)} keys but {len(sizes)} sizes")
    if not 0 <= warmup <= len(keys):
        raise ValueError(f"warmup {warmup} outside [0, {len(keys)}]")
    last: dict[str, int] = {}
    starts: list[int] = []
    ends: list[int] = []
    lengths: list[int] = []
    for i, (key, size) in enumerate(zip(keys, sizes, strict=True)):
        if size < 1:
            raise ValueError(f"request {i} ({key!r}) has size {size}; sizes are >= 1")
        before = last.get(key)
        last[key] = i
        # A key larger than the pool is never a hit; a closing request in the
        # warm-up earns nothing, so neither is worth a variable.
        if before is not None and size <= pool and i >= warmup:
            starts.append(before)
            ends.append(i)
            lengths.append(size)
    return Intervals(tuple(starts), tuple(ends), tuple(lengths), len(keys), len(keys) - warmup)


@dataclass(frozen=True)
class Bounds:
    """OPT's hits on one (stream, pool) lie in [foo_lower, foo_upper];
    ``resource_upper`` is the paper's looser PFOO-L. Counted requests only."""

    requests: int  # counted requests
    foo_lower: int
    foo_upper: float
    resource_upper: int
    fractional: int  # intervals the relaxation keeps in part
    seconds: float

    @property
    def gap(self) -> float:
        """How far the lower bound may lie below OPT: 1 - foo_lower / foo_upper."""
        return 1.0 - self.foo_lower / self.foo_upper if self.foo_upper else 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready. O(1)."""
        return {
            "requests": self.requests,
            "foo_lower": self.foo_lower,
            "foo_upper": self.foo_upper,
            "resource_upper": self.resource_upper,
            "fractional": self.fractional,
            "gap": self.gap,
            "seconds": self.seconds,
        }


def resource_upper(found: Intervals, pool: int) -> int:
    """PFOO-L: the most intervals whose size x length sums to at most ``pool`` x the
    stream's length, taken cheapest first (optimal for that one constraint).
    O(n log n)."""
    budget = pool * max(0, found.requests - 1)
    spans = zip(found.starts, found.ends, found.sizes, strict=True)
    costs = sorted(size * (end - start) for start, end, size in spans)
    taken = 0
    for cost in costs:
        if cost > budget:
            break
        budget -= cost
        taken += 1
    return taken


def _numeric() -> tuple[Any, Any, Any]:
    try:
        import numpy as np
        from scipy import optimize, sparse
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise BoundsUnavailableError(
            f"bounds on the optimum need numpy and scipy ({error}): "
            "pip install 'embedding-cache[bounds]'"
        ) from error
    return np, optimize, sparse


def _relaxation(found: Intervals, pool: int) -> tuple[float, Any]:
    """The FOO relaxation's optimum and each interval's kept fraction.

    Variables: x_k in [0, 1] per interval, and u_t in [0, pool], the blocks cached
    between requests t and t+1. Row t says u_t - u_{t-1} = (blocks of intervals
    opening at t) - (blocks of intervals closing at t): the flow conservation of
    the paper's graph, O(n) nonzeros. Maximise the kept intervals.
    """
    np, optimize, sparse = _numeric()
    k = len(found.starts)
    points = max(1, found.requests)
    sizes = np.asarray(found.sizes, dtype=float)
    index = np.arange(k)
    rows = np.concatenate([np.asarray(found.starts), np.asarray(found.ends)])
    columns = np.concatenate([index, index])
    values = np.concatenate([-sizes, sizes])
    # u_t's own entries: +1 in row t, -1 in row t+1.
    t = np.arange(points)
    rows = np.concatenate([rows, t, t[:-1] + 1])
    columns = np.concatenate([columns, k + t, k + t[:-1]])
    values = np.concatenate([values, np.ones(points), -np.ones(points - 1)])
    matrix = sparse.csc_array((values, (rows, columns)), shape=(points, k + points))
    objective = np.concatenate([-np.ones(k), np.zeros(points)])
    bounds = np.concatenate([np.tile([0.0, 1.0], (k, 1)), np.tile([0.0, float(pool)], (points, 1))])
    solved = optimize.linprog(
        objective, A_eq=matrix, b_eq=np.zeros(points), bounds=bounds, method="highs-ds"
    )
    if solved.status != 0:  # pragma: no cover - the program is always feasible (x = 0)
        raise RuntimeError(f"HiGHS did not solve the FOO relaxation: {solved.message}")
    return -float(solved.fun), solved.x[:k]


def _fill(found: Intervals, pool: int, kept: Any) -> int:
    """A feasible schedule: the whole intervals of ``kept``, then each other interval,
    cheapest (size x length) first, when it fits everywhere it spans.

    O(n + f x L) for f candidates of length at most L, in numpy slices.
    """
    np, _, _ = _numeric()
    starts = np.asarray(found.starts)
    ends = np.asarray(found.ends)
    sizes = np.asarray(found.sizes)
    whole = kept >= WHOLE
    delta = np.zeros(found.requests + 1, dtype=np.int64)
    np.add.at(delta, starts[whole], sizes[whole])
    np.add.at(delta, ends[whole], -sizes[whole])
    used = np.cumsum(delta)[:-1]  # blocks cached between request t and t+1
    hits = int(whole.sum())
    rest = np.flatnonzero(~whole)
    cost = sizes[rest] * (ends[rest] - starts[rest])
    for k in rest[np.argsort(cost, kind="stable")]:
        span = used[starts[k] : ends[k]]
        if int(span.max()) + int(sizes[k]) <= pool:
            span += sizes[k]
            hits += 1
    return hits


def foo_bounds(keys: Sequence[str], sizes: Sequence[int], pool: int, warmup: int = 0) -> Bounds:
    """OPT's hits bracketed on the counted requests of a stream (see the module).

    O(n) to build; the solver's time beyond (HiGHS' dual simplex on a network of
    n nodes).

    Raises:
        ValueError: as ``intervals``, or ``pool`` below 1.
        BoundsUnavailableError: numpy or scipy is missing.
    """
    if pool < 1:
        raise ValueError(f"pool {pool} blocks; a pool holds at least 1")
    started = time.process_time()
    found = intervals(keys, sizes, pool, warmup)
    if not found.starts:
        return Bounds(found.counted, 0, 0.0, 0, 0, time.process_time() - started)
    upper, kept = _relaxation(found, pool)
    lower = _fill(found, pool, kept)
    fractional = int(((kept > 1e-7) & (kept < WHOLE)).sum())
    return Bounds(
        found.counted,
        lower,
        upper,
        resource_upper(found, pool),
        fractional,
        time.process_time() - started,
    )


def online_bound(probabilities: Sequence[float], sizes: Sequence[int], pool: int) -> float:
    """The most hits per request any online cache can expect on an independent
    reference stream: each request names item i with probability ``probabilities[i]``
    (their sum may be below 1: the rest are one-time items, never a hit), whatever
    came before.

    The request at time t is a hit with probability sum_i p_i x_i(t), x_i(t) the
    chance that i is cached then, which only the past decides; and
    sum_i s_i x_i(t) <= ``pool``. So no online policy, even one told every p_i,
    expects more than the fractional knapsack of (p_i, s_i) per request: this
    value. OPT knows the future and may do better. O(items log items).

    Raises:
        ValueError: the lengths differ, a size is below 1 or a probability below 0.
    """
    if len(probabilities) != len(sizes):
        raise ValueError(f"{len(probabilities)} probabilities but {len(sizes)} sizes")
    if any(size < 1 for size in sizes) or any(p < 0 for p in probabilities):
        raise ValueError("sizes must be >= 1 and probabilities >= 0")
    room = float(pool)
    expected = 0.0
    for p, size in sorted(zip(probabilities, sizes, strict=True), key=lambda x: -x[0] / x[1]):
        if room <= 0:
            break
        kept = min(1.0, room / size)
        expected += kept * p
        room -= kept * size
    return expected
