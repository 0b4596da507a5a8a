"""``bench --vllm``: vLLM 0.33's real EC scheduler per pool, upstream's order beside the plugin.

For each pool, given in bytes as vLLM's ``ec_cpu_bytes``, the rows of
``engine.figures.leak_runs`` (vLLM's ``ECCPUScheduler`` with upstream's class;
then per policy x configuration the project's cache inside that unchanged
scheduler, vLLM's order, and the plugin's ``VerifiedECCPUScheduler``, the safe
order) serve one seeded request stream (``engine.stream``) through the
harness's engine (``engine.run.Engine``). A block holds one row of an item's
encoder output, so a pool of B bytes has B / (hidden size x dtype size)
blocks: 1 GiB at hidden 4,096 in bf16 (8 KiB a row) is 131,072 blocks. The
catalogue grows with the pool (``CATALOGUE_ITEMS`` per ``CATALOGUE_BLOCKS``
blocks: the harness's 131,072-block stream, about 4.4 pools' worth of rows),
so every pool is under the same pressure; a fixed catalogue would fit in the
larger pool, which would then evict, and lose, nothing.

The counts are deterministic. The time: a pool's engines step in lockstep in
one process, in an order that rotates each step (``rounds.rotated``), so a
burst of machine noise reaches them all alike; per engine and step it is the
scheduler's own calls (the engine's ``step_seconds``). The collector runs
between steps only, and a step in which the process was descheduled (its wall
time exceeds its CPU time by more than ``DESCHEDULED_SECONDS``) is left out of
the time figures. They are reported as median and p99 over upstream's row's:
ratios, never absolute claims. Pools run in ``--jobs`` processes.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from embedding_cache_checker.engine.figures import leak_runs
from embedding_cache_checker.engine.run import Engine, EngineSpec
from embedding_cache_checker.engine.stream import StreamSpec, steps
from embedding_cache_checker.engine.stubs import Settings, require_vllm
from embedding_cache_vllm.version import SUPPORTED_VLLM_VERSION

from .rounds import rotated

#: Byte units, by lower-case name.
UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
#: Pools measured by default: 1 GiB and 4 GiB.
DEFAULT_POOLS = (1 << 30, 4 << 30)
#: A row of the encoder output by default: hidden 4,096 in bf16 (8 KiB).
DEFAULT_HIDDEN_SIZE = 4_096
DEFAULT_DTYPE_BYTES = 2
#: Steps per pool by default. Upstream's row at 1 GiB fills the pool by step ~90 and
#: loses ~2.5 checked hits per 1,000 steps; at 4 GiB by step ~400, and ~5 times fewer
#: per step (a lost hit must be one of its step's few victims, among 4 times the
#: entries): 6,000 steps show both leaks, in a few minutes (docs/MEASURED.md,
#: "vLLM's real scheduler at 1 GiB and 4 GiB").
DEFAULT_STEPS = 6_000
#: The catalogue scales with the pool: this many items per this many blocks.
CATALOGUE_ITEMS = 1_000
CATALOGUE_BLOCKS = 131_072
#: A step whose wall time exceeds its CPU time by more than this was descheduled.
DESCHEDULED_SECONDS = 50e-6
#: The collector runs every this many steps, between steps.
COLLECT_EVERY = 200


def bytes_text(size: int) -> str:
    """``size`` in the largest binary unit that divides it ("4 GiB", "8 KiB"). O(1)."""
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        if size % UNITS[unit.lower()] == 0:
            return f"{size // UNITS[unit.lower()]:,} {unit}"
    return f"{size:,} B"


def catalogue_for(blocks: int) -> int:
    """The catalogue's items for a pool of ``blocks`` (``CATALOGUE_ITEMS`` per
    ``CATALOGUE_BLOCKS``). O(1)."""
    return max(1, round(CATALOGUE_ITEMS * blocks / CATALOGUE_BLOCKS))


@dataclass(frozen=True)
class Pool:
    """One pool's runs: its size, its row, its stream."""

    pool_bytes: int
    row_bytes: int
    stream: StreamSpec

    @property
    def blocks(self) -> int:
        return self.pool_bytes // self.row_bytes


def lockstep(engines: Sequence[Engine], stream: StreamSpec) -> list[list[bool]]:
    """Every engine through ``stream``, step by step together, then its drain.

    Step ``i`` runs the engines in their order rotated by ``i``; the collector
    runs between steps only. Returns per engine, per step, whether the process
    was descheduled during its step. O(engines x stream).
    """
    descheduled: list[list[bool]] = [[] for _ in engines]
    order = list(range(len(engines)))
    collecting = gc.isenabled()
    gc.disable()
    try:
        for index, requests in enumerate(steps(stream)):
            if index % COLLECT_EVERY == 0:
                gc.collect()
            for at in rotated(order, index):
                wall, cpu = time.perf_counter(), time.thread_time()
                engines[at].step(index, requests)
                gap = (time.perf_counter() - wall) - (time.thread_time() - cpu)
                descheduled[at].append(gap > DESCHEDULED_SECONDS)
    finally:
        if collecting:
            gc.enable()
    for engine in engines:
        engine.drain()
    return descheduled


def p99(samples: Sequence[float]) -> float:
    """The 99th percentile, nearest rank. O(n log n)."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def _times(timed: Sequence[float], upstream: dict[str, Any] | None) -> dict[str, Any]:
    """The median and p99 of ``timed`` (seconds), and each over ``upstream``'s row's
    (None: this is upstream's row). O(n log n)."""
    median, tail = (statistics.median(timed), p99(timed)) if timed else (0.0, 0.0)
    base_median, base_tail = (
        (median, tail)
        if upstream is None
        else (upstream["median_step_seconds"], upstream["p99_step_seconds"])
    )
    return {
        "median_step_seconds": median,
        "p99_step_seconds": tail,
        "median_vs_upstream": median / base_median if base_median else None,
        "p99_vs_upstream": tail / base_tail if base_tail else None,
    }


def measure_pool(pool: Pool) -> dict[str, Any]:
    """Every row of ``leak_runs`` on ``pool``, in lockstep; a JSON-ready dict.

    O(rows x (blocks + stream)); vLLM imported if it is not yet (~20 s).
    """
    started = time.perf_counter()
    settings = Settings(num_blocks=pool.blocks)
    runs = leak_runs()
    engines = [Engine(EngineSpec(pool.stream, settings, choice)) for _, _, choice in runs]
    descheduled = lockstep(engines, pool.stream)
    rows: list[dict[str, Any]] = []
    for (scheduler, cache, choice), engine, skipped in zip(runs, engines, descheduled, strict=True):
        c, end = engine.counters, engine.end_state()
        timed = [s for s, out in zip(c.step_seconds, skipped, strict=True) if not out]
        rows.append(
            {
                "scheduler": scheduler,
                "cache": cache,
                "kind": choice.kind,
                "options": dict(choice.options),
                "checks": c.checks,
                "hits": c.hits,
                "loads": c.loads,
                "checked_hits_lost": c.checked_hits_lost,
                "saves": c.saves,
                "saves_never_made": c.saves_never_made,
                "reused_in_flight": c.reused_in_flight,
                "never_ready": end.never_ready,
                "never_ready_blocks": end.never_ready_blocks,
                "held_entries": end.held_entries,
                "held_blocks": end.held_blocks,
                "pending_push_work": end.pending_push_work,
                "steps_timed": len(timed),
                **_times(timed, rows[0] if rows else None),
            }
        )
    return {
        "pool_bytes": pool.pool_bytes,
        "pool": bytes_text(pool.pool_bytes),
        "blocks": pool.blocks,
        "catalogue": pool.stream.catalogue,
        "steps": pool.stream.steps,
        "seed": pool.stream.seed,
        "seconds": time.perf_counter() - started,
        "rows": rows,
    }


def measure(
    pools: Sequence[Pool], *, jobs: int = 1, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Every pool (``measure_pool``), in up to ``jobs`` processes; a JSON-ready dict.

    Raises:
        VllmMissingError: vLLM cannot be imported (before any run starts).
    """
    require_vllm()  # here, once: the children forked below inherit the import
    started = time.perf_counter()
    if jobs > 1 and len(pools) > 1:
        with ProcessPoolExecutor(max_workers=min(jobs, len(pools))) as executor:
            measured = list(executor.map(measure_pool, pools, chunksize=1))
    else:
        measured = [measure_pool(pool) for pool in pools]
    if progress is not None:
        for section in measured:
            progress(
                f"vllm: {section['pool']} ({section['blocks']:,} blocks), "
                f"{len(section['rows'])} runs x {section['steps']:,} steps "
                f"in {section['seconds']:.0f} s"
            )
    stream = pools[0].stream
    return {
        "vllm_version": SUPPORTED_VLLM_VERSION,
        "row_bytes": pools[0].row_bytes,
        "stream": {
            "zipf": stream.zipf,
            "rows": list(stream.rows),
            "requests_per_step": list(stream.requests_per_step),
            "items_per_request": list(stream.items_per_request),
        },
        "descheduled_seconds": DESCHEDULED_SECONDS,
        "pools": measured,
        "seconds": time.perf_counter() - started,
    }


def pools(
    sizes: Sequence[int], row_bytes: int, steps: int, seed: int, catalogue: int | None = None
) -> list[Pool]:
    """A ``Pool`` per size in bytes: ``steps`` steps of seed ``seed``, over ``catalogue``
    items (default ``catalogue_for`` each pool). O(pools).

    Raises:
        ValueError: a pool smaller than the largest item.
    """
    out = []
    for size in sizes:
        blocks = size // row_bytes
        stream = StreamSpec(steps=steps, seed=seed, catalogue=catalogue or catalogue_for(blocks))
        if blocks < stream.rows[1]:
            raise ValueError(
                f"a {bytes_text(size)} pool holds {blocks:,} rows of {bytes_text(row_bytes)}: "
                f"fewer than an item's {stream.rows[1]:,}"
            )
        out.append(Pool(size, row_bytes, stream))
    return out
