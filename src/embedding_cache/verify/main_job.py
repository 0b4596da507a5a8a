"""The main job: every check that ties the cache to its specification, in one run.

Steps, each with progress on stderr:

1. ``tlc``         -- every model of tla/models.json meets its expectation;
2. ``conformance`` -- every edge of the replay models' state graphs replayed on
                      the code (MCSmoke and MCReplayWide in full, the deep
                      constants up to a depth);
3. ``traces``      -- traces recorded from the code (sequential with misuse,
                      and threaded) accepted by TLC against the spec;
4. ``crosshair``   -- no counterexample to any transition's contract;
5. ``planted``     -- every planted divergence caught by the replay, by trace
                      validation and by CrossHair.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..tlc.jar import locate_jar, locate_java, tlc_version
from ..tlc.manifest import load_manifest
from ..tlc.report import run_json
from ..tlc.runner import ModelResult, run_model
from .crosshair_check import CrosshairResult, run_crosshair
from .graph_dump import DumpedModel, dump_state_graph
from .planted_links import (
    PlantedOutcome,
    all_planted,
    check_replay,
    check_traces,
    short_name,
)
from .replay import ReplayReport, replay_graph
from .traces import TraceVerdict, validate_trace
from .workloads import random_trace, threaded_trace

#: Every step, in the order it runs.
STEPS = ("tlc", "conformance", "traces", "crosshair", "planted")

#: Models whose whole state graph must replay with no mismatch (the first is the headline).
FULL_REPLAY_MODELS = ("MCSmoke", "MCReplayWide")
#: The deep constants, replayed up to the depth its config sets.
BOUNDED_REPLAY_MODEL = "MCReplayDeep"

#: Seeds of the traces validated: sequential-with-misuse and threaded.
SEQUENTIAL_SEEDS = (1, 2, 3)
THREADED_SEEDS = (1, 2)
#: Steps of each sequential trace; threads and steps per thread of each threaded one.
SEQUENTIAL_STEPS = 1000
THREADS, STEPS_PER_THREAD = 4, 250

Progress = Callable[[str], None]


def stderr_progress(message: str) -> None:
    """Progress lines go to stderr, so ``--json`` output stays clean."""
    print(f"[verify] {message}", file=sys.stderr, flush=True)


@dataclass
class VerifyReport:
    """Everything the main job found."""

    tlc: list[ModelResult] = field(default_factory=list)
    tlc_jar: str = ""
    tlc_version: str = ""
    replays: list[tuple[str, ReplayReport, bool]] = field(
        default_factory=list
    )  # model, report, full
    traces: list[tuple[str, TraceVerdict]] = field(default_factory=list)
    crosshair: CrosshairResult | None = None
    planted: list[PlantedOutcome] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def step_ok(self, step: str) -> bool | None:
        """True/False for a step that ran, None for one that was skipped."""
        if step not in self.seconds:
            return None
        if step == "tlc":
            return bool(self.tlc) and all(r.ok for r in self.tlc)
        if step == "conformance":
            return bool(self.replays) and all(
                not r.mismatches and (not full or r.edges_replayed == r.edges_total)
                for _, r, full in self.replays
            )
        if step == "traces":
            return bool(self.traces) and all(v.accepted for _, v in self.traces)
        if step == "crosshair":
            return self.crosshair is not None and self.crosshair.ok
        return bool(self.planted) and all(
            p.caught_by_replay is not False
            and p.caught_by_traces is not False
            and p.caught_by_crosshair is not False
            for p in self.planted
        )

    @property
    def ok(self) -> bool:
        """True iff every step that ran held and nothing errored."""
        return not self.errors and all(self.step_ok(s) is not False for s in STEPS)

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object (the documented keys first)."""
        head = self.replays[0][1] if self.replays else ReplayReport()
        head_model = self.replays[0][0] if self.replays else ""
        count = len(self.planted)
        return {
            "ok": self.ok,
            "tlc": run_json(self.tlc_jar, self.tlc_version, self.tlc) if self.tlc else {},
            "conformance": {
                "model": head_model,
                "edges_total": head.edges_total,
                "edges_replayed": head.edges_replayed,
                "mismatches": len(head.mismatches),
                "models": [
                    {
                        "model": name,
                        "full": full,
                        "states": r.states,
                        "edges_total": r.edges_total,
                        "edges_replayed": r.edges_replayed,
                        "refused_calls_checked": r.disabled_checked,
                        "mismatches": len(r.mismatches),
                        "first_mismatches": [
                            f"{m.step}: {m.detail}"[:300] for m in r.mismatches[:5]
                        ],
                    }
                    for name, r, full in self.replays
                ],
            },
            "trace_validation": {
                "traces": len(self.traces),
                "accepted": sum(v.accepted for _, v in self.traces),
                "details": [
                    {
                        "trace": name,
                        "steps": v.steps,
                        "accepted": v.accepted,
                        "matched": v.matched,
                        "seconds": round(v.seconds, 2),
                        "detail": v.detail,
                    }
                    for name, v in self.traces
                ],
            },
            "crosshair": (
                {
                    "functions": self.crosshair.functions,
                    "conditions": self.crosshair.conditions,
                    "counterexamples": self.crosshair.counterexamples,
                    "ok": self.crosshair.ok,
                    "seconds": round(self.crosshair.seconds, 1),
                }
                if self.crosshair
                else {}
            ),
            "planted": {
                "count": count,
                "caught_by_replay": sum(bool(p.caught_by_replay) for p in self.planted),
                "caught_by_traces": sum(bool(p.caught_by_traces) for p in self.planted),
                "caught_by_crosshair": sum(bool(p.caught_by_crosshair) for p in self.planted),
                "details": [
                    {
                        "name": p.name,
                        "transition": p.transition,
                        "replay": p.caught_by_replay,
                        "traces": p.caught_by_traces,
                        "crosshair": p.caught_by_crosshair,
                        "notes": p.notes,
                    }
                    for p in self.planted
                ],
            },
            "seconds": {k: round(v, 1) for k, v in self.seconds.items()},
            "errors": self.errors,
        }


@dataclass
class VerifyOptions:
    """What to run, and how hard."""

    tla_dir: Path
    steps: tuple[str, ...] = STEPS
    workers: int = 2
    crosshair_timeout: float | None = None  # CPU s per condition (default: crosshair_check's)


def _run_tlc(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    java, jar = locate_java(), locate_jar()
    report.tlc_jar, report.tlc_version = str(jar), tlc_version(java, jar)
    for model in load_manifest(options.tla_dir):
        result = run_model(model, options.tla_dir, java, jar, options.workers)
        verdict = "ok" if result.ok else f"FAILED ({result.note})"
        progress(f"tlc {model.name}: {result.result} in {result.seconds:.1f} s: {verdict}")
        report.tlc.append(result)


def _replay(dumped: DumpedModel) -> ReplayReport:
    return replay_graph(dumped.graph, dumped.keys, dumped.num_blocks, dumped.max_pins)


def _run_conformance(
    report: VerifyReport, options: VerifyOptions, progress: Progress
) -> dict[str, DumpedModel]:
    dumped: dict[str, DumpedModel] = {}
    for name, full in [(m, True) for m in FULL_REPLAY_MODELS] + [(BOUNDED_REPLAY_MODEL, False)]:
        dump = dump_state_graph(options.tla_dir, name, options.workers)
        result = _replay(dump)
        dumped[name] = dump
        report.replays.append((name, result, full))
        progress(
            f"replay {name}: {result.edges_replayed}/{result.edges_total} edges, "
            f"{result.disabled_checked} refused calls, {len(result.mismatches)} mismatches "
            f"(TLC {dump.tlc_seconds:.1f} s)"
        )
    return dumped


def _run_traces(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    caches = [
        (f"sequential-{s}", random_trace(s, steps=SEQUENTIAL_STEPS)) for s in SEQUENTIAL_SEEDS
    ]
    caches += [
        (f"threaded-{s}", threaded_trace(s, threads=THREADS, steps=STEPS_PER_THREAD))
        for s in THREADED_SEEDS
    ]
    for name, cache in caches:
        verdict = validate_trace(cache.trace, cache.num_blocks, options.tla_dir)
        where = "" if verdict.accepted else f" at step {verdict.matched + 1} {verdict.detail}"
        progress(
            f"trace {name}: {verdict.steps} steps "
            f"{'accepted' if verdict.accepted else 'REJECTED' + where} ({verdict.seconds:.1f} s)"
        )
        report.traces.append((name, verdict))


def _run_crosshair(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    result = run_crosshair(timeout=options.crosshair_timeout, jobs=options.workers)
    report.crosshair = result
    for line in result.summary():
        progress(f"crosshair {line}")


def _run_planted(
    report: VerifyReport,
    options: VerifyOptions,
    progress: Progress,
    dumped: dict[str, DumpedModel],
) -> None:
    graph_model = FULL_REPLAY_MODELS[-1]  # 3 keys: enough to tell oldest from newest
    dump = dumped.get(graph_model) or dump_state_graph(options.tla_dir, graph_model)
    outcomes = {short_name(b): PlantedOutcome(short_name(b), b.transition) for b in all_planted()}
    for bug in all_planted():
        outcome = outcomes[short_name(bug)]
        caught, note = check_replay(bug, dump.graph, dump.keys, dump.num_blocks, dump.max_pins)
        outcome.caught_by_replay = caught
        outcome.notes.append(f"replay: {note}")
        caught, note = check_traces(bug, options.tla_dir)
        outcome.caught_by_traces = caught
        outcome.notes.append(f"traces: {note}")
    crosshair = run_crosshair(planted=True, jobs=options.workers)
    first = crosshair.caught()
    for bug in all_planted():
        outcome = outcomes[short_name(bug)]
        found = first.get(bug.target)
        outcome.caught_by_crosshair = found is not None
        outcome.notes.append(
            f"crosshair: {found.condition} ({found.check})" if found else "crosshair: not caught"
        )
    for outcome in outcomes.values():
        marks = [
            f"{link} {'caught' if hit else 'MISSED'}"
            for link, hit in (
                ("replay", outcome.caught_by_replay),
                ("traces", outcome.caught_by_traces),
                ("crosshair", outcome.caught_by_crosshair),
            )
        ]
        progress(f"planted {outcome.name}: {', '.join(marks)}")
        report.planted.append(outcome)


def run_verify(options: VerifyOptions, progress: Progress = stderr_progress) -> VerifyReport:
    """Run the selected steps; a step that crashes is reported, and the rest still run."""
    report = VerifyReport()
    dumped: dict[str, DumpedModel] = {}
    for step in STEPS:
        if step not in options.steps:
            continue
        progress(f"--- {step}")
        start = time.monotonic()
        try:
            if step == "tlc":
                _run_tlc(report, options, progress)
            elif step == "conformance":
                dumped = _run_conformance(report, options, progress)
            elif step == "traces":
                _run_traces(report, options, progress)
            elif step == "crosshair":
                _run_crosshair(report, options, progress)
            else:
                _run_planted(report, options, progress, dumped)
        except Exception as exc:  # report and go on: one broken link must not hide the others
            report.errors.append(f"{step}: {type(exc).__name__}: {exc}")
            progress(f"{step} failed: {type(exc).__name__}: {exc}")
        report.seconds[step] = time.monotonic() - start
    return report
