"""The main job's ``planted`` step: every planted divergence of the catalogue
(``planted``), under every policy it applies to (the shared core's bugs under all, each
policy's order-rule bugs under it), caught by the replay, by trace validation and by
CrossHair (each link that must catch it: ``PlantedBug.caught_by``).

Every run of a bug's code here (its replay; the recording of its traces) is a unit of
``bounded.run_bounded``: a child process stopped past ``PLANTED_LIMITS``, whose link
then fails with "planted bug NAME, step STEP: gave up after S s / M MB" (a bug whose
link gives up is not caught). TLC validates the recorded traces in this process, with
the real policy's spec: no code of the bug runs outside a child.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from embedding_cache import CacheError
from embedding_cache.policies import PolicySpec
from embedding_cache.verification import LEASE_OPERATIONS

from ..tracing import TracedEmbeddingCache, TraceStep
from .bounded import Limits, Outcome, Unit, run_bounded
from .crosshair_check import planted_jobs, run_crosshair
from .graph_dump import DumpedModel, dump_state_graph
from .lease_replay import replay_any_graph
from .model_code import CacheRule, code_params, policy_factory
from .plans import PolicyPlan
from .planted import PlantedBug, for_policy
from .records import LINKS, PlantedResult
from .trace_rules import TraceRule, trace_rule
from .traces import TraceVerdict, map_batches, validate_traces
from .workloads import ManualClock, drive_leases, random_trace

if TYPE_CHECKING:
    from .options import Job

#: Seeds of the sequential traces recorded per planted bug (stop at the first rejected),
#: and their length.
PLANTED_TRACE_SEEDS = (1, 2)
PLANTED_TRACE_STEPS = 400

#: How long and how much memory one bug's replay, or one bug's trace recording, may take.
#: A caught bug's replay stops early and grows the process little; a missed one replays
#: the whole graph, as the conformance step does, so the time limit leaves room for the
#: largest graph a planted bug is replayed on, on a loaded machine (docs/MEASURED.md,
#: "Planted bugs' replay limits"). A runaway is stopped at these limits, not at the
#: machine's memory.
PLANTED_LIMITS = Limits(seconds=900.0, megabytes=2048)

#: The results of one run of the step, by (policy, bug name).
Results = dict[tuple[str, str], PlantedResult]
#: One recorded trace: (label, its steps, the pool size and the alloc rule it was
#: recorded on).
Recording = tuple[str, list[TraceStep], int, TraceRule]


def planted_eviction(bug: PlantedBug, plan: PolicyPlan) -> PolicySpec:
    """What traces with ``bug`` under ``plan``'s policy are recorded with: the bug's own
    parameters (e.g. gdsf's small scale, where priorities tie), else the plan's. O(1)."""
    params = {k: v for k, v in plan.trace_params.items() if k not in bug.params}
    return bug.eviction(plan.policy, **params)


def replay_model(bug: PlantedBug, plan: PolicyPlan) -> str:
    """The model ``bug`` is replayed on under ``plan``'s policy: the planted replay input
    of the bug's rule -- its lease replay input for a bug of a lease transition
    (``lease_transitions``), its admission one for a bug run with a filter, its contiguity
    one for a bug run with contiguity -- else its planted model. O(1).

    Raises:
        ValueError: the policy has no planted replay input of the bug's rule.
    """
    if bug.transition in LEASE_OPERATIONS:
        rule, model = "lease", plan.planted_lease
    elif bug.admission is not None:
        rule, model = "admission", plan.planted_admission
    elif bug.contiguity:
        rule, model = "contiguity", plan.planted_contiguity
    else:
        return plan.planted
    if model is None:
        raise ValueError(f"{plan.policy} has no {rule} replay input for {bug.name}")
    return model


def planted_rule(bug: PlantedBug, dump: DumpedModel) -> CacheRule:
    """The alloc rule ``bug`` is replayed under on ``dump``'s graph: the model's, with the
    bug's broken filter (a bug of the filter itself) in the real one's place. O(1).

    Raises:
        ValueError: the bug runs with another filter or contiguity bound than the model.
    """
    rule = dump.rule
    if bug.admission != rule.admission or bug.contiguity != rule.contiguity:
        raise ValueError(
            f"{bug.name} runs with filter {bug.admission!r} and contiguity {bug.contiguity}, "
            f"but {dump.name} with {rule.admission!r} and {rule.contiguity}"
        )
    broken = bug.broken_admission
    return rule if broken is None else dataclasses.replace(rule, admission=broken)


def planted_replay(bug: PlantedBug, policy: str, dump: DumpedModel) -> tuple[bool, str]:
    """Replay ``dump``'s graph on the code with ``bug`` under ``policy``; caught iff some
    step mismatches. The bug runs with the model's policy parameters. Stops at the first
    mismatch. O(edges until the first mismatch)."""
    result = replay_any_graph(
        dump.graph,
        dump.keys,
        dump.num_blocks,
        dump.max_pins,
        bug.operations(),
        max_mismatches=1,
        stop_at_first=True,
        policy=bug.eviction(policy, **code_params(policy, dump.policy_params)),
        rule=planted_rule(bug, dump),
    )
    if result.mismatches:
        m = result.mismatches[0]
        return True, f"{dump.name}: {m.step}: {m.detail}"[:240]
    return False, f"{dump.name}: every edge matched"


def _rule(bug: PlantedBug) -> dict[str, Any]:
    """The cache keywords of ``bug``'s alloc rule: its allocator, filter and contiguity."""
    return {
        "allocator": bug.allocator,
        "admission": bug.admission_spec(),
        "contiguity": bug.contiguity,
    }


def _witness_trace(bug: PlantedBug, eviction: PolicySpec) -> TracedEmbeddingCache:
    """The bug's witness calls, recorded with the bug in place from the first call."""
    cache = TracedEmbeddingCache(
        bug.witness_blocks, eviction, operations=bug.operations(), **_rule(bug)
    )
    for step in bug.witness:
        op, key, *n = step
        with contextlib.suppress(CacheError):  # recorded: a refusal the spec must allow
            getattr(cache, op)(key, *n)
    return cache


def planted_recordings(bug: PlantedBug, plan: PolicyPlan) -> list[Recording]:
    """The traces recorded with ``bug`` under ``plan``'s policy: the bug's witness first
    (a few steps, the last one tripping the bug: TLC rejects it soonest; a lease bug has
    none, since its witness names leases by key and the lease streams drive every lease
    call), then random workloads of ``PLANTED_TRACE_SEEDS`` without leases and with them
    (``workloads.drive_leases``). ``validate_planted`` stops at the first rejected one,
    so most bugs cost a share of one short TLC run. A crash of the bug's code ends a lease stream;
    the trace so far is judged. This is the part that runs the bug's code (the bounded
    unit). O(PLANTED_TRACE_STEPS * the seeds)."""
    eviction = planted_eviction(bug, plan)
    ops = bug.operations()
    recorded: list[tuple[str, TracedEmbeddingCache]] = []
    if bug.transition not in LEASE_OPERATIONS:
        recorded.append(("witness", _witness_trace(bug, eviction)))
    recorded += [
        (
            f"seed {seed}",
            random_trace(
                seed, steps=PLANTED_TRACE_STEPS, operations=ops, eviction=eviction, **_rule(bug)
            ),
        )
        for seed in PLANTED_TRACE_SEEDS
    ]
    if bug.admission or bug.contiguity:  # the lease trace spec has the seed's rule only
        return _recordings(recorded)
    for seed in PLANTED_TRACE_SEEDS:
        clock = ManualClock()
        cache = TracedEmbeddingCache(6, eviction, operations=ops, clock=clock)
        with contextlib.suppress(Exception):  # the bug's own crash: judge the trace so far
            drive_leases(cache, clock, seed, PLANTED_TRACE_STEPS)
        recorded.append((f"leases seed {seed}", cache))
    return _recordings(recorded)


def _recordings(recorded: list[tuple[str, TracedEmbeddingCache]]) -> list[Recording]:
    return [
        (label, list(cache.trace), cache.num_blocks, trace_rule(cache)) for label, cache in recorded
    ]


#: One planted bug's traces to validate: the bug, its policy's plan, its recordings.
PlantedCase = tuple[PlantedBug, PolicyPlan, list[Recording]]


def _trace_params(bug: PlantedBug, plan: PolicyPlan) -> dict[str, int]:
    """The parameters of the spec ``bug``'s traces under ``plan`` are checked against: the
    real policy's, with the bug's own (a broken policy has the real one's fields and
    constants), so no code of the bug runs in TLC's check. O(1)."""
    return {**plan.trace_params, **bug.params}


def _rejected(label: str, verdict: TraceVerdict) -> str:
    step = verdict.first_rejected
    where = f"step {verdict.matched + 1}" + (
        f" {step.op}({step.key!r}) -> {step.result}" if step else ""
    )
    return f"{label}: rejected at {where}"


def _spec_key(case: PlantedCase) -> str:
    """The spec a case's traces are checked against, as a key: cases with equal keys share
    a batch. O(parameters)."""
    bug, plan, _ = case
    return repr((plan.policy, sorted(_trace_params(bug, plan).items())))


def _planted_verdict(case: PlantedCase, label: str, verdict: TraceVerdict) -> tuple[bool, str]:
    """A rejected recording's (caught, note): caught at a rejected step; any other TLC
    failure is a miss, said as an error. O(1)."""
    if verdict.detail == "deadlock":
        return True, _rejected(label, verdict)
    bug, plan, _ = case
    return False, f"error: {bug.name} [{plan.policy}] {label}: {verdict.detail}"[:300]


def validate_planted(
    cases: Sequence[PlantedCase], tla_dir: Path, workers: int = 1
) -> list[tuple[bool, str]]:
    """Each case's (caught, note): its recordings validated by TLC in rounds, round j
    checking the j-th recording of every case not caught yet, in one batch
    (``traces.validate_traces``) per spec (``_trace_params``), ``workers`` batches at a
    time. A case is caught at its first rejected recording; a TLC failure other than a
    rejected step is a miss, said as an error. The witnesses come first, so most bugs
    cost a share of one short TLC run. O(TLC on each case's recordings up to its first
    rejected one, one JVM start per round and spec)."""
    verdicts: list[tuple[bool, str] | None] = [None] * len(cases)
    for j in range(max((len(recordings) for *_, recordings in cases), default=0)):
        pending = [c for c, (*_, recs) in enumerate(cases) if verdicts[c] is None and j < len(recs)]

        def check(
            members: list[int], j: int = j, pending: list[int] = pending
        ) -> list[TraceVerdict]:
            """One batch of round j: its cases' j-th recordings, under their one spec."""
            bug, plan, _ = cases[pending[members[0]]]
            traces = [cases[pending[m]][2][j][1:] for m in members]
            return validate_traces(
                traces, tla_dir, policy_factory(plan.policy, _trace_params(bug, plan))
            )

        specs = [_spec_key(cases[c]) for c in pending]
        for c, verdict in zip(pending, map_batches(specs, check, workers), strict=True):
            if not verdict.accepted:
                verdicts[c] = _planted_verdict(cases[c], cases[c][2][j][0], verdict)
    missed = (
        False,
        f"TLC accepted the witness (a core bug's) and the traces of seeds "
        f"{PLANTED_TRACE_SEEDS}, with and without leases",
    )
    return [missed if v is None else v for v in verdicts]


def validate_recordings(
    bug: PlantedBug, plan: PolicyPlan, recordings: list[Recording], tla_dir: Path
) -> tuple[bool, str]:
    """``validate_planted`` of one bug's recordings: caught iff TLC rejects one of them.
    O(TLC on each recording until one is rejected)."""
    return validate_planted([(bug, plan, recordings)], tla_dir)[0]


def _record(outcome: PlantedResult, link: str, caught: bool, note: str) -> None:
    setattr(outcome, link, caught)
    outcome.notes.append(f"{link}: {note}")


def _settle_unit(job: Job, result: PlantedResult, link: str, done: Outcome) -> bool:
    """Record a unit that gave up or raised as ``link``'s failure; True if it did either."""
    if done.gave_up:
        _record(result, link, False, done.message)
        job.progress(done.message)
        return True
    if done.error is not None:
        _record(result, link, False, f"error: {done.error}"[:300])
        return True
    return False


def _replay_link(job: Job, results: Results, limits: Limits) -> None:
    """Each policy's replay-link bugs replayed on its planted model's graph, each in a
    bounded child (``limits``), ``workers`` at a time."""
    options, report = job.options, job.report
    units: list[tuple[PlantedResult, Unit]] = []
    for policy in options.policies:
        dumps: dict[str, DumpedModel] = {}
        for bug in for_policy(policy, "replay"):
            try:
                model = replay_model(bug, options.plan(policy))
                dump = dumps.get(model) or job.dumped.get(policy, {}).get(model)
                dump = dumps[model] = dump or dump_state_graph(
                    options.tla_dir, model, options.workers
                )
            except Exception as exc:
                report.fail(policy, "planted", f"replay model: {type(exc).__name__}: {exc}")
                break
            unit = Unit(bug.name, f"replay [{policy}]", partial(planted_replay, bug, policy, dump))
            units.append((results[(policy, bug.name)], unit))
    outcomes = run_bounded([unit for _, unit in units], limits, options.workers)
    for (result, _), done in zip(units, outcomes, strict=True):
        report.add_seconds(result.policy, "planted_replay", done.seconds)
        if not _settle_unit(job, result, "replay", done):
            _record(result, "replay", *done.value)


def _traces_link(job: Job, results: Results, limits: Limits) -> None:
    """Every (bug, policy) trace validation must catch: the traces recorded in bounded
    children (``limits``), then validated by TLC in batches (``validate_planted``)."""
    options, report = job.options, job.report
    start = time.monotonic()
    pairs = [
        (results[(policy, bug.name)], bug, options.plan(policy))
        for policy in options.policies
        for bug in for_policy(policy, "traces")
    ]
    units = [
        Unit(bug.name, f"traces [{plan.policy}]", partial(planted_recordings, bug, plan))
        for _, bug, plan in pairs
    ]
    recorded = run_bounded(units, limits, options.workers)
    validated = [
        (result, (bug, plan, done.value))
        for (result, bug, plan), done in zip(pairs, recorded, strict=True)
        if not _settle_unit(job, result, "traces", done)
    ]
    verdicts = validate_planted([case for _, case in validated], options.tla_dir, options.workers)
    for (result, _), (caught, note) in zip(validated, verdicts, strict=True):
        _record(result, "traces", caught, note)
    for (result, *_), done in zip(pairs, recorded, strict=True):
        report.add_seconds(result.policy, "planted_traces_recording", done.seconds)
    report.seconds["planted_traces"] = time.monotonic() - start


def _crosshair_link(job: Job, results: Results) -> None:
    """CrossHair on every planted bug of the chosen policies."""
    options, report = job.options, job.report
    start = time.monotonic()
    try:
        crosshair = run_crosshair(
            planted_jobs(list(options.policies)), planted=True, jobs=options.workers
        )
    except Exception as exc:
        report.fail(None, "planted", f"CrossHair: {type(exc).__name__}: {exc}")
        return
    report.seconds["planted_crosshair"] = time.monotonic() - start
    gave_up = crosshair.gave_up()
    for (policy, name), found in crosshair.caught().items():
        outcome = results[(policy, name)]
        # Budgets are paths, so a miss is a miss on any machine; a job that hit its CPU
        # cap (the safety net) is inconclusive: it fails the link too, said as such.
        outcome.crosshair = found is not None
        if found is not None:
            outcome.notes.append(f"crosshair: {found.condition} ({found.check})")
        elif (policy, name) in gave_up:
            outcome.notes.append("crosshair: gave up (a condition hit its CPU cap; not a miss)")
        else:
            outcome.notes.append("crosshair: not caught")


def _settle(job: Job, results: Results) -> None:
    """Each result's blind and not-run links noted, its line printed, and it recorded."""
    for policy in job.options.policies:
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
            job.progress(f"planted [{policy}] {bug.name}: {', '.join(marks)}")
            job.report.planted.append(outcome)


def run_planted(job: Job, limits: Limits = PLANTED_LIMITS) -> None:
    """Every planted bug of the chosen policies through each link that must catch it; the
    replay and the trace recording of each bug bounded by ``limits``."""
    results: Results = {}
    for policy in job.options.policies:
        for bug in for_policy(policy):
            results[(policy, bug.name)] = PlantedResult(bug.name, policy, bug.kind, bug.transition)
    _replay_link(job, results, limits)
    _traces_link(job, results, limits)
    _crosshair_link(job, results)
    _settle(job, results)
