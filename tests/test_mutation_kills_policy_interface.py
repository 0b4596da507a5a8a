"""The policies' interface beyond the cache's hot path: methods, clones, plans on nothing.

* fifo's cache binds its OrderedDict's own methods as hooks, so its Python
  methods (``ready``, ``release``, ``hold``, ``evict``) never run inside a
  cache; they are the documented ``EvictionPolicy`` interface all the same.
  Driven directly, each policy's methods must do what its bound hooks do.
* ``clone`` (through ``CacheState.copy``, which replay and the
  linearizability model branch states with) must give a state that evolves
  exactly as the original under the same calls, and independently of it.
* ``plan_victims`` with nothing evictable (only when EvictableCountInv is
  already broken) must plan no victims rather than fail; s3fifo's plan must
  follow a key it promotes into M back to it within the same alloc.
* ``hooks``: an event the policy ignores (it keeps the base's no-op) is
  bound as None, so the transition skips the call.
* s3fifo's probationary target is 10% of the pool in whole blocks, at least 1;
  a pool too small for M keeps no ghost.
* ``make_policy``'s errors say exactly what was wrong.
* ``joined_ok`` (the checked build's placement check) must reject a key
  that is not the newest joiner, and say what it found.

Found by mutation testing (mutation/SURVIVORS.md): no test in the fast
selection ran these paths.
"""

from __future__ import annotations

import random

import pytest
from cache_observe import POLICY_CASES, put_pinned, put_ready

from embedding_cache import (
    EVICTION_POLICIES,
    CacheError,
    EmbeddingCache,
    FifoPolicy,
    GdsfPolicy,
    S3FifoPolicy,
    transitions,
)
from embedding_cache.policies import EvictionPolicy, make_policy
from embedding_cache.policies.s3fifo import small_target
from embedding_cache.state import CacheState
from embedding_cache_checker.abstraction import PolicyView, policy_view

KEYS = ("a", "b", "c", "d", "e", "f")
OPS = ("alloc", "alloc", "mark_ready", "pin", "pin_if_ready", "unpin", "discard")


def _step(s: CacheState, rng: random.Random) -> tuple[object, ...]:
    """One random call on ``s`` (errors included); what it returned and the policy after it."""
    op, key = rng.choice(OPS), rng.choice(KEYS)
    result: object
    try:
        if op == "alloc":
            entry = transitions.alloc(s, key, rng.randint(0, 4))
            result = None if entry is None else entry.block_ids
        elif op == "pin_if_ready":
            entry = transitions.pin_if_ready(s, key)
            result = None if entry is None else entry.pin_count
        else:
            result = getattr(transitions, op)(s, key)
    except CacheError as exc:
        result = type(exc).__name__
    return op, key, result, policy_view(s.checks.abstract()), s.evictable_blocks


def _run(s: CacheState, seed: int, steps: int) -> list[tuple[object, ...]]:
    rng = random.Random(seed)
    return [_step(s, rng) for _ in range(steps)]


@pytest.mark.parametrize("case", list(POLICY_CASES))
def test_a_copied_state_evolves_exactly_as_the_original(case: str) -> None:
    state = CacheState(10, make_policy(POLICY_CASES[case], 10))
    _run(state, seed=1, steps=120)  # fill every structure: queues, ghost, clock, heap
    twin = state.copy()
    assert policy_view(twin.checks.abstract()) == policy_view(state.checks.abstract())
    assert type(twin.policy) is type(state.policy)
    assert _run(twin, seed=2, steps=150) == _run(state, seed=2, steps=150)


@pytest.mark.parametrize("case", list(POLICY_CASES))
def test_a_copied_state_does_not_share_the_policy(case: str) -> None:
    state = CacheState(10, make_policy(POLICY_CASES[case], 10))
    _run(state, seed=3, steps=120)
    before: PolicyView = policy_view(state.checks.abstract())
    twin = state.copy()
    _run(twin, seed=4, steps=150)
    assert policy_view(state.checks.abstract()) == before


def _by_methods(policy: EvictionPolicy) -> EvictionPolicy:
    """The script below, through the policy's own methods."""
    policy.admit("a", 2)
    policy.admit("b", 1)
    policy.admit("c", 3)
    policy.ready("a", 2)
    policy.ready("b", 1)
    policy.ready("c", 3)
    policy.hold("a")
    policy.hit("a")
    policy.release("a", 2)
    return policy


def _by_hooks(policy: EvictionPolicy) -> EvictionPolicy:
    """The same script, through the hooks a cache binds."""
    hooks = policy.hooks()
    for key, size in (("a", 2), ("b", 1), ("c", 3)):
        if hooks.admit is not None:
            hooks.admit(key, size)
    for key, size in (("a", 2), ("b", 1), ("c", 3)):
        hooks.ready(key, size)
    hooks.hold("a")
    if hooks.hit is not None:
        hooks.hit("a")
    hooks.release("a", 2)
    return policy


@pytest.mark.parametrize("name", list(EVICTION_POLICIES))
def test_the_methods_do_what_the_bound_hooks_do(name: str) -> None:
    cls = EVICTION_POLICIES[name]
    direct, hooked = _by_methods(cls(6)), _by_hooks(cls(6))
    assert policy_view(direct.checks().abstract()) == policy_view(hooked.checks().abstract())
    sizes = {"a": 2, "b": 1, "c": 3}
    assert direct.checks().check(sizes, sizes) is None  # the sizes the methods were told are kept
    evicted = [direct.evict() for _ in range(3)]
    evict = hooked.hooks().evict
    assert evicted == [evict()[0] for _ in range(3)]
    assert sorted(evicted) == ["a", "b", "c"] and len(direct) == 0


def test_fifo_methods_evict_oldest_first_and_a_release_goes_to_the_back() -> None:
    policy = _by_methods(EVICTION_POLICIES["fifo"](6))
    assert policy.checks().abstract() == {"queue": ("b", "c", "a")}
    assert [policy.evict() for _ in range(3)] == ["b", "c", "a"]


@pytest.mark.parametrize("name", list(EVICTION_POLICIES))
def test_a_plan_over_nothing_evictable_has_no_victims(name: str) -> None:
    policy = EVICTION_POLICIES[name](4)

    def size_of(key: str) -> int:
        raise AssertionError(f"no key to size, asked for {key!r}")

    plan = policy.checks().plan_victims(0, 2, size_of)
    assert (plan.victims, plan.victim_blocks) == ((), 0)


def test_gdsf_rejects_a_scale_or_max_freq_below_one() -> None:
    for scale, max_freq in ((0, 1), (1, 0)):
        with pytest.raises(ValueError) as info:
            GdsfPolicy(4, scale=scale, max_freq=max_freq)
        expected = f"gdsf: scale and max_freq must be >= 1, got {scale}, {max_freq}"
        assert str(info.value) == expected


@pytest.mark.parametrize("name", list(EVICTION_POLICIES))
def test_joined_ok_accepts_only_the_newest_joiner(name: str) -> None:
    policy = EVICTION_POLICIES[name](10)
    for key, size in (("a", 1), ("b", 2)):
        policy.admit(key, size)
        before = len(policy)
        policy.ready(key, size)
        assert policy.checks().joined_ok(key, before) is None
    # "a" joined first: it is not where the rule puts the newest joiner.
    message = policy.checks().joined_ok("a", 1)
    assert message is not None and "'a'" in message
    # The evictable set did not grow by one.
    message = policy.checks().joined_ok("b", 2)
    assert message is not None and "from 2 to 2" in message


def test_gdsf_joined_ok_reports_a_priority_below_the_clock() -> None:
    policy = GdsfPolicy(10, scale=4)
    policy.ready("a", 1)
    prio = policy.members["a"][0]
    policy.clock = prio + 1
    message = policy.checks().joined_ok("a", 0)
    assert message == f"'a' joined at priority {prio}, below the clock {prio + 1}"


def test_s3fifo_joined_ok_with_an_empty_home_queue_names_no_tail() -> None:
    policy = S3FifoPolicy(10)
    policy.admit("a", 1)
    policy.ready("a", 1)
    policy.home["b"] = "M"  # homed in M, which is empty
    message = policy.checks().joined_ok("b", 0)
    assert message == "'b' joined, but the newest key of its queue is None"


def test_s3fifo_a_key_promoted_by_an_alloc_can_be_evicted_by_the_same_alloc() -> None:
    # The only evictable entry is a used one in S: the alloc promotes it to M, S is
    # then empty, so the same alloc comes back to it in M, its counter now 0: evicted.
    cache = EmbeddingCache(4, eviction="s3fifo")
    put_ready(cache, "a", 1)
    cache.pin("a")  # a use
    cache.unpin("a")
    put_pinned(cache, "held", 3)
    policy = cache._state.policy
    plan = policy.checks().plan_victims(0, 1, lambda key: len(cache._state.entries[key].block_ids))
    assert plan.victims == ("a",) and plan.victim_blocks == 1
    assert cache.alloc("x", 1) is not None
    assert cache.get("a") is None and policy.checks().plan_holds(plan)


class _BaseHookedFifo(FifoPolicy):
    """fifo bound through the base class's ``hooks`` (fifo's own binds C-level methods)."""

    __slots__ = ()
    hooks = EvictionPolicy.hooks


def test_an_event_the_policy_ignores_is_no_hook() -> None:
    gdsf = GdsfPolicy(4).hooks()  # gdsf counts uses, but ignores admit and forget
    assert gdsf.admit is None and gdsf.forget is None and gdsf.hit is not None
    s3fifo = S3FifoPolicy(4).hooks()  # s3fifo needs all three
    assert None not in (s3fifo.admit, s3fifo.forget, s3fifo.hit)
    fifo = _BaseHookedFifo(4).hooks()  # fifo ignores all three, uses included
    assert (fifo.admit, fifo.forget, fifo.hit) == (None, None, None)


def test_s3fifo_small_target_is_a_tenth_of_the_pool_at_least_one() -> None:
    pools = (0, 9, 10, 15, 19, 20, 110)
    assert [small_target(n) for n in pools] == [1, 1, 1, 1, 1, 2, 11]
    assert all(type(small_target(n)) is int for n in pools)
    assert S3FifoPolicy(25).small_target == 2


def test_s3fifo_a_pool_with_no_room_for_m_remembers_no_ghost() -> None:
    assert (S3FifoPolicy(1).ghost_capacity, S3FifoPolicy(0).ghost_capacity) == (0, 0)
    cache = EmbeddingCache(1, eviction="s3fifo")
    put_ready(cache, "a", 1)
    put_ready(cache, "b", 1)  # evicts a from S, which G cannot hold
    assert cache.get("a") is None and cache._state.checks.abstract()["ghost"] == ()


def test_make_policy_errors_say_what_was_wrong() -> None:
    with pytest.raises(ValueError) as unknown:
        make_policy("lru", 4)
    valid = ", ".join(repr(name) for name in EVICTION_POLICIES)
    assert str(unknown.value) == f"EmbeddingCache: unknown eviction policy 'lru'; valid: {valid}"
    assert valid.startswith("'fifo', ")  # the default first
    with pytest.raises(TypeError) as factory:
        make_policy(lambda n: "fifo", 4)
    assert str(factory.value) == (
        "EmbeddingCache: eviction factory returned str, not an EvictionPolicy"
    )
    with pytest.raises(TypeError) as neither:
        make_policy(3, 4)
    assert str(neither.value) == (
        "EmbeddingCache: eviction must be a policy name or a factory, not int"
    )
