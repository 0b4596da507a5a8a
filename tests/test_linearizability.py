"""Linearizability: concurrent histories of the cache, checked against its sequential spec.

First the checker itself, on hand-made histories whose answer is known (one
that needs reordering and backtracking, ones that are not linearizable, the
late-ready reads, the memo bound). Then the real cache under every policy:
8 threads x 8 calls on 3 shared keys and a 4-block pool, misuse included,
every history linearizable and the full sweep passing after each. Then
non-vacuity: each mutant (an operation split across two critical sections,
or a method without its lock) is found non-linearizable within a bounded
number of histories, under every policy.
"""

from __future__ import annotations

import random
import sys
from collections import Counter

import pytest

from embedding_cache import EVICTION_POLICIES, EmbeddingCache
from embedding_cache_checker.verify.lin import (
    MUTANTS,
    Call,
    EntryView,
    Raised,
    check_calls,
    hunt,
    linearizability_report,
    random_plan,
    record_history,
)
from embedding_cache_checker.verify.lin.history import overlaps

POLICIES = list(EVICTION_POLICIES)
#: Histories of the real cache per policy, and the most any mutant may take.
HISTORIES = 200
BUDGET = 200


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
# The real cache.


@pytest.mark.parametrize("policy", POLICIES)
def test_the_real_cache_is_linearizable(policy: str) -> None:
    old_interval = sys.getswitchinterval()
    calls = overlapping = configurations = 0
    outcomes: Counter[str] = Counter()
    for i in range(HISTORIES):
        plan = random_plan(random.Random(f"real/{policy}/{i}"), 8, 8, keys=3, num_blocks=4)
        history = record_history(EmbeddingCache(4, eviction=policy), plan)
        assert history.sweep_error is None  # the full invariant sweep after the run
        verdict = check_calls(history.calls, 4, policy)
        assert verdict.linearizable, verdict.explain()
        calls += verdict.calls
        configurations += verdict.configurations
        overlapping += overlaps(history.calls)[1]
        outcomes.update(
            c.outcome.error if isinstance(c.outcome, Raised) else c.op for c in history.calls
        )
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
    }
    assert misuse <= set(outcomes), outcomes


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
