"""Contiguity-aware eviction (spec/SPEC.md section 14), in every build, under every policy.

The unit tests pin each clause of section 14.1 on small pools whose block ids
are worked out by hand; the Hypothesis test drives random calls under fifo
against an independent model of the rule (fifo's queue as a list, the free
ids as a set, runs found by scanning) and, under every policy, checks the
rule's observable consequences and sweeps the invariants. The planted bugs of
contiguity are caught by the contracts in tests/test_contracts_catch_bugs.py
(their catalogue entries carry ``contiguity=1``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import icontract
import pytest
from cache_observe import POLICY_CASES, observe
from hypothesis import given, settings
from hypothesis import strategies as st

from embedding_cache import EmbeddingCache
from embedding_cache.build import CHECKED
from embedding_cache.extent_index import EXACT_LENGTHS
from embedding_cache.extent_pool import ExtentPool
from embedding_cache.free_stack import FreeStack
from embedding_cache.policies import PolicySpec
from embedding_cache.runs import runs_of
from embedding_cache.verification import state_of
from embedding_cache_checker.tlc.manifest import find_tla_dir, load_manifest
from embedding_cache_checker.verify.planted import by_name, run_witness


@pytest.fixture(params=list(POLICY_CASES), ids=list(POLICY_CASES))
def eviction(request: pytest.FixtureRequest) -> PolicySpec:
    return POLICY_CASES[request.param]


def contiguous(num_blocks: int, k: int, eviction: PolicySpec = "fifo") -> EmbeddingCache:
    return EmbeddingCache(num_blocks, eviction=eviction, allocator="extents", contiguity=k)


def ready(cache: EmbeddingCache, *keys: str, size: int = 1) -> None:
    """Allocate each key (``size`` blocks, in turn), then make them ready in turn."""
    for key in keys:
        assert cache.alloc(key, size) is not None
    for key in keys:
        cache.mark_ready(key)


# ---------------------------------------------------------------- construction


def test_contiguity_is_off_by_default_and_shown_when_on() -> None:
    assert EmbeddingCache(4).contiguity == 0
    cache = contiguous(4, 3)
    assert cache.contiguity == 3 and state_of(cache).contiguity == 3
    assert "contiguity=3" in repr(cache) and "contiguity" not in repr(EmbeddingCache(4))
    assert contiguous(4, 0).contiguity == 0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"contiguity": "2"}, TypeError, "contiguity must be an int, not str"),
        ({"contiguity": 2.0}, TypeError, "contiguity must be an int, not float"),
        ({"contiguity": True}, TypeError, "contiguity must be an int, not bool"),
        ({"contiguity": -1}, ValueError, "contiguity must be >= 0, got -1"),
        ({"contiguity": 1}, ValueError, "contiguity=1 needs allocator='extents', not 'stack'"),
        ({"contiguity": 2, "allocator": "stack"}, ValueError, "needs allocator='extents'"),
    ],
    ids=["str", "float", "bool", "negative", "default-allocator", "stack"],
)
def test_a_bad_contiguity_is_a_typed_error_naming_it(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        EmbeddingCache(4, **kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the rule (section 14.1)

# A 5-block pool with one-block a, b, c (the extents allocator cuts each from the
# back of the free run: a = 4, b = 3, c = 2), so 0 and 1 stay free; fifo evicts
# a, then b, then c. An alloc of 3 needs one victim (a): free {0, 1, 4}.


@pytest.mark.parametrize(
    ("k", "ids", "left"),
    [
        (0, (0, 1, 4), {"b", "c"}),  # needed only: two runs
        # b extra, still no run of 3 ({0, 1} and {3, 4}): k reached; the longest, most
        # recently freed first ({3, 4}), then the rest cut from the back of {0, 1}
        (1, (1, 3, 4), {"c"}),
        (2, (2, 3, 4), set()),  # c extra too: {0..4} holds a run, taken by best fit
        (4, (2, 3, 4), set()),  # ends at the run (and at no victim left), not at k
    ],
)
def test_an_alloc_evicts_extra_victims_in_order_until_a_run_or_k(
    k: int, ids: tuple[int, ...], left: set[str]
) -> None:
    cache = contiguous(5, k)
    ready(cache, "a", "b", "c")
    assert [cache.get(key).block_ids for key in "abc"] == [(4,), (3,), (2,)]  # type: ignore[union-attr]
    entry = cache.alloc("x", 3)
    assert entry is not None and entry.block_ids == ids
    assert set(state_of(cache).entries) == left | {"x"}
    cache.check()


def test_an_alloc_that_fits_in_pieces_evicts_for_a_run() -> None:
    # Free {0, 2} after discarding b and d: an alloc of 2 fits, but in two pieces.
    for k, ids, live in ((0, (0, 2), {"a", "c"}), (1, (2, 3), {"c"})):
        cache = contiguous(4, k)
        for key in "abcd":
            assert cache.alloc(key, 1) is not None  # a = 3, b = 2, c = 1, d = 0
        cache.mark_ready("a")
        cache.mark_ready("c")
        cache.discard("b")
        cache.discard("d")
        entry = cache.alloc("x", 2)
        assert entry is not None and entry.block_ids == ids, k  # k = 1: a (3) is evicted
        assert set(state_of(cache).entries) == live | {"x"}


def test_an_alloc_that_meets_a_run_evicts_nothing_extra(eviction: PolicySpec) -> None:
    cache = contiguous(6, 4, eviction)
    ready(cache, "a", "b", size=2)  # a = 4, 5; b = 2, 3; free 0, 1: a run of 2
    entry = cache.alloc("x", 2)
    assert entry is not None and entry.block_ids == (0, 1)
    assert set(state_of(cache).entries) == {"a", "b", "x"}


def test_held_entries_are_never_extra_victims(eviction: PolicySpec) -> None:
    cache = contiguous(5, 4, eviction)
    ready(cache, "a", "b", "c")  # a = 4, b = 3, c = 2
    cache.pin("b")
    assert cache.alloc("y", 1) is not None  # y = 1 (best fit in 0, 1); not ready: held
    entry = cache.alloc("x", 2)  # free {0}: a or c is needed, then no run of 2 is left
    assert entry is not None
    assert {"b", "y", "x"} <= set(state_of(cache).entries)  # pinned and not-ready stay
    assert len(runs_of(entry.block_ids)) == 2  # every evictable entry went; still two runs
    cache.check()


def test_a_short_alloc_changes_nothing(eviction: PolicySpec) -> None:
    cache = contiguous(4, 4, eviction)
    ready(cache, "a")
    assert cache.alloc("b", 1) is not None  # b is not ready: held
    before = observe(cache)
    assert cache.alloc("x", 4) is None  # free 2 + evictable 1 < 4
    assert observe(cache) == before


def test_a_declined_alloc_evicts_nothing() -> None:
    cache = EmbeddingCache(3, allocator="extents", contiguity=2, admission="doorkeeper")
    ready(cache, "a", "b")  # a = 2, b = 1; free 0
    before = observe(cache)
    assert cache.alloc("x", 2) is None  # would evict: declined, nothing moves
    assert observe(cache) == before
    entry = cache.alloc("x", 2)  # at the door: let in; a needed, b extra for a run
    assert entry is not None and entry.block_ids == (1, 2)
    assert set(state_of(cache).entries) == {"x"}


# ---------------------------------------------------------------- has_run


@given(st.lists(st.integers(0, 31), unique=True), st.integers(0, 33))
def test_has_run_is_exact_on_both_pools(free_ids: list[int], n: int) -> None:
    ids = sorted(free_ids)
    expect = n == 0 or any(b - a >= n for a, b in runs_of(ids))
    extents = ExtentPool(32)
    extents.take(32)
    for a, b in runs_of(ids):
        extents.give(range(a, b))
    assert extents.has_run(n) is expect
    assert FreeStack(reversed(ids)).has_run(n) is expect
    # The extents pool hands out one run exactly when one exists.
    if 0 < n <= len(ids):
        assert (len(runs_of(extents.take(n))) == 1) is expect


def test_has_run_finds_a_fit_beyond_the_bounded_best_fit_scan() -> None:
    # Above the exact lengths (EXACT_LENGTHS) extents are indexed by size class: 20 free
    # extents of 8,192 ids and one of 8,200, all in class 13, nothing above: the bounded
    # scan (FIT_SCAN = 16) would miss the 8,200; has_run and take look at all of it.
    big = 8192
    assert big > EXACT_LENGTHS
    pool = ExtentPool(21 * (big + 8) + 16)
    pool.take(len(pool))
    pool.give(range(0, big + 8))  # the fitting one first: the last the scan meets
    for i in range(1, 21):
        start = i * (big + 16)
        pool.give(range(start, start + big))
    assert pool.has_run(big + 8) and not pool.has_run(big + 9)
    assert pool.take(big + 8) == tuple(range(big + 8))


# ---------------------------------------------------------------- random calls

KEYS = [f"k{i}" for i in range(8)]
calls = st.lists(
    st.tuples(
        st.sampled_from(["alloc", "alloc", "mark_ready", "pin", "unpin", "discard"]),
        st.integers(0, len(KEYS) - 1),
        st.integers(1, 4),
    ),
    max_size=60,
)


def has_run(free: Iterable[int], n: int) -> bool:
    """An independent run test: scan the sorted free ids."""
    return n == 0 or any(b - a >= n for a, b in runs_of(sorted(free)))


def fifo_victims(
    queue: list[str], free: set[int], n: int, k: int, blocks: Callable[[str], tuple[int, ...]]
) -> list[str]:
    """Section 14.1 from its text, for fifo: the queue's head while short, then up to k
    more while no free run of n exists."""
    got: list[str] = []
    pool = set(free)
    while len(pool) < n:
        got.append(queue[len(got)])
        pool |= set(blocks(got[-1]))
    extra = 0
    while extra < k and len(got) < len(queue) and not has_run(pool, n):
        got.append(queue[len(got)])
        pool |= set(blocks(got[-1]))
        extra += 1
    return got


def _apply(cache: EmbeddingCache, op: str, key: str) -> bool:
    """Run a non-alloc call if its key is in the state it needs; True if it ran."""
    entry = state_of(cache).entries.get(key)
    if entry is None:
        return False
    pins = entry.pin_count
    fits = {
        "mark_ready": pins == -1,
        "pin": pins >= 0,
        "unpin": pins > 0,
        "discard": pins == -1,
    }
    if fits[op]:
        method: Callable[[str], object] = getattr(cache, op)
        method(key)
    return fits[op]


def _other_call_on_fifo(cache: EmbeddingCache, queue: list[str], op: str, key: str) -> None:
    """Run a non-alloc call (if its key is in the state it needs) and move fifo's queue:
    ready and the last unpin append, the first pin removes."""
    entry = state_of(cache).entries.get(key)
    pins = None if entry is None else entry.pin_count
    if _apply(cache, op, key):
        if op == "mark_ready" or (op == "unpin" and pins == 1):
            queue.append(key)
        elif op == "pin" and pins == 0:
            queue.remove(key)


def _alloc_on_fifo(cache: EmbeddingCache, queue: list[str], key: str, n: int, k: int) -> None:
    """alloc(key, n) against section 14.1 for fifo: the victims exactly, one run if any."""
    s = state_of(cache)
    free = set(s.free)
    blocks = {q: s.entries[q].block_ids for q in queue}
    short = len(free) + sum(map(len, blocks.values())) < n
    got = cache.alloc(key, n)
    if short:
        assert got is None
        return
    want = fifo_victims(queue, free, n, k, blocks.__getitem__)
    assert got is not None
    assert [q for q in queue if q not in s.entries] == want, (key, n, want)
    del queue[: len(want)]
    pool = free.union(*(blocks[q] for q in want))
    assert set(got.block_ids) <= pool
    if has_run(pool, n):
        assert len(runs_of(got.block_ids)) <= 1  # a run exists: the entry is one


@settings(max_examples=150, deadline=None)
@given(script=calls, k=st.integers(0, 3), num_blocks=st.integers(4, 10))
def test_random_calls_under_fifo_follow_the_rule_exactly(
    script: list[tuple[str, int, int]], k: int, num_blocks: int
) -> None:
    cache = contiguous(num_blocks, k)
    queue: list[str] = []  # fifo's order, kept by this test from the calls
    for op, pick, n in script:
        key = KEYS[pick]
        if op != "alloc":
            _other_call_on_fifo(cache, queue, op, key)
        elif key not in state_of(cache).entries:
            _alloc_on_fifo(cache, queue, key, min(n, num_blocks), k)
    cache.check()


@settings(max_examples=60, deadline=None)
@given(script=calls, k=st.integers(1, 3), policy=st.sampled_from(list(POLICY_CASES)))
def test_random_calls_under_every_policy_keep_the_rule_and_the_invariants(
    script: list[tuple[str, int, int]], k: int, policy: str
) -> None:
    cache = contiguous(8, k, POLICY_CASES[policy])
    s = state_of(cache)
    for op, pick, n in script:
        key = KEYS[pick]
        if op != "alloc":
            _apply(cache, op, key)
            continue
        if key in s.entries:
            continue
        free = set(s.free)
        evictable = {q for q, e in s.entries.items() if e.pin_count == 0}
        blocks = {q: s.entries[q].block_ids for q in evictable}
        got = cache.alloc(key, n)
        if got is None:
            continue
        evicted = evictable - set(s.entries)
        pool = free.union(*(blocks[q] for q in evicted))
        # At least one victim is needed iff fewer than n are free (the exact count, and
        # the order, are the checked builds' alloc contract: plan_victims).
        need = 0 if len(free) >= n else 1
        if has_run(free, n):
            assert not evicted  # a free run already: nothing needed, nothing extra
        if not has_run(pool, n):
            assert len(evicted) >= need + k or evicted == evictable  # stopped at k or empty
        assert len(runs_of(got.block_ids)) == 1 or not has_run(pool, n)
        cache.check()


# ---------------------------------------------------------------- one name per rule

#: Each rule of section 14.1, and the planted bug (and TLA+ bug model) that breaks it.
RULES = {
    "ContiguityOneTooMany": "EvictBeyondNeedBoundedProp",
    "ContiguityDespiteRun": "ExtraEvictionOnlyWithoutRunProp",
    "ContiguityNever": "ExtraEvictionUntilRunProp",
    "ContiguityExtraNewest": "ContiguityOrderProp",
}


@pytest.mark.parametrize(("bug_name", "rule"), list(RULES.items()))
def test_each_rule_is_one_name_in_the_contracts_and_in_tla(bug_name: str, rule: str) -> None:
    bug = by_name(bug_name)
    assert bug.expect == {rule} and bug.contiguity == 1
    model = {m.name: m for m in load_manifest(find_tla_dir())}[f"MCBug{bug_name}"]
    assert model.expect == rule  # the TLA+ bug model of the same mistake
    if not CHECKED:
        return  # the default build carries no contract code
    for policy in bug.policies():
        with pytest.raises(icontract.ViolationError, match=rf"(?m)^{rule}: "):
            run_witness(bug, policy)
