"""``bench --connector``: its options, the grid of runs, and the report as tables or JSON.

Every (policy, pool, order) runs ``connector.simulate`` on the same
pre-generated requests (in worker processes when ``--jobs`` > 1); every
policy is a name in ``embedding_cache.EVICTION_POLICIES``
(``implementations.policy_names``). The tables go through the project's one
renderer (``text_table``). Nothing here is timed or asserted.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from typing import Any

from embedding_cache import BUILD_NAME
from embedding_cache_checker.text_table import numeric_right, render_table

from . import connector, connector_leases, streams
from .arguments import int_at_least
from .implementations import policy_names

#: Top-level keys of the JSON report; "connector" is ``measure``'s dict.
REPORT_KEYS = ("command", "build", "connector", "notes")
#: Counted and warm-up requests by default: half of ``--policies``' (whose run time is
#: in docs/MEASURED.md, "Commands' run times").
DEFAULT_REQUESTS = 60_000
DEFAULT_WARMUP = 20_000


def _block_range(text: str) -> tuple[int, int]:
    try:
        low, high = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LOW,HIGH blocks, not {text!r}") from None
    if not 1 <= low <= high:
        raise argparse.ArgumentTypeError(f"expected 1 <= LOW <= HIGH, not {text!r}")
    return low, high


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1], not {text!r}")
    return value


def _delay(text: str) -> int:
    return int_at_least(text, 0, "an int >= 0")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--connector`` and its own options (it shares ``--pools``, ``--requests``,
    ``--warmup``, ``--jobs``, ``--seed`` and ``--json`` with ``--policies``)."""
    group = parser.add_argument_group("the engine's protocol (--connector)")
    group.add_argument(
        "--connector",
        action="store_true",
        help=(
            "drive the cache with vLLM's scheduler protocol, in today's order and the safe "
            "ones, per policy and --pools size: checked hits lost before pin, hit ratio, "
            "blocks a dead reader's leases hold after their deadline"
        ),
    )
    low, high = streams.ITEM_BLOCKS
    group.add_argument(
        "--item-blocks",
        type=_block_range,
        default=streams.ITEM_BLOCKS,
        help=f"LOW,HIGH: item sizes in blocks, log-uniform (default {low},{high})",
    )
    group.add_argument(
        "--load-delay",
        type=_delay,
        default=connector.LOAD_DELAY,
        help=(
            "later requests until a load completes (unpin); 0: at the end of its own "
            f"request (default {connector.LOAD_DELAY})"
        ),
    )
    group.add_argument(
        "--save-delay",
        type=_delay,
        default=connector.SAVE_DELAY,
        help=f"later requests until a save completes (default {connector.SAVE_DELAY})",
    )
    group.add_argument(
        "--save-failure-rate",
        type=_fraction,
        default=connector.SAVE_FAILURE_RATE,
        help=f"fraction of saves that fail and discard (default {connector.SAVE_FAILURE_RATE})",
    )
    group.add_argument(
        "--lease-seconds",
        type=float,
        default=connector.LEASE_SECONDS,
        help=f"lease length of the lease order, fake-clock seconds (default "
        f"{connector.LEASE_SECONDS:g}; {connector_leases.TICK_SECONDS:g} s pass per request)",
    )


def _run_job(job: tuple[connector.RequestSpec, str, int, str, connector.Options]) -> Any:
    spec, policy, pool, order, options = job
    return connector.simulate(connector.make_requests(spec), policy, pool, order, options)


def measure(
    spec: connector.RequestSpec,
    pools: Sequence[int],
    options: connector.Options,
    *,
    policies: Sequence[str] | None = None,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every (policy, pool, order) on the same requests; a JSON-ready dict.

    O(policies x pools x orders x requests) cache calls, over ``jobs`` processes.
    """
    names = list(policy_names() if policies is None else policies)
    grid = [
        (spec, policy, pool, order, options)
        for pool in pools
        for policy in names
        for order in connector.orders()
    ]
    started = time.perf_counter()
    if jobs > 1 and len(grid) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as executor:
            counts = list(executor.map(_run_job, grid, chunksize=1))
    else:
        counts = [_run_job(job) for job in grid]
    seconds = time.perf_counter() - started
    if progress is not None:
        progress(f"connector: {len(grid)} runs of {spec.requests:,} requests in {seconds:.0f} s")
    rows = []
    for (_, policy, pool, order, _), count in zip(grid, counts, strict=True):
        row = {"policy": policy, "num_blocks": pool, "order": order, **asdict(count)}
        row["hit_ratio"], row["lost_ratio"] = count.hit_ratio, count.lost_ratio
        rows.append(row)
    return {
        "names": names,
        "orders": list(connector.orders()),
        "leases": connector_leases.leases_available(),
        "workload": {
            "items": spec.items,
            "zipf_exponent": streams.ZIPF_EXPONENT,
            "item_blocks": list(spec.item_blocks),
            "items_per_request": list(connector.ITEMS_PER_REQUEST),
            "requests": spec.requests - spec.warmup,
            "warmup": spec.warmup,
            "stream": connector.make_requests(spec).fingerprint,
        },
        "pools": list(pools),
        "seed": spec.seed,
        "options": asdict(options),
        "seconds": seconds,
        "rows": rows,
    }


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return render_table(header, rows, numeric_right(len(header))).splitlines()


def render(report: Mapping[str, Any]) -> str:
    """The ``bench --connector`` report: one row per policy, pool and order; the dead reader."""
    section = report["connector"]
    load = section["workload"]
    options = section["options"]
    lines = [
        f"embedding-cache bench --connector: {report['build']} build, seed {section['seed']}; "
        f"{load['requests']:,} requests after {load['warmup']:,} warm-up, "
        f"{load['items_per_request'][0]}-{load['items_per_request'][1]} items each, "
        f"Zipf {load['zipf_exponent']} over {load['items']:,} items of "
        f"{load['item_blocks'][0]:,}-{load['item_blocks'][1]:,} blocks; loads complete "
        f"{options['load_delay']} and saves {options['save_delay']} request(s) later",
        "",
    ]
    rows = [
        [
            row["policy"],
            f"{row['num_blocks']:,}",
            row["order"],
            f"{row['requests']:,}",
            f"{row['items']:,}",
            f"{row['checked_hits']:,}",
            f"{row['lost_before_pin']:,}",
            f"{row['lost_ratio']:.2%}",
            f"{row['hit_ratio']:.1%}",
            f"{row['uncomputed_saves']:,}",
            f"{row['alloc_failures']:,}",
            "yes" if row["held_after_drain"] else "no",
        ]
        for row in section["rows"]
    ]
    header = ["policy", "blocks", "order", "requests", "items", "checked hits"]
    header += ["lost before pin", "lost", "hit ratio", "uncomputed saves", "alloc fails"]
    lines += _table([*header, "held at end"], rows)
    dead = [row for row in section["rows"] if row["dead_reader"] is not None]
    if dead:
        lines += [
            "",
            f"a reader leases {options['dead_reader_items']} hot items for "
            f"{options['lease_seconds']:g} s and dies; blocks its leases hold:",
        ]
        dead_rows = [
            [
                row["policy"],
                f"{row['num_blocks']:,}",
                f"{row['dead_reader']['leases']:,}",
                f"{row['dead_reader']['blocks_leased']:,}",
                f"{row['dead_reader']['blocks_held_at_deadline']:,}",
                f"{row['dead_reader']['blocks_held_after_deadline']:,}",
            ]
            for row in dead
        ]
        header = ["policy", "blocks", "leases", "blocks leased", "at deadline", "after deadline"]
        lines += _table(header, dead_rows)
    lines += [f"note: {note}" for note in report["notes"]]
    return "\n".join(lines)


def run(args: argparse.Namespace, progress: Callable[[str], None]) -> int:
    """``bench --connector``: measure, print the tables or JSON."""
    requests = DEFAULT_REQUESTS if args.requests is None else args.requests
    warmup = DEFAULT_WARMUP if args.warmup is None else args.warmup
    spec = connector.RequestSpec(warmup + requests, warmup, args.seed, item_blocks=args.item_blocks)
    options = connector.Options(
        load_delay=args.load_delay,
        save_delay=args.save_delay,
        save_failure_rate=args.save_failure_rate,
        lease_seconds=args.lease_seconds,
    )
    section = measure(spec, args.pools, options, jobs=args.jobs, progress=progress)
    notes = [
        "every run serves the same pre-generated requests (the 'stream' fingerprint); "
        "counts cover the requests after the warm-up",
        "lost = checked hits lost before pin over checked hits; hit ratio = checked hits "
        "over items; an uncomputed save is the producer side's re-alloc of a lost hit",
        "held at end: has_held_entries() after every pending transfer completed",
    ]
    if not section["leases"]:
        notes.append("this build has no leases: the lease order and the dead reader are skipped")
    result = {
        "command": "embedding-cache bench --connector",
        "build": BUILD_NAME,
        "connector": section,
        "notes": notes,
    }
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0
