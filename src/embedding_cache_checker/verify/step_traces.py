"""The main job's ``traces`` step: per policy, traces recorded from the code (sequential
with misuse, sequential with leases, and threaded) accepted by TLC against that policy's
trace spec (a trace with leases: its lease trace spec)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from embedding_cache.policies import PolicySpec

from ..tracing import TracedEmbeddingCache
from .plans import PolicyPlan
from .records import TraceRun
from .replay import policy_factory
from .traces import validate_cache
from .workloads import lease_trace, random_trace, threaded_trace

if TYPE_CHECKING:
    from .options import Job


def trace_eviction(plan: PolicyPlan) -> PolicySpec:
    """What the clean traces of ``plan``'s policy are recorded with (its ``trace_params``).
    O(1)."""
    return policy_factory(plan.policy, plan.trace_params)


def _recorders(plan: PolicyPlan) -> list[tuple[str, Callable[[], TracedEmbeddingCache]]]:
    """(name, record) of each trace of ``plan``: its sequential seeds, its lease seeds
    (the stream with leases and a moving clock), then its threaded ones."""
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
            f"leases-{s}",
            functools.partial(lease_trace, s, steps=plan.lease_steps, eviction=eviction),
        )
        for s in plan.lease_seeds
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
    return work


def run_traces(job: Job, policy: str) -> None:
    """Record ``policy``'s traces and validate each with TLC (``workers`` at a time).
    O(TLC on each trace)."""
    options = job.options

    def one(item: tuple[str, Callable[[], TracedEmbeddingCache]]) -> TraceRun:
        name, record = item
        return TraceRun(policy, name, validate_cache(record(), options.tla_dir))

    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        for run in pool.map(one, _recorders(options.plan(policy))):
            verdict = run.verdict
            said = "accepted"
            if not verdict.accepted:
                said = f"REJECTED at step {verdict.matched + 1} {verdict.detail}"
            job.progress(
                f"trace [{policy}] {run.name}: {verdict.steps} steps {said} "
                f"({verdict.seconds:.1f} s)"
            )
            job.report.traces.append(run)
