"""The ``embedding-cache tlc`` subcommand: check the manifest's models."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .jar import TlcSetupError, locate_jar, locate_java, tlc_version
from .manifest import ManifestError, find_tla_dir, load_manifest, select_models
from .report import failure_report, results_table, run_json
from .runner import ModelResult, run_model

#: Exit codes: all models met expectations / some did not / could not run.
EXIT_OK, EXIT_FAILED, EXIT_SETUP = 0, 1, 2


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``tlc`` with the CLI's subparsers."""
    parser = subparsers.add_parser(
        "tlc",
        help="model-check the TLA+ specification with TLC",
        description=(
            "Run the models listed in tla/models.json with TLC (all by default) and "
            "check that each meets its expectation: 'pass', or the named invariant or "
            "property reported violated. Exits 0 only if every model does."
        ),
    )
    parser.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help="model names, tags or policies (fifo, gdsf, s3fifo) from the manifest (default: all)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="TLC worker threads (default: number of CPUs)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object with every result on stdout"
    )
    parser.add_argument(
        "--tla-dir",
        default=None,
        help="the directory holding models.json (default: the repo's tla/)",
    )
    parser.add_argument("--list", action="store_true", help="list the manifest's models and exit")
    parser.add_argument(
        "--quiet", action="store_true", help="do not relay TLC's progress to stderr"
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="relay all of TLC's output to stderr, not just progress",
    )
    parser.set_defaults(func=run_command)


def _relay(model: str, line: str) -> None:
    """Relay one line of TLC progress to stderr."""
    print(f"[{model}] {line}", file=sys.stderr, flush=True)


def run_command(args: argparse.Namespace) -> int:
    """Run the selected models; return the process exit code."""
    try:
        tla_dir = find_tla_dir(args.tla_dir)
        models = select_models(load_manifest(tla_dir), list(args.models))
    except ManifestError as exc:
        print(f"embedding-cache tlc: {exc}", file=sys.stderr)
        return EXIT_SETUP
    if args.list:
        for m in models:
            print(
                f"{m.name:32} {m.policy or '-':7} {m.expect:30} {m.budget_seconds:>6g} s  "
                f"{m.description}"
            )
        return EXIT_OK
    try:
        java, jar = locate_java(), locate_jar()
    except TlcSetupError as exc:
        print(f"embedding-cache tlc: {exc}", file=sys.stderr)
        return EXIT_SETUP
    version = tlc_version(java, jar)
    if args.workers < 1:
        print("embedding-cache tlc: --workers must be at least 1", file=sys.stderr)
        return EXIT_SETUP
    sink = None if args.quiet else _relay
    results: list[ModelResult] = []
    for model in models:
        if not args.quiet:
            print(
                f"[{model.name}] checking {model.spec} with {model.config} "
                f"(expect {model.expect}, budget {model.budget_seconds:g} s)",
                file=sys.stderr,
                flush=True,
            )
        results.append(run_model(model, tla_dir, java, jar, args.workers, sink, args.verbose))
    if args.json:
        print(json.dumps(run_json(str(jar), version, results), indent=2))
    else:
        print(f"TLC {version} ({jar})")
        print(results_table(results))
        for result in results:
            if not result.ok:
                print()
                print(failure_report(result))
        passed = sum(r.ok for r in results)
        print(f"\n{passed}/{len(results)} models met their expectation.")
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILED
