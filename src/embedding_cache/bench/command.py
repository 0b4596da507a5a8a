"""The ``embedding-cache bench`` subcommand: its options, and running the builds in turn."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from . import report, runner

#: Pool sizes measured by default: small, typical, large.
DEFAULT_SIZES = "256,4096,65536"
#: Measured operations per pool size in the default build.
DEFAULT_OPS = 60_000
#: The checked build is ~20-50x slower per call, so it runs this many times fewer
#: measured operations (unless ``--checked-ops`` says otherwise).
CHECKED_OPS_DIVISOR = 10
DEFAULT_REPEAT = 5


def _builds(text: str) -> list[str]:
    builds = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [build for build in builds if build not in runner.BUILD_ENV]
    if not builds or unknown or len(set(builds)) != len(builds):
        raise argparse.ArgumentTypeError(
            f"builds must be distinct names among {', '.join(runner.BUILD_ENV)}, not {text!r}"
        )
    return builds


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int, not {value}")
    return value


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
            "in its own child process. A benchmark, not a test."
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
        default=DEFAULT_REPEAT,
        help=f"timed replays per pool size; the median is reported (default {DEFAULT_REPEAT})",
    )
    parser.add_argument(
        "--builds",
        type=_builds,
        default=_builds("default,checked"),
        help="comma-separated builds to run, among default, checked (default both)",
    )
    parser.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run every requested build in a child process and print the combined report."""
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
