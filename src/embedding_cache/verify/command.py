"""The ``embedding-cache verify`` subcommand: the project's main job."""

from __future__ import annotations

import argparse
import json
import os

from ..tlc.command import EXIT_FAILED, EXIT_OK, EXIT_SETUP  # one meaning for every subcommand
from ..tlc.jar import TlcSetupError
from ..tlc.manifest import ManifestError, find_tla_dir
from .main_job import STEPS, VerifyOptions, VerifyReport, run_verify


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``verify`` with the CLI's subparsers."""
    parser = subparsers.add_parser(
        "verify",
        help="run every check that ties the code to the spec (the main job)",
        description=(
            "Run the TLC models, replay the models' state graphs on the code, validate "
            "recorded traces with TLC, run CrossHair on the transitions, and check that "
            "every planted bug is caught by each link. Exits 0 only if everything holds."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--only",
        default=",".join(STEPS),
        help=f"comma-separated steps to run (default: all of {','.join(STEPS)})",
    )
    parser.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="TLC/CrossHair workers"
    )
    parser.add_argument(
        "--crosshair-timeout",
        type=float,
        default=None,
        help="CrossHair CPU seconds per condition (default: 5)",
    )
    parser.add_argument("--tla-dir", default=None, help="the directory holding models.json")
    parser.set_defaults(func=run_command)


def _table(report: VerifyReport) -> str:
    data = report.to_json()
    conf = data["conformance"]
    rows = [("step", "result", "seconds", "what was checked")]
    tlc_ok = sum(r.ok for r in report.tlc)
    rows.append(
        (
            "tlc",
            _ok(report.step_ok("tlc")),
            _s(report, "tlc"),
            f"{tlc_ok}/{len(report.tlc)} models met their expectation",
        )
    )
    for model in conf["models"]:
        what = (
            f"{model['model']}: {model['edges_replayed']}/{model['edges_total']} edges"
            f"{'' if model['full'] else ' (depth-bounded)'}, "
            f"{model['refused_calls_checked']} refused calls, {model['mismatches']} mismatches"
        )
        rows.append(
            ("conformance", _ok(report.step_ok("conformance")), _s(report, "conformance"), what)
        )
    tv = data["trace_validation"]
    rows.append(
        (
            "traces",
            _ok(report.step_ok("traces")),
            _s(report, "traces"),
            f"{tv['accepted']}/{tv['traces']} traces accepted by TLC",
        )
    )
    ch = data["crosshair"]
    if ch:
        what = (
            f"{ch['functions']} functions, {ch['conditions']} conditions, "
            f"{ch['counterexamples']} counterexamples"
        )
    else:
        what = "not run"
    rows.append(("crosshair", _ok(report.step_ok("crosshair")), _s(report, "crosshair"), what))
    pl = data["planted"]
    rows.append(
        (
            "planted",
            _ok(report.step_ok("planted")),
            _s(report, "planted"),
            f"caught by replay {pl['caught_by_replay']}/{pl['count']}, traces "
            f"{pl['caught_by_traces']}/{pl['count']}, crosshair "
            f"{pl['caught_by_crosshair']}/{pl['count']}",
        )
    )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _ok(value: bool | None) -> str:
    return "skipped" if value is None else ("ok" if value else "FAILED")


def _s(report: VerifyReport, step: str) -> str:
    return f"{report.seconds[step]:.1f}" if step in report.seconds else "-"


def run_command(args: argparse.Namespace) -> int:
    """Run the main job; exit 0 only if every selected step holds."""
    steps = tuple(s.strip() for s in args.only.split(",") if s.strip())
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        print(f"embedding-cache verify: unknown steps {unknown}; choose from {STEPS}")
        return EXIT_SETUP
    try:
        options = VerifyOptions(
            tla_dir=find_tla_dir(args.tla_dir),
            steps=steps,
            workers=args.workers,
            crosshair_timeout=args.crosshair_timeout,
        )
    except (ManifestError, TlcSetupError) as exc:
        print(f"embedding-cache verify: {exc}")
        return EXIT_SETUP
    report = run_verify(options)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(_table(report))
        for error in report.errors:
            print(f"error: {error}")
        for name, replay, _full in report.replays:
            for m in replay.mismatches[:5]:
                print(f"mismatch in {name}: {m.step}: {m.detail}")
        for name, verdict in report.traces:
            if not verdict.accepted:
                print(
                    f"trace {name} rejected at step {verdict.matched + 1}: {verdict.first_rejected}"
                )
        print(f"\nverify: {'all checks hold' if report.ok else 'FAILED'}")
    return EXIT_OK if report.ok else EXIT_FAILED
