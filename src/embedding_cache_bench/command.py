"""The ``embedding-cache bench`` subcommand: its options, and running the builds in turn."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from embedding_cache import BUILD_NAME
from embedding_cache_checker import upstream

from . import (
    beyond,
    connector_report,
    construction,
    contiguity,
    implementations,
    memory,
    plot,
    policies,
    real_scheduler,
    real_scheduler_report,
    report,
    runner,
    scale,
    shared_mix,
)
from .arguments import int_at_least

#: Pool sizes measured by default: small, typical, large.
DEFAULT_SIZES = "256,4096,65536"
#: Measured operations per pool size in the default build.
DEFAULT_OPS = 60_000
#: The checked build is ~20-50x slower per call, so it runs this many times fewer
#: measured operations (unless ``--checked-ops`` says otherwise).
CHECKED_OPS_DIVISOR = 10
DEFAULT_REPEAT = 5
#: Where ``--policies`` writes its plot unless ``--plot-dir`` says otherwise.
DEFAULT_PLOT_DIR = "bench-out"


def _builds(text: str) -> list[str]:
    builds = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [build for build in builds if build not in runner.BUILD_ENV]
    if not builds or unknown or len(set(builds)) != len(builds):
        raise argparse.ArgumentTypeError(
            f"builds must be distinct names among {', '.join(runner.BUILD_ENV)}, not {text!r}"
        )
    return builds


def _positive(text: str) -> int:
    return int_at_least(text, 1, "a positive int")


def _sizes_text(sizes: tuple[int, ...]) -> str:
    return ",".join(map(str, sizes))


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``bench`` with the ``embedding-cache`` command's subparsers."""
    parser = subparsers.add_parser(
        "bench",
        help="time a realistic operation mix on the default and checked builds",
        description=(
            "Run a realistic operation mix (Zipf-like item reuse, saves that complete or "
            "fail a few steps later, loads that pin and release, remote pin_if_ready reads) "
            "on each build and pool size, after a warm-up to steady state, and print "
            "per-operation cost, hit ratio, evictions and alloc failures. Each build runs "
            "in its own child process. A benchmark, not a test. "
            "With --policies: compare the eviction policies instead; with --beyond-seed "
            "(or one of its sections): measure the package beside the seed's class (see below); "
            "with --connector: the engine's protocol around the cache (see below); with "
            "--vllm: vLLM's own EC scheduler, upstream's order beside the plugin (see below)."
        ),
        epilog=(
            "--policies: every eviction policy (embedding_cache.EVICTION_POLICIES), alone and "
            "with each admission filter (ADMISSION_FILTERS, as 'gdsf+doorkeeper'), on two "
            "token-sized streams: 'reuse' (Zipf 0.9 over 20,000 items of 64-4,096 blocks, "
            "log-uniform; each request pin_if_ready, a miss allocs and marks ready) and "
            "'scan' (the same with 30% one-time items). Reports request and block hit "
            "ratios per policy at each --pools size and on the miss-ratio curve's pools "
            "(--curve-pools; drawn into --plot-dir as PNG and SVG if matplotlib is "
            "installed), each beside an offline reference that knows the future (the "
            "better of Belady and a size-aware Belady, a heuristic) and as a fraction of it; "
            "at each --pools size, as a fraction of both bounds on the optimum's hits "
            "(optimum.foo_bounds: the FOO relaxation by HiGHS, needing the 'bounds' extra), "
            "and beside the most any online policy can expect; and per-op cost (policies timed "
            "alternating in this process) on "
            "both streams and on the realistic mix at each --sizes size with --ops ops. "
            f"Defaults: {policies.DEFAULT_WARMUP:,} warm-up + {policies.DEFAULT_REQUESTS:,} "
            f"counted requests per simulation, {len(policies.DEFAULT_CURVE_POOLS)} curve "
            f"pools plus the table pools, {policies.DEFAULT_REPEAT} timing rounds (the "
            "simulations use --jobs processes; the timing runs after them, alone; run time: "
            'docs/MEASURED.md, "Commands\' run times"). --builds does not apply. '
            "--beyond-seed: the running build beside the seed's class (vLLM's own, from the "
            "installed vllm==0.33.0: pip install -e '.[vllm]'), "
            "every policy, side by side in this process, as ratios: construction time of a "
            "--construction-blocks pool; tracemalloc bytes per block of an empty pool and per "
            "live entry; runs of consecutive block ids per multi-block entry on compare.py's "
            "op mix and on the token-sized streams; "
            f"{implementations.BASELINE}'s time on compare.py's op mix over the seed's; "
            "per-op cost at each --scale-sizes pool (the realistic mix, --ops measured ops) "
            "over the smallest. --construction, --memory, --contiguity, "
            "--speed-vs-seed, --scale run one section each (combinable). Each policy is "
            "measured with each allocator (--allocators); most of its run time is --scale. "
            "--connector: requests of 1-4 items of the 'reuse' stream's catalogue, per "
            "policy and --pools size, in today's order (check, alloc the misses, pin the "
            "hits), pin_if_ready at check, and a lease at check (if the build has leases); "
            f"--requests (default {connector_report.DEFAULT_REQUESTS:,}), --warmup (default "
            f"{connector_report.DEFAULT_WARMUP:,}), --seed, --jobs as --policies. "
            "--vllm: vLLM 0.33's real engine loop (the [vllm] extra) on CPU: its engine-core "
            "AsyncScheduler (--sync: Scheduler), GPU encoder cache, KV cache and chunked "
            "prefill, per --pool-bytes pool (blocks = bytes / (--hidden-size x --dtype-bytes)): "
            "upstream's EC connector beside the plugin (every policy x stack, extents, extents + "
            "contiguity 4, doorkeeper), on one seeded stream of --steps steps of arrivals "
            f"(default {real_scheduler.DEFAULT_STEPS:,}): loads, checked hits lost, saves never "
            "made, entries never ready and their blocks, blocks held, whether the engine goes "
            "idle, and schedule()'s median and p99 time over upstream's; one process per pool "
            "(--jobs)."
        ),
    )
    parser.add_argument(
        "--sizes",
        type=runner.parse_sizes,
        default=runner.parse_sizes(DEFAULT_SIZES),
        help=f"comma-separated pool sizes in blocks (default {DEFAULT_SIZES})",
    )
    parser.add_argument(
        "--ops",
        type=_positive,
        default=DEFAULT_OPS,
        help=f"measured operations per pool size, default build (default {DEFAULT_OPS:,})",
    )
    parser.add_argument(
        "--checked-ops",
        type=_positive,
        default=None,
        help=(
            "measured operations per pool size, checked build "
            f"(default --ops / {CHECKED_OPS_DIVISOR})"
        ),
    )
    parser.add_argument(
        "--repeat",
        type=_positive,
        default=None,
        help=(
            "timed replays per pool size; the median is reported (default "
            f"{DEFAULT_REPEAT}; with --policies, rounds per policy, default "
            f"{policies.DEFAULT_REPEAT})"
        ),
    )
    parser.add_argument(
        "--builds",
        type=_builds,
        default=_builds("default,checked"),
        help="comma-separated builds to run, among default, checked (default both)",
    )
    parser.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    group = parser.add_argument_group("eviction policies (--policies)")
    group.add_argument(
        "--policies",
        action="store_true",
        help="compare the eviction policies' hit ratios and per-op cost instead of the builds",
    )
    group.add_argument(
        "--pools",
        type=runner.parse_sizes,
        default=list(policies.DEFAULT_POOLS),
        help=(
            "comma-separated pool sizes in blocks for the table and the timing "
            f"(default {_sizes_text(policies.DEFAULT_POOLS)})"
        ),
    )
    group.add_argument(
        "--curve-pools",
        type=runner.parse_sizes,
        default=list(policies.DEFAULT_CURVE_POOLS),
        help=(
            "comma-separated pool sizes of the miss-ratio curve, besides --pools (default "
            f"{len(policies.DEFAULT_CURVE_POOLS)} sizes log-spaced from "
            f"{policies.DEFAULT_CURVE_POOLS[0]:,} to {policies.DEFAULT_CURVE_POOLS[-1]:,})"
        ),
    )
    group.add_argument(
        "--requests",
        type=_positive,
        default=None,
        help=(
            "counted requests per simulation, after the warm-up "
            f"(default {policies.DEFAULT_REQUESTS:,}; "
            f"{connector_report.DEFAULT_REQUESTS:,} with --connector)"
        ),
    )
    group.add_argument(
        "--warmup",
        type=_non_negative,
        default=None,
        help=(
            f"warm-up requests, not counted (default {policies.DEFAULT_WARMUP:,}; "
            f"{connector_report.DEFAULT_WARMUP:,} with --connector)"
        ),
    )
    group.add_argument(
        "--cost-requests",
        type=_positive,
        default=policies.DEFAULT_COST_REQUESTS,
        help=(
            "requests of each stream timed per policy and pool "
            f"(default {policies.DEFAULT_COST_REQUESTS:,})"
        ),
    )
    group.add_argument(
        "--cost-warmup",
        type=_non_negative,
        default=policies.DEFAULT_COST_WARMUP,
        help=f"untimed requests before the timed ones (default {policies.DEFAULT_COST_WARMUP:,})",
    )
    group.add_argument(
        "--jobs",
        type=_positive,
        default=max(1, min(4, os.cpu_count() or 1)),
        help="worker processes for the simulations (default: the CPU count, at most 4)",
    )
    group.add_argument(
        "--plot-dir",
        type=Path,
        default=Path(DEFAULT_PLOT_DIR),
        help=f"directory for the miss-ratio curve's PNG and SVG (default {DEFAULT_PLOT_DIR}/)",
    )
    _add_beyond_seed(parser)
    connector_report.add_arguments(parser)
    real_scheduler_report.add_arguments(parser)
    parser.set_defaults(func=run)


#: The per-section flags of ``--beyond-seed``: section name -> (flag, help).
BEYOND_FLAGS = {
    "construction": ("--construction", "time EmbeddingCache(--construction-blocks) per policy"),
    "memory": ("--memory", "tracemalloc bytes per pool block and per live entry"),
    "contiguity": ("--contiguity", "runs of consecutive block ids per multi-block entry"),
    "speed": (
        "--speed-vs-seed",
        f"{implementations.BASELINE}'s time on compare.py's op mix over the seed's",
    ),
    "scale": ("--scale", "per-op cost at each --scale-sizes pool over the smallest"),
}


def _add_beyond_seed(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("beyond the seed (--beyond-seed, or its sections)")
    group.add_argument(
        "--beyond-seed",
        action="store_true",
        help="every section below: the package beside the seed's class, as ratios",
    )
    for section, (flag, text) in BEYOND_FLAGS.items():
        group.add_argument(flag, dest=f"beyond_{section}", action="store_true", help=text)
    group.add_argument(
        "--allocators",
        type=_allocators,
        default=None,
        help=(
            "comma-separated allocators to measure each policy with, among "
            f"{', '.join(implementations.allocator_names())} (default all)"
        ),
    )
    group.add_argument(
        "--scale-sizes",
        type=runner.parse_sizes,
        default=list(scale.SIZES),
        help=f"comma-separated pool sizes of --scale (default {_sizes_text(scale.SIZES)})",
    )
    group.add_argument(
        "--construction-blocks",
        type=_positive,
        default=construction.NUM_BLOCKS,
        help=f"pool size --construction builds (default {construction.NUM_BLOCKS:,})",
    )
    group.add_argument(
        "--memory-pool",
        type=_positive,
        default=memory.POOL_BLOCKS,
        help=f"empty pool --memory measures per block (default {memory.POOL_BLOCKS:,})",
    )
    group.add_argument(
        "--memory-entries",
        type=_positive,
        default=memory.ENTRIES,
        help=(
            f"ready entries of {memory.ENTRY_BLOCKS} blocks --memory fills a cache with "
            f"(default {memory.ENTRIES:,})"
        ),
    )
    group.add_argument(
        "--shared-ops",
        type=_positive,
        default=shared_mix.N_OPS,
        help=(
            "calls of compare.py's op mix for --contiguity and --speed-vs-seed "
            f"(default {shared_mix.N_OPS:,}, as compare.py)"
        ),
    )
    group.add_argument(
        "--token-pool",
        type=_positive,
        default=contiguity.TOKEN_POOL,
        help=f"pool of --contiguity's token-sized streams (default {contiguity.TOKEN_POOL:,})",
    )
    group.add_argument(
        "--token-warmup",
        type=_non_negative,
        default=contiguity.TOKEN_WARMUP,
        help=f"uncounted requests of those streams (default {contiguity.TOKEN_WARMUP:,})",
    )
    group.add_argument(
        "--token-requests",
        type=_positive,
        default=contiguity.TOKEN_REQUESTS,
        help=f"counted requests of those streams (default {contiguity.TOKEN_REQUESTS:,})",
    )
    group.add_argument(
        "--contiguity-bounds",
        type=runner.parse_sizes,
        default=list(contiguity.CONTIGUITY_BOUNDS),
        help="comma-separated k of the contiguity-aware eviction rows of --contiguity "
        f"(<policy>/extents/k<k>; default {_sizes_text(contiguity.CONTIGUITY_BOUNDS)})",
    )


def _allocators(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    valid = implementations.allocator_names()
    if not names or any(name not in valid for name in names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"allocators must be distinct names among {', '.join(valid)}, not {text!r}"
        )
    return names


def beyond_sections(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``--beyond-seed`` sections the options ask for (none: the default bench)."""
    if args.beyond_seed:
        return beyond.SECTIONS
    return tuple(name for name in beyond.SECTIONS if getattr(args, f"beyond_{name}"))


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an int >= 0, not {value}")
    return value


def _progress(message: str) -> None:
    """Progress lines go to stderr, so ``--json`` output stays clean."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def run_policies(args: argparse.Namespace) -> int:
    """``bench --policies``: simulate, time, plot (if matplotlib is there), print."""
    started = time.perf_counter()
    section = policies.measure(
        pools=args.pools,
        curve_pools=args.curve_pools,
        requests=policies.DEFAULT_REQUESTS if args.requests is None else args.requests,
        warmup=policies.DEFAULT_WARMUP if args.warmup is None else args.warmup,
        cost_requests=args.cost_requests,
        cost_warmup=args.cost_warmup,
        mix_sizes=args.sizes,
        mix_ops=args.ops,
        repeat=args.repeat or policies.DEFAULT_REPEAT,
        seed=args.seed,
        jobs=args.jobs,
        progress=_progress,
    )
    files: list[str] = []
    skipped = None
    try:
        files = [str(path) for path in plot.write_miss_ratio_curve(section, args.plot_dir)]
    except plot.PlotUnavailableError as exc:
        skipped = str(exc)
        print(f"embedding-cache bench: {skipped}", file=sys.stderr)
    notes = [
        "hit ratios count the requests after the warm-up; every policy serves the same "
        "pre-generated stream (the 'stream' fingerprint)",
        "ns/op: median over rounds of one policy's measured window; "
        f"vs {implementations.BASELINE}: median of the per-round ratios; same mix: per-call "
        f"costs weighted by {implementations.BASELINE}'s operation counts "
        "(a policy that hits more does fewer, costlier allocs, which moves ns/op)",
        f"{time.perf_counter() - started:.0f} s in all",
    ]
    result = {
        "command": "embedding-cache bench --policies",
        "build": BUILD_NAME,
        "policies": section,
        "plot": {"files": files, "skipped": skipped},
        "notes": notes,
    }
    print(json.dumps(result, indent=1) if args.json else report.render_policies(result))
    return 0


def run_beyond_seed(args: argparse.Namespace, sections: tuple[str, ...]) -> int:
    """``bench --beyond-seed`` (or some of its sections): measure, print table or JSON."""
    options = beyond.Options(
        sections=sections,
        allocators=args.allocators,
        repeat=args.repeat or DEFAULT_REPEAT,
        seed=args.seed,
        scale_sizes=tuple(args.scale_sizes),
        scale_ops=args.ops,
        construction_blocks=args.construction_blocks,
        memory_pool=args.memory_pool,
        memory_entries=args.memory_entries,
        shared_ops=args.shared_ops,
        token_pool=args.token_pool,
        token_warmup=args.token_warmup,
        token_requests=args.token_requests,
        contiguity_bounds=tuple(args.contiguity_bounds),
    )
    result = beyond.measure(options, progress=_progress)
    result["notes"] = [
        "every figure is measured in this process, the seed's class (vLLM's own, from the "
        f"installed vllm=={upstream.VLLM_VERSION}) and the package alternating; timings "
        "are this thread's CPU time, so other processes on the machine disturb them less",
        "the shared op mix is the project's measuring tool's (compare.py), reproduced call for "
        "call by embedding_cache_bench.shared_mix; 'seed's stream: yes' = fed exactly "
        "the seed's calls",
        "targets are reported, never asserted",
    ]
    print(json.dumps(result, indent=1) if args.json else report.render_beyond_seed(result))
    return 0


def run(args: argparse.Namespace) -> int:
    """Run every requested build in a child process and print the combined report."""
    sections = beyond_sections(args)
    if sum((bool(sections), args.policies, args.connector, args.vllm)) > 1:
        print(
            "embedding-cache bench: --policies, --beyond-seed, --connector and --vllm are "
            "separate runs",
            file=sys.stderr,
        )
        return 2
    if args.vllm:
        return real_scheduler_report.run(args, _progress)
    if args.connector:
        return connector_report.run(args, _progress)
    if sections:
        return run_beyond_seed(args, sections)
    if args.policies:
        return run_policies(args)
    args.repeat = args.repeat or DEFAULT_REPEAT
    checked_ops: int = args.checked_ops or max(1, args.ops // CHECKED_OPS_DIVISOR)
    ops = {build: checked_ops if build == "checked" else args.ops for build in args.builds}
    runs: dict[str, dict[str, Any]] = {}
    for build in args.builds:
        try:
            runs[build] = runner.run_build(build, args.sizes, ops[build], args.repeat, args.seed)
        except runner.BenchError as exc:
            print(f"embedding-cache bench: {exc}", file=sys.stderr)
            return 1
    notes = [
        "each pool size replays a script recorded on that build's cache; only the cache "
        "calls after warm-up are timed (generation and warm-up are not)",
        "sizes are timed interleaved within each build's process; builds run one after "
        "the other, so 'vs default' compares medians from different processes",
    ]
    if "checked" in ops and ops["checked"] != args.ops:
        notes.append(
            f"the checked build runs {ops['checked']:,} measured ops per size, not "
            f"{args.ops:,} (it is ~20-50x slower per call); same seed, so its script is a "
            "prefix of the default build's"
        )
    result = report.build_report(
        runs, sizes=args.sizes, ops=ops, repeat=args.repeat, seed=args.seed, notes=notes
    )
    print(json.dumps(result, indent=1) if args.json else report.render(result))
    return 0
