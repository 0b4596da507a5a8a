"""Unit tests of EmbeddingCache: every method, every transition, every error, every policy.

Each misuse case also checks MisuseUnchangedProp: the full observable state
(the policy's variables included) after the error equals the state before it.
Every test that does not depend on the eviction order runs once per policy
(the ``eviction`` fixture: each name in ``EVICTION_POLICIES``); the order
tests are per policy, on hand-built scenarios (fifo: oldest first, a release
goes to the back; gdsf: the large one-time entry goes before the small
often-used one; s3fifo: one-time entries leave from S before used ones in M,
a key back from the ghost enters M, counters cap at 3). The build matrix
(test_builds.py) re-runs this module in the checked, full and ``python -O``
builds.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
from collections.abc import Callable

import pytest
from argument_kinds import Index, Size
from cache_observe import (
    evictable_keys,
    free_count,
    observe,
    policy_vars,
    put_not_ready,
    put_pinned,
    put_ready,
    queue_of,
)

import embedding_cache
from embedding_cache import (
    ADMISSION_FILTERS,
    ALLOCATORS,
    EVICTION_POLICIES,
    AlreadyReadyError,
    CacheEntry,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    EmbeddingCache,
    EvictionPolicy,
    FifoPolicy,
    GdsfPolicy,
    LifecycleError,
    NotPinnedError,
    NotReadyError,
    UnknownKeyError,
    transitions,
)
from embedding_cache_checker.tracing import TracedEmbeddingCache
from embedding_cache_checker.verify.lin import MUTANTS


@pytest.fixture(params=list(EVICTION_POLICIES))
def eviction(request: pytest.FixtureRequest) -> str:
    """Each registered policy by name: the policy-agnostic tests run once per policy."""
    name: str = request.param
    return name


# ---------------------------------------------------------------- the build under test


def test_build_is_the_one_claimed() -> None:
    """The build-matrix child says which build it asked for; check it got that one."""
    raw = os.environ.get("EMBEDDING_CACHE_CHECKED", "").strip().lower()
    derived = {"": "default", "0": "default", "1": "checked", "full": "full"}[raw]
    expected = os.environ.get("EMBEDDING_CACHE_EXPECT_BUILD", derived)
    assert expected == derived, "the child's environment does not match its claim"
    assert expected == embedding_cache.BUILD_NAME
    assert (expected in ("checked", "full")) == embedding_cache.CHECKED
    assert (expected == "full") == embedding_cache.FULL_SWEEP
    # The contracts are attached exactly in the checked builds.
    for op in (transitions.alloc, transitions.mark_ready, transitions.pin, transitions.discard):
        assert hasattr(op, "__postconditions__") == embedding_cache.CHECKED
    if embedding_cache.FULL_SWEEP:
        groups = transitions.unpin.__dict__["__preconditions__"]
        names = {c.description for group in groups for c in group}
        assert {"TypeOK", "BlockConservationInv", "HeldEntriesInv"} <= names
    want_optimize = os.environ.get("EMBEDDING_CACHE_EXPECT_OPTIMIZE") == "1"
    assert (sys.flags.optimize >= 1) == want_optimize
    assert __debug__ is not want_optimize


def test_test_asserts_are_live_in_every_build() -> None:
    """Canary: pytest rewrites the tests' asserts, so they run even under ``python -O``."""
    with pytest.raises(AssertionError):
        assert free_count(EmbeddingCache(1)) == 2


def test_errors_raise_when_asserts_are_stripped() -> None:
    """Under ``python -O`` a bare assert vanishes, yet misuse still raises."""
    stripped = True
    try:
        exec(compile("assert False", "<probe>", "exec"))  # optimize level of this interpreter
    except AssertionError:
        stripped = False
    assert stripped == (sys.flags.optimize >= 1)
    cache = EmbeddingCache(2)
    put_ready(cache, "a", 1)
    with pytest.raises(DuplicateAllocError):
        cache.alloc("a", 1)
    with pytest.raises(AlreadyReadyError):
        cache.mark_ready("a")
    with pytest.raises(UnknownKeyError):
        cache.pin("zzz")


# ---------------------------------------------------------------- construction


@pytest.mark.parametrize("n", [0, 1, 7])
def test_new_cache_is_empty_and_all_free(n: int, eviction: str) -> None:
    cache = EmbeddingCache(n, eviction=eviction)
    assert cache.num_blocks == n
    assert len(cache) == 0
    assert free_count(cache) == n
    assert evictable_keys(cache) == []
    assert cache.has_held_entries() is False
    assert cache.get("a") is None
    cache.check()


@pytest.mark.parametrize(
    ("num_blocks", "exc"),
    [(-1, ValueError), (1.5, TypeError), ("3", TypeError), (None, TypeError), (True, TypeError)],
)
def test_bad_num_blocks_is_rejected(num_blocks: object, exc: type[Exception]) -> None:
    with pytest.raises(exc, match="num_blocks"):
        EmbeddingCache(num_blocks)  # type: ignore[arg-type]


# ---------------------------------------------------------------- choosing a policy


def _script(cache: EmbeddingCache) -> list[tuple[object, ...]]:
    """A fixed run with evictions, pins, a discard and a failed alloc; what was seen after
    each step (the observation without entry identities)."""
    seen: list[tuple[object, ...]] = []
    steps: list[Callable[[], object]] = [
        lambda: put_ready(cache, "a", 1),
        lambda: put_ready(cache, "b", 2),
        lambda: cache.pin("a"),
        lambda: put_not_ready(cache, "c", 1),
        lambda: cache.alloc("d", 4),
        lambda: cache.unpin("a"),
        lambda: cache.discard("c"),
        lambda: put_ready(cache, "e", 3),
        lambda: cache.pin_if_ready("e"),
    ]
    for step in steps:
        step()
        o = observe(cache)
        seen.append((o.free, tuple(e[:3] for e in o.entries), o.policy, o.evictable_blocks))
    return seen


def test_fifo_is_the_default_and_naming_it_equals_omitting_it() -> None:
    default = inspect.signature(EmbeddingCache).parameters["eviction"].default
    assert default == "fifo"
    caches = [
        EmbeddingCache(4),
        EmbeddingCache(4, eviction="fifo"),
        EmbeddingCache(4, eviction=FifoPolicy),
    ]
    for cache in caches:
        assert cache.eviction == "fifo" and type(cache._state.policy) is FifoPolicy
        assert "eviction='fifo'" in repr(cache)
    runs = [_script(cache) for cache in caches]
    assert runs[0] == runs[1] == runs[2]
    for cache in caches:
        cache.check()


@pytest.mark.parametrize("name", ["lru", "FIFO", "", "gdsf "])
def test_an_unknown_policy_name_is_a_value_error_listing_the_valid_ones(name: str) -> None:
    with pytest.raises(ValueError, match="eviction") as info:
        EmbeddingCache(4, eviction=name)
    message = str(info.value)
    assert repr(name) in message
    for valid in EVICTION_POLICIES:
        assert repr(valid) in message


@pytest.mark.parametrize(
    "bad",
    [3, None, b"fifo", ["fifo"], 1.5, FifoPolicy(4)],
    ids=lambda bad: type(bad).__name__ if isinstance(bad, FifoPolicy) else repr(bad),
)
def test_a_non_callable_non_str_eviction_is_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match="eviction"):
        EmbeddingCache(4, eviction=bad)  # type: ignore[arg-type]


def test_a_factory_gets_the_pool_size_and_must_return_a_policy() -> None:
    sizes: list[int] = []

    def factory(num_blocks: int) -> EvictionPolicy:
        sizes.append(num_blocks)
        return GdsfPolicy(num_blocks, scale=4)

    cache = EmbeddingCache(7, eviction=factory)
    assert sizes == [7] and cache.eviction == "gdsf"
    with pytest.raises(TypeError, match="EvictionPolicy"):
        EmbeddingCache(4, eviction=lambda n: "fifo")  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("name", list(EVICTION_POLICIES))
def test_every_policy_is_reachable_by_name(name: str) -> None:
    cache = EmbeddingCache(4, eviction=name)
    assert cache.eviction == name and type(cache._state.policy) is EVICTION_POLICIES[name]
    assert f"eviction={name!r}" in repr(cache)
    assert EVICTION_POLICIES[name].name == name


# ---------------------------------------------------------------- alloc


def test_alloc_returns_a_not_ready_entry_with_canonical_ids(eviction: str) -> None:
    cache = EmbeddingCache(8, eviction=eviction)
    entry = cache.alloc("a", 3)
    assert isinstance(entry, CacheEntry)
    assert entry.ready is False and entry.evictable is False and entry.pin_count == -1
    assert type(entry.block_ids) is tuple and len(entry.block_ids) == 3
    assert list(entry.block_ids) == sorted(set(entry.block_ids))
    assert all(0 <= b < 8 for b in entry.block_ids)
    assert cache.get("a") is entry
    assert free_count(cache) == 5
    assert evictable_keys(cache) == []
    assert cache.has_held_entries() is True
    cache.check()


def test_alloc_takes_the_top_of_the_free_stack_like_the_seed(eviction: str) -> None:
    cache = EmbeddingCache(6, eviction=eviction)
    assert put_not_ready(cache, "a", 2).block_ids == (4, 5)
    assert put_not_ready(cache, "b", 3).block_ids == (1, 2, 3)
    cache.discard("a")
    assert put_not_ready(cache, "c", 3).block_ids == (0, 4, 5)


def test_allocs_are_disjoint_until_the_pool_is_full(eviction: str) -> None:
    cache = EmbeddingCache(5, eviction=eviction)
    a = put_not_ready(cache, "a", 2)
    b = put_not_ready(cache, "b", 3)
    assert set(a.block_ids).isdisjoint(b.block_ids)
    assert set(a.block_ids) | set(b.block_ids) == set(range(5))
    assert free_count(cache) == 0
    assert cache.alloc("c", 1) is None  # nothing free, nothing evictable
    zero = cache.alloc("d", 0)
    assert zero is not None and zero.block_ids == ()
    cache.check()


def test_alloc_of_zero_blocks_in_an_empty_pool(eviction: str) -> None:
    cache = EmbeddingCache(0, eviction=eviction)
    entry = put_not_ready(cache, "a", 0)
    assert entry.block_ids == ()
    cache.mark_ready("a")
    assert cache.has_held_entries() is False
    cache.check()


def test_alloc_of_the_whole_pool_evicts_everything_evictable(eviction: str) -> None:
    cache = EmbeddingCache(4, eviction=eviction)
    put_ready(cache, "a", 1)
    put_ready(cache, "b", 2)
    entry = put_not_ready(cache, "c", 4)
    assert entry.block_ids == (0, 1, 2, 3)
    assert cache.get("a") is None and cache.get("b") is None
    assert evictable_keys(cache) == []
    cache.check()


def test_fail_fast_alloc_returns_none_and_evicts_nothing(eviction: str) -> None:
    """AllocFailsOnlyWhenShortProp / FailedAllocUnchangedProp."""
    cache = EmbeddingCache(6, eviction=eviction)
    put_ready(cache, "a", 2)
    put_pinned(cache, "b", 2)
    put_not_ready(cache, "c", 1)
    # free 1 + evictable 2 = 3 < 4: even evicting "a" would not be enough.
    before = observe(cache)
    assert cache.alloc("d", 4) is None
    assert observe(cache) == before
    # free 1 + evictable 2 = 3 >= 3: now it fits, by evicting "a".
    assert cache.alloc("d", 3) is not None
    assert cache.get("a") is None
    cache.check()


def test_fifo_eviction_follows_mark_ready_order_not_alloc_order() -> None:
    """fifo, EvictOldestFirstProp: the queue is ordered by when entries became evictable."""
    cache = EmbeddingCache(3, eviction="fifo")
    put_not_ready(cache, "a", 1)
    put_not_ready(cache, "b", 1)
    put_not_ready(cache, "c", 1)
    for key in ("c", "a", "b"):
        cache.mark_ready(key)
    assert queue_of(cache) == ["c", "a", "b"]
    put_not_ready(cache, "d", 1)
    assert cache.get("c") is None and cache.get("a") is not None
    put_not_ready(cache, "e", 1)
    assert cache.get("a") is None and cache.get("b") is not None
    assert queue_of(cache) == ["b"]
    cache.check()


def test_eviction_takes_only_as_many_entries_as_needed(eviction: str) -> None:
    """EvictOnlyAsNeededProp."""
    cache = EmbeddingCache(6, eviction=eviction)
    put_ready(cache, "a", 2)
    put_ready(cache, "b", 2)
    put_ready(cache, "c", 2)
    # Needs 3: evicts a (2) and b (2), not c -- under every policy here (fifo: the
    # oldest; gdsf: equal priorities, the earliest joined; s3fifo: S's head, unused).
    put_not_ready(cache, "d", 3)
    assert [k for k in "abc" if cache.get(k) is not None] == ["c"]
    assert free_count(cache) == 1
    assert evictable_keys(cache) == ["c"]
    cache.check()


def test_fifo_the_last_unpin_requeues_at_the_tail() -> None:
    """fifo: a release moves the entry to the back (LRU-on-release)."""
    cache = EmbeddingCache(2, eviction="fifo")
    put_ready(cache, "a", 1)
    put_ready(cache, "b", 1)
    cache.pin("a")
    cache.pin("a")
    cache.unpin("a")
    assert queue_of(cache) == ["b"]  # still pinned once
    cache.unpin("a")
    assert queue_of(cache) == ["b", "a"]
    put_not_ready(cache, "c", 1)
    assert cache.get("b") is None and cache.get("a") is not None
    cache.check()


def test_pinned_and_not_ready_entries_are_never_evicted(eviction: str) -> None:
    """HeldBlocksStableProp."""
    cache = EmbeddingCache(4, eviction=eviction)
    held = put_pinned(cache, "p", 2)
    saving = put_not_ready(cache, "s", 1)
    put_ready(cache, "r", 1)
    assert cache.alloc("x", 2) is None
    entry = put_not_ready(cache, "y", 1)
    assert cache.get("r") is None
    assert cache.get("p") is held and held.block_ids == (2, 3)
    assert cache.get("s") is saving
    assert set(entry.block_ids).isdisjoint(held.block_ids + saving.block_ids)
    cache.check()


def test_an_evicted_or_discarded_key_can_be_allocated_again(eviction: str) -> None:
    cache = EmbeddingCache(2, eviction=eviction)
    put_ready(cache, "a", 2)
    put_not_ready(cache, "b", 2)  # evicts a
    cache.discard("b")
    assert put_not_ready(cache, "a", 1).ready is False
    assert put_not_ready(cache, "b", 1).ready is False
    cache.check()


# ---------------------------------------------------------------- mark_ready, pin, unpin


def test_mark_ready_makes_the_entry_evictable(eviction: str) -> None:
    cache = EmbeddingCache(4, eviction=eviction)
    put_ready(cache, "a", 1)
    entry = put_not_ready(cache, "b", 2)
    assert cache.mark_ready("b") is None  # type: ignore[func-returns-value]
    assert entry.ready and entry.evictable and entry.pin_count == 0
    assert evictable_keys(cache) == ["a", "b"]
    assert cache._state.evictable_blocks == 3
    assert cache.has_held_entries() is False
    cache.check()


def test_pins_nest_and_count(eviction: str) -> None:
    cache = EmbeddingCache(4, eviction=eviction)
    entry = put_ready(cache, "a", 2)
    assert cache.pin("a") is None  # type: ignore[func-returns-value]
    assert entry.pin_count == 1 and entry.ready and not entry.evictable
    assert evictable_keys(cache) == [] and cache._state.evictable_blocks == 0
    cache.pin("a")
    assert entry.pin_count == 2
    assert cache.has_held_entries() is True
    assert cache.unpin("a") is None  # type: ignore[func-returns-value]
    assert entry.pin_count == 1 and evictable_keys(cache) == []
    cache.unpin("a")
    assert entry.pin_count == 0 and entry.evictable
    assert evictable_keys(cache) == ["a"] and cache._state.evictable_blocks == 2
    assert cache.has_held_entries() is False
    cache.check()


def test_pin_if_ready_on_an_absent_key_returns_none_and_changes_nothing(eviction: str) -> None:
    cache = EmbeddingCache(2, eviction=eviction)
    put_ready(cache, "a", 1)
    before = observe(cache)
    assert cache.pin_if_ready("b") is None
    assert observe(cache) == before


def test_pin_if_ready_on_a_not_ready_entry_returns_it_unpinned(eviction: str) -> None:
    cache = EmbeddingCache(2, eviction=eviction)
    entry = put_not_ready(cache, "a", 1)
    before = observe(cache)
    got = cache.pin_if_ready("a")
    assert got is entry and got.ready is False and got.pin_count == -1
    assert observe(cache) == before


@pytest.mark.parametrize("pins_before", [0, 1, 3])
def test_pin_if_ready_pins_a_ready_entry(pins_before: int, eviction: str) -> None:
    cache = EmbeddingCache(3, eviction=eviction)
    put_ready(cache, "z", 1)
    entry = put_pinned(cache, "a", 2, pins=pins_before)
    got = cache.pin_if_ready("a")
    assert got is entry and got.ready and got.pin_count == pins_before + 1
    assert evictable_keys(cache) == ["z"]
    assert cache._state.evictable_blocks == 1
    assert cache.has_held_entries() is True
    cache.check()


# ---------------------------------------------------------------- discard, get, has_held_entries


def test_discard_returns_the_blocks_to_the_pool(eviction: str) -> None:
    cache = EmbeddingCache(4, eviction=eviction)
    put_ready(cache, "r", 1)
    entry = put_not_ready(cache, "a", 2)
    assert cache.discard("a") is None  # type: ignore[func-returns-value]
    assert cache.get("a") is None
    assert free_count(cache) == 3
    assert cache._state.free.just_freed(entry.block_ids)
    assert evictable_keys(cache) == ["r"]
    assert cache.has_held_entries() is False
    cache.check()


def test_get_sees_every_state_and_eviction(eviction: str) -> None:
    cache = EmbeddingCache(1, eviction=eviction)
    assert cache.get("a") is None
    entry = put_not_ready(cache, "a", 1)
    assert cache.get("a") is entry
    cache.mark_ready("a")
    assert cache.get("a") is entry
    cache.pin("a")
    assert cache.get("a") is entry
    cache.unpin("a")
    put_not_ready(cache, "b", 1)
    assert cache.get("a") is None


def test_has_held_entries_tracks_not_ready_and_pinned(eviction: str) -> None:
    """HeldEntriesInv."""
    cache = EmbeddingCache(3, eviction=eviction)
    assert not cache.has_held_entries()
    put_not_ready(cache, "a", 1)
    assert cache.has_held_entries()
    cache.mark_ready("a")
    assert not cache.has_held_entries()
    cache.pin("a")
    assert cache.has_held_entries()
    cache.unpin("a")
    assert not cache.has_held_entries()
    put_not_ready(cache, "b", 1)
    cache.discard("b")
    assert not cache.has_held_entries()


# ---------------------------------------------------------------- misuse


Setup = Callable[[EmbeddingCache], None]


def _ready(c: EmbeddingCache) -> None:
    put_not_ready(c, "n", 1)
    put_ready(c, "k", 2)
    put_ready(c, "r", 1)


def _not_ready(c: EmbeddingCache) -> None:
    put_ready(c, "r", 1)
    put_not_ready(c, "k", 2)


def _pinned(pins: int) -> Setup:
    def setup(c: EmbeddingCache) -> None:
        put_ready(c, "r", 1)
        put_pinned(c, "k", 2, pins)

    return setup


def _evicted(c: EmbeddingCache) -> None:
    put_ready(c, "k", 2)
    put_not_ready(c, "x", 6)  # evicts k


def _empty(c: EmbeddingCache) -> None:
    pass


def _others(c: EmbeddingCache) -> None:
    put_ready(c, "r", 1)
    put_not_ready(c, "n", 1)
    put_pinned(c, "p", 1)


# (setup, operation, args, error, seed phrase, state named in the message)
LIFECYCLE_MISUSE: list[tuple[Setup, str, tuple[object, ...], type[LifecycleError], str, str]] = [
    (_not_ready, "alloc", ("k", 1), DuplicateAllocError, "duplicate alloc", "not-ready"),
    (_ready, "alloc", ("k", 1), DuplicateAllocError, "duplicate alloc", "ready"),
    (_pinned(2), "alloc", ("k", 1), DuplicateAllocError, "duplicate alloc", "pinned(2)"),
    (_ready, "alloc", ("k", 99), DuplicateAllocError, "duplicate alloc", "ready"),
    (_ready, "alloc", ("new", 7), CapacityError, "capacity", "absent"),
    (_empty, "alloc", ("new", 7), CapacityError, "capacity", "absent"),
    (_ready, "mark_ready", ("k",), AlreadyReadyError, "already-ready", "ready"),
    (_pinned(1), "mark_ready", ("k",), AlreadyReadyError, "already-ready", "pinned(1)"),
    (_not_ready, "pin", ("k",), NotReadyError, "not-ready", "not-ready"),
    (_ready, "unpin", ("k",), NotPinnedError, "unpinned", "ready"),
    (_not_ready, "unpin", ("k",), NotPinnedError, "unpinned", "not-ready"),
    (_ready, "discard", ("k",), DiscardHeldError, "discard of ready/pinned", "ready"),
    (_pinned(1), "discard", ("k",), DiscardHeldError, "discard of ready/pinned", "pinned(1)"),
]


@pytest.mark.parametrize(
    ("setup", "op", "args", "error", "phrase", "state"),
    LIFECYCLE_MISUSE,
    ids=[f"{c[1]}-{c[3].__name__}-{c[5]}" for c in LIFECYCLE_MISUSE],
)
def test_lifecycle_misuse_raises_and_changes_nothing(
    setup: Setup,
    op: str,
    args: tuple[object, ...],
    error: type[LifecycleError],
    phrase: str,
    state: str,
    eviction: str,
) -> None:
    """MisuseUnchangedProp: AssertionError family, seed phrase, key and state named."""
    cache = EmbeddingCache(6, eviction=eviction)
    setup(cache)
    before = observe(cache)
    with pytest.raises(error) as info:
        getattr(cache, op)(*args)
    assert type(info.value) is error
    assert isinstance(info.value, AssertionError)
    message = str(info.value)
    assert phrase in message
    assert repr(args[0]) in message
    assert f"state: {state}" in message
    assert info.value.key == args[0] and info.value.state == state
    assert observe(cache) == before
    cache.check()


@pytest.mark.parametrize("op", ["mark_ready", "pin", "unpin", "discard"])
@pytest.mark.parametrize("setup", [_empty, _others, _evicted], ids=["empty", "others", "evicted"])
def test_absent_key_raises_key_error_and_changes_nothing(
    op: str, setup: Setup, eviction: str
) -> None:
    cache = EmbeddingCache(6, eviction=eviction)
    setup(cache)
    before = observe(cache)
    with pytest.raises(UnknownKeyError) as info:
        getattr(cache, op)("k")
    assert isinstance(info.value, KeyError)
    assert not isinstance(info.value, AssertionError)
    assert "'k'" in str(info.value) and op in str(info.value)
    assert info.value.key == "k"
    assert observe(cache) == before


BAD_KEYS: list[object] = [1, None, b"k", ("k",), ["k"]]


@pytest.mark.parametrize("key", BAD_KEYS, ids=repr)
@pytest.mark.parametrize(
    "op", ["get", "pin_if_ready", "mark_ready", "pin", "unpin", "discard", "alloc"]
)
def test_non_str_key_raises_type_error_and_changes_nothing(
    op: str, key: object, eviction: str
) -> None:
    cache = EmbeddingCache(6, eviction=eviction)
    _ready(cache)
    before = observe(cache)
    args: tuple[object, ...] = (key, 1) if op == "alloc" else (key,)
    with pytest.raises(TypeError):
        getattr(cache, op)(*args)
    assert observe(cache) == before


@pytest.mark.parametrize(
    ("n_blocks", "error"),
    [
        (True, TypeError),
        (False, TypeError),
        (1.0, TypeError),
        ("2", TypeError),
        (None, TypeError),
        (-1, ValueError),
        (-100, ValueError),
    ],
    ids=repr,
)
@pytest.mark.parametrize("key", ["new", "k"])
def test_bad_n_blocks_raises_and_changes_nothing(
    key: str, n_blocks: object, error: type[Exception], eviction: str
) -> None:
    """Argument errors come before lifecycle ones, even for a live key."""
    cache = EmbeddingCache(6, eviction=eviction)
    _ready(cache)
    before = observe(cache)
    with pytest.raises(error, match="n_blocks") as info:
        cache.alloc(key, n_blocks)  # type: ignore[arg-type]
    assert type(info.value) is error
    assert observe(cache) == before


def test_duplicate_is_reported_before_capacity_as_in_the_seed(eviction: str) -> None:
    cache = EmbeddingCache(2, eviction=eviction)
    put_ready(cache, "a", 1)
    with pytest.raises(DuplicateAllocError):
        cache.alloc("a", 3)


def test_a_cache_keeps_working_after_every_kind_of_error(eviction: str) -> None:
    cache = EmbeddingCache(3, eviction=eviction)
    put_ready(cache, "a", 1)
    calls: list[Callable[[], object]] = [
        lambda: cache.alloc("a", 1),
        lambda: cache.alloc("b", 4),
        lambda: cache.alloc("b", -1),
        lambda: cache.mark_ready("a"),
        lambda: cache.unpin("a"),
        lambda: cache.discard("a"),
        lambda: cache.pin("zz"),
    ]
    for call in calls:
        with pytest.raises((AssertionError, KeyError, TypeError, ValueError)):
            call()
    put_not_ready(cache, "b", 3)  # evicts a
    cache.mark_ready("b")
    assert cache.pin_if_ready("b") is not None
    cache.unpin("b")
    assert not cache.has_held_entries()
    cache.check()


# ---------------------------------------------------------------- the shape (vLLM 0.33)


#: (allocator, admission, contiguity)
Options = tuple[str, str | None, int]


def _options() -> list[Options]:
    """Every allocator, with and without every admission filter; contiguity where allowed."""
    found: list[Options] = []
    for allocator in ALLOCATORS:
        for admission in [None, *ADMISSION_FILTERS]:
            found.append((allocator, admission, 0))
            if allocator == "extents":
                found.append((allocator, admission, 2))
    return found


def _alloc_admitted(
    cache: EmbeddingCache, key: str, n_blocks: int, shape: tuple[int, int] | None
) -> CacheEntry:
    """``alloc``, asked twice when a filter declines the first ask (it admits the second)."""
    entry = cache.alloc(key, n_blocks, shape)
    if entry is None and cache.admission is not None:
        assert cache.get(key) is None
        entry = cache.alloc(key, n_blocks, shape)
    assert entry is not None, f"alloc({key!r}, {n_blocks}) did not fit"
    return entry


def _shapes_of(cache: EmbeddingCache) -> dict[str, tuple[int, int] | None]:
    return {key: entry.shape for key, entry in cache._state.entries.items()}


@pytest.mark.parametrize("options", _options(), ids=repr)
def test_the_shape_is_kept_and_returned_under_every_option(options: Options, eviction: str) -> None:
    """Each entry keeps its own shape through allocs that evict others (and, with
    contiguity, extra victims); get, pin_if_ready and a lease return it."""
    allocator, admission, contiguity = options
    cache = EmbeddingCache(
        8, eviction, allocator=allocator, admission=admission, contiguity=contiguity
    )
    shapes = {f"k{i}": (i + 1, 16 * (i + 1)) for i in range(12)}
    for i, (key, shape) in enumerate(shapes.items()):
        entry = _alloc_admitted(cache, key, 1 + i % 3, shape)
        assert entry.shape is shape  # a plain tuple of plain ints: kept as given
        assert cache.get(key) is entry
        cache.mark_ready(key)
        assert all(shape == shapes[k] for k, shape in _shapes_of(cache).items())
    assert len(cache) < len(shapes)  # the pool turned over: some were evicted
    for key in list(cache._state.entries):
        got = cache.get(key)
        assert got is not None and got.shape == shapes[key]
        hit = cache.pin_if_ready(key)
        assert hit is got and hit.shape == shapes[key]
        lease = cache.lease(key, 5.0)
        assert lease is not None and lease.held and lease.shape == shapes[key]
        assert lease.release()
        cache.unpin(key)
    cache.check()


def test_an_evicted_or_discarded_key_comes_back_with_its_new_shape(eviction: str) -> None:
    cache = EmbeddingCache(2, eviction=eviction)
    first = cache.alloc("a", 2, (1, 1))
    assert first is not None
    cache.mark_ready("a")
    with pytest.raises(DuplicateAllocError):
        cache.alloc("a", 2, (9, 9))
    assert first.shape == (1, 1)  # a refused alloc leaves the live entry's shape alone
    b = cache.alloc("b", 2, (5, 6))  # evicts a
    assert b is not None and b.shape == (5, 6) and cache.get("a") is None
    cache.discard("b")
    again = cache.alloc("b", 2)
    assert again is not None and again.shape is None  # nothing of the discarded entry's
    a = cache.alloc("a", 0, (7, 8))
    assert a is not None and a.shape == (7, 8)
    assert first.shape == (1, 1) and b.shape == (5, 6)  # detached entries keep their own


def test_the_shape_defaults_to_none_as_upstream() -> None:
    cache = EmbeddingCache(4)
    assert put_not_ready(cache, "a", 1).shape is None
    entry = cache.alloc("b", 1, None)
    assert entry is not None and entry.shape is None
    assert CacheEntry((0,)).shape is None and CacheEntry((0,), (2, 3)).shape == (2, 3)
    # vLLM's scheduler passes it third, positionally: the parameter is upstream's.
    params = inspect.signature(EmbeddingCache.alloc).parameters
    assert list(params) == ["self", "key", "n_blocks", "shape"]
    assert params["shape"].default is None
    assert params["shape"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert "shape" in CacheEntry.__slots__ and "shape" in embedding_cache.Lease.__slots__
    assert not hasattr(entry, "__dict__")


@pytest.mark.parametrize(
    ("shape", "stored"),
    [
        ((0, 0), (0, 0)),
        ((3, 4), (3, 4)),
        ((10**30, 1), (10**30, 1)),  # not checked against n_blocks
        (Size((3, 4)), (3, 4)),
        ((Index(3), Index(4)), (3, 4)),
        ((True + 2, 4), (3, 4)),  # an int computed from a bool is a plain int
    ],
    ids=repr,
)
def test_a_well_formed_shape_is_stored_as_plain_ints(shape: object, stored: object) -> None:
    """A plain tuple of plain ints is kept as given (the same object), as upstream;
    any other accepted shape becomes a new plain tuple of plain ints."""
    cache = EmbeddingCache(4)
    entry = cache.alloc("a", 1, shape)  # type: ignore[arg-type]
    assert entry is not None and entry.shape == stored
    assert type(entry.shape) is tuple and all(type(d) is int for d in entry.shape)
    plain = type(shape) is tuple and all(type(d) is int for d in shape)
    assert (entry.shape is shape) == plain
    assert repr(entry) == f"CacheEntry(block_ids=(3,), shape={stored!r}, state='not-ready')"


#: (shape, error class, exact message): spec/MISUSE.md section 4.5.
BAD_SHAPES: list[tuple[object, type[Exception], str]] = [
    ([3, 4], TypeError, "shape must be None or a tuple of 2 ints, not list"),
    ("34", TypeError, "shape must be None or a tuple of 2 ints, not str"),
    (3, TypeError, "shape must be None or a tuple of 2 ints, not int"),
    ({3: 4}, TypeError, "shape must be None or a tuple of 2 ints, not dict"),
    ((), ValueError, "shape must have 2 dimensions (rows, width), got 0"),
    ((3,), ValueError, "shape must have 2 dimensions (rows, width), got 1"),
    ((3, 4, 5), ValueError, "shape must have 2 dimensions (rows, width), got 3"),
    ((3.0, 4, 5), ValueError, "shape must have 2 dimensions (rows, width), got 3"),
    ((3.0, 4), TypeError, "shape[0] must be an int, not float"),
    ((3, 4.0), TypeError, "shape[1] must be an int, not float"),
    ((True, 4), TypeError, "shape[0] must be an int, not bool"),
    ((3, False), TypeError, "shape[1] must be an int, not bool"),
    ((3, "4"), TypeError, "shape[1] must be an int, not str"),
    ((None, 4), TypeError, "shape[0] must be an int, not NoneType"),
    ((-1, 4.0), TypeError, "shape[1] must be an int, not float"),
    ((-1, 4), ValueError, "shape[0] must be >= 0, got -1"),
    ((3, -2), ValueError, "shape[1] must be >= 0, got -2"),
    ((-1, -2), ValueError, "shape[0] must be >= 0, got -1"),
    ((Index(-5), 4), ValueError, "shape[0] must be >= 0, got -5"),
    (Size((3, -1)), ValueError, "shape[1] must be >= 0, got -1"),
]


@pytest.mark.parametrize(("shape", "error", "message"), BAD_SHAPES, ids=repr)
@pytest.mark.parametrize("key", ["new", "n", "k", "p"])  # absent, not-ready, ready, pinned
def test_a_bad_shape_raises_and_changes_nothing(
    key: str, shape: object, error: type[Exception], message: str, eviction: str
) -> None:
    """The typed error, exactly, before the key's state is looked at; the whole
    observable state, the leases included, as before (MisuseUnchangedProp)."""
    cache = EmbeddingCache(8, eviction=eviction, clock=lambda: 100.0)
    _ready(cache)
    put_pinned(cache, "p", 1)
    lease = cache.lease("k", 5.0)
    assert lease is not None and lease.held
    book = cache._state.leases
    before = observe(cache), sorted(book.live), list(book.heap), dict(book.per_key), book.next_id
    with pytest.raises(error) as info:
        cache.alloc(key, 2, shape)  # type: ignore[arg-type]
    assert type(info.value) is error
    assert str(info.value) == f"EmbeddingCache.alloc: {message}"
    after = observe(cache), sorted(book.live), list(book.heap), dict(book.per_key), book.next_id
    assert after == before
    cache.check()


def test_the_earlier_arguments_decide_over_a_bad_shape_and_the_shape_over_the_state() -> None:
    """SPEC.md section 3's order: key, n_blocks, shape, then duplicate, capacity, fail-fast."""
    cache = EmbeddingCache(4)
    put_pinned(cache, "p", 1)
    put_ready(cache, "r", 1)
    before = observe(cache)
    alloc: Callable[..., object] = cache.alloc  # called with arguments of every type
    cases: list[tuple[Callable[[], object], type[Exception], str]] = [
        (lambda: alloc(1, 1, [3, 4]), TypeError, "key must be a str, not int"),
        (lambda: alloc("x", True, (3,)), TypeError, "n_blocks must be an int, not bool"),
        (lambda: alloc("x", -1, (3,)), ValueError, "n_blocks must be >= 0, got -1"),
        (lambda: alloc("p", 1, (3,)), ValueError, "shape must have 2 dimensions"),
        (lambda: alloc("x", 5, (-1, 1)), ValueError, "shape[0] must be >= 0"),
        (lambda: alloc("x", 4, (1.5, 1)), TypeError, "shape[0] must be an int"),
        (lambda: alloc("p", 1, (3, 4)), DuplicateAllocError, "duplicate alloc"),
        (lambda: alloc("x", 5, (3, 4)), CapacityError, "capacity exceeded"),
    ]
    for call, error, phrase in cases:
        with pytest.raises(error) as info:
            call()
        assert type(info.value) is error and phrase in str(info.value), str(info.value)
        assert observe(cache) == before
    assert cache.alloc("x", 4, (3, 4)) is None  # fails fast: p is pinned; nothing kept
    assert observe(cache) == before


def test_a_declined_alloc_keeps_no_shape() -> None:
    cache = EmbeddingCache(2, admission="doorkeeper")
    put_ready(cache, "a", 2)
    assert cache.alloc("b", 1, (3, 4)) is None  # would evict a: declined on first ask
    assert cache.get("b") is None and cache.get("a") is not None
    entry = cache.alloc("b", 1, (5, 6))  # the second ask is admitted, with its own shape
    assert entry is not None and entry.shape == (5, 6)


def test_a_not_ready_lease_and_copies_carry_the_shape() -> None:
    """A lease on a save in flight carries the shape too (it holds no pin); the state's
    copy (replay, the linearizability model) keeps every entry's and lease's shape."""
    cache = EmbeddingCache(4, clock=lambda: 100.0)
    cache.alloc("a", 1, (3, 4))
    cache.alloc("b", 1)
    pending = cache.lease("a", 5.0)
    assert pending is not None and not pending.ready and pending.shape == (3, 4)
    cache.mark_ready("a")
    held = cache.lease("a", 5.0)
    assert held is not None and held.held and held.shape == (3, 4)
    twin = cache._state.copy()
    assert {k: e.shape for k, e in twin.entries.items()} == {"a": (3, 4), "b": None}
    assert [lease.shape for lease in twin.leases.live.values()] == [(3, 4)]


def test_the_cache_wrappers_take_the_shape() -> None:
    """The traced cache (trace validation) and the linearizability mutants inherit or
    mirror alloc: each takes the shape third, keeps it, and refuses a bad one."""
    classes: list[type[EmbeddingCache]] = [TracedEmbeddingCache, *MUTANTS.values()]
    for cls in classes:
        cache = cls(4)
        entry = cache.alloc("a", 1, (3, 4))
        assert entry is not None and entry.shape == (3, 4), cls.__name__
        with pytest.raises(ValueError, match=r"shape\[0\] must be >= 0"):
            cache.alloc("b", 1, (-1, 4))
        assert cache.get("b") is None, cls.__name__


# ---------------------------------------------------------------- each policy's order


def use(cache: EmbeddingCache, key: str, times: int = 1) -> None:
    """``times`` uses of a ready entry: pin, then unpin (a hit, and a release)."""
    for _ in range(times):
        cache.pin(key)
        cache.unpin(key)


@pytest.mark.parametrize(("eviction", "victim"), [("gdsf", "large"), ("fifo", "small")])
def test_gdsf_evicts_the_large_one_time_entry_before_the_small_often_used_one(
    eviction: str, victim: str
) -> None:
    """gdsf, EvictLowestPriorityProp: priority = clock + scale * uses // size. fifo, on the
    same run, takes the oldest: the small one."""
    cache = EmbeddingCache(8, eviction=eviction)
    put_ready(cache, "small", 1)
    use(cache, "small", 3)  # four uses, one block: the highest priority
    put_ready(cache, "large", 6)  # one use, six blocks, and the newest
    put_not_ready(cache, "x", 2)  # one block free: one victim
    survivor = "small" if victim == "large" else "large"
    assert cache.get(victim) is None and cache.get(survivor) is not None
    cache.check()


def test_gdsf_priorities_use_counts_and_the_clock() -> None:
    """A priority is fixed when the entry joins: clock + scale * freq // max(size, 1);
    freq is 1 at mark_ready, +1 per use up to max_freq; evicting raises the clock
    to the victim's priority."""
    cache = EmbeddingCache(8, eviction=functools.partial(GdsfPolicy, scale=12, max_freq=3))
    put_ready(cache, "a", 3)  # 12 * 1 // 3 = 4
    put_ready(cache, "b", 2)
    use(cache, "b")  # rejoins with freq 2: 12 * 2 // 2 = 12
    put_ready(cache, "z", 0)  # zero blocks count as one: 12 * 1 // 1 = 12
    v = policy_vars(cache)
    assert v["prio"] == {"a": 4, "b": 12, "z": 12} and v["clock"] == 0
    assert v["freq"] == {"a": 1, "b": 2, "z": 1} and v["order"] == ("a", "b", "z")
    use(cache, "b", 5)  # capped at 3: 12 * 3 // 2 = 18, and b joined last
    v = policy_vars(cache)
    assert v["freq"]["b"] == 3 and v["prio"]["b"] == 18 and v["order"] == ("a", "z", "b")
    put_not_ready(cache, "x", 6)  # 3 free: evicts a (priority 4), the clock becomes 4
    assert cache.get("a") is None and policy_vars(cache)["clock"] == 4
    cache.mark_ready("x")  # 4 + 12 * 1 // 6 = 6: new entries start from the clock
    assert policy_vars(cache)["prio"]["x"] == 6
    put_not_ready(cache, "y", 2)  # none free: x has the lowest priority, though the newest
    assert cache.get("x") is None and policy_vars(cache)["clock"] == 6
    put_not_ready(cache, "w", 5)  # 4 free: z (12, no blocks: frees none), then b (18)
    assert cache.get("z") is None and cache.get("b") is None
    assert policy_vars(cache)["clock"] == 18
    cache.check()


def test_gdsf_breaks_ties_by_join_order_and_ignores_get() -> None:
    cache = EmbeddingCache(3, eviction=functools.partial(GdsfPolicy, scale=4, max_freq=1))
    for key in ("a", "b", "c"):
        put_ready(cache, key, 1)
    use(cache, "a")  # the count is capped at 1: a rejoins at the same priority, last
    cache.get("b")  # not a use
    cache.pin_if_ready("nope")  # nor is a miss
    v = policy_vars(cache)
    assert v["prio"] == {"a": 4, "b": 4, "c": 4} and v["freq"] == {"a": 1, "b": 1, "c": 1}
    assert v["order"] == ("b", "c", "a")
    put_not_ready(cache, "x", 1)
    assert cache.get("b") is None
    put_not_ready(cache, "y", 1)
    assert cache.get("c") is None and cache.get("a") is not None
    cache.check()


def test_s3fifo_a_one_time_entry_leaves_from_s_before_a_used_entry_in_m() -> None:
    """S3-FIFO: S's head is evicted if unused since it entered S, moved to M if used;
    S is drained first while it holds at least its target (10% of the pool, >= 1 block)."""
    cache = EmbeddingCache(10, eviction="s3fifo")
    put_ready(cache, "hot", 3)
    use(cache, "hot")
    put_ready(cache, "one", 3)
    assert policy_vars(cache)["small"] == ("hot", "one")
    put_not_ready(cache, "x", 5)  # 4 free: hot (used) moves to M, one (unused) is evicted
    assert cache.get("one") is None and cache.get("hot") is not None
    v = policy_vars(cache)
    assert v["small"] == () and v["main"] == ("hot",)
    assert v["ghost"] == (("one", 3),)  # (key, weight) pairs, as TLA+ <<k, w>>
    assert v["home"] == {"hot": "M", "x": "S"} and v["freq"] == {"hot": 0}
    cache.mark_ready("x")
    use(cache, "hot")
    put_not_ready(cache, "y", 4)  # 2 free: S holds x (5 blocks >= 1): x goes, not hot
    assert cache.get("x") is None and cache.get("hot") is not None
    assert policy_vars(cache)["ghost"] == (("one", 3), ("x", 5))
    cache.check()


def test_s3fifo_a_key_back_from_the_ghost_enters_m_and_the_ghost_is_bounded() -> None:
    cache = EmbeddingCache(10, eviction="s3fifo")  # S's target 1 block, G's capacity 9
    put_ready(cache, "a", 5)
    put_not_ready(cache, "x", 10)  # evicts a from S: a is remembered in G
    cache.discard("x")
    assert policy_vars(cache)["ghost"] == (("a", 5),)
    put_ready(cache, "b", 5)
    put_not_ready(cache, "x", 10)  # evicts b: G would weigh 10 > 9, so a is trimmed
    cache.discard("x")
    assert policy_vars(cache)["ghost"] == (("b", 5),)
    put_ready(cache, "b", 2)  # back from G: homed in M
    put_ready(cache, "c", 2)  # new: homed in S
    v = policy_vars(cache)
    assert v["main"] == ("b",) and v["small"] == ("c",) and v["ghost"] == ()
    assert v["home"] == {"b": "M", "c": "S"}
    cache.check()


def test_s3fifo_counters_cap_at_3_and_a_used_head_of_m_gets_a_second_chance() -> None:
    cache = EmbeddingCache(10, eviction="s3fifo")
    put_ready(cache, "p", 2)
    use(cache, "p")
    put_ready(cache, "r", 2)
    put_ready(cache, "q", 2)
    use(cache, "q")
    put_not_ready(cache, "x", 5)  # 4 free: p (used) moves to M, r (unused) is evicted
    assert policy_vars(cache)["main"] == ("p",) and cache.get("r") is None
    use(cache, "p", 5)  # five uses, counted up to 3
    cache.get("p")  # not a use
    assert policy_vars(cache)["freq"] == {"p": 3, "q": 1}
    cache.discard("x")
    put_not_ready(cache, "y", 7)  # 6 free: q (used) moves to M behind p; then M's head p
    # is used: counter 3 -> 2 and to M's tail; q is not: evicted (and not remembered)
    assert cache.get("q") is None and cache.get("p") is not None
    v = policy_vars(cache)
    assert v["main"] == ("p",) and v["freq"] == {"p": 2}
    assert v["ghost"] == (("r", 2),)
    cache.check()


def test_repr_never_waits_for_the_lock() -> None:
    """A contract violation inside a public method describes its arguments (the cache
    among them, e.g. ``lease``'s owner) while the method holds the lock: the repr must
    not wait for it (a wait there deadlocked the checked build's lease on a bug)."""
    cache = EmbeddingCache(4)
    assert "free=4" in repr(cache)
    done: list[str] = []
    with cache._lock:
        worker = threading.Thread(target=lambda: done.append(repr(cache)))
        worker.start()
        worker.join(timeout=10)
        assert done, "repr waited for the lock"
        assert done[0] == "EmbeddingCache(num_blocks=4, eviction='fifo', allocator='stack', busy)"
        assert repr(cache) == done[0]  # the holder itself: a non-reentrant lock
    assert "free=4" in repr(cache)
