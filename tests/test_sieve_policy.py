"""The sieve policy alone: its hooks, the hand, pins, wrap-around, and its verification
side ``SieveChecks`` (``policy.checks()``; spec/POLICIES.md, "sieve").

The policy is driven directly, as the cache drives it: ``ready`` when an entry
becomes ready, ``hold`` then ``hit`` on the first pin, ``hit`` on a nested pin,
``release`` on the last unpin, ``evict`` until enough blocks are free.
"""

from __future__ import annotations

import random

import pytest

from embedding_cache import EVICTION_POLICIES, EmbeddingCache
from embedding_cache.policies.sieve import SieveChecks, SievePolicy
from embedding_cache_checker.verify.crosshair_plugin import build_state


def sieve_with(*keys: str) -> SievePolicy:
    """A policy holding ``keys`` ready and unvisited, oldest first."""
    policy = SievePolicy(16)
    for key in keys:
        policy.ready(key, 1)
    return policy


def use(policy: SievePolicy, key: str) -> None:
    """A pin and its unpin: held, hit, released (the first pin of an unpinned entry)."""
    policy.hold(key)
    policy.hit(key)
    policy.release(key, 1)


def queue(policy: SievePolicy) -> tuple[str, ...]:
    return tuple(policy.checks().abstract()["queue"])


# ---------------------------------------------------------------- registration


def test_the_registry_finds_sieve_with_its_order_property_and_checks() -> None:
    assert EVICTION_POLICIES["sieve"] is SievePolicy
    assert SievePolicy.order_property == "EvictUnvisitedFromHandProp"
    assert type(sieve_with("a").checks()) is SieveChecks


# ---------------------------------------------------------------- hooks


def test_ready_joins_at_the_newest_end_unvisited() -> None:
    policy = sieve_with("a", "b", "c")
    assert queue(policy) == ("a", "b", "c")
    assert policy.checks().abstract()["visited"] == {"a": False, "b": False, "c": False}
    assert len(policy) == 3 and "b" in policy
    assert policy.checks().abstract()["hand"] == 0


def test_a_hit_sets_the_bit_and_never_moves_the_entry() -> None:
    policy = sieve_with("a", "b", "c")
    policy.hit("a")
    assert queue(policy) == ("a", "b", "c")
    assert policy.visited == {"a": True, "b": False, "c": False}


def test_evict_takes_the_oldest_unvisited_and_clears_the_bits_it_passes() -> None:
    policy = sieve_with("a", "b", "c")
    use(policy, "a")
    assert policy.evict() == "b"  # a was visited: cleared and passed
    assert policy.visited == {"a": False, "c": False}
    assert policy.hand == "c"  # b's newer neighbour
    assert policy.checks().abstract()["hand"] == 2


def test_the_hand_persists_between_evictions() -> None:
    policy = sieve_with("a", "b", "c")
    use(policy, "a")
    assert policy.evict() == "b"
    # A restart at the oldest would take a (its bit is clear now); the hand is at c.
    assert policy.evict() == "c"
    assert policy.hand is None  # c was the newest
    assert policy.evict() == "a"
    assert len(policy) == 0


def test_the_hand_wraps_from_the_newest_to_the_oldest() -> None:
    policy = sieve_with("a", "b", "c", "d")
    assert policy.evict() == "a"
    assert policy.hand == "b"
    use(policy, "b")
    use(policy, "c")
    use(policy, "d")
    # From b: b, c, d are visited, cleared; wrap to b, now unvisited.
    assert policy.evict() == "b"
    assert policy.hand == "c"
    assert policy.visited == {"c": False, "d": False}


def test_every_entry_visited_evicts_where_the_hand_started() -> None:
    policy = sieve_with("a", "b", "c")
    for key in "abc":
        use(policy, key)
    assert policy.evict() == "a"
    assert policy.visited == {"b": False, "c": False}


def test_after_evicting_the_newest_a_new_entry_waits_behind_the_old_ones() -> None:
    policy = sieve_with("a", "b")
    use(policy, "a")
    assert policy.evict() == "b"  # the newest: the hand resets to none
    policy.ready("c", 1)
    assert policy.evict() == "a"  # from the oldest, not from c


# ---------------------------------------------------------------- pins


def test_a_held_entry_stays_in_place_and_is_not_evictable() -> None:
    policy = sieve_with("a", "b", "c")
    policy.hold("a")
    policy.hit("a")
    assert queue(policy) == ("a", "b", "c")
    assert "a" not in policy and len(policy) == 2
    assert tuple(policy.evictable_keys()) == ("b", "c")
    assert policy.checks().abstract()["pinned"] == {"a": True, "b": False, "c": False}


def test_the_hand_passes_a_held_entry_without_touching_its_bit() -> None:
    policy = sieve_with("a", "b", "c")
    policy.hold("a")
    policy.hit("a")
    policy.hit("b")
    assert policy.evict() == "c"  # a held: passed; b visited: cleared
    assert policy.visited == {"a": True, "b": False}
    assert policy.hand is None  # c was the newest


def test_the_last_unpin_makes_it_evictable_again_where_it_stands_visited() -> None:
    policy = sieve_with("a", "b", "c")
    policy.hold("b")
    policy.hit("b")
    policy.hit("b")  # a nested pin is a use too
    policy.release("b", 1)
    assert queue(policy) == ("a", "b", "c")
    assert "b" in policy and policy.visited["b"] is True
    assert policy.evict() == "a"
    assert policy.evict() == "c"  # b gets its second chance


def test_the_hand_may_rest_on_a_held_entry() -> None:
    policy = sieve_with("a", "b", "c")
    policy.hold("b")
    policy.hit("b")
    assert policy.evict() == "a"
    assert policy.hand == "b"  # pinned, but still queued: the hand stays valid
    assert policy.evict() == "c"  # b passed untouched
    assert policy.visited == {"b": True}


def test_evict_with_everything_held_raises_instead_of_looping() -> None:
    policy = sieve_with("a")
    policy.hold("a")
    with pytest.raises(KeyError):
        policy.evict()


# ---------------------------------------------------------------- verification


def drive(policy: SievePolicy, rng: random.Random, steps: int) -> None:
    """Random events on ``policy``: ready, first pins, nested pins, unpins, allocs.

    An alloc of n blocks with ``free`` free evicts until enough is free, as the
    cache does; before it, the plan must name those victims, and after it the
    plan must hold. ``check`` must hold after every event.
    """
    pins: dict[str, int] = {}
    sizes: dict[str, int] = {}
    fresh = 0
    for _ in range(steps):
        roll = rng.random()
        if roll < 0.3 or not pins:
            key = f"k{fresh}"
            fresh += 1
            sizes[key] = rng.randint(0, 3)
            policy.ready(key, sizes[key])
            pins[key] = 0
        elif roll < 0.6:
            key = rng.choice(sorted(pins))
            if pins[key] == 0:
                policy.hold(key)
            policy.hit(key)
            pins[key] += 1
        elif roll < 0.8:
            held = sorted(k for k, n in pins.items() if n > 0)
            if held:
                key = rng.choice(held)
                pins[key] -= 1
                if pins[key] == 0:
                    policy.release(key, sizes[key])
        else:
            alloc(policy, rng, pins, sizes)
        evictable = {k: sizes[k] for k, n in pins.items() if n == 0}
        assert policy.checks().check({k: sizes[k] for k in pins}, evictable) is None


def alloc(
    policy: SievePolicy, rng: random.Random, pins: dict[str, int], sizes: dict[str, int]
) -> None:
    """An alloc's eviction loop, checked against ``plan_victims`` and ``plan_holds``."""
    evictable_blocks = sum(sizes[k] for k, n in pins.items() if n == 0)
    free = rng.randint(0, 2)
    n = rng.randint(0, free + evictable_blocks)
    plan = policy.checks().plan_victims(free, n, sizes.__getitem__)
    got: list[str] = []
    freed = 0
    while free + freed < n:
        key = policy.evict()
        got.append(key)
        freed += sizes.pop(key)
        del pins[key]
    assert plan.victims == tuple(got)
    assert plan.victim_blocks == freed
    assert policy.checks().plan_holds(plan)


@pytest.mark.parametrize("seed", range(40))
def test_plan_victims_is_what_evict_does(seed: int) -> None:
    drive(SievePolicy(64), random.Random(seed), 200)


def test_plan_victims_of_enough_free_blocks_is_empty_and_changes_nothing() -> None:
    policy = sieve_with("a", "b")
    use(policy, "a")
    before = policy.checks().abstract()
    plan = policy.checks().plan_victims(3, 2, lambda _key: 1)
    assert plan.victims == () and plan.victim_blocks == 0
    assert policy.checks().abstract() == before and policy.checks().plan_holds(plan)


def test_plan_holds_sees_a_hand_left_elsewhere() -> None:
    policy = sieve_with("a", "b", "c")
    use(policy, "a")
    plan = policy.checks().plan_victims(0, 1, lambda _key: 1)
    policy.evict()
    assert policy.checks().plan_holds(plan)
    policy.hand = "a"  # as a hand that restarted at the oldest would be
    assert not policy.checks().plan_holds(plan)


def test_plan_holds_sees_a_bit_left_set() -> None:
    policy = sieve_with("a", "b", "c")
    use(policy, "a")
    plan = policy.checks().plan_victims(0, 1, lambda _key: 1)
    policy.evict()
    policy.visited["a"] = True  # as a walk that forgot to clear it would leave it
    assert not policy.checks().plan_holds(plan)


def test_joined_ok_checks_where_a_ready_key_lands() -> None:
    policy = sieve_with("a", "b")
    policy.ready("c", 1)
    assert policy.checks().joined_ok("c", 2) is None
    assert policy.checks().joined_ok("a", 2) is not None  # unvisited, but not the newest
    assert policy.checks().joined_ok("c", 3) is not None  # E did not grow by one


def test_joined_ok_accepts_a_released_key_in_place_when_visited() -> None:
    policy = sieve_with("a", "b")
    policy.hold("a")
    policy.hit("a")
    policy.release("a", 1)
    assert policy.checks().joined_ok("a", 1) is None
    policy.visited["a"] = False  # a release that lost the use
    assert policy.checks().joined_ok("a", 1) is not None


@pytest.mark.parametrize(
    ("hand", "key", "broken"),
    [
        ("b", "a", "a use moved"),  # older than the hand
        ("b", "b", "a use moved"),  # the hand's key
        ("c", "c", "moved the hand"),  # the newest, at the hand: only the hand moves
        ("b", "c", None),  # the newest: a move to the newest end changes nothing
    ],
)
def test_used_ok_accepts_a_use_in_place_and_rejects_the_planted_move(
    hand: str, key: str, broken: str | None
) -> None:
    from embedding_cache_checker.verify.planted.sieve import SieveHitMoves

    for cls in (SievePolicy, SieveHitMoves):
        policy = cls(16)
        for ready in ("a", "b", "c"):
            policy.ready(ready, 1)
        policy.hand = hand  # as an eviction left it
        before = policy.checks().clone()
        policy.hold(key)
        policy.hit(key)
        problem = policy.checks().used_ok(key, before)
        if cls is SievePolicy or broken is None:
            assert problem is None, problem
        else:
            assert problem is not None and broken in problem, problem


def test_used_ok_wants_the_bit_set_and_the_hand_kept() -> None:
    policy = sieve_with("a", "b")
    before = policy.checks().clone()
    policy.hold("a")  # a use that lost its hit
    assert "visited bit" in (policy.checks().used_ok("a", before) or "")
    policy.hit("a")
    policy.hand = "b"
    assert "moved the hand" in (policy.checks().used_ok("a", before) or "")


def test_check_holds_on_a_well_formed_policy() -> None:
    policy = sieve_with("a", "b", "c")
    policy.hold("b")
    assert policy.checks().check({"a": 1, "b": 1, "c": 1}, {"a": 1, "c": 1}) is None


@pytest.mark.parametrize(
    ("corrupt", "invariant"),
    [
        (lambda p: p.newer.__setitem__("c", "a"), "EvictableSetInv"),  # a cycle
        (lambda p: p.older.__setitem__("b", None), "EvictableSetInv"),  # a broken back link
        (lambda p: p.visited.__setitem__("z", False), "EvictableSetInv"),  # an unlinked key
        (lambda p: p.pinned.add("a"), "EvictableSetInv"),  # held but not pinned
        (lambda p: p.pinned.discard("b"), "EvictableSetInv"),  # pinned but not held
        (lambda p: p.visited.__setitem__("a", 1), "PolicyTypeOK"),  # not a bool
        (lambda p: setattr(p, "hand", "z"), "PolicyTypeOK"),  # the hand off the queue
    ],
)
def test_check_detects_a_corrupted_structure(corrupt, invariant) -> None:  # type: ignore[no-untyped-def]
    policy = sieve_with("a", "b", "c")
    policy.hold("b")
    corrupt(policy)
    problem = policy.checks().check({"a": 1, "b": 1, "c": 1}, {"a": 1, "c": 1})
    assert problem is not None and problem.startswith(invariant), problem


def test_a_cyclic_structure_cannot_make_abstract_or_check_loop() -> None:
    policy = sieve_with("a", "b", "c")
    policy.newer["c"] = "a"  # c -> a -> b -> c -> ...
    assert len(policy.checks().abstract()["queue"]) == 3
    assert len(tuple(policy.evictable_keys())) == 3
    assert policy.checks().check({"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 1, "c": 1}) is not None


def test_clone_is_independent() -> None:
    policy = sieve_with("a", "b")
    twin = policy.checks().clone()
    use(twin, "a")
    twin.ready("c", 1)
    assert queue(policy) == ("a", "b") and policy.visited == {"a": False, "b": False}
    assert twin.evict() == "b" and policy.hand is None


# ---------------------------------------------------------------- in the cache


def test_the_cache_with_sieve_keeps_a_reused_entry() -> None:
    cache = EmbeddingCache(3, eviction="sieve")
    for key in "abc":
        cache.alloc(key, 1)
        cache.mark_ready(key)
    cache.pin("a")
    cache.unpin("a")
    cache.alloc("d", 1)
    assert cache.get("a") is not None and cache.get("b") is None
    cache.mark_ready("d")
    cache.alloc("e", 1)  # the hand is at c: c goes, a (cleared) stays
    assert cache.get("c") is None and cache.get("a") is not None


def test_the_cache_with_sieve_never_evicts_a_pinned_entry() -> None:
    cache = EmbeddingCache(2, eviction="sieve")
    for key in "ab":
        cache.alloc(key, 1)
        cache.mark_ready(key)
    cache.pin("a")
    assert cache.has_held_entries()
    cache.alloc("c", 1)
    assert cache.get("a") is not None and cache.get("b") is None
    assert cache.alloc("d", 1) is None  # only the pinned a is left: fail fast
    cache.unpin("a")
    assert cache.alloc("d", 1) is not None and cache.get("a") is None


# ---------------------------------------------------------------- CrossHair's states


def test_crosshair_builds_a_pinned_entry_visited_whatever_its_bit_choice() -> None:
    """Its first pin was a use and the hand never clears a held entry's bit, so a
    pinned, unvisited entry is unreachable (its release would break joined_ok)."""
    # k0 ready, k1 pinned, k2 not ready; every bit chosen 0; the hand at k1.
    s = build_state(3, 3, (0, 1, 2, -1), (0, 1, -1), policy="sieve", choices=(0, 0, 0, 2))
    checks = s.policy.checks()
    assert checks.abstract() == {
        "queue": ("k0", "k1"),
        "visited": {"k0": False, "k1": True},
        "pinned": {"k0": False, "k1": True},
        "hand": 2,
    }
    s.policy.release("k1", 1)
    assert checks.joined_ok("k1", 1) is None
