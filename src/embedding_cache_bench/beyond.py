"""``embedding-cache bench --beyond-seed``: the project against the seed on five measures.

Sections (each can be asked for alone; ``SECTIONS`` is their order):

- ``construction``: time to build a 2**20-block cache (``construction``);
- ``memory``: bytes per block of an empty pool, bytes per live entry (``memory``);
- ``contiguity``: runs of consecutive block ids per multi-block entry on
  compare.py's op mix and on the token-sized streams (``contiguity``);
- ``speed``: the default policy's time on compare.py's op mix over the seed's
  (``seed_speed``);
- ``scale``: per-op cost at pool sizes 2**10 .. 2**20, per policy (``scale``).

Every section measures the seed's class (vLLM's own, loaded from the installed
``vllm==0.33.0`` by ``embedding_cache_checker.upstream``)
and the package side by side in this process, and reports ratios; ``targets``
sets the figures against the project's goals. Reported, never asserted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from embedding_cache import BUILD_NAME

from . import construction, contiguity, implementations, memory, scale, seed_speed, shared_mix

#: The sections, in the order they run (the heaviest, scale, last).
SECTIONS = ("construction", "memory", "contiguity", "speed", "scale")

#: The project's targets (reported, never asserted).
TARGET_SCALE_RATIO = 1.5  # ns/op at any pool size over that at the smallest
TARGET_CONSTRUCTION_SECONDS = 0.5  # EmbeddingCache(2**20), median
TARGET_ENTRY_VS_SEED = 1.0  # bytes per live entry over the seed's
TARGET_RUNS_PER_ENTRY = 1.5  # runs of consecutive ids per multi-block entry
#: Contiguity-aware eviction may cost at most 1% of the hits without it (issue 16).
TARGET_CONTIGUITY_HITS = 0.99
TARGET_SPEED_VS_SEED = 0.8  # default policy's time on the shared mix over the seed's
#: The contiguous configuration's time on the shared mix over the seed's (issue 16).
TARGET_CONTIGUOUS_SPEED = 1.2


@dataclass(frozen=True)
class Options:
    """What to measure, and how much (the command's options; defaults are the documented run)."""

    sections: tuple[str, ...] = SECTIONS
    policies: tuple[str, ...] | None = None  # None: every policy
    allocators: tuple[str, ...] | None = None  # None: every allocator
    repeat: int = 5
    seed: int = 0
    scale_sizes: tuple[int, ...] = scale.SIZES
    scale_ops: int = 60_000
    construction_blocks: int = construction.NUM_BLOCKS
    memory_pool: int = memory.POOL_BLOCKS
    memory_entries: int = memory.ENTRIES
    shared_ops: int = shared_mix.N_OPS
    token_pool: int = contiguity.TOKEN_POOL
    token_warmup: int = contiguity.TOKEN_WARMUP
    token_requests: int = contiguity.TOKEN_REQUESTS
    contiguity_bounds: tuple[int, ...] = contiguity.CONTIGUITY_BOUNDS
    speed_policies: tuple[str, ...] = field(default=seed_speed.DEFAULT_POLICIES)

    def __post_init__(self) -> None:
        unknown = [name for name in self.sections if name not in SECTIONS]
        if unknown or not self.sections:
            raise ValueError(f"sections must be among {', '.join(SECTIONS)}, not {unknown}")


def measure(options: Options, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the asked sections in ``SECTIONS`` order; one JSON-ready dict, targets included."""
    names, allocators = options.policies, options.allocators
    result: dict[str, Any] = {
        "command": "embedding-cache bench --beyond-seed",
        "build": BUILD_NAME,
        "sections": [name for name in SECTIONS if name in options.sections],
        "options": asdict(options),
    }
    runners: dict[str, Callable[[], dict[str, Any]]] = {
        "construction": lambda: construction.measure(
            names,
            allocators=allocators,
            num_blocks=options.construction_blocks,
            repeat=options.repeat,
        ),
        "memory": lambda: memory.measure(
            names,
            allocators=allocators,
            pool_blocks=options.memory_pool,
            entries=options.memory_entries,
        ),
        "contiguity": lambda: contiguity.measure(
            names,
            allocators=allocators,
            shared_ops=options.shared_ops,
            token_pool=options.token_pool,
            token_warmup=options.token_warmup,
            token_requests=options.token_requests,
            seed=options.seed,
            progress=progress,
            bounds=options.contiguity_bounds,
        ),
        "speed": lambda: seed_speed.measure(
            options.speed_policies,
            allocators=allocators,
            n_ops=options.shared_ops,
            repeat=options.repeat,
        ),
        "scale": lambda: scale.measure(
            names,
            allocators=allocators,
            sizes=options.scale_sizes,
            n_ops=options.scale_ops,
            repeat=options.repeat,
            seed=options.seed,
            progress=progress,
        ),
    }
    seconds: dict[str, float] = {}
    for name in result["sections"]:
        started = time.perf_counter()
        result[name] = runners[name]()
        seconds[name] = time.perf_counter() - started
        if progress is not None:
            progress(f"{name}: {seconds[name]:.0f} s")
    result["seconds"] = seconds
    result["targets"] = targets(result)
    return result


def _check(
    check: str, impl: str, value: float, target: float, unit: str, *, at_most: bool = True
) -> dict[str, Any]:
    met = value <= target if at_most else value >= target
    return {
        "check": check,
        "policy": impl,
        "value": value,
        "unit": unit,
        "target": f"{'<=' if at_most else '>='} {target:g}{unit}",
        "met": met,
        "margin": target - value if at_most else value - target,
    }


def _scale_checks(section: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per implementation, its worst growth over the smallest pool, three ways."""
    # Rows at the smallest pool are the baseline (a ratio of 1.0 to themselves).
    smallest = min((row["num_blocks"] for row in section["rows"]), default=0)
    by_impl: dict[str, list[Mapping[str, Any]]] = {}
    for row in section["rows"]:
        if row["impl"] != implementations.SEED and row["num_blocks"] != smallest:
            by_impl.setdefault(row["impl"], []).append(row)
    checks = []
    for impl, rows in by_impl.items():
        for key, label in (
            ("vs_smallest", "ns/op vs the smallest pool"),
            ("same_mix_vs_smallest", "same-mix cost vs the smallest pool"),
            ("growth_over_seeds", "that growth over the seed's own"),
        ):
            worst = max(rows, key=lambda row: row[key] or 0.0)
            if worst[key] is not None:
                check = f"scale: {label}, worst ({worst['num_blocks']:,} blocks)"
                checks.append(_check(check, impl, worst[key], TARGET_SCALE_RATIO, "x"))
    return checks


def _construction_checks(section: Mapping[str, Any]) -> list[dict[str, Any]]:
    check = f"construction of {section['num_blocks']:,} blocks, median"
    return [
        _check(check, row["impl"], row["seconds"], TARGET_CONSTRUCTION_SECONDS, " s")
        for row in section["rows"]
        if row["impl"] != implementations.SEED
    ]


def _memory_checks(section: Mapping[str, Any]) -> list[dict[str, Any]]:
    check = "memory: bytes per live entry vs the seed"
    return [
        _check(check, row["impl"], row["entry_vs_seed"], TARGET_ENTRY_VS_SEED, "x")
        for row in section["rows"]
        if row["impl"] != implementations.SEED and row["entry_vs_seed"] is not None
    ]


def _contiguity_checks(section: Mapping[str, Any]) -> list[dict[str, Any]]:
    runs = [
        _check(
            f"contiguity: runs per multi-block entry, {row['workload']}",
            row["impl"],
            row["runs_per_entry"],
            TARGET_RUNS_PER_ENTRY,
            "",
        )
        for row in section["rows"]
        if row["impl"] != implementations.SEED
    ]
    hits = [
        _check(
            f"contiguity: hits vs the same policy without it, {row['workload']}",
            row["impl"],
            row["hits_vs_k0"],
            TARGET_CONTIGUITY_HITS,
            "x",
            at_most=False,
        )
        for row in section["rows"]
        if row.get("hits_vs_k0") is not None
    ]
    return runs + hits


def _speed_checks(section: Mapping[str, Any]) -> list[dict[str, Any]]:
    check = "speed: time on the shared mix vs the seed"
    return [
        _check(
            check,
            row["impl"],
            row["vs_seed"],
            TARGET_CONTIGUOUS_SPEED if "/k" in row["impl"] else TARGET_SPEED_VS_SEED,
            "x",
        )
        for row in section["rows"]
        if row["impl"] != implementations.SEED
    ]


#: Each section's targets, in the order ``targets`` reports them.
_CHECKS: dict[str, Callable[[Mapping[str, Any]], list[dict[str, Any]]]] = {
    "scale": _scale_checks,
    "construction": _construction_checks,
    "memory": _memory_checks,
    "contiguity": _contiguity_checks,
    "speed": _speed_checks,
}


def targets(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One check per target and implementation, from whichever sections ``result`` holds.

    Sections are judged in ``_CHECKS`` order (scale first); ``margin`` is how far
    inside the target the value is, in its unit (negative: missed by that much).
    O(rows of the sections).
    """
    return [
        check for name, judge in _CHECKS.items() if name in result for check in judge(result[name])
    ]
