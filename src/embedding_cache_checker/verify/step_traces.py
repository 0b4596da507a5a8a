"""The main job's ``traces`` step: per policy, traces recorded from the code (sequential
with misuse, sequential with leases, and threaded) accepted by TLC against that policy's
trace spec (a trace with leases: its lease trace spec), checked in batches."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from embedding_cache.policies import PolicySpec

from ..tracing import TracedEmbeddingCache
from .alloc_rule import rule_of_cache
from .model_code import policy_factory
from .plans import PolicyPlan
from .records import TraceRun
from .traces import validate_traces
from .workloads import lease_trace, random_trace, threaded_trace

if TYPE_CHECKING:
    from .options import Job


#: The alloc rules the clean traces are also recorded under, by trace name: the cache
#: keywords of each (``EmbeddingCache``), on 8 blocks: contiguity acts only on an alloc
#: whose free blocks lie in pieces after its needed victims, which a smaller pool made
#: too rare in some policy's stream, and 8 blocks make early in every one
#: (docs/MEASURED.md, "The rule traces' pool"). The last is both at once (spec/SPEC.md
#: section 14.1).
RULE_TRACES: dict[str, dict[str, Any]] = {
    "admission": {"num_blocks": 8, "admission": "doorkeeper"},
    "contiguity": {"num_blocks": 8, "allocator": "extents", "contiguity": 2},
    "admission-contiguity": {
        "num_blocks": 8,
        "admission": "doorkeeper",
        "allocator": "extents",
        "contiguity": 2,
    },
}


def trace_eviction(plan: PolicyPlan) -> PolicySpec:
    """What the clean traces of ``plan``'s policy are recorded with (its ``trace_params``).
    O(1)."""
    return policy_factory(plan.policy, plan.trace_params)


def _recorders(plan: PolicyPlan) -> list[tuple[str, Callable[[], TracedEmbeddingCache]]]:
    """(name, record) of each trace of ``plan``: its sequential seeds, its lease seeds
    (the stream with leases and a moving clock), its first sequential seed under each
    alloc rule (``RULE_TRACES``: the doorkeeper, contiguity, both), then its threaded
    ones."""
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
    # The alloc rules (spec/SPEC.md sections 13 and 14), each on the first sequential
    # seed: the doorkeeper, contiguity 2 on the extents allocator, and both at once.
    first = plan.sequential_seeds[:1]
    work += [
        (
            f"{name}-{s}",
            functools.partial(
                random_trace, s, steps=plan.sequential_steps, eviction=eviction, **rule
            ),
        )
        for name, rule in RULE_TRACES.items()
        for s in first
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
    """Record ``policy``'s traces, then validate them with TLC in batches (one run per
    pool size and kind: ``traces.validate_traces``), ``workers`` runs at a time.
    O(TLC on each trace, one JVM start per batch)."""
    options = job.options
    recorded = [(name, record()) for name, record in _recorders(options.plan(policy))]
    verdicts = validate_traces(
        [(cache.trace, cache.num_blocks, rule_of_cache(cache)) for _, cache in recorded],
        options.tla_dir,
        trace_eviction(options.plan(policy)),
        workers=options.workers,
    )
    for (name, _), verdict in zip(recorded, verdicts, strict=True):
        said = "accepted"
        if not verdict.accepted:
            said = f"REJECTED at step {verdict.matched + 1} {verdict.detail}"
        job.progress(
            f"trace [{policy}] {name}: {verdict.steps} steps {said} "
            f"(its batch: {verdict.seconds:.1f} s)"
        )
        job.report.traces.append(TraceRun(policy, name, verdict))
