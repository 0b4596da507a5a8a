"""Hit ratios of ``bench --policies``: every policy serves the same stream on every pool.

Each request is ``pin_if_ready(key)``: a hit when the entry is ready (it is then
unpinned at once, as the load completes); a miss allocates the item's blocks
and, if the alloc fit, marks the entry ready (``simulate``). ``hit_ratios``
runs every (workload, pool size, policy), in worker processes when
``jobs > 1``: the miss-ratio curve and the table's hit ratios come from the
same runs. ``hit_rows`` turns the counts into the report's rows, with ratios
to the baseline policy. Nothing here is timed but the runs' own CPU seconds.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from typing import Any

from . import offline, workload
from .counts import HitCounts
from .implementations import FactoryFor, cache_factory
from .streams import Stream, StreamSpec, make_stream


def simulate(stream: Stream, cache: workload.Cache) -> HitCounts:
    """Serve every request of ``stream`` on ``cache``; the counts after the warm-up.

    An item larger than the whole pool is not allocated (``alloc`` would raise):
    it counts as an alloc failure, as does an alloc that returns None.
    O(requests) calls of the cache.
    """
    pin_if_ready, unpin, alloc, mark_ready = (
        cache.pin_if_ready,
        cache.unpin,
        cache.alloc,
        cache.mark_ready,
    )
    started = time.process_time()
    hits = blocks_hit = allocs = failures = evictions = 0
    warmup = stream.warmup
    pool = workload.cache_blocks(cache)
    for i, (key, size) in enumerate(zip(stream.keys, stream.sizes, strict=True)):
        if i == warmup:
            hits = blocks_hit = allocs = failures = evictions = 0
        entry = pin_if_ready(key)
        if entry is not None:
            if entry.ready:  # always, in this workload: saves complete at once
                hits += 1
                blocks_hit += size
                unpin(key)
            continue
        allocs += 1
        if size > pool:  # larger than the pool: alloc would raise CapacityError
            failures += 1
            continue
        before = len(cache)
        if alloc(key, size) is None:
            failures += 1
            continue
        evictions += before + 1 - len(cache)
        mark_ready(key)
    counted = stream.sizes[warmup:]
    cpu = time.process_time() - started
    return HitCounts(len(counted), hits, sum(counted), blocks_hit, allocs, failures, evictions, cpu)


#: A job's kind: a shipped policy (``simulate`` on a fresh cache) or an offline rule
#: (``offline.simulate_offline``).
POLICY, OFFLINE = "policy", "offline"


def _run(job: tuple[StreamSpec, int, str, str], factory_for: FactoryFor) -> HitCounts:
    """One (stream, pool, name, kind) simulation: an offline rule's, or a cache's."""
    spec, pool, name, kind = job
    if kind == OFFLINE:
        return offline.simulate_offline(make_stream(spec), pool, name)
    return simulate(make_stream(spec), factory_for(name)(pool))


def _simulate_job(job: tuple[StreamSpec, int, str, str]) -> HitCounts:
    """``_run`` with the real caches; runs in a worker process."""
    return _run(job, cache_factory)


def hit_ratios(
    specs: Sequence[StreamSpec],
    pools: Sequence[int],
    policies: Sequence[str],
    *,
    offline_rules: Sequence[str] = (),
    jobs: int = 1,
    factory_for: FactoryFor = cache_factory,
) -> dict[tuple[str, int, str], HitCounts]:
    """Counts for every (workload, pool, policy), and for every (workload, pool, rule) of
    ``offline_rules`` under the name ``offline_name(rule)``; in ``jobs`` worker processes
    if > 1.

    Worker processes build caches with ``cache_factory``, so a planted
    ``factory_for`` runs in this process.
    O(workloads x pools x (policies x requests + rules x offline cost)).
    """
    grid = [
        (spec, pool, name, kind)
        for spec in specs
        for pool in pools
        for kind, names in ((POLICY, policies), (OFFLINE, offline_rules))
        for name in names
    ]
    if jobs > 1 and factory_for is cache_factory and len(grid) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as executor:
            counts = list(executor.map(_simulate_job, grid, chunksize=1))
    else:
        counts = [_run(job, factory_for) for job in grid]
    return {
        (spec.workload, pool, offline_name(name) if kind == OFFLINE else name): count
        for (spec, pool, name, kind), count in zip(grid, counts, strict=True)
    }


def offline_name(rule: str) -> str:
    """The name an offline rule's counts are keyed under (no policy name has a colon)."""
    return f"offline:{rule}"


def hit_rows(
    counts: Mapping[tuple[str, int, str], HitCounts],
    streams: Sequence[Stream],
    pools: Sequence[int],
    names: Sequence[str],
    baseline: str,
) -> list[dict[str, Any]]:
    """The report's hit-ratio rows: per stream, pool and policy, in that order.

    Each row carries the counts, the ratios, the stream's fingerprint and, when
    ``baseline`` was simulated there, its ratios to the baseline's under the
    keys ``request_hit_vs_fifo`` and ``block_hit_vs_fifo`` (the names the
    report has always used; the baseline is the seed's order), and, when the
    offline rules were simulated there, its request hit ratio over the offline
    reference's (``request_hit_vs_reference``).
    O(streams x pools x policies).
    """
    rows = []
    references = {
        (row["workload"], row["num_blocks"]): row["request_hit_ratio"]
        for row in reference_rows(counts, streams, pools)
    }
    for stream in streams:
        for pool in pools:
            base = counts.get((stream.spec.workload, pool, baseline))
            reference = references.get((stream.spec.workload, pool))
            for policy in names:
                count = counts[(stream.spec.workload, pool, policy)]
                row: dict[str, Any] = {
                    "workload": stream.spec.workload,
                    "num_blocks": pool,
                    "policy": policy,
                    "stream": stream.fingerprint,
                    **asdict(count),
                    "request_hit_ratio": count.request_hit_ratio,
                    "block_hit_ratio": count.block_hit_ratio,
                    "miss_ratio": 1.0 - count.request_hit_ratio,
                }
                if base is not None:
                    row["request_hit_vs_fifo"] = _ratio(
                        count.request_hit_ratio, base.request_hit_ratio
                    )
                    row["block_hit_vs_fifo"] = _ratio(count.block_hit_ratio, base.block_hit_ratio)
                if reference is not None:
                    row["request_hit_vs_reference"] = _ratio(count.request_hit_ratio, reference)
                rows.append(row)
    return rows


def reference_rows(
    counts: Mapping[tuple[str, int, str], HitCounts],
    streams: Sequence[Stream],
    pools: Sequence[int],
) -> list[dict[str, Any]]:
    """The offline reference per stream and pool (``offline.reference_row``), for every
    (stream, pool) whose every offline rule was simulated. O(streams x pools x rules)."""
    rows = []
    for stream in streams:
        for pool in pools:
            keys = {
                rule: (stream.spec.workload, pool, offline_name(rule))
                for rule in offline.OFFLINE_RULES
            }
            if not all(key in counts for key in keys.values()):
                continue
            by_rule = {rule: counts[key] for rule, key in keys.items()}
            rows.append(
                {
                    "workload": stream.spec.workload,
                    "num_blocks": pool,
                    "stream": stream.fingerprint,
                    **offline.reference_row(by_rule),
                }
            )
    return rows


def _ratio(mine: float, base: float) -> float | None:
    return mine / base if base else None
