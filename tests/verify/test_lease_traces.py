"""Trace validation with leases: traces of lease calls, expiries and clock moves, recorded
from the real cache under each policy, are accepted by tla/trace/EmbeddingCacheLeaseTrace.tla;
a tampered lease state and each planted lease bug are rejected."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from embedding_cache import EVICTION_POLICIES, NotPinnedError
from embedding_cache_checker.abstraction import AbstractEntry
from embedding_cache_checker.tlc.manifest import find_tla_dir
from embedding_cache_checker.tracing import LEASE_STEPS, TracedEmbeddingCache, TraceStep
from embedding_cache_checker.verify.plans import load_plans
from embedding_cache_checker.verify.planted import by_name, for_policy
from embedding_cache_checker.verify.planted_recording import planted_recordings
from embedding_cache_checker.verify.planted_validation import validate_recordings
from embedding_cache_checker.verify.step_traces import trace_eviction
from embedding_cache_checker.verify.traces import (
    has_leases,
    trace_module,
    unit_ticks,
    validate_cache,
    validate_trace,
)
from embedding_cache_checker.verify.workloads import ManualClock, lease_trace

PLANS = load_plans(find_tla_dir())
LEASE_BUGS = ("ExpirySkipsRelease", "ReleaseAfterExpiryUnpins", "ExpireNotDue", "ExpireAtDeadline")


def _scripted() -> TracedEmbeddingCache:
    """Two leases on 'a' falling due together, a renewal, a lease-only unpin refused."""
    clock = ManualClock()
    cache = TracedEmbeddingCache(4, clock=clock)
    cache.alloc("a", 1)
    cache.mark_ready("a")
    first = cache.lease("a", 1)
    second = cache.lease("a", 2)
    assert first is not None and second is not None
    with pytest.raises(NotPinnedError):
        cache.unpin("a")  # every pin of 'a' is a lease's
    second.renew(1)
    clock.advance(3)
    assert cache.expire_leases() == ["a", "a"]
    assert not first.release()
    return cache


def test_the_recorder_writes_ticks_and_one_expire_step_per_lease() -> None:
    trace = _scripted().trace
    ops = [s.op for s in trace]
    assert ops == [
        "alloc", "mark_ready", "lease", "lease", "unpin", "renew_lease", "tick", "expire",
        "expire", "release_lease",
    ]  # fmt: skip
    assert trace[4].result == "NotPinnedError"
    first, last = trace[7], trace[8]
    assert (first.seen, last.seen) == (False, True)  # the code shows no state between
    assert (first.lease, last.lease) == (0, 1)  # by deadline (1, then the renewed 1), then id
    assert trace[6].n_blocks == 3 and trace[6].leases is not None and trace[6].leases.now == 3
    assert last.leases is not None and last.leases.held == ()
    assert last.post.entry("a") == AbstractEntry(pins=0, blocks=1)
    assert trace[-1].result == "false"


def test_a_clock_move_of_d_is_d_ticks_and_times_must_be_whole() -> None:
    trace = _scripted().trace
    expanded = unit_ticks(trace)
    ticks = [s for s in expanded if s.op == "tick"]
    assert [s.n_blocks for s in ticks] == [1, 2, 3]
    assert [s.leases.now for s in ticks if s.leases] == [1, 2, 3]
    assert len(expanded) == len(trace) + 2 and unit_ticks(expanded) == expanded
    module, config = trace_module(trace, 4)
    assert "SPECIFICATION LeaseTraceSpec" in config and "MaxTime = 3" in config
    assert "TraceLeaseIds == {-1, 0, 1}" in module and "known |-> FALSE" in module
    clock = ManualClock()
    cache = TracedEmbeddingCache(2, clock=clock)
    cache.alloc("a", 1)
    cache.mark_ready("a")
    clock.now = 0.5  # type: ignore[assignment]
    cache.lease("a", 1)
    with pytest.raises(ValueError, match="whole-number times"):
        trace_module(cache.trace, 2)


@pytest.mark.tlc
def test_the_scripted_lease_trace_is_accepted(tla_dir: Path) -> None:
    cache = _scripted()
    verdict = validate_cache(cache, tla_dir)
    assert verdict.accepted, (verdict.matched, verdict.first_rejected, verdict.detail)
    assert verdict.matched == len(unit_ticks(cache.trace))


@pytest.mark.tlc
@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
def test_lease_traces_are_accepted(tla_dir: Path, policy: str) -> None:
    cache = lease_trace(3, steps=300, eviction=trace_eviction(PLANS[policy]))
    trace = cache.trace
    assert has_leases(trace)
    seen = Counter((s.op, s.result) for s in trace if s.op in LEASE_STEPS)
    # Non-vacuous: grants, misses, renewals, refusals, expiries and clock moves all occur.
    for wanted in [("lease", "lease"), ("lease", "none"), ("renew_lease", "true"),
                   ("release_lease", "true"), ("release_lease", "false"), ("expire", "ok"),
                   ("tick", "ok")]:  # fmt: skip
        assert seen[wanted] > 0, (wanted, seen)
    verdict = validate_cache(cache, tla_dir)
    assert verdict.accepted, (verdict.matched, verdict.first_rejected, verdict.detail)
    assert verdict.matched == len(unit_ticks(trace))


@pytest.mark.tlc
def test_a_tampered_lease_state_is_rejected_exactly_there(tla_dir: Path) -> None:
    trace: list[TraceStep] = unit_ticks(_scripted().trace)
    i = next(i for i, s in enumerate(trace) if s.op == "renew_lease")
    view = trace[i].leases
    assert view is not None
    late = tuple((lid, key, deadline + 1) for lid, key, deadline in view.held)
    trace[i] = trace[i]._replace(leases=view._replace(held=late))  # a deadline one later
    verdict = validate_trace(trace, 4, tla_dir)
    assert not verdict.accepted and verdict.detail == "deadlock"
    assert verdict.matched == i, (verdict.matched, i)


#: Each planted lease bug under a policy of its own, so that every bug and every policy
#: are covered (verify runs every pair).
PAIRS = list(zip(LEASE_BUGS, EVICTION_POLICIES, strict=False))


@pytest.mark.tlc
@pytest.mark.parametrize(("bug", "policy"), PAIRS)
def test_trace_validation_catches_each_planted_lease_bug(
    tla_dir: Path, bug: str, policy: str
) -> None:
    planted = by_name(bug)
    assert planted in for_policy(policy, "traces")  # the catalogue says traces must catch it
    caught, note = validate_recordings(
        planted, PLANS[policy], planted_recordings(planted, PLANS[policy]), tla_dir
    )
    assert caught, note
    assert note.startswith("leases seed"), note
