"""The main job: every check that ties the cache to its specification, per eviction policy.

Steps, each with progress on stderr:

1. ``tlc``         -- every model of tla/models.json of the chosen policies and of
                      the shared core (``policy`` null) meets its expectation;
2. ``conformance`` -- per policy, every edge of its replay models' state graphs
                      replayed on the code running that policy (its plan,
                      ``plans.plan_for``, from tla/models.json: some in full,
                      deep constants up to a depth);
3. ``traces``      -- per policy, traces recorded from the code (sequential
                      with misuse, and threaded) accepted by TLC against that
                      policy's trace spec;
4. ``crosshair``   -- per policy, no counterexample to any transition's contract
                      over states holding that policy;
5. ``planted``     -- every planted divergence of the catalogue (``planted``),
                      under every policy it applies to (the shared core's bugs
                      under all, each policy's order-rule bugs under it), caught
                      by the replay, by trace validation and by CrossHair (each
                      link that must catch it: ``PlantedBug.caught_by``);
6. ``linearizability`` -- per policy, concurrent histories of the real cache
                      linearizable, and every non-linearizable mutant (``lin``)
                      caught.

How hard each step checks is the run's ``profile`` (``profile.Profile``: ``ci``
or ``nightly``). The nightly profile also runs (``extra_steps``):

7. ``stateful``    -- the Hypothesis state machines under a heavier settings profile;
8. ``simulate``    -- TLC simulation at production shape of every policy (and the
                      bug models);
9. ``distributed`` -- the manifest's big models (``default_run`` false) on
                      distributed TLC with local workers.

The JSON report keeps one top-level summary of all policies (``tlc``,
``conformance``, ``trace_validation``, ``crosshair``, ``planted``,
``linearizability``) and adds ``policies``: the same sections for each policy,
plus the extra steps' sections, ``steps`` (each step's verdict and seconds)
and ``profile`` (its settings).
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

from embedding_cache.errors import CacheError
from embedding_cache.policies import EVICTION_POLICIES, PolicySpec, make_policy

from ..tlc.config import read_config
from ..tlc.distributed import DistributedError
from ..tlc.jar import locate_jar, locate_java, tlc_version
from ..tlc.manifest import Model, default_models, load_manifest
from ..tlc.report import run_json
from ..tlc.runner import ModelResult, run_model
from ..tlc.simulate import SimulationResult
from ..tracing import TracedEmbeddingCache
from .config_override import overridden_tla_dir
from .crosshair_check import CrosshairResult, clean_jobs, planted_jobs, run_crosshair
from .graph_dump import DumpedModel, dump_state_graph
from .lin import linearizability_report
from .plans import PolicyPlan, plan_for
from .planted import PlantedBug, for_policy
from .profile import CI, Profile
from .replay import (
    ReplayReport,
    check_constants,
    code_params,
    policy_factory,
    replay_graph,
)
from .stateful_step import STATEFUL_TESTS, PytestRun, run_pytest
from .tlc_steps import (
    BigModelRun,
    big_models,
    policy_simulations,
    run_big_model,
    run_bug_simulations,
    run_simulations,
)
from .traces import TraceVerdict, validate_cache
from .workloads import random_trace, threaded_trace

#: The steps every profile runs, in the order they run.
CI_STEPS = ("tlc", "conformance", "traces", "crosshair", "planted", "linearizability")
#: The steps a profile may add (``Profile.extra_steps``), in the order they run.
EXTRA_STEPS = ("stateful", "simulate", "distributed")
#: Every step, in the order it runs.
STEPS = CI_STEPS + EXTRA_STEPS

#: The links a planted bug is shown to here (``planted.LAYERS`` names).
LINKS = ("replay", "traces", "crosshair")


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
    #: The ``ReplayDepth`` the graph was cut at (None: the config sets none).
    depth_bound: int | None = None
    #: True when the profile replaced the config's depth bound.
    depth_overridden: bool = False


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
    #: Per policy: ``lin.linearizability_report`` of that policy alone.
    linearizability: dict[str, dict[str, Any]] = field(default_factory=dict)
    stateful: PytestRun | None = None
    simulations: list[SimulationResult] = field(default_factory=list)
    big_models: list[BigModelRun] = field(default_factory=list)
    profile: Profile = CI
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
        if step == "planted":
            planted: list[PlantedResult] = self._of(self.planted, policy)
            return bool(planted) and all(
                p.link(link) is not False for p in planted for link in LINKS
            )
        if step == "linearizability":
            lin = [r for p, r in self.linearizability.items() if policy in (None, p)]
            return bool(lin) and all(r["ok"] for r in lin)
        return self._extra_ok(step, policy)

    def _extra_ok(self, step: str, policy: str | None) -> bool | None:
        """The verdict of an extra step (``EXTRA_STEPS``) that ran. Per policy: None when
        the step has nothing of that policy's (the stateful tests are not split by policy;
        a big model may be the core's)."""
        verdicts: list[bool]
        if step == "stateful":
            if policy is not None:
                return None
            return self.stateful is not None and self.stateful.ok
        if step == "simulate":
            verdicts = [simulated(s) for s in self.simulations if policy in (None, s.base.policy)]
            if policy is None:
                return bool(verdicts) and all(verdicts)
        else:  # distributed: no big model at all is no failure (the manifest may have none)
            verdicts = [b.result.ok for b in self.big_models if policy in (None, b.policy)]
            if policy is None:
                return all(verdicts)
        return all(verdicts) if verdicts else None

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
                        "depth_bound": r.depth_bound,
                        "depth_overridden": r.depth_overridden,
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
            "linearizability": _lin_json(self.linearizability, policy),
        }

    def _extra_sections(self, policy: str | None) -> dict[str, Any]:
        """The sections of the extra steps that ran (for one policy: its own results)."""
        out: dict[str, Any] = {}
        if "stateful" in self.seconds and policy is None:
            out["stateful"] = self.stateful.to_json() if self.stateful is not None else {}
        if "simulate" in self.seconds:
            sims = [s for s in self.simulations if policy in (None, s.base.policy)]
            out["simulate"] = {
                "ok": all(simulated(s) for s in sims),
                "traces": sum(s.traces for s in sims),
                "states": sum(s.states for s in sims),
                "models": [{**s.to_json(), "ok": simulated(s)} for s in sims],
            }
        if "distributed" in self.seconds:
            runs = [b for b in self.big_models if policy in (None, b.policy)]
            out["distributed"] = {
                "ok": all(b.result.ok for b in runs),
                "workers": self.profile.distributed_workers,
                "models": [b.to_json() for b in runs],
            }
        return out

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object (the documented keys first)."""
        return {
            "ok": self.ok,
            **self._sections(None),
            **self._extra_sections(None),
            "policies": {
                policy: {
                    "ok": all(self.step_ok(s, policy) is not False for s in STEPS)
                    and not self.policy_errors.get(policy),
                    **self._sections(policy),
                    **self._extra_sections(policy),
                    "seconds": {
                        k: round(v, 1) for k, v in self.policy_seconds.get(policy, {}).items()
                    },
                    "errors": self.policy_errors.get(policy, []),
                }
                for policy in self.policies
            },
            "steps": {
                step: {"ok": self.step_ok(step), "seconds": round(self.seconds[step], 1)}
                for step in STEPS
                if step in self.seconds
            },
            "profile": self.profile.to_json(),
            "seconds": {k: round(v, 1) for k, v in self.seconds.items()},
            "errors": self.errors,
        }


def simulated(result: SimulationResult) -> bool:
    """The simulation met its expectation, and checked something: a pass with no
    finished trace (e.g. a budget shorter than TLC's start-up) is no evidence."""
    return result.ok and (result.traces > 0 or result.seconds_to_violation is not None)


#: The per-history counts of a linearizability report that add up over policies.
_LIN_COUNTS = ("histories", "operations", "linearizable", "not_linearizable", "undecided")


def _lin_json(reports: Mapping[str, Mapping[str, Any]], policy: str | None) -> dict[str, Any]:
    """The linearizability section: all policies' reports summed, or one policy's.

    ``mutants`` gives, per mutant, whether it was caught under every policy counted
    and the histories that took; ``seconds`` counts the real histories and the hunts.
    """
    mine = {p: r for p, r in reports.items() if policy in (None, p)}
    if not mine:
        return {}
    rows = [r["policies"][p] for p, r in mine.items()]
    mutants: dict[str, dict[str, Any]] = {}
    hunt_seconds = 0.0
    for p, r in mine.items():
        for name, per in r["mutants"].items():
            entry = mutants.setdefault(name, {"caught": True, "histories": 0})
            entry["caught"] = entry["caught"] and per[p]["caught"]
            entry["histories"] += per[p]["histories"]
            hunt_seconds += per[p]["seconds"]
    witness = next((row["witness"] for row in rows if row["witness"]), None)
    return {
        **{key: sum(row[key] for row in rows) for key in _LIN_COUNTS},
        "sweep_failures": sum(row["sweep_failures"] for row in rows),
        "mutants_caught": sum(m["caught"] for m in mutants.values()),
        "mutants_total": len(mutants),
        "mutants": mutants,
        "ok": all(r["ok"] for r in mine.values()),
        "seconds": round(sum(row["seconds"] for row in rows) + hunt_seconds, 1),
        **({"witness": str(witness)[:2000]} if witness else {}),
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
    steps: tuple[str, ...] = STEPS  # of the profile's steps, the ones that run
    workers: int = 2
    #: CPU s per CrossHair condition (default: the profile's, else crosshair_check's).
    crosshair_timeout: float | None = None
    policies: tuple[str, ...] = tuple(EVICTION_POLICIES)
    deep: bool = True  # also replay the depth-bounded deep models (PolicyPlan.bounded_replay)
    profile: Profile = CI

    @property
    def selected_steps(self) -> tuple[str, ...]:
        """The steps that run: the profile's (``CI_STEPS`` + its extras) among ``steps``."""
        return tuple(s for s in CI_STEPS + self.profile.extra_steps if s in self.steps)

    def plan(self, policy: str) -> PolicyPlan:
        """``policy``'s plan, from the manifest in ``tla_dir`` (``plans.plan_for``). O(entries).

        Raises:
            PlanError: the manifest lacks a part of the plan (named in the message).
        """
        return plan_for(policy, self.tla_dir)

    @property
    def project_root(self) -> Path:
        """The repository root (the parent of tla/): where tests/ is."""
        return self.tla_dir.resolve().parent


#: Seconds the dump of a model cut deeper than its config may take (TLC is killed then).
DEEP_DUMP_TIMEOUT = 3600.0
#: Seconds the stateful tests may take under the profile's settings.
STATEFUL_TIMEOUT = 3600.0


# ---------------------------------------------------------------- tlc


def tlc_models(models: Iterable[Model], policies: Iterable[str]) -> list[Model]:
    """The models of the default run that check ``policies``: the shared core's (``policy``
    null) and those of the chosen policies, in manifest order. O(models)."""
    chosen = set(policies)
    return [m for m in default_models(list(models)) if m.policy is None or m.policy in chosen]


def _run_tlc(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    java, jar = locate_java(), locate_jar()
    report.tlc_jar, report.tlc_version = str(jar), tlc_version(java, jar)
    for model in tlc_models(load_manifest(options.tla_dir), options.policies):
        report.tlc_policy[model.name] = model.policy
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


def config_depth(tla_dir: Path, model: str) -> int | None:
    """The ``ReplayDepth`` ``model``'s config sets (None: it sets none). O(config size)."""
    value = read_config(tla_dir / f"{model}.cfg").constants.get("ReplayDepth", "")
    return int(value) if value.strip().isdigit() else None


def _dump(
    options: VerifyOptions, policy: str, name: str, full: bool
) -> tuple[DumpedModel, int | None]:
    """Dump ``name``'s state graph, a bounded model cut at the profile's depth if it sets
    one, and check it is a model of ``policy``; (dump, the depth bound it was cut at)."""
    depth = None if full else options.profile.replay_depth
    if depth is None:
        dump = dump_state_graph(options.tla_dir, name, options.workers)
        _check_policy(dump, policy, options.tla_dir)
        return dump, config_depth(options.tla_dir, name)
    with overridden_tla_dir(options.tla_dir, name, {"ReplayDepth": str(depth)}) as tla_dir:
        dump = dump_state_graph(tla_dir, name, options.workers, timeout=DEEP_DUMP_TIMEOUT)
        _check_policy(dump, policy, tla_dir)
    return dump, depth


def _run_conformance(
    report: VerifyReport, options: VerifyOptions, progress: Progress, policy: str
) -> dict[str, DumpedModel]:
    plan = options.plan(policy)
    dumped: dict[str, DumpedModel] = {}
    for name, full in plan.replayed:
        if not full and not options.deep:
            continue
        dump, depth = _dump(options, policy, name, full)
        overridden = not full and options.profile.replay_depth is not None
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
        report.replays.append(
            ReplayRun(policy, name, result, full, dump.tlc_seconds, seconds, depth, overridden)
        )
        cut = "" if depth is None else f" (depth {depth}{', profile' if overridden else ''})"
        progress(
            f"replay [{policy}] {name}{cut}: {result.edges_replayed}/{result.edges_total} edges, "
            f"{result.disabled_checked} refused calls, {len(result.mismatches)} mismatches "
            f"(TLC {dump.tlc_seconds:.1f} s, replay {seconds:.1f} s)"
        )
    return dumped


# ---------------------------------------------------------------- traces


def trace_eviction(plan: PolicyPlan) -> PolicySpec:
    """What the clean traces of ``plan``'s policy are recorded with (its ``trace_params``)."""
    return policy_factory(plan.policy, plan.trace_params)


def planted_eviction(bug: PlantedBug, plan: PolicyPlan) -> PolicySpec:
    """What traces with ``bug`` under ``plan``'s policy are recorded with: the bug's own
    parameters (e.g. gdsf's small scale, where priorities tie), else the plan's."""
    params = {k: v for k, v in plan.trace_params.items() if k not in bug.params}
    return bug.eviction(plan.policy, **params)


def _run_traces(
    report: VerifyReport, options: VerifyOptions, progress: Progress, policy: str
) -> None:
    plan = options.plan(policy)
    eviction = trace_eviction(plan)
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
    timeout = options.crosshair_timeout
    if timeout is None:
        timeout = options.profile.crosshair_timeout
    result = run_crosshair(
        clean_jobs(list(options.policies)), timeout=timeout, jobs=options.workers
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


def planted_traces(bug: PlantedBug, plan: PolicyPlan, tla_dir: Path) -> tuple[bool, str]:
    """Record traces with ``bug`` under ``plan``'s policy (random workloads, then the bug's
    witness); caught iff TLC rejects one."""
    policy = plan.policy
    eviction = planted_eviction(bug, plan)
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
        try:
            plan = options.plan(policy)
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
            caught, note = planted_traces(bug, options.plan(policy), options.tla_dir)
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


# ---------------------------------------------------------------- linearizability


def _run_linearizability(
    report: VerifyReport, options: VerifyOptions, progress: Progress, policy: str
) -> None:
    """The profile's number of histories of the real cache, and every mutant hunted."""
    profile = options.profile
    result = linearizability_report(
        [policy], histories=profile.lin_histories, mutant_budget=profile.lin_mutant_budget
    )
    report.linearizability[policy] = result
    row = result["policies"][policy]
    hunts = ", ".join(
        f"{name} {'caught' if per[policy]['caught'] else 'MISSED'} after {per[policy]['histories']}"
        for name, per in result["mutants"].items()
    )
    progress(
        f"linearizability [{policy}] {row['linearizable']}/{row['histories']} histories "
        f"({row['operations']} calls) linearizable in {row['seconds']:.1f} s; mutants: {hunts}"
    )


# ---------------------------------------------------------------- the extra steps


def _run_stateful(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    """The Hypothesis state machines under the profile's settings profile."""
    hypothesis_profile = options.profile.hypothesis_profile or "ci"
    run = run_pytest(
        STATEFUL_TESTS, options.project_root, hypothesis_profile, timeout=STATEFUL_TIMEOUT
    )
    report.stateful = run
    progress(
        f"stateful ({hypothesis_profile}): {run.passed} passed, {run.failed} failed, "
        f"{run.errors} errors in {run.seconds:.1f} s: {'ok' if run.ok else 'FAILED'}"
    )


def _run_simulate(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    """Each policy's main model at production shape; then the bug models, if asked."""
    profile = options.profile
    models = load_manifest(options.tla_dir)
    java, jar = locate_java(), locate_jar()
    report.simulations += run_simulations(
        policy_simulations(models, options.policies),
        options.tla_dir,
        profile.simulate_seconds,
        progress,
        java=java,
        jar=jar,
    )
    if profile.simulate_bugs:
        report.simulations += run_bug_simulations(
            models,
            options.tla_dir,
            options.policies,
            profile.simulate_bug_seconds,
            progress,
            java=java,
            jar=jar,
        )


def _run_distributed(report: VerifyReport, options: VerifyOptions, progress: Progress) -> None:
    """The big models (none is fine), each on distributed TLC with the profile's workers."""
    workers = options.profile.distributed_workers
    models = [
        m
        for m in big_models(load_manifest(options.tla_dir))
        if m.policy is None or m.policy in options.policies
    ]
    if not models:
        progress("distributed: the manifest has no big model (default_run false)")
        return
    java, jar = locate_java(), locate_jar()
    for model in models:
        try:
            run = run_big_model(
                model, options.tla_dir, workers, threads=options.workers, java=java, jar=jar
            )
        except DistributedError as exc:
            report.fail(model.policy, "distributed", f"{model.name}: {exc}")
            progress(f"distributed {model.name} failed: {exc}")
            continue
        result = run.result
        verdict = "ok" if result.ok else f"FAILED ({result.note})"
        progress(
            f"distributed {model.name} ({run.mode}, {run.workers} workers): {result.result}, "
            f"{result.output.distinct_states or 0:,} states in {result.seconds:.1f} s: {verdict}"
        )
        report.big_models.append(run)


#: The step runners that run once for all policies.
_GLOBAL_STEPS: dict[str, Callable[[VerifyReport, VerifyOptions, Progress], None]] = {
    "tlc": _run_tlc,
    "crosshair": _run_crosshair,
    "stateful": _run_stateful,
    "simulate": _run_simulate,
    "distributed": _run_distributed,
}


# ---------------------------------------------------------------- the job


def run_verify(options: VerifyOptions, progress: Progress = stderr_progress) -> VerifyReport:
    """Run the selected steps; a step that crashes is reported, and the rest still run.

    Steps that run per policy report a crash for that policy and go on with the others.
    """
    report = VerifyReport(policies=options.policies, profile=options.profile)
    dumped: dict[str, dict[str, DumpedModel]] = {}
    for step in options.selected_steps:
        progress(f"--- {step}")
        start = time.monotonic()
        try:
            if step in _GLOBAL_STEPS:
                _GLOBAL_STEPS[step](report, options, progress)
            elif step == "planted":
                _run_planted(report, options, progress, dumped)
            else:
                for policy in options.policies:
                    begin = time.monotonic()
                    try:
                        if step == "conformance":
                            dumped[policy] = _run_conformance(report, options, progress, policy)
                        elif step == "traces":
                            _run_traces(report, options, progress, policy)
                        else:
                            _run_linearizability(report, options, progress, policy)
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
