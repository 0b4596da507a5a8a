"""Differential test: the package against the seed it replaces, vLLM's own class.

The seed is vLLM's ``EmbeddingCache`` from the installed ``vllm==0.33.0``
(``embedding_cache_checker.upstream`` loads its one file, nothing else of
vLLM). Without that release every test here FAILS, naming the install
command: the oracle is never silently skipped.

Random operation streams, misuse mixed in, run on both ``EmbeddingCache``
classes; an alloc gives a ``shape`` (``(rows, width)``) or none, as vLLM 0.33's
connector does. After every operation the results must match -- return values (None,
or an entry's ready/evictable flags, pin count, block ids and shape), the exception
family (AssertionError for lifecycle misuse, KeyError for an absent key) --
and so must every key's entry and ``has_held_entries()``.

Under ``python -O`` the seed's asserts vanish and it silently accepts misuse,
so there only legal operations and absent-key KeyErrors are fed to the seed; a
call that our cache rejects as lifecycle misuse is checked to have changed
nothing and is skipped for the seed. Malformed arguments (non-str keys,
negative counts, shapes that are no pair of non-negative ints) are left out
everywhere: the seed accepts them silently, by
design of this package they raise (test_cache_unit.py covers them).

The seed's order is fifo's, so the comparison is exact for the default policy
only: ``EmbeddingCache(n)``, ``eviction="fifo"`` and the ``FifoPolicy``
factory are each run against the seed. gdsf and s3fifo evict differently by
design; their reference is their own model (test_stateful.py).
"""

from __future__ import annotations

import sys

import pytest
from cache_observe import observe
from hypothesis import given
from hypothesis import strategies as st

from embedding_cache import (
    DuplicateAllocError,
    EmbeddingCache,
    FifoPolicy,
    LifecycleError,
    UnknownKeyError,
)
from embedding_cache_checker.upstream import UpstreamCache as SeedCache
from embedding_cache_checker.upstream import embedding_cache_class


def seed_cache(num_blocks: int) -> SeedCache:
    """A fresh cache of the seed's class, vLLM's own. Raises (the test fails, naming the
    install command) when vllm==0.33.0 is not installed."""
    return embedding_cache_class()(num_blocks)


#: True when the seed's asserts are stripped (python -O).
OPTIMIZED = sys.flags.optimize >= 1
KEYS = ("a", "b", "c", "d", "e")
MAX_POOL = 6
#: Operation names, weighted by repetition towards the ones that make progress;
#: has_held_entries() and get() are also compared after every step (``view``).
OP_NAMES: tuple[str, ...] = (
    "alloc",
    "alloc",
    "mark_ready",
    "mark_ready",
    "pin",
    "pin_if_ready",
    "pin_if_ready",
)
OP_NAMES += ("unpin", "unpin", "discard", "get", "has_held_entries")

Shape = tuple[int, int]  # (rows, width) of the encoder output an entry holds
Op = tuple[str, str, int, Shape | None]  # (method, key, n_blocks, shape -- alloc's only)
Outcome = tuple[str, object]

#: No shape (the call leaves the argument out), or a pair of ints, small or large.
SHAPES: st.SearchStrategy[Shape | None] = st.none() | st.tuples(
    st.integers(0, 4) | st.integers(0, 1 << 20), st.integers(0, 4) | st.integers(0, 1 << 14)
)


#: An operation's name, key and block count (alloc's).
_STEP = (
    st.sampled_from(OP_NAMES),
    st.sampled_from(KEYS),
    st.integers(1, 3) | st.integers(0, MAX_POOL + 2),
)
#: One operation, with the shape an alloc gives (``SHAPES``).
OPS: st.SearchStrategy[Op] = st.tuples(*_STEP, SHAPES)
#: The same operations, every alloc without a shape: the lifecycle alone. Hypothesis
#: draws exactly the steps it drew before the streams had shapes.
LIFECYCLE_OPS: st.SearchStrategy[Op] = st.tuples(*_STEP).map(lambda step: (*step, None))


def describe(value: object) -> object:
    """What a caller sees of a return value: None, a bool, or an entry's fields."""
    if value is None or isinstance(value, bool):
        return value
    return (
        "entry",
        value.ready,  # type: ignore[attr-defined]
        value.evictable,  # type: ignore[attr-defined]
        value._pin_count,  # type: ignore[attr-defined]
        value.block_ids,  # type: ignore[attr-defined]
        value.shape,  # type: ignore[attr-defined]
    )


def call(cache: EmbeddingCache | SeedCache, op: Op) -> Outcome:
    """Run one operation; the result described, or the exception's family."""
    name, key, n, shape = op
    alloc_args = (key, n) if shape is None else (key, n, shape)  # None: the default
    args: tuple[object, ...] = {"alloc": alloc_args, "has_held_entries": ()}.get(name, (key,))
    try:
        return ("returned", describe(getattr(cache, name)(*args)))
    except AssertionError as exc:
        if isinstance(cache, EmbeddingCache):
            # Ours must raise misuse as a LifecycleError, never a contract violation.
            assert isinstance(exc, LifecycleError), repr(exc)
        return ("raised", AssertionError)
    except KeyError as exc:
        if isinstance(cache, EmbeddingCache):
            assert isinstance(exc, UnknownKeyError), repr(exc)
        return ("raised", KeyError)


def view(cache: EmbeddingCache | SeedCache) -> tuple[object, ...]:
    """Every key's entry as a caller sees it, and has_held_entries()."""
    return (*(describe(cache.get(k)) for k in KEYS), cache.has_held_entries())


def run_stream(ours: EmbeddingCache, seed: SeedCache, ops: list[Op]) -> None:
    """Apply ``ops`` to both caches, asserting after each that they look alike."""
    for op in ops:
        before = observe(ours)
        got = call(ours, op)
        if got == ("raised", AssertionError):
            assert observe(ours) == before, f"{op} changed the cache"
            if OPTIMIZED:
                continue  # the seed would not raise: its asserts are stripped
        want = call(seed, op)
        assert got == want, f"{op}: ours {got}, seed {want}"
        assert view(ours) == view(seed), f"after {op}"


def drain(ours: EmbeddingCache, seed: SeedCache) -> None:
    """Reveal the eviction order: one-block allocs of fresh keys until nothing is left.

    The queue is not observable directly; the order in which entries vanish is.
    """
    for i in range(ours.num_blocks + 1):
        run_stream(ours, seed, [("alloc", f"drain{i}", 1, None)])


def fifo_cache(num_blocks: int, how: str) -> EmbeddingCache:
    """The default policy, chosen by omission, by name or by factory."""
    if how == "omitted":
        return EmbeddingCache(num_blocks)
    return EmbeddingCache(num_blocks, eviction="fifo" if how == "name" else FifoPolicy)


@given(
    num_blocks=st.integers(0, MAX_POOL),
    ops=st.lists(OPS, min_size=20, max_size=100),
    how=st.sampled_from(("omitted", "name", "factory")),
)
def test_same_results_as_the_seed(num_blocks: int, ops: list[Op], how: str) -> None:
    ours, seed = fifo_cache(num_blocks, how), seed_cache(num_blocks)
    assert ours.eviction == "fifo"
    run_stream(ours, seed, ops)
    drain(ours, seed)
    ours.check()


def test_the_seed_asserts_only_when_asserts_are_live() -> None:
    """Why -O compares only legal streams: there the seed accepts misuse silently."""
    seed, ours = seed_cache(2), EmbeddingCache(2)
    for cache in (seed, ours):
        cache.alloc("a", 1)
    with pytest.raises(DuplicateAllocError):
        ours.alloc("a", 1)
    if OPTIMIZED:
        assert seed.alloc("a", 1) is not None  # silently replaces the live entry
        assert seed.alloc("b", 5) is None  # over capacity, no error
    else:
        with pytest.raises(AssertionError, match="duplicate alloc"):
            seed.alloc("a", 1)
        with pytest.raises(AssertionError, match="capacity"):
            seed.alloc("b", 5)
    with pytest.raises(KeyError):
        seed.pin("zz")  # a KeyError is no assert: it survives -O


@pytest.mark.parametrize("n_blocks", [-1, -5])
def test_negative_count_diverges_from_the_seed_on_purpose(n_blocks: int) -> None:
    """The seed hands out an empty entry for a negative count; ours raises ValueError."""
    seed = seed_cache(3)
    entry = seed.alloc("a", n_blocks)
    assert entry is not None and entry.block_ids == ()
    with pytest.raises(ValueError, match="n_blocks"):
        EmbeddingCache(3).alloc("a", n_blocks)
