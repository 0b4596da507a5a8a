"""``bench --vllm``: its options, and its report as tables (one per pool) or JSON.

The runs are ``real_scheduler``'s; the tables go through the project's one
renderer (``text_table``). Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from embedding_cache import BUILD_NAME
from embedding_cache_checker.engine_loop import VllmMissingError
from embedding_cache_checker.engine_loop.loop import DESCHEDULED_SECONDS
from embedding_cache_checker.text_table import render_table

from . import real_scheduler as rs
from .arguments import int_at_least

#: Top-level keys of the JSON report; "vllm" is ``real_scheduler.measure``'s dict.
REPORT_KEYS = ("command", "build", "vllm", "notes")
#: Columns of a pool's table; the two first name the run, the rest are numbers.
HEADER = (
    "scheduler",
    "cache",
    "loads",
    "of OPT lower",
    "of OPT upper",
    "lost",
    "never made",
    "never ready",
    "their blocks",
    "blocks held",
    "idle",
    "median",
    "p99",
)


def parse_bytes(text: str) -> int:
    """``text`` as bytes: an int with an optional unit (B, KiB, MiB, GiB, TiB). O(len)."""
    match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    unit = rs.UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None or int(match.group(1)) < 1:
        raise argparse.ArgumentTypeError(
            f"expected a size in bytes such as 4GiB, 512MiB or 1048576, not {text!r}"
        )
    return int(match.group(1)) * unit


def parse_pools(text: str) -> list[int]:
    """Comma-separated distinct sizes in bytes (``parse_bytes``). O(len)."""
    pools = [parse_bytes(part) for part in text.split(",") if part.strip()]
    if not pools or len(set(pools)) != len(pools):
        raise argparse.ArgumentTypeError(f"expected distinct comma-separated sizes, not {text!r}")
    return pools


def _positive(text: str) -> int:
    return int_at_least(text, 1, "a positive int")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--vllm`` and its own options (it shares ``--seed``, ``--jobs`` and ``--json``)."""
    group = parser.add_argument_group("vLLM's real scheduler (--vllm)")
    group.add_argument(
        "--vllm",
        action="store_true",
        help=(
            "drive vLLM's real engine loop (the [vllm] extra): its engine-core scheduler with "
            "upstream's EC connector beside the plugin, per policy, configuration and pool: "
            "loads, checked hits lost, entries never ready, blocks held, whether the engine "
            "goes idle, schedule()'s time over upstream's"
        ),
    )
    group.add_argument(
        "--pool-bytes",
        type=parse_pools,
        default=list(rs.DEFAULT_POOLS),
        help="comma-separated pool sizes (vLLM's ec_cpu_bytes), e.g. 1GiB,4GiB (the default)",
    )
    group.add_argument(
        "--hidden-size",
        type=_positive,
        default=rs.DEFAULT_HIDDEN_SIZE,
        help=f"the encoder output's width: a row's elements (default {rs.DEFAULT_HIDDEN_SIZE:,})",
    )
    group.add_argument(
        "--dtype-bytes",
        type=_positive,
        default=rs.DEFAULT_DTYPE_BYTES,
        help=f"bytes per element (default {rs.DEFAULT_DTYPE_BYTES}: bf16)",
    )
    group.add_argument(
        "--steps",
        type=_positive,
        default=rs.DEFAULT_STEPS,
        help=f"scheduler steps per pool (default {rs.DEFAULT_STEPS:,})",
    )
    group.add_argument(
        "--sync",
        action="store_true",
        help="vLLM's Scheduler in EngineCore.step's order, not the default AsyncScheduler",
    )
    group.add_argument(
        "--catalogue",
        type=_positive,
        default=None,
        help=(
            f"items in the stream's catalogue, every pool (default {rs.CATALOGUE_ITEMS:,} per "
            f"{rs.CATALOGUE_BLOCKS:,} blocks of pool)"
        ),
    )


def _times(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def _percent(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.1%}"


def _stream_line(pool: Mapping[str, Any]) -> str:
    """What the pool's cache was asked, and the optimum's hits on it (first row's)."""
    first = pool["rows"][0]
    if "opt_lower" not in first:
        return f"bounds on the optimum: {first.get('bounds_unavailable', 'not computed')}"
    return (
        f"the cache served {first['accesses']:,} requests for {first['distinct_items']:,} "
        f"items (the GPU encoder cache in front); the optimum's hits on them lie in "
        f"[{first['opt_lower']:,}, {first['opt_upper']:,.0f}]"
    )


def render(report: Mapping[str, Any]) -> str:
    """The ``bench --vllm`` report: per pool, one row per scheduler and cache."""
    section = report["vllm"]
    stream = section["stream"]
    lines = [
        f"embedding-cache bench --vllm: vLLM {section['vllm_version']}'s real engine loop "
        f"({section['pools'][0]['scheduler_class']}) on CPU, "
        f"{report['build']} build; a block is one row of the encoder output, "
        f"{section['row_bytes']:,} bytes (hidden size x dtype size); each step 1-"
        f"{stream['requests_per_step'][1]} new requests of {stream['items_per_request'][0]}-"
        f"{stream['items_per_request'][1]} "
        f"items, Zipf {stream['zipf']} over the catalogue, items of "
        f"{stream['rows'][0]:,}-{stream['rows'][1]:,} rows, seed {section['pools'][0]['seed']}",
    ]
    for pool in section["pools"]:
        rows = [
            [
                row["scheduler"],
                row["cache"],
                f"{row['loads']:,}",
                _percent(row.get("loads_vs_opt_lower")),
                _percent(row.get("loads_vs_opt_upper")),
                f"{row['checked_hits_lost']:,}",
                f"{row['saves_never_made']:,}",
                f"{row['never_ready']:,}",
                f"{row['never_ready_blocks']:,}",
                f"{row['held_blocks']:,}",
                "yes" if row["went_idle"] else "never",
                _times(row["median_vs_upstream"]),
                _times(row["p99_vs_upstream"]),
            ]
            for row in pool["rows"]
        ]
        lines += [
            "",
            f"{pool['pool']} pool = {pool['blocks']:,} blocks, catalogue {pool['catalogue']:,} "
            f"items, {pool['steps']:,} steps of arrivals ({pool['seconds']:.0f} s)",
            _stream_line(pool),
            *render_table(HEADER, rows, range(2, len(HEADER))).splitlines(),
        ]
    lines += [f"note: {note}" for note in report["notes"]]
    return "\n".join(lines)


def run(args: argparse.Namespace, progress: Callable[[str], None]) -> int:
    """``bench --vllm``: measure, print the tables or JSON."""
    row_bytes = args.hidden_size * args.dtype_bytes
    try:
        pools = rs.pools(
            args.pool_bytes, row_bytes, args.steps, args.seed, args.catalogue, not args.sync
        )
        section = rs.measure(pools, jobs=args.jobs, progress=progress)
    except (ValueError, VllmMissingError) as error:
        print(f"embedding-cache bench: {error}", file=sys.stderr)
        return 2 if isinstance(error, ValueError) else 1
    notes = [
        "a block holds one row of an item's encoder output (vLLM's region: block_size_bytes = "
        "hidden size x dtype size); only the block count matters",
        f"the catalogue scales with the pool ({rs.CATALOGUE_ITEMS:,} items per "
        f"{rs.CATALOGUE_BLOCKS:,} blocks, ~4.4 pools' worth of rows) unless --catalogue says "
        "otherwise; every row of a pool serves the same seeded stream; the counts are "
        "deterministic",
        "vLLM's engine-core scheduler, unpatched, with its GPU encoder cache in front of the "
        "connector, KV cache, chunked prefill, preemption and aborts; the worker follows the "
        "V2 model runner (embedding_cache_checker.engine_loop.worker)",
        "loads: hits served; of OPT lower, of OPT upper: loads over the bounds on the most "
        "hits any cache of the pool's size could serve on the requests this run's cache got "
        "(embedding_cache_bench.optimum: the FOO relaxation, solved by HiGHS, and a schedule "
        "from it; a row whose stream differs gets its own); lost: checked hits the step's "
        "metadata did not load; never made: "
        "saves the worker never performed; never ready: entries (and their blocks) still not "
        "ready once the engine stopped; blocks held: not ready or pinned then; idle: the engine "
        "went idle (has_requests() False) within 3,000 steps after the last arrival",
        "median, p99: schedule()'s time per call in the arrival window, over upstream's row's; "
        "a pool's rows step in lockstep in one process (the order rotating each step), the "
        "collector between steps; calls in which the process was descheduled (wall - CPU > "
        f"{DESCHEDULED_SECONDS * 1e6:.0f} us) are left out; timing is the only noisy figure",
    ]
    result = {
        "command": "embedding-cache bench --vllm",
        "build": BUILD_NAME,
        "vllm": section,
        "notes": notes,
    }
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0
