"""The ``embedding-cache tlc`` subcommand: check the manifest's models."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from .cluster import DEFAULT_PORT, DistributedError
from .counterexample import explain_failure
from .distributed import run_distributed
from .inductive import inductive_models, inductive_table
from .jar import TlcSetupError, locate_jar, locate_java, tlc_version
from .manifest import ManifestError, Model, find_tla_dir, load_manifest, select_models
from .process import LineSink
from .report import failure_report, results_table, run_json
from .repro_writer import reproduce
from .runner import ModelResult, run_model
from .shapes import DEFAULT_DEPTH, PRODUCTION
from .simulate import can_simulate, run_simulation
from .sweep import SweepError, sweep, sweep_table

#: Exit codes: all models met expectations / some did not / could not run.
EXIT_OK, EXIT_FAILED, EXIT_SETUP = 0, 1, 2


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``tlc`` with the CLI's subparsers."""
    parser = subparsers.add_parser(
        "tlc",
        help="model-check the TLA+ specification with TLC",
        description=(
            "Run the models listed in tla/models.json with TLC (its default run when none "
            "are named) and "
            "check that each meets its expectation: 'pass', or the named invariant or "
            "property reported violated. Exits 0 only if every model does."
        ),
    )
    parser.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help=_selectors_help(),
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="TLC worker threads (default: number of CPUs)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object with every result on stdout",
    )
    parser.add_argument(
        "--tla-dir",
        default=None,
        help="the directory holding models.json (default: the repo's tla/)",
    )
    parser.add_argument("--list", action="store_true", help="list the manifest's models and exit")
    parser.add_argument(
        "--print",
        action="store_true",
        dest="print_models",
        help="print each named model's root module and config, as TLC reads them, and exit "
        "(a policy's models are generated under tla/generated/, which is not in git)",
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="size each named bug model: check it at 1..3 keys x 1..3 blocks and report "
        "the smallest shape that still shows its violation, with the counterexample's "
        "steps (spec/POLICIES.md section 6)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="do not relay TLC's progress to stderr"
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="relay all of TLC's output to stderr, not just progress",
    )
    parser.add_argument(
        "--distributed",
        type=int,
        default=None,
        metavar="K",
        help=(
            "check with TLC's distributed mode: a server and K local workers on loopback "
            "(K=0: workers join from other machines with embedding-cache tlc-worker); "
            "TLC 2.15 checks invariants only there (PROPERTIES are listed as unchecked)"
        ),
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help="distributed: the server's RMI port",
    )
    parser.add_argument(
        "--hostname",
        default="127.0.0.1",
        help="distributed: the server's address as workers reach it (java.rmi.server.hostname)",
    )
    parser.add_argument(
        "--simulate",
        action="store_true",
        help=(
            f"random simulation at production shape ({PRODUCTION.keys} keys, "
            f"{PRODUCTION.blocks} blocks, pin depth {PRODUCTION.max_pins}, {PRODUCTION.level} "
            "level) of each selected model's config; every invariant and action property "
            "(a bug model that needs a rare interleaving gets the smaller shape its "
            "manifest entry's 'simulation' sets)"
        ),
    )
    parser.add_argument(
        "--depth", type=int, default=DEFAULT_DEPTH, help="simulate: behaviour length"
    )
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="simulate: time budget per model"
    )
    parser.add_argument("--seed", type=int, default=1, help="simulate: first seed")
    parser.add_argument(
        "--repro",
        metavar="DIR",
        default=None,
        help=(
            "write each named failing model's counterexample into DIR as a standalone pytest "
            "file (test_MODEL.py) that replays it on the code with the model's policy, checking "
            "every invariant and property after each step; set EMBEDDING_CACHE_REPRO_BUG to a "
            "planted bug's name (or 'linked') to run it on that bug"
        ),
    )
    parser.add_argument(
        "--engine-trace",
        nargs="?",
        const="",
        default=None,
        metavar="SCHEDULERS",
        help=(
            "record runs of vLLM 0.33's real scheduler (needs vllm==0.33.0) and check each "
            "with TLC: its cache calls against the cache's spec, and the engine's events "
            "with those calls against the protocol model (tla/protocol/); print each "
            "verdict: accepted, or rejected with the property and the step. SCHEDULERS, "
            "comma-separated: vllm (vLLM's ECCPUScheduler on the project's cache), plugin, "
            "or a planted bug of the plugin (save-for-hit, early-release); default "
            "vllm,plugin"
        ),
    )
    parser.add_argument(
        "--inductive",
        nargs="?",
        const="",
        default=None,
        metavar="POLICY",
        help=(
            "show each layer's invariants inductive at small bounds: for the core, and for "
            "POLICY (default: every policy) with its ghosts, leases, admission and "
            "contiguity, TLC starts from every state of TypeOK /\\ Inv, takes one step and "
            "checks Inv again; the planted non-inductive invariant must be caught "
            "(spec/SPEC.md section 15)"
        ),
    )
    parser.add_argument(
        "--engine-seed", type=int, default=None, help="engine-trace: the stream's seed"
    )
    parser.add_argument(
        "--engine-steps", type=int, default=None, help="engine-trace: the scheduler steps"
    )
    parser.set_defaults(func=run_command)


def _selectors_help() -> str:
    """The MODEL argument's help: the tags and policies of the repository's manifest,
    read when the parser is built (so a policy or tag added there is listed without
    an edit here); without a readable manifest, the same sentence without the lists.
    O(manifest size)."""
    try:
        models = load_manifest(find_tla_dir())
    except ManifestError:
        return "model names, tags or policies of tla/models.json (default: its default run)"
    policies = sorted({m.policy for m in models if m.policy})
    tags = sorted({t for m in models for t in m.tags} - set(policies))
    return (
        f"model names, tags ({', '.join(tags)}) or policies ({', '.join(policies)}) of "
        "tla/models.json (default: its default run; --list shows it)"
    )


def _list(models: list[Model]) -> None:
    """``tlc --list``: one line per model of the selection."""
    for m in models:
        print(
            f"{m.name:32} {m.policy or '-':7} {m.expect:30} {m.budget_seconds:>6g} s  "
            f"{m.description}{f': {m.defect}' if m.defect else ''}"
        )


def model_files(models: Sequence[Model], tla_dir: Path) -> str:
    """``tlc --print``: each model's root module and config, each under a line naming
    its path in ``tla_dir``. O(the files' size)."""
    parts = []
    for model in models:
        for file in (model.spec, model.config):
            text = (tla_dir / file).read_text(encoding="utf-8")
            parts.append(f"==> {model.name}: {tla_dir.name}/{file} <==\n{text}")
    return "\n".join(parts)


def _show(args: argparse.Namespace, models: list[Model], tla_dir: Path) -> int:
    """``tlc --list`` or ``tlc --print``: show the selection without running TLC."""
    if args.list:
        _list(models)
        return EXIT_OK
    if not args.models:
        print("embedding-cache tlc --print: name the models to print", file=sys.stderr)
        return EXIT_SETUP
    print(model_files(models, tla_dir), end="")
    return EXIT_OK


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
    if args.engine_trace is not None:
        return _engine_trace(args, tla_dir)
    if args.inductive is not None:
        models = _inductive(args.inductive, tla_dir)
        if not models:
            return EXIT_SETUP
    if args.list or args.print_models:
        return _show(args, models, tla_dir)
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
    if args.repro is not None:
        return _repro(args, models, tla_dir, java, jar, sink)
    if args.sweep:
        return _sweep(models, tla_dir, java, jar)
    if args.simulate:
        return _simulate(args, models, tla_dir, java, jar, sink)
    if args.distributed is not None:
        return _distributed(args, models, tla_dir, java, jar, sink)
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
    _print_results(
        args, tla_dir, f"TLC {version} ({jar})", run_json(str(jar), version, results), results
    )
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILED


def _inductive(policy: str, tla_dir: Path) -> list[Model]:
    """``tlc --inductive [POLICY]``'s models: the core's and POLICY's (every policy's
    when empty); none, said on stderr, when POLICY has none. O(models)."""
    models = inductive_models(load_manifest(tla_dir), policy or None)
    if policy and not any(m.policy == policy for m in models):
        print(f"embedding-cache tlc: no policy {policy!r}", file=sys.stderr)
        return []
    return models


def _print_results(
    args: argparse.Namespace,
    tla_dir: Path,
    banner: str,
    as_json: dict[str, Any],
    results: list[ModelResult],
) -> None:
    """The plain check's JSON, or its banner and table: with ``--inductive``, the one
    that adds each model's initial states (``inductive.inductive_table``). O(results)."""
    if args.json:
        print(json.dumps(as_json, indent=2))
        return
    print(banner)
    print(inductive_table(results) if args.inductive is not None else results_table(results))
    for result in results:
        if not result.ok:
            print()
            print(failure_report(result, tla_dir))
    print(f"\n{sum(r.ok for r in results)}/{len(results)} models met their expectation.")


def _sweep(models: list[Model], tla_dir: Path, java: Path, jar: Path) -> int:
    """``tlc --sweep``: each bug model's table of shapes and its smallest one."""
    for model in models:
        try:
            results = sweep(model, tla_dir, java, jar)
        except SweepError as exc:
            print(f"embedding-cache tlc --sweep: {model.name}: {exc}", file=sys.stderr)
            return EXIT_SETUP
        print(sweep_table(model, results))
        print()
    return EXIT_OK


def _engine_trace(args: argparse.Namespace, tla_dir: Path) -> int:
    """``tlc --engine-trace``: record each named scheduler's run and check its traces."""
    from ..engine import VllmMissingError
    from ..verify import engine_traces as et

    names = [n.strip() for n in args.engine_trace.split(",") if n.strip()]
    names = names or list(et.DEFAULT_SCHEDULERS)
    known = [*et.SCHEDULERS, *et.LOOP_TRACES]
    unknown = [n for n in names if n not in known]
    if unknown:
        print(
            f"embedding-cache tlc --engine-trace: unknown {unknown}; the schedulers "
            f"are {', '.join(known)}",
            file=sys.stderr,
        )
        return EXIT_SETUP
    settings, stream = et.ENGINE_TRACE
    if args.engine_seed is not None:
        stream = dataclasses.replace(stream, seed=args.engine_seed)
    if args.engine_steps is not None:
        stream = dataclasses.replace(stream, steps=args.engine_steps)
    try:
        verdicts = et.check_engine_traces(names, tla_dir, settings, stream)
    except (VllmMissingError, TlcSetupError) as exc:
        print(f"embedding-cache tlc --engine-trace: {exc}", file=sys.stderr)
        return EXIT_SETUP
    if args.json:
        print(json.dumps({"mode": "engine-trace", "traces": [v.to_json() for v in verdicts]}))
    else:
        print(et.describe(settings, stream))
        for v in verdicts:
            print("\n".join(v.lines()))
    return EXIT_OK if all(v.ok for v in verdicts) else EXIT_FAILED


class _Reported(Protocol):
    """A mode's result per model: what ``--json`` prints."""

    def to_json(self) -> dict[str, Any]: ...


def _print_json(mode: str, results: Sequence[_Reported]) -> None:
    """``--json`` of a mode other than the plain check: its name and each model's result."""
    print(json.dumps({"mode": mode, "models": [r.to_json() for r in results]}, indent=2))


def _simulate(
    args: argparse.Namespace,
    models: list[Model],
    tla_dir: Path,
    java: Path,
    jar: Path,
    sink: LineSink | None,
) -> int:
    """``tlc --simulate``: simulate each selected model's config at its plan's shape.

    Liveness models are left out, saying so: their properties need fairness
    over infinite behaviours, and their configs name each key, so they do not
    scale (``simulate.can_simulate``).
    """
    for m in models:
        if not can_simulate(m):
            print(
                f"embedding-cache tlc --simulate: {m.name} not simulated (a liveness model)",
                file=sys.stderr,
            )
    models = [m for m in models if can_simulate(m)]
    sims = [
        run_simulation(
            m,
            tla_dir,
            depth=args.depth,
            seconds=args.seconds,
            seed=args.seed,
            java=java,
            jar=jar,
            on_line=sink,
        )
        for m in models
    ]
    if args.json:
        _print_json("simulate", sims)
    else:
        for s in sims:
            print(
                f"{s.name:36} {s.base.expect:30} {s.result:30} traces {s.traces:>6,} "
                f"states {s.states:>10,} {s.seconds:7.1f} s  {'ok' if s.ok else 'FAIL ' + s.note}"
            )
            if not s.ok and s.raw_output and (text := explain_failure(s.raw_output, [tla_dir])):
                print(text)
    return EXIT_OK if all(s.ok for s in sims) else EXIT_FAILED


def _repro(
    args: argparse.Namespace,
    models: list[Model],
    tla_dir: Path,
    java: Path,
    jar: Path,
    sink: LineSink | None,
) -> int:
    """``tlc --repro DIR MODEL..``: each named model's counterexample as a pytest file."""
    if not args.models:
        print("embedding-cache tlc: --repro needs the MODEL(s) to reproduce", file=sys.stderr)
        return EXIT_SETUP
    directory = Path(args.repro)
    results = []
    for m in models:
        result = reproduce(
            m, tla_dir, directory, java=java, jar=jar, workers=args.workers, on_line=sink
        )
        results.append(result)
        if not args.json:
            print(result.line(), flush=True)
    if args.json:
        _print_json("repro", results)
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILED


def _distributed(
    args: argparse.Namespace,
    models: list[Model],
    tla_dir: Path,
    java: Path,
    jar: Path,
    sink: LineSink | None,
) -> int:
    """``tlc --distributed K``: check each selected model with a server and K workers."""
    runs = []
    for m in models:
        try:
            runs.append(
                run_distributed(
                    m,
                    tla_dir,
                    workers=args.distributed,
                    port=args.port,
                    hostname=args.hostname,
                    java=java,
                    jar=jar,
                    on_line=sink,
                )
            )
        except DistributedError as exc:
            print(f"embedding-cache tlc: {m.name}: {exc}", file=sys.stderr)
            return EXIT_SETUP
    if args.json:
        _print_json("distributed", runs)
    else:
        print(results_table([r.result for r in runs]))
        for r in runs:
            if r.unchecked_properties:
                print(
                    f"{r.result.model.name}: not checked distributed: "
                    f"{', '.join(r.unchecked_properties)}"
                )
            if not r.result.ok:
                print(failure_report(r.result, tla_dir))
    return EXIT_OK if all(r.result.ok for r in runs) else EXIT_FAILED
