"""Admission (spec/SPEC.md section 13): the doorkeeper, in every build, under every policy.

The unit tests pin each row of section 13.1 and the doorkeeper's rule; the
Hypothesis test drives random calls against an independent model of the rule
(which allocs would evict, the door as a list) and sweeps the invariants after
each step, DoorHoldsAbsentKeysInv among them. The planted bugs of admission
are caught by the contracts in tests/test_contracts_catch_bugs.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from cache_observe import POLICY_CASES, observe
from hypothesis import given, settings
from hypothesis import strategies as st

from embedding_cache import (
    ADMISSION_FILTERS,
    ALLOCATORS,
    AdmissionFilter,
    CacheEntry,
    CapacityError,
    Doorkeeper,
    DuplicateAllocError,
    EmbeddingCache,
    InvariantViolationError,
)
from embedding_cache.admission import DOOR_PER_BLOCK, MIN_DOOR
from embedding_cache.policies import PolicySpec
from embedding_cache.verification import state_of


@pytest.fixture(params=list(POLICY_CASES), ids=list(POLICY_CASES))
def eviction(request: pytest.FixtureRequest) -> PolicySpec:
    return POLICY_CASES[request.param]


def door_of(cache: EmbeddingCache) -> tuple[str, ...]:
    door = state_of(cache).admission
    assert door is not None
    return door.abstract()


def full_cache(eviction: PolicySpec, allocator: str = "stack", capacity: int = 4) -> EmbeddingCache:
    """A 4-block doorkeeper cache whose every block is a ready, evictable entry."""
    cache = EmbeddingCache(
        4,
        eviction=eviction,
        allocator=allocator,
        admission=functools.partial(Doorkeeper, capacity=capacity),
    )
    for key in ("a", "b"):
        assert cache.alloc(key, 2) is not None
        cache.mark_ready(key)
    return cache


def test_the_registry_names_the_doorkeeper_and_none_is_the_default() -> None:
    assert {"doorkeeper": Doorkeeper} == ADMISSION_FILTERS
    assert EmbeddingCache(4).admission is None
    assert state_of(EmbeddingCache(4)).admission is None
    assert EmbeddingCache(4, admission="doorkeeper").admission == "doorkeeper"
    assert "admission='doorkeeper'" in repr(EmbeddingCache(4, admission="doorkeeper"))


@pytest.mark.parametrize("allocator", list(ALLOCATORS))
def test_an_alloc_that_would_evict_is_declined_once_then_let_in(
    eviction: PolicySpec, allocator: str
) -> None:
    cache = full_cache(eviction, allocator)
    before = observe(cache)
    assert cache.alloc("c", 1) is None  # would evict: declined, remembered
    assert observe(cache) == before  # FailedAllocUnchangedProp: the cache did not move
    assert door_of(cache) == ("c",)
    entry = cache.alloc("c", 1)  # the second request is let in
    assert entry is not None and len(entry.block_ids) == 1
    assert door_of(cache) == ()  # an admitted key leaves the door
    assert len(cache) == 2  # one of a, b was evicted for it
    cache.check()


def test_an_alloc_that_fits_in_free_blocks_is_never_declined(eviction: PolicySpec) -> None:
    """AllocDeclinesOnlyWhenEvictingProp: nothing would be evicted, so no decline."""
    cache = EmbeddingCache(4, eviction=eviction, admission="doorkeeper")
    for key in "abcd":
        assert cache.alloc(key, 1) is not None
    assert door_of(cache) == ()
    cache.check()


def test_a_short_alloc_fails_without_asking_the_filter(eviction: PolicySpec) -> None:
    cache = EmbeddingCache(4, eviction=eviction, admission="doorkeeper")
    assert cache.alloc("held", 3) is not None  # not ready: not evictable
    assert cache.alloc("x", 2) is None  # short: 1 free + 0 evictable < 2
    assert door_of(cache) == ()
    assert cache.alloc("x", 1) is not None  # fits in the free block
    cache.check()


def test_a_key_at_the_door_is_let_in_even_when_it_would_evict(eviction: PolicySpec) -> None:
    cache = full_cache(eviction)
    assert cache.alloc("c", 4) is None
    assert cache.alloc("c", 4) is not None  # evicts both a and b
    assert len(cache) == 1
    cache.check()


def test_the_door_forgets_its_oldest_key_when_full(eviction: PolicySpec) -> None:
    """DoorkeeperRuleProp: a decline joins at the newest end, the oldest leaves."""
    cache = full_cache(eviction, capacity=2)
    for key in ("c", "d", "e"):
        assert cache.alloc(key, 1) is None
    assert door_of(cache) == ("d", "e")  # c was the oldest
    assert cache.alloc("c", 1) is None  # forgotten: declined again
    assert door_of(cache) == ("e", "c")
    assert cache.alloc("e", 1) is not None
    assert door_of(cache) == ("c",)
    cache.check()


def test_misuse_raises_before_the_filter_is_asked(eviction: PolicySpec) -> None:
    cache = full_cache(eviction)
    before = observe(cache), door_of(cache)
    with pytest.raises(DuplicateAllocError):
        cache.alloc("a", 1)
    with pytest.raises(CapacityError):
        cache.alloc("z", 5)
    with pytest.raises(TypeError):
        cache.alloc(7, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        cache.alloc("z", -1)
    assert (observe(cache), door_of(cache)) == before


@pytest.mark.parametrize(
    ("admission", "error", "words"),
    [
        ("bouncer", ValueError, "unknown admission filter 'bouncer'; choose from doorkeeper"),
        (3, TypeError, "admission must be None, a name or a factory, not int"),
        (lambda n: object(), TypeError, "returned object, not an AdmissionFilter"),
        (functools.partial(Doorkeeper, capacity=0), ValueError, "capacity must be >= 1"),
        (functools.partial(Doorkeeper, capacity=2.0), TypeError, "capacity must be an int"),  # type: ignore[arg-type]
        (functools.partial(Doorkeeper, capacity=True), TypeError, "capacity must be an int"),
    ],
)
def test_a_bad_admission_is_a_typed_error_naming_it(
    admission: object, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        EmbeddingCache(4, admission=admission)  # type: ignore[arg-type]


@pytest.mark.parametrize("num_blocks", [0, 16, 1024, 65_536, 262_144])
def test_the_default_door_grows_with_the_pool(num_blocks: int) -> None:
    door = Doorkeeper(num_blocks)
    assert door.capacity == max(MIN_DOOR, int(num_blocks * DOOR_PER_BLOCK))


def test_a_factory_gets_the_pool_size() -> None:
    asked: list[int] = []

    def factory(n: int) -> AdmissionFilter:
        asked.append(n)
        return Doorkeeper(n, capacity=3)

    cache = EmbeddingCache(12, admission=factory)
    assert asked == [12] and cache.admission == "doorkeeper"


def test_a_copied_state_has_its_own_door() -> None:
    cache = full_cache("fifo")
    cache.alloc("c", 1)
    twin = state_of(cache).copy()
    assert twin.admission is not None and twin.admission.abstract() == ("c",)
    twin.admission.admitted("c")
    assert door_of(cache) == ("c",)


def test_the_sweep_reports_a_live_key_at_the_door() -> None:
    """DoorHoldsAbsentKeysInv, as the O(N) sweep checks it."""
    cache = full_cache("fifo")
    door = state_of(cache).admission
    assert door is not None
    door.declined("a")  # tampering: 'a' is live
    with pytest.raises(InvariantViolationError, match="DoorHoldsAbsentKeysInv"):
        cache.check()


# ---------------------------------------------------------------- against a model


#: More keys than the 4-block pool holds, so that allocs of absent keys keep coming.
KEYS = tuple(f"k{i}" for i in range(12))
calls = st.lists(
    st.tuples(
        # Mostly allocs and mark_readys: declines need a pool full of ready entries.
        st.sampled_from(("alloc",) * 5 + ("mark_ready",) * 4 + ("pin", "unpin", "discard")),
        st.integers(0, len(KEYS) - 1),
        st.integers(1, 3),
    ),
    max_size=60,
)


def _model_alloc(
    door: list[str], capacity: int, key: str, n: int, free: int, evictable: int
) -> str:
    """The doorkeeper's rule (section 13.2) on the model's door: the outcome."""
    if free + evictable < n:
        return "failed"
    if free < n and key not in door:
        door.append(key)
        if len(door) > capacity:
            door.pop(0)
        return "declined"
    if key in door:
        door.remove(key)
    return "admitted"


#: The operations besides alloc, and which live entries each applies to.
OTHERS: dict[str, Callable[[CacheEntry], bool]] = {
    "mark_ready": lambda e: not e.ready,
    "pin": lambda e: e.ready,
    "unpin": lambda e: e.pin_count > 0,
    "discard": lambda e: not e.ready,
}


@settings(max_examples=200, deadline=None)
@given(script=calls, capacity=st.integers(1, 3), policy=st.sampled_from(list(POLICY_CASES)))
def test_random_calls_follow_the_doorkeepers_rule(
    script: list[tuple[str, int, int]], capacity: int, policy: str
) -> None:
    cache = EmbeddingCache(
        4,
        eviction=POLICY_CASES[policy],
        admission=functools.partial(Doorkeeper, capacity=capacity),
    )
    s = state_of(cache)
    door: list[str] = []
    for op, pick, n in script:
        if op == "alloc":
            key = KEYS[pick]
            if cache.get(key) is not None:
                continue
            want = _model_alloc(door, capacity, key, n, len(s.free), s.evictable_blocks)
            got = cache.alloc(key, n)
            assert (got is not None) == (want == "admitted"), (key, n, want)
        else:
            # Non-alloc calls pick among the live entries they apply to, so that
            # allocated entries get ready and the pool fills with evictable ones.
            fits = [k for k, e in s.entries.items() if OTHERS[op](e)]
            if fits:
                method: Callable[[str], object] = getattr(cache, op)
                method(fits[pick % len(fits)])
        assert list(door_of(cache)) == door
        cache.check()
