"""``bench --vllm``: vLLM 0.33's real engine loop per pool, upstream's connector beside the plugin.

For each pool, given in bytes as vLLM's ``ec_cpu_bytes``, the rows of
``engine_loop.figures.matrix_runs`` (upstream's ``ECCPUConnector``; then the
plugin per policy x configuration) each drive vLLM's own engine-core scheduler
(``AsyncScheduler`` by default, ``Scheduler`` with ``--sync``) through the real
loop (``embedding_cache_checker.engine_loop``: the GPU encoder cache, KV cache,
chunked prefill, preemption, aborts and the V2 worker's rules) on one seeded
stream. A block holds one row of an item's encoder output, so a pool of B bytes
has B / (hidden size x dtype size) blocks: 1 GiB at hidden 4,096 in bf16 (8 KiB a
row) is 131,072 blocks (the loop's own model has a narrower row; only the block
count matters). The catalogue grows with the pool (``CATALOGUE_ITEMS`` per
``CATALOGUE_BLOCKS`` blocks, about 4.4 pools' worth of rows), so every pool is
under the same pressure; a fixed catalogue would fit in the larger pool, which
would then evict, and lose, nothing.

The counts are deterministic. The time: a pool's engines step in lockstep in
one process, in an order that rotates each step (``engine_loop.report.lockstep``),
so a burst of machine noise reaches them all alike; per engine it is
``schedule()``'s time per call in the arrival window (the drain differs: a leak
never drains), the calls in which the process was descheduled left out. They are
reported as median and p99 over upstream's row's: ratios, never absolute claims.
Pools run in ``--jobs`` processes.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from embedding_cache_checker.engine_loop import ArrivalSpec, EngineSettings, require_vllm
from embedding_cache_checker.engine_loop.figures import matrix_runs
from embedding_cache_checker.engine_loop.loop import DESCHEDULED_SECONDS
from embedding_cache_checker.engine_loop.model_dir import write_model_dir
from embedding_cache_checker.engine_loop.report import lockstep, timed
from embedding_cache_vllm.version import SUPPORTED_VLLM_VERSION

from . import optimum

#: Byte units, by lower-case name.
UNITS = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
#: Pools measured by default: 1 GiB and 4 GiB.
DEFAULT_POOLS = (1 << 30, 4 << 30)
#: A row of the encoder output by default: hidden 4,096 in bf16 (8 KiB).
DEFAULT_HIDDEN_SIZE = 4_096
DEFAULT_DTYPE_BYTES = 2
#: Steps of arrivals per pool by default (then each engine drains).
DEFAULT_STEPS = 2_000
#: The catalogue scales with the pool: this many items per this many blocks.
CATALOGUE_ITEMS = 1_000
CATALOGUE_BLOCKS = 131_072
#: The engine of every pool (its EC pool, connector and options set per run): vLLM's
#: default step of 8,192 tokens, a GPU encoder cache of as many embeddings, 64
#: sequences, 1,024 KV blocks of 16 tokens (prompts of up to three 2,048-row items
#: make it preempt now and then).
ENGINE = EngineSettings(
    encoder_cache_size=8_192,
    encoder_compute_budget=8_192,
    max_num_batched_tokens=8_192,
    max_num_seqs=64,
    kv_blocks=1_024,
    max_model_len=16_384,
)


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
    stream: ArrivalSpec
    async_scheduling: bool = True

    @property
    def blocks(self) -> int:
        return self.pool_bytes // self.row_bytes


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
    """Every row of ``matrix_runs`` on ``pool``, in lockstep; a JSON-ready dict.

    O(rows x stream x the scheduler's step); vLLM imported if it is not yet.
    """
    started = time.perf_counter()
    engine = dataclasses.replace(ENGINE, ec_blocks=pool.blocks)
    runs = [
        (label, dataclasses.replace(s, **_engine_fields(engine)))
        for label, s in matrix_runs(pool.async_scheduling)
    ]
    model_dir = write_model_dir(Path(tempfile.mkdtemp(prefix="embedding-cache-llava-")))
    results = lockstep(runs, pool.stream, model_dir)
    bounds_of: dict[tuple[tuple[str, int], ...], dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for label, result in results:
        c, w, end = result.connector, result.worker, result.end
        times = timed(result)
        upstream = label == "upstream"
        rows.append(
            {
                "scheduler": "upstream" if upstream else "plugin",
                "cache": "upstream's" if upstream else label,
                "kind": "upstream" if upstream else "plugin",
                "options": dict(result.spec.settings.cache_options),
                "checks": c.checks,
                "hits": c.hits,
                "loads": c.loads,
                "checked_hits_lost": c.checked_hits_lost,
                "saves": c.saves,
                "saves_never_made": w.saves_never_made,
                "encoder_misses": w.encoder_misses,
                "reused_in_flight": w.reused_in_flight,
                "never_ready": end.never_ready,
                "never_ready_blocks": end.never_ready_blocks,
                "held_entries": end.held_entries,
                "held_blocks": end.held_blocks,
                "pending_push_work": end.pending_push_work,
                "went_idle": end.went_idle,
                "preemptions": result.preemptions,
                "engine_steps": result.engine_steps,
                "steps_timed": len(times),
                **_times(times, rows[0] if rows else None),
                **_against_optimum(result.accesses, c.loads, pool.blocks, bounds_of),
            }
        )
    return {
        "pool_bytes": pool.pool_bytes,
        "pool": bytes_text(pool.pool_bytes),
        "blocks": pool.blocks,
        "catalogue": pool.stream.catalogue,
        "steps": pool.stream.steps,
        "seed": pool.stream.seed,
        "scheduler_class": "AsyncScheduler" if pool.async_scheduling else "Scheduler",
        "seconds": time.perf_counter() - started,
        "rows": rows,
    }


def _against_optimum(
    accesses: Sequence[tuple[str, int]],
    loads: int,
    blocks: int,
    known: dict[tuple[tuple[str, int], ...], dict[str, Any]],
) -> dict[str, Any]:
    """The bounds on the optimum's hits over the stream the run's cache served
    (``optimum.foo_bounds``, no warm-up: the loads are counted from a cold pool), and
    ``loads`` over each; ``known`` caches them per stream (the rows of a pool mostly
    serve the same one). O(the linear program) once per distinct stream."""
    stream = tuple(accesses)
    if stream not in known:
        try:
            found = optimum.foo_bounds([k for k, _ in stream], [n for _, n in stream], blocks)
        except optimum.BoundsUnavailableError as error:
            known[stream] = {"bounds_unavailable": str(error)}
        else:
            known[stream] = {
                "accesses": len(stream),
                "distinct_items": len({k for k, _ in stream}),
                "opt_lower": found.foo_lower,
                "opt_upper": found.foo_upper,
                "bounds_seconds": found.seconds,
            }
    out = dict(known[stream])
    if "opt_lower" in out:
        out["loads_vs_opt_lower"] = loads / out["opt_lower"] if out["opt_lower"] else None
        out["loads_vs_opt_upper"] = loads / out["opt_upper"] if out["opt_upper"] else None
    return out


def _engine_fields(engine: EngineSettings) -> dict[str, Any]:
    """The fields of ``engine`` a pool sets on every run (not connector or options)."""
    keep = {"connector", "cache_options", "async_scheduling", "extra"}
    return {
        f.name: getattr(engine, f.name) for f in dataclasses.fields(engine) if f.name not in keep
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
            "requests_per_step": list(stream.arrivals),
            "items_per_request": list(stream.items),
            "abort": stream.abort,
            "repeat": stream.repeat,
        },
        "descheduled_seconds": DESCHEDULED_SECONDS,
        "pools": measured,
        "seconds": time.perf_counter() - started,
    }


def pools(
    sizes: Sequence[int],
    row_bytes: int,
    steps: int,
    seed: int,
    catalogue: int | None = None,
    async_scheduling: bool = True,
) -> list[Pool]:
    """A ``Pool`` per size in bytes: ``steps`` steps of seed ``seed``, over ``catalogue``
    items (default ``catalogue_for`` each pool). O(pools).

    Raises:
        ValueError: a pool smaller than the largest item.
    """
    out = []
    for size in sizes:
        blocks = size // row_bytes
        stream = ArrivalSpec(
            steps=steps,
            seed=seed,
            catalogue=catalogue or catalogue_for(blocks),
            rows=(64, 2_048),
            arrivals=(1, 4),
        )
        if blocks < stream.rows[1]:
            raise ValueError(
                f"a {bytes_text(size)} pool holds {blocks:,} rows of {bytes_text(row_bytes)}: "
                f"fewer than an item's {stream.rows[1]:,}"
            )
        out.append(Pool(size, row_bytes, stream, async_scheduling))
    return out
