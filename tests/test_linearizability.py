"""Linearizability: concurrent histories of the cache, checked against its sequential spec.

First the checker itself, on hand-made histories whose answer is known (one
that needs reordering and backtracking, ones that are not linearizable, the
late-ready reads, the memo bound, the clock readings of lease calls). Then
the real cache under every policy: 8 threads x 8 calls on 3 shared keys and
a 4-block pool, lease calls on a shared stepping clock and misuse included,
every history linearizable and the full sweep passing after each. Then
non-vacuity: each mutant (an operation split across two critical sections,
two of them lease calls, or a method without its lock) is found
non-linearizable within a bounded number of histories, under every policy.
"""

from __future__ import annotations

import random
import sys
import threading
from collections import Counter

import pytest

from embedding_cache import EVICTION_POLICIES, EmbeddingCache
from embedding_cache_checker.verify.lin import (
    MUTANTS,
    Call,
    EntryView,
    LinResult,
    Raised,
    check_calls,
    hunt,
    linearizability_report,
    random_plan,
    record_history,
)
from embedding_cache_checker.verify.lin.history import (
    LEASE_OPERATIONS,
    ForeignLease,
    LeaseArg,
    ReturnedLease,
    SteppingClock,
    overlaps,
)
from embedding_cache_checker.verify.lin.report import MUTANT_BUDGET
from embedding_cache_checker.verify.lin.spec import SequentialSpec

POLICIES = list(EVICTION_POLICIES)
#: Histories of the real cache per policy, and the most any mutant may take.
HISTORIES = 200
BUDGET = MUTANT_BUDGET


# --------------------------------------------------------------------------
# The checker on hand-made histories. Times are plain integers; a 2-block pool
# (free stack [0, 1]) so an alloc of one block takes block 1.


def test_a_linearizable_history_that_needs_reordering_and_backtracking() -> None:
    # Responses arrive pin_if_ready, mark_ready, alloc: the reverse of the only order.
    history = [
        Call(0, "alloc", ("k", 1), 0, 10, EntryView((1,), False)),
        Call(1, "mark_ready", ("k",), 1, 5, None),
        Call(2, "pin_if_ready", ("k",), 2, 3, EntryView((1,), True)),
        Call(2, "unpin", ("k",), 11, 12, None),
    ]
    verdict = check_calls(history, 2)
    assert verdict.linearizable, verdict.explain()
    assert [c.op for c in verdict.order] == ["alloc", "mark_ready", "pin_if_ready", "unpin"]
    # Earliest response first tries pin_if_ready before mark_ready (a late-ready
    # read, so not pinned); only the unpin shows that was wrong: it backtracked.
    assert verdict.configurations > len(history) + 1


def test_real_time_order_is_respected() -> None:
    alloc = Call(0, "alloc", ("k", 1), 0, 1, EntryView((1,), False))
    absent = Call(1, "mark_ready", ("k",), 2, 3, Raised("UnknownKeyError"))
    verdict = check_calls([alloc, absent], 2)
    assert verdict.linearizable is False
    assert verdict.order == (alloc,)
    assert verdict.stuck == ((absent, None),)  # the spec's mark_ready succeeds there
    assert "NOT linearizable" in verdict.explain()
    # The same outcomes with overlapping intervals: mark_ready first, then alloc.
    overlapping = Call(1, "mark_ready", ("k",), 0, 3, Raised("UnknownKeyError"))
    assert check_calls([alloc, overlapping], 2).linearizable is True


def test_outcomes_are_compared_exactly() -> None:
    wrong_blocks = Call(0, "alloc", ("k", 1), 0, 1, EntryView((0,), False))
    assert check_calls([wrong_blocks], 2).linearizable is False
    wrong_error = Call(0, "unpin", ("k",), 0, 1, Raised("NotPinnedError"))  # absent: KeyError
    assert check_calls([wrong_error], 2).linearizable is False
    count = Call(0, "len", (), 0, 1, 1)
    assert check_calls([count], 2).linearizable is False
    assert check_calls([Call(0, "len", (), 0, 1, 0)], 2).linearizable is True


def test_a_late_ready_read_needs_a_mark_ready_begun_before_it() -> None:
    alloc = Call(0, "alloc", ("k", 1), 0, 1, EntryView((1,), False))
    seen_ready = Call(1, "get", ("k",), 2, 3, EntryView((1,), True))
    # mark_ready began before get's caller read the flag: linearizable.
    racing = Call(2, "mark_ready", ("k",), 3, 6, None)
    assert check_calls([alloc, seen_ready, racing], 2).linearizable is True
    # mark_ready began after the read: the ready flag cannot have been seen.
    late = Call(2, "mark_ready", ("k",), 4, 6, None)
    assert check_calls([alloc, seen_ready, late], 2).linearizable is False
    # No mark_ready at all (the entry was discarded): not linearizable either.
    discard = Call(2, "discard", ("k",), 4, 6, None)
    assert check_calls([alloc, seen_ready, discard], 2).linearizable is False


def test_memoisation_bounds_an_exhaustive_search() -> None:
    # 6 threads x 4 queries, staggered so calls of different rounds overlap,
    # then a final call no order can explain: the search must exhaust them all.
    threads, rounds = 6, 4
    history = [
        Call(t, "has_held_entries", (), 10 * k + t, 10 * k + t + 9, False)
        for t in range(threads)
        for k in range(rounds)
    ]
    history.append(Call(threads, "len", (), 1000, 1001, 1))
    verdict = check_calls(history, 2)
    assert verdict.linearizable is False
    # One state, so at most one configuration per placed-prefix vector.
    assert len(verdict.order) < len(history) <= verdict.configurations
    assert verdict.configurations <= (rounds + 1) ** threads + 1
    # With too small a budget the verdict is undecided, not a guess.
    assert check_calls(history, 2, max_configurations=50).linearizable is None


def test_histories_whose_calls_overlap_within_a_thread_are_refused() -> None:
    a = Call(0, "len", (), 0, 5, 0)
    b = Call(0, "len", (), 3, 6, 0)
    with pytest.raises(ValueError, match="overlap"):
        check_calls([a, b], 2)


# --------------------------------------------------------------------------
# Lease calls on hand-made histories: each is replayed with the clock reading
# it made. A 2-block pool: 'k' takes block 1 and is made ready first.

READY_K = [
    Call(9, "alloc", ("k", 1), 0, 1, EntryView((1,), False)),
    Call(9, "mark_ready", ("k",), 2, 3, None, index=1),
]


def lease_history(*calls: Call) -> LinResult:
    return check_calls([*READY_K, *calls], 2)


def test_a_lease_is_replayed_at_its_reading_and_expires_lazily() -> None:
    granted = ReturnedLease("k", (1,), True, 12.5)
    lease = Call(0, "lease", ("k", 2.5), 10, 11, granted, reads=(10.0,))
    # Not due at 12.5 (due means now > deadline): the entry is still pinned.
    pinned = Call(1, "discard", ("k",), 12, 13, Raised("DiscardHeldError"), reads=(12.5,))
    # Due at 13: this call first releases it, so renewing it fails and 'k' is evictable.
    renew = Call(0, "Lease.renew", (LeaseArg(0, 0), 1.0), 14, 15, False, reads=(13.0,), index=1)
    after = Call(1, "alloc", ("j", 2), 16, 17, EntryView((0, 1), False), index=1)
    verdict = lease_history(lease, pinned, renew, after)
    assert verdict.linearizable, verdict.explain()
    # The renewal seen succeeding at 13 is not linearizable: the lease was due.
    late = Call(0, "Lease.renew", (LeaseArg(0, 0), 1.0), 14, 15, True, reads=(13.0,), index=1)
    assert lease_history(lease, late).linearizable is False
    # Seen at 12.5 it succeeds, and the release after it finds the lease held.
    early = Call(0, "renew_lease", (LeaseArg(0, 0), 1.0), 14, 15, True, reads=(12.5,), index=1)
    release = Call(0, "release_lease", (LeaseArg(0, 0),), 16, 17, True, reads=(13.0,), index=2)
    assert lease_history(lease, early, release).linearizable is True


def test_a_call_must_read_the_clock_as_the_cache_does() -> None:
    lease = Call(
        0, "lease", ("k", 5.0), 10, 11, ReturnedLease("k", (1,), True, 15.0), reads=(10.0,)
    )
    # While a lease is held every call reads the clock: one that read none cannot follow.
    silent = Call(1, "len", (), 12, 13, 1)
    assert lease_history(lease, silent).linearizable is False
    assert lease_history(lease, Call(1, "len", (), 12, 13, 1, reads=(12.0,))).linearizable
    # A lease call always reads it, once; before any lease no call does.
    assert lease_history(Call(0, "lease", ("k", 5.0), 10, 11, None)).linearizable is False
    twice = Call(
        0, "lease", ("k", 5.0), 10, 11, ReturnedLease("k", (1,), True, 15.0), reads=(9, 10)
    )
    assert lease_history(twice).linearizable is False
    assert lease_history(Call(1, "len", (), 12, 13, 1, reads=(12.0,))).linearizable is False


def test_clock_readings_rise_along_the_order() -> None:
    # Two overlapping leases, a (to 16) read 11, b (to 12.25) read 12; at 13 only b is due.
    a = Call(0, "lease", ("k", 5.0), 10, 20, ReturnedLease("k", (1,), True, 16.0), reads=(11.0,))
    b = Call(1, "lease", ("k", 0.25), 10, 20, ReturnedLease("k", (1,), True, 12.25), reads=(12.0,))
    expire = Call(2, "expire_leases", (), 30, 31, ("k",), reads=(13.0,))
    verdict = lease_history(a, b, expire)
    assert verdict.linearizable, verdict.explain()
    assert [c.thread for c in verdict.order[2:]] == [0, 1, 2]
    # A reading below one that real time placed before it: not linearizable.
    stale = Call(2, "expire_leases", (), 30, 31, (), reads=(11.5,))
    verdict = lease_history(a, b, stale)
    assert verdict.linearizable is False
    assert "below" in verdict.explain()


def test_lease_misuse_is_replayed() -> None:
    granted = ReturnedLease("k", (1,), True, 15.0)
    lease = Call(0, "lease", ("k", 5.0), 10, 11, granted, reads=(10.0,))
    foreign = Call(1, "release_lease", (ForeignLease(),), 12, 13, Raised("ForeignLeaseError"))
    not_a_lease = Call(1, "renew_lease", ("k", 1.0), 14, 15, Raised("TypeError"), index=1)
    bad = Call(0, "renew_lease", (LeaseArg(0, 0), -1.0), 16, 17, Raised("ValueError"), index=1)
    for call in (foreign, not_a_lease, bad):
        object.__setattr__(call, "reads", (float(call.invoked),))
    assert lease_history(lease, foreign, not_a_lease, bad).linearizable is True
    # A foreign lease that "released" something is not the cache's behaviour.
    wrong = Call(1, "release_lease", (ForeignLease(),), 12, 13, False, reads=(12.0,))
    assert lease_history(lease, wrong).linearizable is False


def test_the_stepping_clock_keeps_each_threads_readings() -> None:
    clock = SteppingClock(step=0.5)
    assert clock.take() == ()
    assert (clock(), clock()) == (0.5, 1.0)
    seen: list[tuple[float, ...]] = []

    def other() -> None:
        clock()
        seen.append(clock.take())

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == [(1.5,)]
    assert clock.take() == (0.5, 1.0) and clock.take() == ()


# --------------------------------------------------------------------------
# The real cache.


@pytest.mark.parametrize("policy", POLICIES)
def test_the_real_cache_is_linearizable(policy: str) -> None:
    old_interval = sys.getswitchinterval()
    calls = overlapping = configurations = 0
    outcomes: Counter[str] = Counter()
    leases: Counter[str] = Counter()
    for i in range(HISTORIES):
        plan = random_plan(random.Random(f"real/{policy}/{i}"), 8, 8, keys=3, num_blocks=4)
        clock = SteppingClock()
        history = record_history(EmbeddingCache(4, eviction=policy, clock=clock), plan, clock=clock)
        assert history.sweep_error is None  # the full invariant sweep after the run
        verdict = check_calls(history.calls, 4, policy)
        assert verdict.linearizable, verdict.explain()
        calls += verdict.calls
        configurations += verdict.configurations
        overlapping += overlaps(history.calls)[1]
        outcomes.update(
            c.outcome.error if isinstance(c.outcome, Raised) else c.op for c in history.calls
        )
        leases.update(lease_outcomes(verdict, policy))
    assert sys.getswitchinterval() == old_interval  # restored
    assert calls == HISTORIES * 64
    assert configurations >= calls
    # Non-vacuity: calls really overlapped, and misuse of every kind was exercised.
    assert overlapping > 0
    misuse = {
        "UnknownKeyError",
        "DuplicateAllocError",
        "CapacityError",
        "AlreadyReadyError",
        "NotPinnedError",
        "DiscardHeldError",
        "NotReadyError",
        "ForeignLeaseError",
        "TypeError",
        "ValueError",
    }
    assert misuse <= set(outcomes), outcomes
    # Every lease outcome happened: granted held and not ready, released and renewed
    # (and refused once ended), expired by expire_leases and lazily by another call.
    kinds = {"held", "not-ready", "released", "renewed", "ended", "expired", "lazily expired"}
    assert kinds <= set(leases), leases


def lease_outcomes(verdict: LinResult, policy: str) -> Counter[str]:
    """What the lease calls of a linearizable history did, by kind, read from the
    linearization it was checked in (replayed on the specification). O(calls)."""
    kinds: Counter[str] = Counter()
    spec = SequentialSpec(4, policy)
    node = spec.initial
    for call in verdict.order:
        live = len(node.state.leases.live)
        outcome, node = spec.step(node, call)
        if isinstance(outcome, ReturnedLease):
            kinds["held" if outcome.ready else "not-ready"] += 1
        elif call.op == "expire_leases" and outcome:
            kinds["expired"] += 1
        elif call.op in LEASE_OPERATIONS and isinstance(outcome, bool):
            verb = "released" if "release" in call.op else "renewed"
            kinds[verb if outcome else "ended"] += 1
        if "release" not in call.op and call.op != "expire_leases":
            kinds["lazily expired"] += len(node.state.leases.live) < live
    return kinds


# --------------------------------------------------------------------------
# Non-vacuity: every mutant is caught.


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_the_mutant_is_not_linearizable(mutant: str, policy: str) -> None:
    tried, found = hunt(MUTANTS[mutant], policy, budget=BUDGET)
    assert found is not None, f"{mutant} under {policy}: linearizable in all {tried} histories"
    assert found.verdict.linearizable is False
    assert found.verdict.stuck  # the witness names the calls no order can explain


def test_the_report() -> None:
    report = linearizability_report(["fifo"], histories=5, threads=8, ops_per_thread=8, seed=1)
    row = report["policies"]["fifo"]
    assert row["histories"] == row["linearizable"] == 5
    assert row["operations"] == 5 * 64
    assert row["sweep_failures"] == 0
    assert report["mutants_caught"] == report["mutants_total"] == len(MUTANTS)
    assert all(m["fifo"]["histories"] <= BUDGET for m in report["mutants"].values())
    assert report["ok"] is True
