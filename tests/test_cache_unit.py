"""Unit tests of EmbeddingCache: every method, every transition, every error.

Each misuse case also checks MisuseUnchangedProp: the full observable state
after the error equals the state before it. The build matrix (test_builds.py)
re-runs this module in the checked, full and ``python -O`` builds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import pytest
from cache_observe import (
    free_count,
    observe,
    put_not_ready,
    put_pinned,
    put_ready,
    queue_of,
)

import embedding_cache
from embedding_cache import (
    AlreadyReadyError,
    CacheEntry,
    CapacityError,
    DiscardHeldError,
    DuplicateAllocError,
    EmbeddingCache,
    LifecycleError,
    NotPinnedError,
    NotReadyError,
    UnknownKeyError,
    transitions,
)

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
def test_new_cache_is_empty_and_all_free(n: int) -> None:
    cache = EmbeddingCache(n)
    assert cache.num_blocks == n
    assert len(cache) == 0
    assert free_count(cache) == n
    assert queue_of(cache) == []
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


# ---------------------------------------------------------------- alloc


def test_alloc_returns_a_not_ready_entry_with_canonical_ids() -> None:
    cache = EmbeddingCache(8)
    entry = cache.alloc("a", 3)
    assert isinstance(entry, CacheEntry)
    assert entry.ready is False and entry.evictable is False and entry.pin_count == -1
    assert type(entry.block_ids) is tuple and len(entry.block_ids) == 3
    assert list(entry.block_ids) == sorted(set(entry.block_ids))
    assert all(0 <= b < 8 for b in entry.block_ids)
    assert cache.get("a") is entry
    assert free_count(cache) == 5
    assert queue_of(cache) == []
    assert cache.has_held_entries() is True
    cache.check()


def test_alloc_takes_the_top_of_the_free_stack_like_the_seed() -> None:
    cache = EmbeddingCache(6)
    assert put_not_ready(cache, "a", 2).block_ids == (4, 5)
    assert put_not_ready(cache, "b", 3).block_ids == (1, 2, 3)
    cache.discard("a")
    assert put_not_ready(cache, "c", 3).block_ids == (0, 4, 5)


def test_allocs_are_disjoint_until_the_pool_is_full() -> None:
    cache = EmbeddingCache(5)
    a = put_not_ready(cache, "a", 2)
    b = put_not_ready(cache, "b", 3)
    assert set(a.block_ids).isdisjoint(b.block_ids)
    assert set(a.block_ids) | set(b.block_ids) == set(range(5))
    assert free_count(cache) == 0
    assert cache.alloc("c", 1) is None  # nothing free, nothing evictable
    zero = cache.alloc("d", 0)
    assert zero is not None and zero.block_ids == ()
    cache.check()


def test_alloc_of_zero_blocks_in_an_empty_pool() -> None:
    cache = EmbeddingCache(0)
    entry = put_not_ready(cache, "a", 0)
    assert entry.block_ids == ()
    cache.mark_ready("a")
    assert cache.has_held_entries() is False
    cache.check()


def test_alloc_of_the_whole_pool_evicts_everything_evictable() -> None:
    cache = EmbeddingCache(4)
    put_ready(cache, "a", 1)
    put_ready(cache, "b", 2)
    entry = put_not_ready(cache, "c", 4)
    assert entry.block_ids == (0, 1, 2, 3)
    assert cache.get("a") is None and cache.get("b") is None
    assert queue_of(cache) == []
    cache.check()


def test_fail_fast_alloc_returns_none_and_evicts_nothing() -> None:
    """AllocFailsOnlyWhenShortProp / FailedAllocUnchangedProp."""
    cache = EmbeddingCache(6)
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


def test_eviction_follows_mark_ready_order_not_alloc_order() -> None:
    """EvictOldestFirstProp: the queue is ordered by when entries became evictable."""
    cache = EmbeddingCache(3)
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


def test_eviction_takes_only_as_many_entries_as_needed() -> None:
    """EvictOnlyAsNeededProp."""
    cache = EmbeddingCache(6)
    put_ready(cache, "a", 2)
    put_ready(cache, "b", 2)
    put_ready(cache, "c", 2)
    put_not_ready(cache, "d", 3)  # needs 3: evicts a (2) and b (2), not c
    assert [k for k in "abc" if cache.get(k) is not None] == ["c"]
    assert free_count(cache) == 1
    assert queue_of(cache) == ["c"]
    cache.check()


def test_the_last_unpin_requeues_at_the_tail() -> None:
    cache = EmbeddingCache(2)
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


def test_pinned_and_not_ready_entries_are_never_evicted() -> None:
    """HeldBlocksStableProp."""
    cache = EmbeddingCache(4)
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


def test_an_evicted_or_discarded_key_can_be_allocated_again() -> None:
    cache = EmbeddingCache(2)
    put_ready(cache, "a", 2)
    put_not_ready(cache, "b", 2)  # evicts a
    cache.discard("b")
    assert put_not_ready(cache, "a", 1).ready is False
    assert put_not_ready(cache, "b", 1).ready is False
    cache.check()


# ---------------------------------------------------------------- mark_ready, pin, unpin


def test_mark_ready_makes_the_entry_evictable_at_the_tail() -> None:
    cache = EmbeddingCache(4)
    put_ready(cache, "a", 1)
    entry = put_not_ready(cache, "b", 2)
    assert cache.mark_ready("b") is None  # type: ignore[func-returns-value]
    assert entry.ready and entry.evictable and entry.pin_count == 0
    assert queue_of(cache) == ["a", "b"]
    assert cache._state.evictable_blocks == 3
    assert cache.has_held_entries() is False
    cache.check()


def test_pins_nest_and_count() -> None:
    cache = EmbeddingCache(4)
    entry = put_ready(cache, "a", 2)
    assert cache.pin("a") is None  # type: ignore[func-returns-value]
    assert entry.pin_count == 1 and entry.ready and not entry.evictable
    assert queue_of(cache) == [] and cache._state.evictable_blocks == 0
    cache.pin("a")
    assert entry.pin_count == 2
    assert cache.has_held_entries() is True
    assert cache.unpin("a") is None  # type: ignore[func-returns-value]
    assert entry.pin_count == 1 and queue_of(cache) == []
    cache.unpin("a")
    assert entry.pin_count == 0 and entry.evictable
    assert queue_of(cache) == ["a"] and cache._state.evictable_blocks == 2
    assert cache.has_held_entries() is False
    cache.check()


def test_pin_if_ready_on_an_absent_key_returns_none_and_changes_nothing() -> None:
    cache = EmbeddingCache(2)
    put_ready(cache, "a", 1)
    before = observe(cache)
    assert cache.pin_if_ready("b") is None
    assert observe(cache) == before


def test_pin_if_ready_on_a_not_ready_entry_returns_it_unpinned() -> None:
    cache = EmbeddingCache(2)
    entry = put_not_ready(cache, "a", 1)
    before = observe(cache)
    got = cache.pin_if_ready("a")
    assert got is entry and got.ready is False and got.pin_count == -1
    assert observe(cache) == before


@pytest.mark.parametrize("pins_before", [0, 1, 3])
def test_pin_if_ready_pins_a_ready_entry(pins_before: int) -> None:
    cache = EmbeddingCache(3)
    put_ready(cache, "z", 1)
    entry = put_pinned(cache, "a", 2, pins=pins_before)
    got = cache.pin_if_ready("a")
    assert got is entry and got.ready and got.pin_count == pins_before + 1
    assert queue_of(cache) == ["z"]
    assert cache._state.evictable_blocks == 1
    assert cache.has_held_entries() is True
    cache.check()


# ---------------------------------------------------------------- discard, get, has_held_entries


def test_discard_returns_the_blocks_to_the_pool() -> None:
    cache = EmbeddingCache(4)
    put_ready(cache, "r", 1)
    entry = put_not_ready(cache, "a", 2)
    assert cache.discard("a") is None  # type: ignore[func-returns-value]
    assert cache.get("a") is None
    assert free_count(cache) == 3
    assert cache._state.free[-2:] == list(entry.block_ids)
    assert queue_of(cache) == ["r"]
    assert cache.has_held_entries() is False
    cache.check()


def test_get_sees_every_state_and_eviction() -> None:
    cache = EmbeddingCache(1)
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


def test_has_held_entries_tracks_not_ready_and_pinned() -> None:
    """HeldEntriesInv."""
    cache = EmbeddingCache(3)
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
) -> None:
    """MisuseUnchangedProp: AssertionError family, seed phrase, key and state named."""
    cache = EmbeddingCache(6)
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
def test_absent_key_raises_key_error_and_changes_nothing(op: str, setup: Setup) -> None:
    cache = EmbeddingCache(6)
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
def test_non_str_key_raises_type_error_and_changes_nothing(op: str, key: object) -> None:
    cache = EmbeddingCache(6)
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
    key: str, n_blocks: object, error: type[Exception]
) -> None:
    """Argument errors come before lifecycle ones, even for a live key."""
    cache = EmbeddingCache(6)
    _ready(cache)
    before = observe(cache)
    with pytest.raises(error, match="n_blocks") as info:
        cache.alloc(key, n_blocks)  # type: ignore[arg-type]
    assert type(info.value) is error
    assert observe(cache) == before


def test_duplicate_is_reported_before_capacity_as_in_the_seed() -> None:
    cache = EmbeddingCache(2)
    put_ready(cache, "a", 1)
    with pytest.raises(DuplicateAllocError):
        cache.alloc("a", 3)


def test_a_cache_keeps_working_after_every_kind_of_error() -> None:
    cache = EmbeddingCache(3)
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
