"""Traces recorded with a planted bug in place: what the planted step's traces link
validates.

``planted_recordings`` records a bug's witness (its few calls, the last one tripping
it) and random workloads with and without leases, each as a ``Recording`` (label,
steps, pool size, alloc rule); it runs the bug's code, so the planted step runs it in
a bounded child (``bounded``). ``planted_eviction`` is the policy the bug's traces are
recorded with.
"""

from __future__ import annotations

import contextlib
from typing import Any

from embedding_cache import CacheError
from embedding_cache.policies import PolicySpec
from embedding_cache.verification import LEASE_OPERATIONS

from ..tracing import TracedEmbeddingCache, TraceStep
from .alloc_rule import AllocRule, rule_of_cache
from .plans import PolicyPlan
from .planted import PlantedBug
from .workloads import ManualClock, drive_leases, random_trace

#: Seeds of the sequential traces recorded per planted bug (stop at the first rejected),
#: and their length.
PLANTED_TRACE_SEEDS = (1, 2)
PLANTED_TRACE_STEPS = 400

#: One recorded trace: (label, its steps, the pool size and the alloc rule it was
#: recorded on).
Recording = tuple[str, list[TraceStep], int, AllocRule]


def planted_eviction(bug: PlantedBug, plan: PolicyPlan) -> PolicySpec:
    """What traces with ``bug`` under ``plan``'s policy are recorded with: the bug's own
    parameters (e.g. gdsf's small scale, where priorities tie), else the plan's. O(1)."""
    params = {k: v for k, v in plan.trace_params.items() if k not in bug.params}
    return bug.eviction(plan.policy, **params)


def _rule_keywords(bug: PlantedBug) -> dict[str, Any]:
    """The cache keywords of ``bug``'s alloc rule: its allocator, filter and contiguity."""
    return {
        "allocator": bug.allocator,
        "admission": bug.admission_spec(),
        "contiguity": bug.contiguity,
    }


def _witness_trace(bug: PlantedBug, eviction: PolicySpec) -> TracedEmbeddingCache:
    """The bug's witness calls, recorded with the bug in place from the first call."""
    cache = TracedEmbeddingCache(
        bug.witness_blocks, eviction, operations=bug.operations(), **_rule_keywords(bug)
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
    (``workloads.drive_leases``). ``planted_validation.validate_planted`` stops at the
    first rejected one, so most bugs cost a share of one short TLC run. A crash of the
    bug's code ends a lease stream; the trace so far is judged. This is the part that runs
    the bug's code (the bounded unit). O(PLANTED_TRACE_STEPS * the seeds)."""
    eviction = planted_eviction(bug, plan)
    ops = bug.operations()
    recorded: list[tuple[str, TracedEmbeddingCache]] = []
    if bug.transition not in LEASE_OPERATIONS:
        recorded.append(("witness", _witness_trace(bug, eviction)))
    recorded += [
        (
            f"seed {seed}",
            random_trace(
                seed,
                steps=PLANTED_TRACE_STEPS,
                operations=ops,
                eviction=eviction,
                **_rule_keywords(bug),
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
        (label, list(cache.trace), cache.num_blocks, rule_of_cache(cache))
        for label, cache in recorded
    ]
