"""The transitions module's table and error helpers, beyond what the cache's own tests reach.

* ``Transitions(overrides)``: an override replaces exactly the named
  transition, and a name that is no transition is a ValueError listing the
  real ones (tracing and the planted bugs build tables this way).
* the pool size's TypeError names the type it got.
* ``alloc`` tells the policy's ``admit`` hook the new entry's block count.
* a count that is not an int but has ``__index__`` (a numpy integer) is
  taken at its value, zero included.
* the lookup errors (which the planted bodies' ``_live_entry`` raises alike): a
  TypeError for a non-str key and an UnknownKeyError (a KeyError naming the
  operation) for an absent str key.

Found by mutation testing (mutation/SURVIVORS.md).
"""

from __future__ import annotations

import pytest

from embedding_cache import EmbeddingCache, GdsfPolicy, UnknownKeyError, transitions
from embedding_cache.state import CacheState
from embedding_cache.verification import LEASE_OPERATIONS, REAL, Transitions


def test_an_override_replaces_exactly_its_transition() -> None:
    def fake_get(s: CacheState, key: str) -> None:
        return None

    table = Transitions({"get": fake_get})
    chosen = table.as_mapping()
    assert chosen["get"] is fake_get
    real = REAL.as_mapping()
    names = {*transitions.OPERATIONS, *LEASE_OPERATIONS, "get", "has_held_entries"}
    assert set(chosen) == set(real) == names
    assert all(chosen[name] is real[name] for name in real if name != "get")


def test_an_unknown_override_is_a_value_error_listing_the_names() -> None:
    with pytest.raises(ValueError) as info:
        Transitions({"evict": lambda s: None})
    names = sorted({*transitions.OPERATIONS, *LEASE_OPERATIONS, "get", "has_held_entries"})
    assert str(info.value) == f"no transition named 'evict'; names: {names}"


def test_a_non_int_pool_size_is_a_type_error_naming_its_type() -> None:
    with pytest.raises(TypeError) as info:
        EmbeddingCache("8")  # type: ignore[arg-type]
    assert str(info.value) == "EmbeddingCache: num_blocks must be an int, not str"


class _AdmitLog(GdsfPolicy):
    """gdsf, noting every admit it is told of."""

    __slots__ = ("admitted",)

    def __init__(self, num_blocks: int = 0) -> None:
        super().__init__(num_blocks)
        self.admitted: list[tuple[str, int]] = []

    def admit(self, key: str, size: int) -> None:
        self.admitted.append((key, size))


def test_alloc_tells_the_policy_the_size_of_the_entry_it_admits() -> None:
    cache = EmbeddingCache(8, eviction=_AdmitLog)
    cache.alloc("a", 3)
    cache.alloc("b", 0)
    policy = cache._state.policy
    assert isinstance(policy, _AdmitLog) and policy.admitted == [("a", 3), ("b", 0)]


class Index:
    """Not an int, but has ``__index__``, like a numpy integer."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def test_an_index_like_count_is_taken_at_its_value_zero_included() -> None:
    cache = EmbeddingCache(4)
    empty = cache.alloc("none", Index(0))  # type: ignore[arg-type]
    assert empty is not None and empty.block_ids == ()
    two = cache.alloc("two", Index(2))  # type: ignore[arg-type]
    assert two is not None and len(two.block_ids) == 2
    with pytest.raises(ValueError, match="n_blocks must be >= 0, got -1"):
        cache.alloc("neg", Index(-1))  # type: ignore[arg-type]


def test_the_lookup_error_is_typed_by_the_key() -> None:
    bad = transitions.bad_key_error(7, "pin")
    assert type(bad) is TypeError
    assert str(bad) == "EmbeddingCache.pin: key must be a str, not int"
    with pytest.raises(UnknownKeyError) as raised:
        EmbeddingCache(2).unpin("k")
    absent = raised.value
    assert type(absent) is UnknownKeyError and isinstance(absent, KeyError)
    assert (absent.key, absent.operation) == ("k", "unpin")
    assert str(absent) == "EmbeddingCache: unpin of absent key 'k'"
