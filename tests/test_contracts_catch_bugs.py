"""Non-vacuity: every verification layer catches a planted bug, naming what broke.

1. Contracts (checked builds only; the build matrix runs this module there):
   a realistic bug is planted in a copy of one transition's body, the copy is
   wrapped in that operation's own contract (``contracts.<op>_contract``, the
   very decorator ``transitions`` applies) and swapped in for the real one;
   the cache's next call must raise ``icontract.ViolationError`` whose
   description is the invariant or property the bug breaks.
2. The full sweep (every build): a corrupted state makes ``check`` raise
   ``InvariantViolationError`` naming the broken invariant; in the full build
   the next transition's pre-sweep rejects it too.
3. The stateful model and the seed differential (every build): each planted
   cache in planted_bugs.py is caught by the state machine, and the stream
   differential finds a stream on which it differs from the seed.
"""

from __future__ import annotations

from collections.abc import Callable

import icontract
import pytest
from cache_observe import put_not_ready, put_pinned, put_ready
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test
from oracle.seed_reference import EmbeddingCache as SeedCache
from planted_bugs import (
    PLANTED,
    DiscardLeaksBlocks,
    EvictNewestFirst,
    PinIfReadyForgetsToPin,
    UnpinRequeuesAtHead,
)
from test_seed_differential import MAX_POOL, OPS, Op, drain, run_stream
from test_stateful import CacheMachine

import embedding_cache
from embedding_cache import (
    CacheEntry,
    EmbeddingCache,
    InvariantViolationError,
    contracts,
    invariants,
    transitions,
)
from embedding_cache.state import CacheState

checked_only = pytest.mark.skipif(
    not embedding_cache.CHECKED, reason="contracts exist only in the checked builds"
)


def violated(exc: BaseException) -> str:
    """The description (invariant or property name) of an icontract violation."""
    assert isinstance(exc, icontract.ViolationError), repr(exc)
    # icontract's message: "File ..., line N in ...:\n<description>: <condition>:\n..."
    return str(exc).splitlines()[1].split(":")[0]


# ---------------------------------------------------------------- 1. planted bodies


def _take(s: CacheState, n: int) -> tuple[int, ...]:
    taken = sorted(s.free[len(s.free) - n :]) if n else []
    del s.free[len(s.free) - n :]
    return tuple(taken)


def _evict_head(s: CacheState, last: bool = False) -> None:
    key, _ = s.queue.popitem(last=last)
    blocks = s.entries.pop(key).block_ids
    s.evictable_blocks -= len(blocks)
    s.free.extend(blocks)


def alloc_evicts_newest(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    if len(s.free) + s.evictable_blocks < n_blocks:
        return None
    while len(s.free) < n_blocks:
        _evict_head(s, last=True)  # the bug: the newest, not the oldest
    entry = s.entries[key] = CacheEntry(_take(s, n_blocks))
    return entry


def alloc_evicts_one_too_many(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    if len(s.free) + s.evictable_blocks < n_blocks:
        return None
    while len(s.free) <= n_blocks and s.queue:  # the bug: <= instead of <
        _evict_head(s)
    entry = s.entries[key] = CacheEntry(_take(s, n_blocks))
    return entry


def alloc_ignores_evictable(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    if len(s.free) < n_blocks:  # the bug: forgets the evictable blocks
        return None
    entry = s.entries[key] = CacheEntry(_take(s, n_blocks))
    return entry


def alloc_evicts_then_fails(s: CacheState, key: str, n_blocks: int) -> CacheEntry | None:
    while len(s.free) < n_blocks and s.queue:  # the bug: evicts before the fail-fast check
        _evict_head(s)
    if len(s.free) < n_blocks:
        return None
    entry = s.entries[key] = CacheEntry(_take(s, n_blocks))
    return entry


def mark_ready_counts_twice(s: CacheState, key: str) -> None:
    entry = s.entries[key]
    entry._pin_count = 0
    s.queue[key] = None
    s.evictable_blocks += 2 * len(entry.block_ids)  # the bug: added twice


def mark_ready_forgets_queue(s: CacheState, key: str) -> None:
    entry = s.entries[key]
    entry._pin_count = 0
    s.evictable_blocks += len(entry.block_ids)  # the bug: never queued


def pin_keeps_queued(s: CacheState, key: str) -> None:
    entry = s.entries[key]
    if entry._pin_count == 0:
        s.evictable_blocks -= len(entry.block_ids)  # the bug: stays in s.queue
    entry._pin_count += 1


def pin_if_ready_pins_not_ready(s: CacheState, key: str) -> CacheEntry | None:
    entry = s.entries.get(key)
    if entry is None:
        return None
    if entry._pin_count == 0:
        del s.queue[key]
        s.evictable_blocks -= len(entry.block_ids)
    entry._pin_count += 1  # the bug: also "pins" a not-ready entry (-1 -> 0)
    return entry


def unpin_forgets_requeue(s: CacheState, key: str) -> None:
    entry = s.entries[key]
    entry._pin_count -= 1
    if entry._pin_count == 0:
        s.evictable_blocks += len(entry.block_ids)  # the bug: not back in s.queue


def unpin_requeues_at_head(s: CacheState, key: str) -> None:
    entry = s.entries[key]
    entry._pin_count -= 1
    if entry._pin_count == 0:
        s.queue[key] = None
        s.queue.move_to_end(key, last=False)  # the bug: head, not tail
        s.evictable_blocks += len(entry.block_ids)


def discard_forgets_free(s: CacheState, key: str) -> None:
    del s.entries[key]  # the bug: the blocks never go back to s.free


def _three_ready(c: EmbeddingCache) -> None:
    for key in ("a", "b", "c"):
        put_ready(c, key, 1)


def _ready_pinned(c: EmbeddingCache) -> None:
    put_ready(c, "z", 1)
    put_pinned(c, "a", 2)


Scenario = Callable[[EmbeddingCache], object]


def _one_saving_two_ready(c: EmbeddingCache) -> None:
    put_not_ready(c, "n", 1)
    put_ready(c, "a", 1)
    put_ready(c, "b", 1)


# (operation, planted body, setup, the call that trips it, the name it must report).
# icontract checks an operation's postconditions bottom-up and reports the first
# that fails; where a bug breaks two, the property it is about comes first in the
# tuple and the one the contract's order reports second (see the report to the lead).
PLANTED_BODIES: list[tuple[str, Callable[..., object], Scenario, Scenario, tuple[str, ...]]] = [
    (
        "alloc",
        alloc_evicts_newest,
        _three_ready,
        lambda c: c.alloc("d", 2),
        ("EvictOldestFirstProp",),
    ),
    (
        "alloc",
        alloc_evicts_one_too_many,
        _three_ready,
        lambda c: c.alloc("d", 1),
        ("EvictOnlyAsNeededProp",),
    ),
    (
        "alloc",
        alloc_ignores_evictable,
        _three_ready,
        lambda c: c.alloc("d", 2),
        ("AllocFailsOnlyWhenShortProp",),
    ),
    (
        "alloc",
        alloc_evicts_then_fails,
        _one_saving_two_ready,
        lambda c: c.alloc("d", 3),
        ("FailedAllocUnchangedProp",),
    ),
    (
        "mark_ready",
        mark_ready_counts_twice,
        lambda c: put_not_ready(c, "a", 2),
        lambda c: c.mark_ready("a"),
        ("EvictableCountInv",),
    ),
    (
        "mark_ready",
        mark_ready_forgets_queue,
        lambda c: put_not_ready(c, "a", 2),
        lambda c: c.mark_ready("a"),
        ("EvictQueueInv",),
    ),
    ("pin", pin_keeps_queued, _three_ready, lambda c: c.pin("b"), ("EvictQueueInv",)),
    (
        "pin_if_ready",
        pin_if_ready_pins_not_ready,
        lambda c: put_not_ready(c, "a", 1),
        lambda c: c.pin_if_ready("a"),
        ("MisuseUnchangedProp",),
    ),
    ("unpin", unpin_forgets_requeue, _ready_pinned, lambda c: c.unpin("a"), ("EvictQueueInv",)),
    ("unpin", unpin_requeues_at_head, _ready_pinned, lambda c: c.unpin("a"), ("EvictQueueInv",)),
    (
        "discard",
        discard_forgets_free,
        lambda c: put_not_ready(c, "a", 2),
        lambda c: c.discard("a"),
        ("BlockConservationInv",),
    ),
]


@checked_only
@pytest.mark.parametrize(
    ("op", "body", "setup", "trip", "name"),
    PLANTED_BODIES,
    ids=[row[1].__name__ for row in PLANTED_BODIES],
)
def test_the_operations_contract_catches_a_planted_body(
    monkeypatch: pytest.MonkeyPatch,
    op: str,
    body: Callable[..., object],
    setup: Scenario,
    trip: Scenario,
    name: tuple[str, ...],
) -> None:
    cache = EmbeddingCache(3)
    setup(cache)  # with the real transitions
    contract = getattr(contracts, f"{op}_contract")
    monkeypatch.setattr(transitions, op, contract(body))
    with pytest.raises(icontract.ViolationError) as info:
        trip(cache)
    reported = violated(info.value)
    if embedding_cache.FULL_SWEEP:
        # The full build's sweep postconditions run before the operation's own
        # and report the first broken invariant of the state the body left.
        broken = {n for n, _ in invariants.violations(cache._state)}
        assert reported in name or reported in broken, str(info.value)
    else:
        assert reported in name, str(info.value)


@checked_only
@pytest.mark.parametrize("row", PLANTED_BODIES, ids=[row[1].__name__ for row in PLANTED_BODIES])
def test_the_trip_is_legal_for_the_real_transitions(
    row: tuple[str, Callable[..., object], Scenario, Scenario, tuple[str, ...]],
) -> None:
    """Control: the same setup and call pass the contracts with the real body."""
    _, _, setup, trip, _ = row
    cache = EmbeddingCache(3)
    setup(cache)
    trip(cache)
    cache.check()


def test_contracts_exist_exactly_in_the_checked_builds() -> None:
    plain = contracts.discard_contract(discard_forgets_free)
    assert (plain is not discard_forgets_free) == embedding_cache.CHECKED


# ---------------------------------------------------------------- 2. the sweep


def _cache_with_every_state() -> EmbeddingCache:
    cache = EmbeddingCache(8)
    put_ready(cache, "r", 2)
    put_ready(cache, "q", 1)
    put_pinned(cache, "p", 2)
    put_not_ready(cache, "n", 1)
    return cache


def _leak(s: CacheState) -> None:
    s.free.pop()


def _share(s: CacheState) -> None:
    s.free.append(s.entries["p"].block_ids[0])


def _out_of_range(s: CacheState) -> None:
    s.entries["n"].block_ids = (99,)


def _unsorted(s: CacheState) -> None:
    s.entries["p"].block_ids = s.entries["p"].block_ids[::-1]


def _bad_pin_count(s: CacheState) -> None:
    s.entries["n"]._pin_count = -2


def _unqueued(s: CacheState) -> None:
    del s.queue["r"]
    s.evictable_blocks -= 2


def _pinned_queued(s: CacheState) -> None:
    s.queue["p"] = None
    s.evictable_blocks += 2


def _stale_count(s: CacheState) -> None:
    s.evictable_blocks += 1


CORRUPTIONS: list[tuple[Callable[[CacheState], None], str]] = [
    (_leak, "BlockConservationInv"),
    (_share, "BlockConservationInv"),
    (_out_of_range, "TypeOK"),
    (_unsorted, "TypeOK"),
    (_bad_pin_count, "TypeOK"),
    (_unqueued, "EvictQueueInv"),
    (_pinned_queued, "EvictQueueInv"),
    (_stale_count, "EvictableCountInv"),
]


@pytest.mark.parametrize(("corrupt", "name"), CORRUPTIONS, ids=[c.__name__ for c, _ in CORRUPTIONS])
def test_the_sweep_names_the_broken_invariant(
    corrupt: Callable[[CacheState], None], name: str
) -> None:
    cache = _cache_with_every_state()
    cache.check()  # control: the uncorrupted state passes
    corrupt(cache._state)
    with pytest.raises(InvariantViolationError) as info:
        cache.check()
    assert info.value.name == name and str(info.value).startswith(f"{name} violated")
    if embedding_cache.FULL_SWEEP:
        # The next transition's pre-sweep refuses to run on the corrupted state.
        with pytest.raises(icontract.ViolationError) as pre:
            cache.pin_if_ready("absent")
        assert violated(pre.value) == name


def test_held_entries_inv_is_checked_on_its_own() -> None:
    """HeldEntriesInv follows from EvictQueueInv, so break both and ask its predicate."""
    cache = EmbeddingCache(2)
    put_ready(cache, "a", 1)
    assert invariants.held_entries_inv(cache._state) is None
    cache._state.entries["a"]._pin_count = 1  # pinned, yet still queued
    assert invariants.held_entries_inv(cache._state) is not None
    names = [n for n, _ in invariants.violations(cache._state)]
    assert names == ["EvictQueueInv", "HeldEntriesInv"]


# ---------------------------------------------------------------- 3. stateful and differential


QUICK = settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.generate],  # finding the bug is the point; shrinking only costs time
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
)

#: What the stateful machine reports for each planted cache.
MACHINE_CATCHES = {
    EvictNewestFirst: "model disagrees",
    PinIfReadyForgetsToPin: "model disagrees",
    UnpinRequeuesAtHead: "model disagrees: queue order",
    DiscardLeaksBlocks: "BlockConservationInv",  # the sweep runs before the comparison
}


@pytest.mark.parametrize("planted", PLANTED, ids=lambda c: c.__name__)
def test_the_state_machine_catches_a_planted_cache(
    planted: type[EmbeddingCache], capsys: pytest.CaptureFixture[str]
) -> None:
    machine = type(f"{planted.__name__}Machine", (CacheMachine,), {"cache_class": planted})
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine, settings=QUICK)
    assert MACHINE_CATCHES[planted] in str(info.value), str(info.value)


#: The stream differential sees the queue's order only through evictions, and a
#: stream that pins, unpins and then evicts past another queued entry is too rare
#: for a quick search; the state machine (which compares the queue) catches it.
DIFFERENTIAL_CATCHES = tuple(c for c in PLANTED if c is not UnpinRequeuesAtHead)


@pytest.mark.parametrize("planted", DIFFERENTIAL_CATCHES, ids=lambda c: c.__name__)
def test_the_seed_differential_catches_a_planted_cache(planted: type[EmbeddingCache]) -> None:
    def differs(case: tuple[int, list[Op]]) -> bool:
        num_blocks, ops = case
        ours, seed = planted(num_blocks), SeedCache(num_blocks)
        try:
            run_stream(ours, seed, ops)
            drain(ours, seed)
        except AssertionError:
            return True
        return False

    cases = st.tuples(st.integers(1, MAX_POOL), st.lists(OPS, min_size=20, max_size=100))
    _, ops = find(cases, differs, settings=QUICK)
    assert ops  # a non-empty stream tells them apart
