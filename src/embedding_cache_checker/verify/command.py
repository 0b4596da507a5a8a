"""The ``embedding-cache verify`` subcommand: the project's main job.

``--profile`` chooses how hard it checks (``profile.PROFILES``: ``ci``, the
default, or ``nightly``); ``--json-out`` writes the JSON report to a file (the
nightly profile does by default); ``--compare OLD.json`` prints how this run
differs from an earlier report and fails on a regression (``compare``), and
with ``--against NEW.json`` compares two reports without running anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from embedding_cache.policies import EVICTION_POLICIES

from ..text_table import render_table  # the project's one table renderer
from ..tlc.command import EXIT_FAILED, EXIT_OK, EXIT_SETUP  # one meaning for every subcommand
from ..tlc.jar import TlcSetupError
from ..tlc.manifest import ManifestError, find_tla_dir
from .compare import Comparison, compare
from .crosshair_budget import PATHS_PER_SECOND
from .lin import format_report
from .main_job import CI_STEPS, LINKS, STEPS, VerifyOptions, VerifyReport, run_verify
from .plans import load_plans
from .profile import CI, NIGHTLY, PROFILES, Profile, get_profile
from .report_json import report_json
from .verdicts import run_ok, step_ok


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``verify`` with the CLI's subparsers."""
    parser = subparsers.add_parser(
        "verify",
        help="run every check that ties the code to the spec (the main job)",
        description=(
            "Run the TLC models; then, for each eviction policy, replay its models' state "
            "graphs on the code, validate recorded traces with TLC, run CrossHair on the "
            "transitions, check that every planted bug is caught by each link, and check "
            "concurrent histories for linearizability. --profile nightly checks deeper and "
            "longer and adds the stateful tests, simulation and the big models. Exits 0 "
            "only if everything holds (and, with --compare, nothing regressed)."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--profile",
        default="ci",
        choices=sorted(PROFILES),
        help=(
            "how hard to check: ci (the default; its run time: "
            'docs/MEASURED.md, "embedding-cache verify (the ci profile)") or nightly '
            "(deeper replay, longer CrossHair, thorough Hypothesis, simulation, big models "
            "distributed, more linearizability histories)"
        ),
    )
    parser.add_argument(
        "--only",
        default=None,
        help=(
            f"comma-separated steps to run (default: all of the profile's; ci: "
            f"{','.join(CI_STEPS)}; nightly adds {','.join(s for s in STEPS if s not in CI_STEPS)})"
        ),
    )
    parser.add_argument(
        "--json-out",
        default=None,
        metavar="PATH",
        help="also write the JSON report to PATH (nightly default: verify-nightly.json)",
    )
    parser.add_argument(
        "--compare",
        default=None,
        metavar="OLD.json",
        help="print how this run differs from an earlier JSON report; exit 1 on a regression",
    )
    parser.add_argument(
        "--against",
        default=None,
        metavar="NEW.json",
        help="with --compare: compare OLD.json with this report instead of running anything",
    )
    parser.add_argument(
        "--distributed",
        type=int,
        default=None,
        metavar="K",
        help=(
            "check the big models (manifest default_run false) on distributed TLC with K "
            "local workers (nightly default: 2; 0: skip them)"
        ),
    )
    parser.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="TLC/CrossHair workers"
    )
    parser.add_argument(
        "--crosshair-timeout",
        type=float,
        default=None,
        help=(
            f"CrossHair's budget per condition, in CPU seconds at {PATHS_PER_SECOND} paths "
            f"a second: it is run as that fixed number of paths, so the verdict does not "
            f"depend on the machine's load (default: the profile's; ci "
            f"{CI.crosshair_timeout:g}, nightly {NIGHTLY.crosshair_timeout:g})"
        ),
    )
    parser.add_argument(
        "--policy",
        default=None,
        help=(
            f"comma-separated eviction policies (default: all of "
            f"{','.join(EVICTION_POLICIES)}); a quick run of them unless --full: their own "
            f"TLC models, not the shared layers', the large ones nor the deep replay"
        ),
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help=(
            "with --policy: check what a run of every policy checks for them: the shared "
            "layers' TLC models too (the core's, and the protocol, liveness and shared-bug "
            "models fifo stands in for), the large models (MCLarge) and the deep replay "
            "(MCReplayDeep)"
        ),
    )
    parser.add_argument(
        "--no-deep",
        dest="deep",
        action="store_false",
        help=(
            "skip the depth-bounded deep replay models (fifo's MCReplayDeep; what it costs: "
            "docs/MEASURED.md)"
        ),
    )
    parser.add_argument(
        "--sequential",
        dest="lanes",
        action="store_false",
        help=(
            "run the steps one after another, not in two lanes beside each other "
            "(main_job.LANES): each step's seconds are then its own"
        ),
    )
    parser.add_argument("--tla-dir", default=None, help="the directory holding models.json")
    parser.set_defaults(func=run_command)


def _table(report: VerifyReport) -> str:
    """One row per step and policy: result, seconds (the step's, all policies) and figures."""
    data = report_json(report)
    rows: list[list[str]] = []

    def row(step: str, policy: str | None, what: str, seconds: str = "") -> None:
        rows.append([step, policy or "all", _ok(step_ok(report, step, policy)), seconds, what])

    if "tlc" in report.seconds:
        row(
            "tlc",
            None,
            f"{sum(r.ok for r in report.tlc)}/{len(report.tlc)} models met their expectation",
            _s(report, "tlc"),
        )
    for policy, section in data["policies"].items():
        for step, what in _policy_rows(report, section):
            row(step, policy, what)
    if "stateful" in report.seconds and report.stateful is not None:
        run = report.stateful
        row(
            "stateful",
            None,
            f"{run.passed} passed, {run.failed} failed ({run.target}, "
            f"Hypothesis profile {run.hypothesis_profile})",
        )
    for sim in report.simulations:
        row(
            "simulate",
            sim.base.policy,
            f"{sim.name}: {sim.result}, {sim.traces:,} traces, "
            f"{sim.states:,} states, {sim.seconds:.0f} s",
        )
    for big in report.big_models:
        states = big.result.output.distinct_states or 0
        row(
            "distributed",
            big.policy,
            f"{big.result.model.name} ({big.mode}, {big.workers} "
            f"workers): {big.result.result}, {states:,} states, {big.result.seconds:.0f} s"
            + (
                f" ({len(big.unchecked_properties)} properties not checked distributed)"
                if big.unchecked_properties
                else ""
            ),
        )
    for step in STEPS:
        if step in report.seconds:
            row(step, None, "(step total)", _s(report, step))
    return render_table(["step", "policy", "result", "seconds", "what was checked"], rows, {3})


def _policy_rows(report: VerifyReport, section: dict[str, Any]) -> list[tuple[str, str]]:
    """(step, what was checked) of each table row of one policy's sections."""
    rows: list[tuple[str, str]] = []

    def row(step: str, what: str) -> None:
        rows.append((step, what))

    if "tlc" in report.seconds:
        models = section["tlc"].get("models", [])
        row("tlc", f"{sum(m['ok'] for m in models)}/{len(models)} of its own models")
    for model in section["conformance"]["models"]:
        depth = model.get("depth_bound")
        cut = "" if model["full"] else f" (depth {depth})" if depth else " (depth-bounded)"
        if model.get("block_exact"):
            cut += f" (block-exact: {model['states_reached']}/{model['states']} states reached)"
        row(
            "conformance",
            f"{model['model']}: {model['edges_replayed']}/"
            f"{model['edges_total']} edges{cut}, {model['refused_calls_checked']} refused calls, "
            f"{model['mismatches']} mismatches",
        )
    tv = section["trace_validation"]
    if "traces" in report.seconds:
        row(
            "traces",
            f"{tv['accepted']}/{tv['traces']} traces ({tv['steps']} steps) accepted by TLC",
        )
    ch = section["crosshair"]
    if ch:
        row(
            "crosshair",
            f"{ch['functions']} transitions, {ch['conditions']} conditions, "
            f"{ch['counterexamples']} counterexamples",
        )
    pl = section["planted"]
    if "planted" in report.seconds:
        must = pl["must_catch"]
        caught = ", ".join(f"{link} {pl[f'caught_by_{link}']}/{must[link]}" for link in LINKS)
        row("planted", f"caught by {caught}")
    lin = section["linearizability"]
    if lin:
        row(
            "linearizability",
            f"{lin['linearizable']}/{lin['histories']} histories "
            f"({lin['operations']} calls, {lin['lease_calls']} on leases) linearizable, "
            f"mutants caught {lin['mutants_caught']}/{lin['mutants_total']}",
        )
    return rows


def _ok(value: bool | None) -> str:
    return "skipped" if value is None else ("ok" if value else "FAILED")


def _s(report: VerifyReport, step: str) -> str:
    return f"{report.seconds[step]:.1f}" if step in report.seconds else "-"


def _profile(args: argparse.Namespace) -> Profile:
    """The chosen profile, with the command line's overrides."""
    profile = get_profile(args.profile)
    if args.distributed is not None:
        profile = dataclasses.replace(profile, distributed_workers=args.distributed)
    return profile


def _load(path: str) -> dict[str, Any]:
    """A JSON report written by ``verify --json`` / ``--json-out``.

    Raises:
        ValueError: the file is missing, not JSON, or not one JSON object.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read report {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a verify report (not a JSON object)")
    return data


def _compare_files(old: str, new: str, as_json: bool) -> int:
    """``--compare OLD --against NEW``: compare two reports; exit 1 on a regression."""
    try:
        comparison = compare(_load(old), _load(new))
    except ValueError as exc:
        print(f"embedding-cache verify: {exc}")
        return EXIT_SETUP
    _print_comparison(comparison, old, as_json)
    return EXIT_OK if comparison.ok else EXIT_FAILED


def _print_comparison(comparison: Comparison, old: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps(comparison.to_json(), indent=2))
    else:
        print(f"\ncompared with {old}:")
        print(comparison.render())


class _RefusedError(Exception):
    """The command line asks for something the command cannot do (the message says what)."""


def _steps(args: argparse.Namespace, profile: Profile) -> tuple[str, ...]:
    """The steps ``--only`` chooses (default: the profile's).

    Raises:
        _RefusedError: an unknown step, or one the profile does not run.
    """
    offered = CI_STEPS + profile.extra_steps
    if args.only is None:
        return offered
    steps = tuple(s.strip() for s in args.only.split(",") if s.strip())
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise _RefusedError(f"unknown steps {unknown}; choose from {STEPS}")
    absent = [s for s in steps if s not in offered]
    if absent:
        raise _RefusedError(
            f"the {profile.name} profile does not run {absent} "
            f"(its steps: {offered}; try --profile nightly)"
        )
    return steps


def _policies(args: argparse.Namespace) -> tuple[str, ...]:
    """The policies ``--policy`` chooses, each one of ``EVICTION_POLICIES``.

    Raises:
        _RefusedError: none, or one the registry does not have.
    """
    if args.policy is None:
        return tuple(EVICTION_POLICIES)
    policies = tuple(p.strip() for p in args.policy.split(",") if p.strip())
    bad = [p for p in policies if p not in EVICTION_POLICIES]
    if bad or not policies:
        raise _RefusedError(f"unknown policies {bad}; choose from {tuple(EVICTION_POLICIES)}")
    return policies


def _options(args: argparse.Namespace, profile: Profile) -> VerifyOptions:
    """The run's options; every chosen policy's plan is read here, so a policy the
    manifest lacks parts of is named before anything runs.

    Raises:
        _RefusedError: as ``_steps`` and ``_policies``, or the manifest or TLC is not usable.
    """
    steps, policies = _steps(args, profile), _policies(args)
    full = args.policy is None or args.full
    try:
        tla_dir = find_tla_dir(args.tla_dir)
        load_plans(tla_dir, policies)
    except (ManifestError, TlcSetupError, ValueError) as exc:
        raise _RefusedError(str(exc)) from exc
    return VerifyOptions(
        tla_dir=tla_dir,
        steps=steps,
        workers=args.workers,
        crosshair_timeout=args.crosshair_timeout,
        policies=policies,
        deep=args.deep and full,
        profile=profile,
        full=full,
        lanes=args.lanes,
    )


def _emit(report: VerifyReport, args: argparse.Namespace, old: dict[str, Any] | None) -> int:
    """Write, print and compare the report; the exit status."""
    data = report_json(report)
    json_out = args.json_out if args.json_out is not None else report.profile.json_out
    if json_out:
        Path(json_out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    comparison = None if old is None else compare(old, data)
    if args.json:
        if comparison is not None:
            data = {**data, "comparison": comparison.to_json()}
        print(json.dumps(data, indent=2))
    else:
        _print_failures(report)
        if comparison is not None:
            _print_comparison(comparison, args.compare, as_json=False)
        total = report.seconds.get("total", 0.0)
        where = f"; report written to {json_out}" if json_out else ""
        print(
            f"\nverify: {'all checks hold' if run_ok(report) else 'FAILED'} ({total:.0f} s{where})"
        )
    regressed = comparison is not None and not comparison.ok
    return EXIT_OK if run_ok(report) and not regressed else EXIT_FAILED


def run_command(args: argparse.Namespace) -> int:
    """Run the main job; exit 0 only if every selected step holds (and, with
    ``--compare``, nothing regressed)."""
    if args.against is not None:
        if args.compare is None:
            print("embedding-cache verify: --against needs --compare OLD.json")
            return EXIT_SETUP
        return _compare_files(args.compare, args.against, args.json)
    try:
        options = _options(args, _profile(args))
        old = None if args.compare is None else _load(args.compare)
    except (_RefusedError, ValueError) as exc:
        print(f"embedding-cache verify: {exc}")
        return EXIT_SETUP
    return _emit(run_verify(options), args, old)


def _print_failures(report: VerifyReport) -> None:
    """The table, then what went wrong, in detail."""
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
            print(f"planted {planted.name} [{planted.policy}] missed by {missed}: {planted.notes}")
    for policy, lin in report.linearizability.items():
        if not lin["ok"]:
            print(f"linearizability [{policy}]:")
            print(format_report(lin))
    if report.stateful is not None and not report.stateful.ok:
        print(f"stateful tests failed:\n{report.stateful.tail}")
