"""The main job's ``planted`` step: every planted divergence of the catalogue
(``planted``), under every policy it applies to (the shared core's bugs under all, each
policy's order-rule bugs under it), caught by the replay, by trace validation and by
CrossHair (each link that must catch it: ``PlantedBug.caught_by``)."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from embedding_cache.errors import CacheError
from embedding_cache.policies import PolicySpec

from ..tracing import TracedEmbeddingCache
from .crosshair_check import planted_jobs, run_crosshair
from .graph_dump import DumpedModel, dump_state_graph
from .plans import PolicyPlan
from .planted import PlantedBug, for_policy
from .records import LINKS, PlantedResult
from .replay import code_params, replay_graph
from .traces import validate_cache
from .workloads import random_trace

if TYPE_CHECKING:
    from .options import Job

#: Seeds of the sequential traces recorded per planted bug (stop at the first rejected),
#: and their length.
PLANTED_TRACE_SEEDS = (1, 2)
PLANTED_TRACE_STEPS = 400

#: The results of one run of the step, by (policy, bug name).
Results = dict[tuple[str, str], PlantedResult]


def planted_eviction(bug: PlantedBug, plan: PolicyPlan) -> PolicySpec:
    """What traces with ``bug`` under ``plan``'s policy are recorded with: the bug's own
    parameters (e.g. gdsf's small scale, where priorities tie), else the plan's. O(1)."""
    params = {k: v for k, v in plan.trace_params.items() if k not in bug.params}
    return bug.eviction(plan.policy, **params)


def planted_replay(bug: PlantedBug, policy: str, dump: DumpedModel) -> tuple[bool, str]:
    """Replay ``dump``'s graph on the code with ``bug`` under ``policy``; caught iff some
    step mismatches. The bug runs with the model's policy parameters. Stops at the first
    mismatch. O(edges until the first mismatch)."""
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
    witness); caught iff TLC rejects one. O(TLC on each trace until one is rejected)."""
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


def _replay_link(job: Job, results: Results) -> None:
    """Each policy's replay-link bugs replayed on its planted model's graph."""
    options, report = job.options, job.report
    for policy in options.policies:
        try:
            plan = options.plan(policy)
            dump = job.dumped.get(policy, {}).get(plan.planted) or dump_state_graph(
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


def _traces_link(job: Job, results: Results) -> None:
    """Every (bug, policy) trace validation must catch, ``workers`` at a time."""
    options, report = job.options, job.report
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
    for (policy, name), found in crosshair.caught().items():
        outcome = results[(policy, name)]
        outcome.crosshair = found is not None
        outcome.notes.append(
            f"crosshair: {found.condition} ({found.check})" if found else "crosshair: not caught"
        )


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


def run_planted(job: Job) -> None:
    """Every planted bug of the chosen policies through each link that must catch it."""
    results: Results = {}
    for policy in job.options.policies:
        for bug in for_policy(policy):
            results[(policy, bug.name)] = PlantedResult(bug.name, policy, bug.kind, bug.transition)
    _replay_link(job, results)
    _traces_link(job, results)
    _crosshair_link(job, results)
    _settle(job, results)
