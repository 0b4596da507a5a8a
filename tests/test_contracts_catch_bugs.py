"""Non-vacuity: every verification layer catches the planted bugs, naming what broke.

The bugs come from the one catalogue, ``embedding_cache_checker.verify.planted``
(``PLANTED``): broken copies of the shared transitions, a bug under every
policy, and broken subclasses of each policy's order rule.

1. Contracts (checked builds only; the build matrix runs this module there):
   each bug's ``witness`` -- legal calls with the real code, then one call
   with the bug planted -- must raise ``icontract.ViolationError`` whose
   description is a name the catalogue expects (``bug.expected(policy)``;
   the policy order conditions report the policy's order property), under
   every policy the bug applies to. The same calls with the real code pass
   (the control). A bug no contract can see (``"contracts" in bug.blind``)
   is shown to pass the contracts yet change the result or abstract state,
   so that the layers comparing states have something to catch.
2. The full sweep (every build): a corrupted state makes ``check`` raise
   ``InvariantViolationError`` naming the broken invariant, under every
   policy; in the full build the next transition's pre-sweep rejects it too.
3. The seed differential (every build): every catalogue bug under fifo, as a
   cache (``bug.cache_class``, no contract code), is told apart from the seed
   (vLLM's own class) by a stream of calls; so is a cache that drops or garbles
   the ``shape`` an alloc is given. (The state machine runs every (bug, policy) pair of
   the catalogue itself: tests/test_stateful.py.)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import icontract
import pytest
from cache_observe import cache_with_every_state, put_ready
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from test_seed_differential import (
    LIFECYCLE_OPS,
    MAX_POOL,
    OPS,
    Op,
    drain,
    run_stream,
    seed_cache,
)

import embedding_cache
from embedding_cache import (
    EVICTION_POLICIES,
    CacheEntry,
    EmbeddingCache,
    InvariantViolationError,
    contracts,
    invariants,
)
from embedding_cache.policies import GdsfPolicy, S3FifoPolicy
from embedding_cache.state import CacheState
from embedding_cache.verification import LEASE_OPERATIONS
from embedding_cache_checker.abstraction import abstract_state
from embedding_cache_checker.verify.planted import PLANTED, PlantedBug, core, pairs, run_witness

checked_only = pytest.mark.skipif(
    not embedding_cache.CHECKED, reason="contracts exist only in the checked builds"
)


def violated(exc: BaseException) -> str:
    """The description (invariant or property name) of an icontract violation."""
    assert isinstance(exc, icontract.ViolationError), repr(exc)
    text = str(exc)
    if text.startswith("File "):
        # icontract's message: "File ..., line N in ...:\n<description>: <condition>:\n..."
        return text.splitlines()[1].split(":")[0]
    return text.split(":")[0]  # a policy order violation: "<order property>: ..."


def _pair_id(pair: tuple[PlantedBug, str]) -> str:
    return f"{pair[0].name}-{pair[1]}"


CONTRACT_PAIRS = list(pairs("contracts"))
BLIND_PAIRS = [(bug, p) for bug, p in pairs() if not bug.caught_by("contracts")]


# ---------------------------------------------------------------- 1. contracts


def test_the_catalogue_covers_every_policy() -> None:
    """Each policy has a planted bug of its own order rule that the contracts catch,
    and the shared bugs are planted under every policy."""
    for policy in EVICTION_POLICIES:
        order = EVICTION_POLICIES[policy].order_property
        own = [b for b in PLANTED if b.policy == policy and order in b.expected(policy)]
        assert own, f"no contract-caught planted bug of {policy}'s order rule"
    shared = [b for b in PLANTED if b.policy is None]
    assert shared and all(b.policies() == tuple(EVICTION_POLICIES) for b in shared)
    assert len({b.name for b in PLANTED}) == len(PLANTED)


@checked_only
@pytest.mark.parametrize("pair", CONTRACT_PAIRS, ids=_pair_id)
def test_the_contract_reports_a_planted_bug(pair: tuple[PlantedBug, str]) -> None:
    bug, policy = pair
    with pytest.raises(icontract.ViolationError) as info:
        run_witness(bug, policy)
    assert violated(info.value) in bug.expected(policy), str(info.value)


@pytest.mark.parametrize("pair", list(pairs()), ids=_pair_id)
def test_the_witness_is_legal_for_the_real_code(pair: tuple[PlantedBug, str]) -> None:
    """Control: the same calls pass the contracts (checked builds) with the real code."""
    bug, policy = pair
    _, state = run_witness(bug, policy, planted=False)
    invariants.check(state)


@pytest.mark.parametrize("pair", BLIND_PAIRS, ids=_pair_id)
def test_a_bug_the_contracts_cannot_see_still_changes_the_state(
    pair: tuple[PlantedBug, str],
) -> None:
    """The catalogue says which bugs no contract states; they must pass every
    contract and invariant (else the catalogue is wrong) and yet diverge."""
    bug, policy = pair
    assert bug.why_blind and not bug.expect
    real, good = run_witness(bug, policy, planted=False)
    broken, bad = run_witness(bug, policy)  # no ViolationError in the checked builds
    invariants.check(bad)
    assert (type(real), abstract_state(good)) != (type(broken), abstract_state(bad))


@pytest.mark.parametrize(
    "bug", [b for b in PLANTED if b.kind == "transition"], ids=lambda b: b.name
)
def test_a_planted_body_wears_the_contract_exactly_in_the_checked_builds(
    bug: PlantedBug,
) -> None:
    assert bug.body is not None
    bare = inspect.unwrap(bug.body)
    assert (bare is not bug.body) == embedding_cache.CHECKED
    assert bug.operations()[bug.transition] is bare  # the layers' bare bodies
    assert bug.operations(checked=True)[bug.transition] is bug.body
    plain = contracts.discard_contract(inspect.unwrap(core.discard_keeps_blocks))
    assert (plain is not inspect.unwrap(core.discard_keeps_blocks)) == embedding_cache.CHECKED


# ---------------------------------------------------------------- 2. the sweep


def _leak(s: CacheState) -> None:
    s.free.take(1)


def _share(s: CacheState) -> None:
    s.free.give((s.entries["p"].block_ids[0],))


def _out_of_range(s: CacheState) -> None:
    s.entries["n"].block_ids = (99,)


def _unsorted(s: CacheState) -> None:
    s.entries["p"].block_ids = s.entries["p"].block_ids[::-1]


def _bad_pin_count(s: CacheState) -> None:
    s.entries["n"]._pin_count = -2


def _left_the_policy(s: CacheState) -> None:
    s.on_hold("r")  # the policy lets go of a ready+unpinned entry (still counted)


def _pinned_evictable(s: CacheState) -> None:
    s.on_release("p", 2)  # the policy takes a pinned entry back (not counted)


def _stale_count(s: CacheState) -> None:
    s.evictable_blocks += 1


CORRUPTIONS: list[tuple[Callable[[CacheState], None], str]] = [
    (_leak, "BlockConservationInv"),
    (_share, "BlockConservationInv"),
    (_out_of_range, "TypeOK"),
    (_unsorted, "TypeOK"),
    (_bad_pin_count, "TypeOK"),
    (_left_the_policy, "EvictableSetInv"),
    (_pinned_evictable, "EvictableSetInv"),
    (_stale_count, "EvictableCountInv"),
]


def _expect_sweep_names(cache: EmbeddingCache, name: str, detail: str = "") -> None:
    with pytest.raises(InvariantViolationError) as info:
        cache.check()
    assert info.value.name == name and str(info.value).startswith(f"{name} violated")
    assert detail in str(info.value), str(info.value)
    if embedding_cache.FULL_SWEEP:
        # The next transition's pre-sweep refuses to run on the corrupted state.
        with pytest.raises(icontract.ViolationError) as pre:
            cache.pin_if_ready("absent")
        assert violated(pre.value) == name


@pytest.mark.parametrize("policy", list(EVICTION_POLICIES))
@pytest.mark.parametrize(("corrupt", "name"), CORRUPTIONS, ids=[c.__name__ for c, _ in CORRUPTIONS])
def test_the_sweep_names_the_broken_invariant(
    corrupt: Callable[[CacheState], None], name: str, policy: str
) -> None:
    cache = cache_with_every_state(policy)
    cache.check()  # control: the uncorrupted state passes
    corrupt(cache._state)
    _expect_sweep_names(cache, name)


def _gdsf_prio_below_clock(s: CacheState) -> None:
    assert isinstance(s.policy, GdsfPolicy)
    s.policy.clock = 1 << 40


def _gdsf_count_out_of_range(s: CacheState) -> None:
    assert isinstance(s.policy, GdsfPolicy)
    s.policy.freq["p"] = 0


def _s3fifo_small_blocks(s: CacheState) -> None:
    assert isinstance(s.policy, S3FifoPolicy)
    s.policy.small_blocks += 1


def _s3fifo_live_ghost(s: CacheState) -> None:
    assert isinstance(s.policy, S3FifoPolicy)
    s.policy.ghost["n"] = 1
    s.policy.ghost_blocks += 1


#: Corruptions of one policy's own state: reported as EvictableSetInv (the
#: sweep's policy check, ``PolicyChecks.check``), with what is wrong in the detail.
POLICY_CORRUPTIONS: list[tuple[str, Callable[[CacheState], None], str]] = [
    ("gdsf", _gdsf_prio_below_clock, "clock"),
    ("gdsf", _gdsf_count_out_of_range, "'p'"),
    ("s3fifo", _s3fifo_small_blocks, "small_blocks"),
    ("s3fifo", _s3fifo_live_ghost, "'n'"),
]


@pytest.mark.parametrize(
    ("policy", "corrupt", "detail"),
    POLICY_CORRUPTIONS,
    ids=[c[1].__name__ for c in POLICY_CORRUPTIONS],
)
def test_the_sweep_checks_the_policy_invariants(
    policy: str, corrupt: Callable[[CacheState], None], detail: str
) -> None:
    cache = cache_with_every_state(policy)
    cache.check()
    corrupt(cache._state)
    _expect_sweep_names(cache, "EvictableSetInv", detail)


def test_held_entries_inv_is_checked_on_its_own() -> None:
    """HeldEntriesInv follows from EvictableSetInv, so break both and ask its predicate."""
    cache = EmbeddingCache(2)
    put_ready(cache, "a", 1)
    assert invariants.held_entries_inv(cache._state) is None
    cache._state.entries["a"]._pin_count = 1  # pinned, yet still evictable
    assert invariants.held_entries_inv(cache._state) is not None
    names = [n for n, _ in invariants.violations(cache._state)]
    assert names == ["EvictableSetInv", "EvictableCountInv", "HeldEntriesInv"]


# ---------------------------------------------------------------- 3. the seed differential


QUICK = settings(
    max_examples=300,
    derandomize=True,
    database=None,
    deadline=None,
    phases=[Phase.generate],  # finding the bug is the point; shrinking only costs time
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
)

#: Every bug under fifo: the seed differential compares with the seed's fifo. The
#: seed has no leases, so a lease transition's bug is outside what it can compare.
DIFFERENTIAL_BUGS = [
    bug for bug in PLANTED if bug.applies_to("fifo") and bug.transition not in LEASE_OPERATIONS
]


@pytest.mark.parametrize("bug", DIFFERENTIAL_BUGS, ids=lambda b: b.name)
def test_the_seed_differential_catches_a_planted_bug(bug: PlantedBug) -> None:
    cache_class = bug.cache_class("fifo")

    def differs(case: tuple[int, list[Op]]) -> bool:
        num_blocks, ops = case
        ours, seed = cache_class(num_blocks), seed_cache(num_blocks)
        try:
            run_stream(ours, seed, ops)
            drain(ours, seed)
        except AssertionError:
            return True
        return False

    # Every planted bug is in the lifecycle, and no transition reads a shape: the search
    # runs on shapeless streams, whose budget QUICK was set for (the shapes' extra draws
    # move where derandomized generation finds PinAlwaysDecrements past 300 examples).
    cases = st.tuples(st.integers(1, MAX_POOL), st.lists(LIFECYCLE_OPS, min_size=20, max_size=100))
    _, ops = find(cases, differs, settings=QUICK)
    assert ops  # a non-empty stream tells them apart


class _DropsShape(EmbeddingCache):
    """A cache that forgets the shape it is given: block ids and lifecycle untouched."""

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        return super().alloc(key, n_blocks)


class _SwapsShape(EmbeddingCache):
    """A cache that stores the shape's dimensions the wrong way round."""

    def alloc(
        self, key: str, n_blocks: int, shape: tuple[int, int] | None = None
    ) -> CacheEntry | None:
        return super().alloc(key, n_blocks, None if shape is None else (shape[1], shape[0]))


@pytest.mark.parametrize("cache_class", [_DropsShape, _SwapsShape], ids=lambda c: c.__name__)
def test_the_seed_differential_compares_the_shape(cache_class: type[EmbeddingCache]) -> None:
    """The shapes in the differential's streams are compared, entry by entry."""

    def differs(case: tuple[int, list[Op]]) -> bool:
        num_blocks, ops = case
        try:
            run_stream(cache_class(num_blocks), seed_cache(num_blocks), ops)
        except AssertionError:
            return True
        return False

    cases = st.tuples(st.integers(1, MAX_POOL), st.lists(OPS, min_size=20, max_size=100))
    _, ops = find(cases, differs, settings=QUICK)
    assert any(op[0] == "alloc" and op[3] is not None for op in ops)
