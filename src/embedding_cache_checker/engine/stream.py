"""The engine's request stream: seeded, generated before any scheduler sees it.

Each step schedules ``requests_per_step`` requests (uniform), each of
``items_per_request`` distinct items (uniform), drawn by Zipf(``zipf``)
popularity over a catalogue of ``catalogue`` items. An item's size, in rows of
the encoder output (= blocks: ``stubs``), is drawn once per item, log-uniform in
``rows``. With probability ``unscheduled``, a request is checked and then not
scheduled (vLLM checks a request's items, then may find no room for its KV
blocks). Equal specs give equal streams: every cache choice is fed the same
steps.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class StreamSpec:
    """Everything a stream is generated from."""

    steps: int = 1_500
    seed: int = 0
    catalogue: int = 1_000
    zipf: float = 0.9
    rows: tuple[int, int] = (64, 2_048)
    requests_per_step: tuple[int, int] = (1, 4)
    items_per_request: tuple[int, int] = (1, 3)
    unscheduled: float = 0.0


@dataclass(frozen=True)
class Request:
    """One request: its items as (key, rows), and whether the engine schedules it."""

    items: tuple[tuple[str, int], ...]
    scheduled: bool = True


class CatalogueSpec(Protocol):
    """What a catalogue is drawn from (``StreamSpec`` and the real loop's stream)."""

    @property
    def seed(self) -> int: ...
    @property
    def catalogue(self) -> int: ...
    @property
    def zipf(self) -> float: ...
    @property
    def rows(self) -> tuple[int, int]: ...


def catalogue(spec: CatalogueSpec) -> tuple[tuple[str, ...], tuple[int, ...], tuple[float, ...]]:
    """Keys by popularity rank, their rows, and the Zipf cumulative weights. O(catalogue)."""
    rng = random.Random(f"{spec.seed}:catalogue")
    low, high = spec.rows
    rows = tuple(
        min(high, max(low, round(math.exp(rng.uniform(math.log(low), math.log(high))))))
        for _ in range(spec.catalogue)
    )
    keys = tuple(f"mm-{rank:05d}" for rank in range(spec.catalogue))
    weights = itertools.accumulate(1.0 / (rank + 1) ** spec.zipf for rank in range(spec.catalogue))
    return keys, rows, tuple(weights)


def steps(spec: StreamSpec) -> list[list[Request]]:
    """The stream: per step, its requests in scheduling order. O(steps x items)."""
    keys, rows, cumulative = catalogue(spec)
    total = cumulative[-1]
    rng = random.Random(f"{spec.seed}:stream")
    out: list[list[Request]] = []
    for _ in range(spec.steps):
        step = []
        for _ in range(rng.randint(*spec.requests_per_step)):
            ranks: list[int] = []
            for _ in range(rng.randint(*spec.items_per_request)):
                rank = bisect.bisect_left(cumulative, rng.random() * total)
                if rank not in ranks:
                    ranks.append(rank)
            scheduled = not (spec.unscheduled and rng.random() < spec.unscheduled)
            step.append(Request(tuple((keys[r], rows[r]) for r in ranks), scheduled))
        out.append(step)
    return out
