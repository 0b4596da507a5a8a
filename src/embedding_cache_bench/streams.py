"""The token-sized request streams of ``bench --policies``, pre-generated and fingerprinted.

Two streams imitate vLLM's encoder cache (one block per placeholder token):

- ``reuse``: Zipf(``ZIPF_EXPONENT``) popularity over ``CATALOGUE_ITEMS`` items;
  each item's size is drawn once, log-uniform in ``ITEM_BLOCKS`` blocks.
- ``scan``: the same, except that ``SCAN_FRACTION`` of the requests are one-time
  items (fresh keys, never requested again; sizes from the same distribution).

A stream is generated before any cache sees it, so every policy is fed the
*same* requests (``Stream.fingerprint`` identifies them); the first ``warmup``
requests bring a cache to steady state and are not counted. How a request is
served is ``hit_ratios.simulate``'s.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import math
import random
from dataclasses import dataclass

#: Items in the catalogue of both token-sized workloads.
CATALOGUE_ITEMS = 20_000
#: Zipf exponent of item popularity (rank r is drawn with weight 1 / r**ZIPF_EXPONENT).
ZIPF_EXPONENT = 0.9
#: Smallest and largest item, in blocks (one block per placeholder token); log-uniform between.
ITEM_BLOCKS = (64, 4096)
#: Fraction of the ``scan`` workload's requests that are one-time items.
SCAN_FRACTION = 0.3
#: Workload name -> fraction of one-time requests.
WORKLOADS = {"reuse": 0.0, "scan": SCAN_FRACTION}


@dataclass(frozen=True)
class StreamSpec:
    """Everything a request stream is generated from (picklable, for worker processes)."""

    workload: str
    requests: int  # total, warm-up included
    warmup: int
    seed: int
    items: int = CATALOGUE_ITEMS


@dataclass(frozen=True)
class Stream:
    """A pre-generated request stream: keys and their sizes in blocks."""

    spec: StreamSpec
    keys: tuple[str, ...]
    sizes: tuple[int, ...]
    fingerprint: str  # sha256 of the (key, size) sequence: equal streams, equal fingerprints

    @property
    def warmup(self) -> int:
        """Requests ``[0, warmup)`` are not counted."""
        return self.spec.warmup


def _item_size(rng: random.Random, blocks: tuple[int, int] = ITEM_BLOCKS) -> int:
    low, high = blocks
    return min(high, max(low, round(math.exp(rng.uniform(math.log(low), math.log(high))))))


@functools.lru_cache(maxsize=2)
def catalogue(
    seed: int, items: int, blocks: tuple[int, int] = ITEM_BLOCKS
) -> tuple[tuple[str, ...], tuple[int, ...], tuple[float, ...]]:
    """Item keys by popularity rank, their sizes (log-uniform in ``blocks``), and the Zipf
    cumulative weights. Deterministic in its arguments; O(items)."""
    rng = random.Random(f"{seed}:catalogue")
    sizes = tuple(_item_size(rng, blocks) for _ in range(items))
    keys = tuple(f"item-{rank:06d}" for rank in range(items))
    weights = itertools.accumulate(1.0 / (rank + 1) ** ZIPF_EXPONENT for rank in range(items))
    return keys, sizes, tuple(weights)


def popularity(spec: StreamSpec) -> tuple[list[float], tuple[int, ...]]:
    """Each catalogue item's chance to be any one request of ``spec``'s stream, and its
    size: Zipf over the catalogue, times the share of requests that are not one-time
    items. Requests are drawn independently of each other. O(items)."""
    _, item_sizes, cum_weights = catalogue(spec.seed, spec.items)
    scale = (1.0 - WORKLOADS[spec.workload]) / cum_weights[-1]
    probabilities = [
        (weight - (cum_weights[i - 1] if i else 0.0)) * scale
        for i, weight in enumerate(cum_weights)
    ]
    return probabilities, item_sizes


@functools.lru_cache(maxsize=4)
def make_stream(spec: StreamSpec) -> Stream:
    """The request stream ``spec`` describes. Deterministic; O(requests x log items).

    Item sizes come from their own generator (``seed``, ``"catalogue"``), so both
    workloads share the catalogue; each workload draws its requests from
    (``seed``, its name). A stream with fewer requests is a prefix of one with more.

    Raises:
        ValueError: unknown workload, or a count out of range.
    """
    if spec.workload not in WORKLOADS:
        raise ValueError(f"unknown workload {spec.workload!r}; choose from {', '.join(WORKLOADS)}")
    if spec.items < 1 or spec.requests < 1 or not 0 <= spec.warmup < spec.requests:
        raise ValueError(f"need items >= 1 and 0 <= warmup < requests, got {spec}")
    item_keys, item_sizes, cum_weights = catalogue(spec.seed, spec.items)
    total = cum_weights[-1]
    rng = random.Random(f"{spec.seed}:{spec.workload}")
    one_time = WORKLOADS[spec.workload]
    keys: list[str] = []
    sizes: list[int] = []
    fresh = 0
    for _ in range(spec.requests):
        if one_time and rng.random() < one_time:
            keys.append(f"once-{fresh:07d}")
            sizes.append(_item_size(rng))
            fresh += 1
        else:
            rank = bisect.bisect_right(cum_weights, rng.random() * total)
            rank = min(rank, spec.items - 1)
            keys.append(item_keys[rank])
            sizes.append(item_sizes[rank])
    digest = hashlib.sha256()
    for key, size in zip(keys, sizes, strict=True):
        digest.update(f"{key}:{size}\n".encode())
    return Stream(spec, tuple(keys), tuple(sizes), digest.hexdigest()[:16])
