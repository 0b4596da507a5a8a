"""The ``embedding-cache verify`` subcommand: the project's main job."""

from __future__ import annotations

import argparse
import json
import os

from ..policies import EVICTION_POLICIES
from ..tlc.command import EXIT_FAILED, EXIT_OK, EXIT_SETUP  # one meaning for every subcommand
from ..tlc.jar import TlcSetupError
from ..tlc.manifest import ManifestError, find_tla_dir
from .crosshair_check import PER_CONDITION_SECONDS
from .main_job import LINKS, PLANS, STEPS, VerifyOptions, VerifyReport, run_verify


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``verify`` with the CLI's subparsers."""
    parser = subparsers.add_parser(
        "verify",
        help="run every check that ties the code to the spec (the main job)",
        description=(
            "Run the TLC models; then, for each eviction policy, replay its models' state "
            "graphs on the code, validate recorded traces with TLC, run CrossHair on the "
            "transitions, and check that every planted bug is caught by each link. Exits 0 "
            "only if everything holds."
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
        help=f"CrossHair CPU seconds per condition (default: {PER_CONDITION_SECONDS:g})",
    )
    parser.add_argument(
        "--policy",
        default=",".join(EVICTION_POLICIES),
        help=f"comma-separated eviction policies (default: all of {','.join(EVICTION_POLICIES)})",
    )
    parser.add_argument(
        "--no-deep",
        dest="deep",
        action="store_false",
        help="skip the depth-bounded deep replay models (fifo's MCReplayDeep: 30-95 s of TLC)",
    )
    parser.add_argument("--tla-dir", default=None, help="the directory holding models.json")
    parser.set_defaults(func=run_command)


def _table(report: VerifyReport) -> str:
    """One row per step and policy: result, seconds (the step's, all policies) and figures."""
    data = report.to_json()
    rows = [("step", "policy", "result", "seconds", "what was checked")]
    if "tlc" in report.seconds:
        what = f"{sum(r.ok for r in report.tlc)}/{len(report.tlc)} models met their expectation"
        rows.append(("tlc", "all", _ok(report.step_ok("tlc")), _s(report, "tlc"), what))
    for policy, section in data["policies"].items():
        if "tlc" in report.seconds:
            models = section["tlc"].get("models", [])
            what = f"{sum(m['ok'] for m in models)}/{len(models)} of its own models"
            rows.append(("tlc", policy, _ok(report.step_ok("tlc", policy)), "", what))
        for model in section["conformance"]["models"]:
            what = (
                f"{model['model']}: {model['edges_replayed']}/{model['edges_total']} edges"
                f"{'' if model['full'] else ' (depth-bounded)'}, "
                f"{model['refused_calls_checked']} refused calls, {model['mismatches']} mismatches"
            )
            rows.append(
                ("conformance", policy, _ok(report.step_ok("conformance", policy)), "", what)
            )
        tv = section["trace_validation"]
        if "traces" in report.seconds:
            what = f"{tv['accepted']}/{tv['traces']} traces ({tv['steps']} steps) accepted by TLC"
            rows.append(("traces", policy, _ok(report.step_ok("traces", policy)), "", what))
        ch = section["crosshair"]
        if ch:
            what = (
                f"{ch['functions']} transitions, {ch['conditions']} conditions, "
                f"{ch['counterexamples']} counterexamples"
            )
            rows.append(("crosshair", policy, _ok(report.step_ok("crosshair", policy)), "", what))
        pl = section["planted"]
        if "planted" in report.seconds:
            must = pl["must_catch"]
            what = ", ".join(
                f"{link} {pl[f'caught_by_{link}']}/{must[link]}"
                for link in ("replay", "traces", "crosshair")
            )
            rows.append(
                ("planted", policy, _ok(report.step_ok("planted", policy)), "", f"caught by {what}")
            )
    for step in STEPS:
        if step in report.seconds:
            rows.append((step, "all", _ok(report.step_ok(step)), _s(report, step), "(step total)"))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
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
    policies = tuple(p.strip() for p in args.policy.split(",") if p.strip())
    bad = [p for p in policies if p not in PLANS]
    if bad or not policies:
        print(f"embedding-cache verify: unknown policies {bad}; choose from {tuple(PLANS)}")
        return EXIT_SETUP
    try:
        options = VerifyOptions(
            tla_dir=find_tla_dir(args.tla_dir),
            steps=steps,
            workers=args.workers,
            crosshair_timeout=args.crosshair_timeout,
            policies=policies,
            deep=args.deep,
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
        for run in report.replays:
            for m in run.report.mismatches[:5]:
                print(f"mismatch in {run.model} [{run.policy}]: {m.step}: {m.detail}")
        for trace in report.traces:
            verdict = trace.verdict
            if not verdict.accepted:
                print(
                    f"trace {trace.name} [{trace.policy}] rejected at step {verdict.matched + 1}: "
                    f"{verdict.first_rejected}"
                )
        for planted in report.planted:
            missed = [link for link in LINKS if planted.link(link) is False]
            if missed:
                print(
                    f"planted {planted.name} [{planted.policy}] missed by {missed}: {planted.notes}"
                )
        total = report.seconds.get("total", 0.0)
        print(f"\nverify: {'all checks hold' if report.ok else 'FAILED'} ({total:.0f} s)")
    return EXIT_OK if report.ok else EXIT_FAILED
