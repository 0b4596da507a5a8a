"""The main job: every check that ties the cache to its specification, per eviction policy.

Steps, each with progress on stderr:

1. ``tlc``         -- every model of tla/models.json meets its expectation;
2. ``conformance`` -- per policy, every edge of its replay models' state graphs
                      replayed on the code running that policy (``PLANS``:
                      some in full, deep constants up to a depth);
3. ``traces``      -- per policy, traces recorded from the code (sequential
                      with misuse, and threaded) accepted by TLC against that
                      policy's trace spec;
4. ``crosshair``   -- per policy, no counterexample to any transition's contract
                      over states holding that policy;
5. ``planted``     -- every planted divergence of the catalogue (``planted``),
                      under every policy it applies to (the shared core's bugs
                      under all, each policy's order-rule bugs under it), caught
                      by the replay, by trace validation and by CrossHair (each
                      link that must catch it: ``PlantedBug.caught_by``).

The JSON report keeps one top-level summary of all policies (``tlc``,
``conformance``, ``trace_validation``, ``crosshair``, ``planted``) and adds
``policies``: the same five sections for each policy.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CacheError
from ..policies import EVICTION_POLICIES, PolicySpec, make_policy
from ..tlc.config import read_config
from ..tlc.jar import locate_jar, locate_java, tlc_version
from ..tlc.manifest import default_models, load_manifest
from ..tlc.report import run_json
from ..tlc.runner import ModelResult, run_model
from ..tracing import TracedEmbeddingCache
from .crosshair_check import CrosshairResult, clean_jobs, planted_jobs, run_crosshair
from .graph_dump import DumpedModel, dump_state_graph, manifest_entry
from .planted import PlantedBug, for_policy
from .replay import (
    ReplayReport,
    check_constants,
    code_params,
    policy_factory,
    replay_graph,
)
from .traces import TraceVerdict, validate_cache
from .workloads import random_trace, threaded_trace

#: Every step, in the order it runs.
STEPS = ("tlc", "conformance", "traces", "crosshair", "planted")

#: The links a planted bug is shown to here (``planted.LAYERS`` names).
LINKS = ("replay", "traces", "crosshair")


@dataclass(frozen=True)
class PolicyPlan:
    """What the conformance links run for one policy (sized for the 15-minute budget)."""

    #: Replay models whose whole state graph must replay with no mismatch (the first
    #: is the policy's headline).
    full_replay: tuple[str, ...]
    #: Replay models cut at a depth their config sets (the frontier is not expanded);
    #: skipped when ``VerifyOptions.deep`` is off (fifo's MCReplayDeep: 30-95 s of TLC).
    bounded_replay: tuple[str, ...] = ()
    #: The model whose graph each planted bug is replayed on (one of the above).
    planted_model: str = ""
    #: The traced policy's constructor parameters (gdsf: TLC's integers are 32-bit).
    trace_params: Mapping[str, int] = field(default_factory=dict)
    sequential_seeds: tuple[int, ...] = (1, 2, 3)
    sequential_steps: int = 1000
    threaded_seeds: tuple[int, ...] = (1, 2)
    threads: int = 4
    steps_per_thread: int = 250

    @property
    def planted(self) -> str:
        """The planted bugs' replay model."""
        return self.planted_model or self.full_replay[-1]


#: Each policy's plan. Model names: tla/README.md, "For the conformance checks".
PLANS: dict[str, PolicyPlan] = {
    "fifo": PolicyPlan(
        full_replay=("MCSmoke", "MCReplayWide"),
        bounded_replay=("MCReplayDeep",),
        planted_model="MCReplayWide",  # 3 keys: enough to tell oldest from newest
    ),
    "gdsf": PolicyPlan(
        full_replay=("MCReplayGdsf",),
        trace_params={"scale": 8, "max_freq": 3},  # ties and capped counts occur
    ),
    "s3fifo": PolicyPlan(
        full_replay=("MCReplayS3Fifo",),
    ),
}

#: Seeds of the sequential traces recorded per planted bug (stop at the first rejected),
#: and their length.
PLANTED_TRACE_SEEDS = (1, 2)
PLANTED_TRACE_STEPS = 400

Progress = Callable[[str], None]


def stderr_progress(message: str) -> None:
    """Progress lines go to stderr, so ``--json`` output stays clean."""
    print(f"[verify] {message}", file=sys.stderr, flush=True)


@dataclass
class ReplayRun:
    """One replay model's result."""

    policy: str
    model: str
    report: ReplayReport
    full: bool
    tlc_seconds: float
    seconds: float


@dataclass
class TraceRun:
    """One validated trace."""

    policy: str
    name: str
    verdict: TraceVerdict


@dataclass
class PlantedResult:
    """Which links caught one planted bug under one policy (None: the link need not)."""

    name: str
    policy: str
    kind: str  # "transition" (shared core) or "policy" (the policy's order rule)
    transition: str
    replay: bool | None = None
    traces: bool | None = None
    crosshair: bool | None = None
    notes: list[str] = field(default_factory=list)

    def link(self, name: str) -> bool | None:
        """The verdict of link ``name`` (one of ``LINKS``)."""
        value: bool | None = getattr(self, name)
        return value


@dataclass
class VerifyReport:
    """Everything the main job found."""

    policies: tuple[str, ...] = tuple(EVICTION_POLICIES)
    tlc: list[ModelResult] = field(default_factory=list)
    tlc_policy: dict[str, str | None] = field(default_factory=dict)  # model -> its policy
    tlc_jar: str = ""
    tlc_version: str = ""
    replays: list[ReplayRun] = field(default_factory=list)
    traces: list[TraceRun] = field(default_factory=list)
    crosshair: CrosshairResult | None = None
    crosshair_planted: CrosshairResult | None = None
    planted: list[PlantedResult] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    #: Per policy: wall seconds of its parts (conformance, traces, planted_replay, ...).
    policy_seconds: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    policy_errors: dict[str, list[str]] = field(default_factory=dict)

    def add_seconds(self, policy: str, part: str, seconds: float) -> None:
        """Count ``seconds`` of wall time for ``part`` of ``policy``'s checks."""
        mine = self.policy_seconds.setdefault(policy, {})
        mine[part] = mine.get(part, 0.0) + seconds

    def fail(self, policy: str | None, step: str, message: str) -> None:
        """Record an error of ``step`` (for ``policy``, or for all)."""
        text = f"{step}{f' [{policy}]' if policy else ''}: {message}"
        self.errors.append(text)
        if policy is not None:
            self.policy_errors.setdefault(policy, []).append(text)

    # ------------------------------------------------------------ verdicts

    def _tlc_of(self, policy: str | None) -> list[ModelResult]:
        if policy is None:
            return self.tlc
        return [r for r in self.tlc if self.tlc_policy.get(r.model.name) == policy]

    def _of(self, items: Iterable[Any], policy: str | None) -> list[Any]:
        return [x for x in items if policy is None or x.policy == policy]

    def step_ok(self, step: str, policy: str | None = None) -> bool | None:
        """True/False for a step that ran (for one policy, or all), None for one skipped."""
        if step not in self.seconds:
            return None
        if policy is not None and any(
            e.startswith(f"{step} [") for e in self.policy_errors.get(policy, [])
        ):
            return False
        if step == "tlc":
            results = self._tlc_of(policy)  # a policy with no model of its own fails
            return bool(results) and all(r.ok for r in results)
        if step == "conformance":
            runs: list[ReplayRun] = self._of(self.replays, policy)
            return bool(runs) and all(
                not r.report.mismatches
                and (not r.full or r.report.edges_replayed == r.report.edges_total)
                for r in runs
            )
        if step == "traces":
            traces: list[TraceRun] = self._of(self.traces, policy)
            return bool(traces) and all(t.verdict.accepted for t in traces)
        if step == "crosshair":
            if self.crosshair is None:
                return False
            mine = [d for d in self.crosshair.details if policy is None or d.policy == policy]
            return bool(mine) and all(d.outcome in ("confirmed", "unrefuted") for d in mine)
        planted: list[PlantedResult] = self._of(self.planted, policy)
        return bool(planted) and all(p.link(link) is not False for p in planted for link in LINKS)

    @property
    def ok(self) -> bool:
        """True iff every step that ran held, for every policy, and nothing errored."""
        return not self.errors and all(self.step_ok(s) is not False for s in STEPS)

    # ------------------------------------------------------------ JSON

    def _sections(self, policy: str | None) -> dict[str, Any]:
        """The five sections (tlc, conformance, trace_validation, crosshair, planted)."""
        replays: list[ReplayRun] = self._of(self.replays, policy)
        head = replays[0] if replays else None
        traces: list[TraceRun] = self._of(self.traces, policy)
        planted: list[PlantedResult] = self._of(self.planted, policy)
        tlc = self._tlc_of(policy)
        return {
            "tlc": run_json(self.tlc_jar, self.tlc_version, tlc) if self.tlc else {},
            "conformance": {
                "model": head.model if head else "",
                "edges_total": head.report.edges_total if head else 0,
                "edges_replayed": head.report.edges_replayed if head else 0,
                "mismatches": len(head.report.mismatches) if head else 0,
                "refused_calls_checked": sum(r.report.disabled_checked for r in replays),
                "models": [
                    {
                        "model": r.model,
                        "policy": r.policy,
                        "full": r.full,
                        "states": r.report.states,
                        "edges_total": r.report.edges_total,
                        "edges_replayed": r.report.edges_replayed,
                        "refused_calls_checked": r.report.disabled_checked,
                        "mismatches": len(r.report.mismatches),
                        "first_mismatches": [
                            f"{m.step}: {m.detail}"[:300] for m in r.report.mismatches[:5]
                        ],
                        "tlc_seconds": round(r.tlc_seconds, 1),
                        "replay_seconds": round(r.seconds, 1),
                    }
                    for r in replays
                ],
            },
            "trace_validation": {
                "traces": len(traces),
                "accepted": sum(t.verdict.accepted for t in traces),
                "steps": sum(t.verdict.steps for t in traces),
                "details": [
                    {
                        "trace": t.name,
                        "policy": t.policy,
                        "steps": t.verdict.steps,
                        "accepted": t.verdict.accepted,
                        "matched": t.verdict.matched,
                        "seconds": round(t.verdict.seconds, 2),
                        "detail": t.verdict.detail,
                    }
                    for t in traces
                ],
            },
            "crosshair": _crosshair_json(self.crosshair, policy),
            "planted": {
                "count": len(planted),
                **{
                    f"caught_by_{link}": sum(p.link(link) is True for p in planted)
                    for link in LINKS
                },
                "must_catch": {
                    link: sum(p.link(link) is not None for p in planted) for link in LINKS
                },
                "details": [
                    {
                        "name": p.name,
                        "policy": p.policy,
                        "kind": p.kind,
                        "transition": p.transition,
                        "replay": p.replay,
                        "traces": p.traces,
                        "crosshair": p.crosshair,
                        "notes": p.notes,
                    }
                    for p in planted
                ],
            },
        }

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object (the documented keys first)."""
        return {
            "ok": self.ok,
            **self._sections(None),
            "policies": {
                policy: {
                    "ok": all(self.step_ok(s, policy) is not False for s in STEPS)
                    and not self.policy_errors.get(policy),
                    **self._sections(policy),
                    "seconds": {
                        k: round(v, 1) for k, v in self.policy_seconds.get(policy, {}).items()
                    },
                    "errors": self.policy_errors.get(policy, []),
                }
                for policy in self.policies
            },
            "seconds": {k: round(v, 1) for k, v in self.seconds.items()},
            "errors": self.errors,
        }


def _crosshair_json(result: CrosshairResult | None, policy: str | None) -> dict[str, Any]:
    """The crosshair section: all of ``result``, or the part of one policy."""
    if result is None:
        return {}
    details = [d for d in result.details if policy is None or d.policy == policy]
    return {
        "functions": len({(d.policy, d.unit) for d in details}),
        "conditions": len(details),
        "counterexamples": sum(d.outcome == "counterexample" for d in details),
        "ok": all(d.outcome in ("confirmed", "unrefuted") for d in details),
        "cpu_seconds": round(sum(d.seconds for d in details), 1),
        "seconds": round(result.seconds, 1),  # wall-clock time of the whole run
    }


@dataclass
class VerifyOptions:
    """What to run, and how hard."""

    tla_dir: Path
    steps: tuple[str, ...] = STEPS
    workers: int = 2
    crosshair_timeout: float | None = None  # CPU s per condition (default: crosshair_check's)
    policies: tuple[str, ...] = tuple(EVICTION_POLICIES)
    deep: bool = True  # also replay the depth-bounded deep models (PolicyPlan.bounded_replay)


# ---------------------------------------------------------------- tlc


def _run_tlc(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    java, jar = locate_java(), locate_jar()
    report.tlc_jar, report.tlc_version = str(jar), tlc_version(java, jar)
    for model in default_models(load_manifest(options.tla_dir)):
        policy = manifest_entry(options.tla_dir, model.name).get("policy")
        report.tlc_policy[model.name] = str(policy) if policy else None
        result = run_model(model, options.tla_dir, java, jar, options.workers)
        verdict = "ok" if result.ok else f"FAILED ({result.note})"
        progress(f"tlc {model.name}: {result.result} in {result.seconds:.1f} s: {verdict}")
        report.tlc.append(result)


# ---------------------------------------------------------------- conformance


def _check_policy(dump: DumpedModel, policy: str, tla_dir: Path) -> None:
    """The model is a model of ``policy`` (its manifest entry says so), and the code's
    policy built from the entry's ``policy_params`` has the constants the model's config
    sets (e.g. s3fifo's derived SmallTarget).

    Raises:
        ValueError: the manifest gives the model another policy, or a constant differs.
    """
    if dump.policy != policy:
        raise ValueError(
            f"{dump.name} is a {dump.policy} model (tla/models.json), not a {policy} one"
        )
    code = make_policy(policy_factory(policy, dump.policy_params), dump.num_blocks)
    constants = read_config(tla_dir / f"{dump.name}.cfg").constants
    problem = check_constants(code, constants) or check_constants(code, dump.policy_params)
    if problem is not None:
        raise ValueError(f"{dump.name}: {problem}")


def _run_conformance(
    report: VerifyReport, options: VerifyOptions, progress: Progress, policy: str
) -> dict[str, DumpedModel]:
    plan = PLANS[policy]
    dumped: dict[str, DumpedModel] = {}
    models = [(m, True) for m in plan.full_replay]
    models += [(m, False) for m in plan.bounded_replay if options.deep]
    for name, full in models:
        dump = dump_state_graph(options.tla_dir, name, options.workers)
        _check_policy(dump, policy, options.tla_dir)
        start = time.monotonic()
        result = replay_graph(
            dump.graph,
            dump.keys,
            dump.num_blocks,
            dump.max_pins,
            policy=policy_factory(policy, dump.policy_params),
        )
        seconds = time.monotonic() - start
        if name == plan.planted:  # kept for the planted step; the others are dropped
            dumped[name] = dump
        report.replays.append(ReplayRun(policy, name, result, full, dump.tlc_seconds, seconds))
        progress(
            f"replay [{policy}] {name}: {result.edges_replayed}/{result.edges_total} edges, "
            f"{result.disabled_checked} refused calls, {len(result.mismatches)} mismatches "
            f"(TLC {dump.tlc_seconds:.1f} s, replay {seconds:.1f} s)"
        )
    return dumped


# ---------------------------------------------------------------- traces


def trace_eviction(policy: str) -> PolicySpec:
    """What the clean traces of ``policy`` are recorded with (its plan's parameters)."""
    return policy_factory(policy, PLANS[policy].trace_params)


def planted_eviction(bug: PlantedBug, policy: str) -> PolicySpec:
    """What traces with ``bug`` under ``policy`` are recorded with: the bug's own
    parameters (e.g. gdsf's small scale, where priorities tie), else the plan's."""
    params = {k: v for k, v in PLANS[policy].trace_params.items() if k not in bug.params}
    return bug.eviction(policy, **params)


def _run_traces(
    report: VerifyReport, options: VerifyOptions, progress: Progress, policy: str
) -> None:
    plan = PLANS[policy]
    eviction = trace_eviction(policy)
    work: list[tuple[str, Callable[[], TracedEmbeddingCache]]] = [
        (
            f"sequential-{s}",
            functools.partial(random_trace, s, steps=plan.sequential_steps, eviction=eviction),
        )
        for s in plan.sequential_seeds
    ]
    work += [
        (
            f"threaded-{s}",
            functools.partial(
                threaded_trace,
                s,
                threads=plan.threads,
                steps=plan.steps_per_thread,
                eviction=eviction,
            ),
        )
        for s in plan.threaded_seeds
    ]

    def one(item: tuple[str, Callable[[], TracedEmbeddingCache]]) -> TraceRun:
        name, record = item
        return TraceRun(policy, name, validate_cache(record(), options.tla_dir))

    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        for run in pool.map(one, work):
            verdict = run.verdict
            said = "accepted"
            if not verdict.accepted:
                said = f"REJECTED at step {verdict.matched + 1} {verdict.detail}"
            progress(
                f"trace [{policy}] {run.name}: {verdict.steps} steps {said} "
                f"({verdict.seconds:.1f} s)"
            )
            report.traces.append(run)


# ---------------------------------------------------------------- crosshair


def _run_crosshair(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    result = run_crosshair(
        clean_jobs(list(options.policies)), timeout=options.crosshair_timeout, jobs=options.workers
    )
    report.crosshair = result
    for line in result.summary():
        progress(f"crosshair {line}")


# ---------------------------------------------------------------- planted


def planted_replay(bug: PlantedBug, policy: str, dump: DumpedModel) -> tuple[bool, str]:
    """Replay ``dump``'s graph on the code with ``bug`` under ``policy``; caught iff some
    step mismatches. The bug runs with the model's policy parameters. Stops at the first
    mismatch."""
    result = replay_graph(
        dump.graph,
        dump.keys,
        dump.num_blocks,
        dump.max_pins,
        bug.operations(),
        max_mismatches=1,
        stop_at_first=True,
        policy=bug.eviction(policy, **code_params(policy, dump.policy_params)),
        policy_name=policy,
    )
    if result.mismatches:
        m = result.mismatches[0]
        return True, f"{dump.name}: {m.step}: {m.detail}"[:240]
    return False, f"{dump.name}: every edge matched"


def _witness_cache(bug: PlantedBug, eviction: PolicySpec) -> TracedEmbeddingCache:
    """The bug's witness calls, recorded with the bug in place from the first call."""
    cache = TracedEmbeddingCache(bug.witness_blocks, eviction, operations=bug.operations())
    for step in bug.witness:
        op, key, *n = step
        with contextlib.suppress(CacheError):  # recorded: a refusal the spec must allow
            getattr(cache, op)(key, *n)
    return cache


def planted_traces(bug: PlantedBug, policy: str, tla_dir: Path) -> tuple[bool, str]:
    """Record traces with ``bug`` under ``policy`` (random workloads, then the bug's
    witness); caught iff TLC rejects one."""
    eviction = planted_eviction(bug, policy)
    ops = bug.operations()
    attempts: list[tuple[str, Callable[[], TracedEmbeddingCache]]] = [
        (
            f"seed {seed}",
            functools.partial(
                random_trace, seed, steps=PLANTED_TRACE_STEPS, operations=ops, eviction=eviction
            ),
        )
        for seed in PLANTED_TRACE_SEEDS
    ]
    attempts.append(("witness", lambda: _witness_cache(bug, eviction)))
    for label, record in attempts:
        cache = record()
        verdict = validate_cache(cache, tla_dir)
        if verdict.accepted:
            continue
        if verdict.detail != "deadlock":
            raise RuntimeError(f"{bug.name} [{policy}] {label}: {verdict.detail}")
        step = verdict.first_rejected
        where = f"step {verdict.matched + 1}" + (
            f" {step.op}({step.key!r}) -> {step.result}" if step else ""
        )
        return True, f"{label}: rejected at {where}"
    return False, f"TLC accepted traces of seeds {PLANTED_TRACE_SEEDS} and the witness"


def _run_planted(
    report: VerifyReport,
    options: VerifyOptions,
    progress: Progress,
    dumped: dict[str, dict[str, DumpedModel]],
) -> None:
    results: dict[tuple[str, str], PlantedResult] = {}
    for policy in options.policies:
        for bug in for_policy(policy):
            results[(policy, bug.name)] = PlantedResult(bug.name, policy, bug.kind, bug.transition)

    for policy in options.policies:
        plan = PLANS[policy]
        try:
            dump = dumped.get(policy, {}).get(plan.planted) or dump_state_graph(
                options.tla_dir, plan.planted, options.workers
            )
        except Exception as exc:
            report.fail(policy, "planted", f"replay model: {type(exc).__name__}: {exc}")
            continue
        start = time.monotonic()
        for bug in for_policy(policy, "replay"):
            outcome = results[(policy, bug.name)]
            outcome.replay, note = planted_replay(bug, policy, dump)
            outcome.notes.append(f"replay: {note}")
        report.add_seconds(policy, "planted_replay", time.monotonic() - start)

    pairs = [(bug, policy) for policy in options.policies for bug in for_policy(policy, "traces")]

    def trace_one(pair: tuple[PlantedBug, str]) -> tuple[PlantedBug, str, bool, str, float]:
        bug, policy = pair
        start = time.monotonic()
        try:
            caught, note = planted_traces(bug, policy, options.tla_dir)
        except Exception as exc:
            caught, note = False, f"error: {type(exc).__name__}: {exc}"[:300]
        return bug, policy, caught, note, time.monotonic() - start

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        for bug, policy, caught, note, seconds in pool.map(trace_one, pairs):
            outcome = results[(policy, bug.name)]
            outcome.traces = caught
            outcome.notes.append(f"traces: {note}")
            report.add_seconds(policy, "planted_traces_busy", seconds)  # one of the threads
    report.seconds["planted_traces"] = time.monotonic() - start

    start = time.monotonic()
    try:
        crosshair = run_crosshair(
            planted_jobs(list(options.policies)), planted=True, jobs=options.workers
        )
    except Exception as exc:
        report.fail(None, "planted", f"CrossHair: {type(exc).__name__}: {exc}")
    else:
        report.crosshair_planted = crosshair
        report.seconds["planted_crosshair"] = time.monotonic() - start
        for (policy, name), found in crosshair.caught().items():
            outcome = results[(policy, name)]
            outcome.crosshair = found is not None
            outcome.notes.append(
                f"crosshair: {found.condition} ({found.check})"
                if found
                else "crosshair: not caught"
            )
    for policy in options.policies:
        for bug in for_policy(policy):
            outcome = results[(policy, bug.name)]
            for link in LINKS:
                if not bug.caught_by(link):
                    outcome.notes.append(f"{link}: blind ({bug.why_blind})")
                elif outcome.link(link) is None:  # must catch it, and did not run
                    setattr(outcome, link, False)
                    outcome.notes.append(f"{link}: not run")
            marks = [
                f"{link} {'-' if hit is None else 'caught' if hit else 'MISSED'}"
                for link, hit in ((link, outcome.link(link)) for link in LINKS)
            ]
            progress(f"planted [{policy}] {bug.name}: {', '.join(marks)}")
            report.planted.append(outcome)


# ---------------------------------------------------------------- the job


def run_verify(options: VerifyOptions, progress: Progress = stderr_progress) -> VerifyReport:
    """Run the selected steps; a step that crashes is reported, and the rest still run.

    Steps that run per policy report a crash for that policy and go on with the others.
    """
    report = VerifyReport(policies=options.policies)
    dumped: dict[str, dict[str, DumpedModel]] = {}
    for step in STEPS:
        if step not in options.steps:
            continue
        progress(f"--- {step}")
        start = time.monotonic()
        try:
            if step == "tlc":
                _run_tlc(report, options, progress)
            elif step == "crosshair":
                _run_crosshair(report, options, progress)
            elif step == "planted":
                _run_planted(report, options, progress, dumped)
            else:
                for policy in options.policies:
                    begin = time.monotonic()
                    try:
                        if step == "conformance":
                            dumped[policy] = _run_conformance(report, options, progress, policy)
                        else:
                            _run_traces(report, options, progress, policy)
                    except Exception as exc:
                        report.fail(policy, step, f"{type(exc).__name__}: {exc}")
                        progress(f"{step} [{policy}] failed: {type(exc).__name__}: {exc}")
                    report.add_seconds(policy, step, time.monotonic() - begin)
        except Exception as exc:  # report and go on: one broken link must not hide the others
            report.fail(None, step, f"{type(exc).__name__}: {exc}")
            progress(f"{step} failed: {type(exc).__name__}: {exc}")
        report.seconds[step] = time.monotonic() - start
    report.seconds["total"] = sum(report.seconds[s] for s in STEPS if s in report.seconds)
    return report
