"""Pin leases (spec/SPEC.md section 12): outcomes, expiry, nesting, misuse, threads.

Every test drives a real ``EmbeddingCache`` with a fake clock (``FakeClock``),
under every registered policy where the policy matters (``POLICY_CASES``),
and ends with the full sweep (``check()``: LeasePinsInv and LeaseDeadlineInv
included). The stateful test (tests/test_stateful.py) covers leases against
the reference model; this file states the API's promises one by one.
"""

from __future__ import annotations

import math
import random
import threading

import pytest
from cache_observe import POLICY_CASES, observe

from embedding_cache import (
    EmbeddingCache,
    ForeignLeaseError,
    InvariantViolationError,
    Lease,
    NotPinnedError,
)
from embedding_cache.policies import PolicySpec
from embedding_cache.verification import state_of


class FakeClock:
    """A clock the test moves by hand (``advance``)."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def ready_cache(eviction: PolicySpec = "fifo", blocks: int = 8) -> tuple[EmbeddingCache, FakeClock]:
    """A cache of ``blocks`` blocks with 'a' (2 blocks) ready and 'n' (1 block) not ready."""
    clock = FakeClock()
    cache = EmbeddingCache(blocks, eviction=eviction, clock=clock)
    cache.alloc("a", 2)
    cache.mark_ready("a")
    cache.alloc("n", 1)
    return cache, clock


@pytest.mark.parametrize("eviction", POLICY_CASES.values(), ids=POLICY_CASES.keys())
def test_lease_mirrors_pin_if_ready_outcomes(eviction: PolicySpec) -> None:
    """None when absent; a not-ready lease holding nothing; a held lease of one pin."""
    cache, _ = ready_cache(eviction)
    assert cache.lease("absent", 5) is None
    before = observe(cache)
    pending = cache.lease("n", 5)
    assert isinstance(pending, Lease)
    assert (pending.ready, pending.held, pending.deadline) == (False, False, None)
    assert pending.key == "n" and pending.block_ids == cache.get("n").block_ids  # type: ignore[union-attr]
    assert observe(cache) == before, "a not-ready lease must change nothing"
    assert pending.release() is False and pending.renew(3) is False
    held = cache.lease("a", 5)
    assert held is not None and held.ready and held.held and held.deadline == 5.0
    assert held.block_ids == cache.get("a").block_ids  # type: ignore[union-attr]
    assert cache.get("a").pin_count == 1  # type: ignore[union-attr]
    assert cache.has_held_entries()
    cache.check()


@pytest.mark.parametrize("eviction", POLICY_CASES.values(), ids=POLICY_CASES.keys())
def test_a_held_lease_blocks_eviction_until_it_expires(eviction: PolicySpec) -> None:
    """A leased entry is pinned: an alloc needing its blocks fails until the deadline passes;
    then the next call releases it (the policy's release hook) and the alloc may evict it."""
    clock = FakeClock()
    cache = EmbeddingCache(2, eviction=eviction, clock=clock)
    cache.alloc("a", 2)
    cache.mark_ready("a")
    lease = cache.lease("a", 10)
    assert lease is not None
    assert cache.alloc("b", 2) is None
    clock.advance(10)  # at the deadline: still held (due only once the clock is past it)
    assert cache.alloc("b", 2) is None and lease.held
    clock.advance(0.5)
    assert cache.alloc("b", 2) is not None, "the expired lease's entry must be evictable"
    assert not lease.held and cache.get("a") is None
    assert lease.release() is False
    cache.check()


def test_release_is_once_and_never_after_expiry() -> None:
    """release() is True once; after expiry it is False and unpins nothing."""
    cache, clock = ready_cache()
    first = cache.lease("a", 1)
    second = cache.lease("a", 5)
    assert first is not None and second is not None
    assert cache.get("a").pin_count == 2  # type: ignore[union-attr]
    assert first.release() is True and first.release() is False
    assert cache.get("a").pin_count == 1  # type: ignore[union-attr]
    clock.advance(6)
    assert cache.expire_leases() == ["a"]
    assert second.release() is False
    assert cache.get("a").pin_count == 0  # type: ignore[union-attr]
    cache.check()


def test_renew_extends_a_held_lease_and_fails_once_expired() -> None:
    """renew moves the deadline to now + seconds; an old heap pair never expires it early."""
    cache, clock = ready_cache()
    lease = cache.lease("a", 2)
    assert lease is not None
    clock.advance(1.5)
    assert lease.renew(4) is True and lease.deadline == 5.5
    clock.advance(2)  # past the first deadline (2), not the renewed one
    assert cache.expire_leases() == [] and lease.held
    clock.advance(2.5)  # 6.0 > 5.5
    assert lease.renew(10) is False and not lease.held
    assert cache.get("a").pin_count == 0
    cache.check()


def test_expiry_runs_lazily_on_every_public_call() -> None:
    """Any public call releases the due leases first (here: get, len, has_held_entries)."""
    for call in (
        lambda c: c.get("x"),
        len,
        lambda c: c.has_held_entries(),
        lambda c: c.pin_if_ready("x"),
        lambda c: c.check(),
    ):
        cache, clock = ready_cache()
        cache.discard("n")
        lease = cache.lease("a", 1)
        assert lease is not None
        clock.advance(2)
        assert lease.held, "nothing runs between calls"
        call(cache)
        assert not lease.held, f"{call} did not expire the due lease"
        assert not cache.has_held_entries()


def test_expire_leases_returns_keys_in_deadline_order() -> None:
    """expire_leases releases exactly the due leases, earliest deadline first."""
    clock = FakeClock()
    cache = EmbeddingCache(6, clock=clock)
    for key in "abc":
        cache.alloc(key, 1)
        cache.mark_ready(key)
    leases = [cache.lease("c", 3), cache.lease("a", 1), cache.lease("b", 2), cache.lease("a", 9)]
    assert all(lease is not None for lease in leases)
    clock.advance(3.5)
    assert cache.expire_leases() == ["a", "b", "c"]
    assert cache.expire_leases() == []
    assert cache.get("a").pin_count == 1  # type: ignore[union-attr]
    cache.check()


def test_plain_and_leased_pins_nest_and_unpin_takes_only_plain_ones() -> None:
    """LeasePinsInv: pin count = plain pins + live leases; unpin never takes a lease's pin."""
    cache, _ = ready_cache()
    cache.pin("a")
    lease = cache.lease("a", 5)
    assert lease is not None
    assert cache.get("a").pin_count == 2  # type: ignore[union-attr]
    cache.unpin("a")
    before = observe(cache)
    with pytest.raises(NotPinnedError, match="leases"):
        cache.unpin("a")
    assert observe(cache) == before
    assert lease.release() is True
    assert cache.get("a").evictable  # type: ignore[union-attr]
    cache.check()


def test_a_cache_without_leases_never_reads_its_clock() -> None:
    """The drop-in path: no lease, no clock read (the per-call check is one slot load)."""
    clock = FakeClock()
    cache = EmbeddingCache(4, clock=clock)
    cache.alloc("a", 2)
    cache.mark_ready("a")
    cache.pin("a")
    cache.unpin("a")
    cache.get("a")
    assert clock.reads == 0


def test_a_dead_reader_holds_nothing_after_its_deadline() -> None:
    """A reader that takes leases and vanishes: once its deadlines pass, one call frees all."""
    clock = FakeClock()
    cache = EmbeddingCache(16, eviction="s3fifo", clock=clock)
    for i in range(8):
        cache.alloc(f"k{i}", 2)
        cache.mark_ready(f"k{i}")
    for i in range(8):
        assert cache.lease(f"k{i}", 30) is not None  # the handles are dropped at once
    assert cache.alloc("big", 16) is None
    clock.advance(31)
    assert cache.alloc("big", 16) is not None
    assert len(cache) == 1
    cache.check()


BAD_SECONDS = [-1, -0.5, math.nan, math.inf, -math.inf, 10**400]


@pytest.mark.parametrize("seconds", BAD_SECONDS, ids=repr)
def test_bad_seconds_raise_value_error_and_change_nothing(seconds: object) -> None:
    """Negative, NaN or infinite seconds: ValueError naming them, nothing changed."""
    cache, _ = ready_cache()
    lease = cache.lease("a", 5)
    assert lease is not None
    before = observe(cache)
    with pytest.raises(ValueError, match="seconds"):
        cache.lease("a", seconds)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seconds"):
        lease.renew(seconds)  # type: ignore[arg-type]
    assert observe(cache) == before and lease.deadline == 5.0
    cache.check()


@pytest.mark.parametrize("seconds", ["5", None, True, b"1", 1j], ids=repr)
def test_non_number_seconds_raise_type_error_and_change_nothing(seconds: object) -> None:
    cache, _ = ready_cache()
    before = observe(cache)
    with pytest.raises(TypeError, match="seconds must be a number"):
        cache.lease("a", seconds)  # type: ignore[arg-type]
    assert observe(cache) == before


def test_foreign_leases_and_objects_are_refused() -> None:
    """A lease from another cache (ForeignLeaseError, a ValueError) or a non-Lease
    (TypeError) is refused by release and renew, and nothing changes on either cache."""
    ours, _ = ready_cache()
    theirs, _ = ready_cache()
    foreign = theirs.lease("a", 5)
    assert foreign is not None
    before, their_before = observe(ours), observe(theirs)
    for call in (ours.release_lease, lambda x: ours.renew_lease(x, 1)):
        with pytest.raises(ForeignLeaseError, match="another cache"):
            call(foreign)
        for thing in (None, "a", ours.get("a"), object()):
            with pytest.raises(TypeError, match="expected a Lease"):
                call(thing)  # type: ignore[arg-type]
    assert observe(ours) == before and observe(theirs) == their_before
    assert foreign.held and isinstance(ForeignLeaseError("a", "release"), ValueError)


def test_bad_clock_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="clock must be callable"):
        EmbeddingCache(4, clock=3.0)  # type: ignore[arg-type]


def test_the_sweep_catches_a_lease_that_outlived_its_deadline() -> None:
    """Non-vacuity of LeaseDeadlineInv and LeasePinsInv in check()."""
    cache, _ = ready_cache()
    lease = cache.lease("a", 5)
    assert lease is not None
    state_of(cache).leases.now = 6.0  # as if a call had run at 6 and skipped expiry
    with pytest.raises(InvariantViolationError, match="LeaseDeadlineInv"):
        cache.check()
    state_of(cache).leases.now = 0.0
    state_of(cache).leases.per_key["a"] = 2  # a lease counted that holds no pin
    with pytest.raises(InvariantViolationError, match="LeasePinsInv"):
        cache.check()


@pytest.mark.parametrize("eviction", POLICY_CASES.values(), ids=POLICY_CASES.keys())
def test_threads_lease_release_and_expire_and_leave_it_consistent(eviction: PolicySpec) -> None:
    """Workers lease, renew, release or abandon leases while others alloc and expire:
    at the end, past every deadline, nothing is held and every invariant holds."""
    lock = threading.Lock()
    ticks = [0.0]

    def clock() -> float:
        with lock:
            ticks[0] += 0.001
            return ticks[0]

    cache = EmbeddingCache(32, eviction=eviction, clock=clock)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for i in range(400):
                key = f"w{seed}-{i % 7}"
                if cache.get(key) is None and cache.alloc(key, rng.randint(1, 4)) is not None:
                    cache.mark_ready(key)
                other = f"w{rng.randrange(4)}-{rng.randrange(7)}"
                lease = cache.lease(other, rng.choice((0.0, 0.002, 0.05)))
                if lease is not None and lease.held:
                    choice = rng.random()
                    if choice < 0.4:
                        lease.release()
                    elif choice < 0.6:
                        lease.renew(0.01)
                if rng.random() < 0.1:
                    cache.expire_leases()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    ticks[0] += 10.0
    cache.expire_leases()
    assert not cache.has_held_entries() and len(state_of(cache).leases) == 0
    cache.check()
