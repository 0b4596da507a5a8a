"""The density policy alone: its hooks, the history, aging, pins, and its verification
side ``DensityChecks`` (``policy.checks()``; spec/policies/density.md).

The policy is driven directly, as the cache drives it: ``admit`` when an entry is
allocated, ``ready`` when it becomes ready, ``hold`` then ``hit`` on the first pin,
``hit`` on a nested pin, ``release`` on the last unpin, ``evict`` until enough
blocks are free, ``forget`` on a discard.
"""

from __future__ import annotations

import random

import pytest

from embedding_cache import EVICTION_POLICIES, EmbeddingCache
from embedding_cache.policies.density import DensityChecks, DensityPolicy

SMALL = {"scale": 4, "max_count": 8, "history_size": 2, "period": 100}


def density_with(*keys: str, size: int = 1, **params: int) -> DensityPolicy:
    """A policy holding ``keys`` admitted and ready, in that order."""
    policy = DensityPolicy(16, **{**SMALL, **params})
    for key in keys:
        policy.admit(key, size)
        policy.ready(key, size)
    return policy


def use(policy: DensityPolicy, key: str, size: int = 1) -> None:
    """A pin and its unpin: held, hit, released (the first pin of an unpinned entry)."""
    policy.hold(key)
    policy.hit(key)
    policy.release(key, size)


def order(policy: DensityPolicy) -> tuple[str, ...]:
    return tuple(policy.checks().abstract()["order"])


# ---------------------------------------------------------------- registration


def test_the_registry_finds_density_with_its_order_property_and_checks() -> None:
    assert EVICTION_POLICIES["density"] is DensityPolicy
    assert DensityPolicy.order_property == "EvictLowestDensityProp"
    assert type(density_with("a").checks()) is DensityChecks


def test_the_defaults_follow_the_pool() -> None:
    small, big = DensityPolicy(16), DensityPolicy(1 << 20)
    assert (small.scale, small.max_count) == (1 << 32, 1 << 16)
    assert (small.history_size, small.period) == (8, 16)
    assert (big.history_size, big.period) == ((1 << 20) // 16, (1 << 20) // 4)


@pytest.mark.parametrize(
    ("params", "error", "name"),
    [
        ({"scale": 0}, ValueError, "scale"),
        ({"max_count": 0}, ValueError, "max_count"),
        ({"history_size": -1}, ValueError, "history_size"),
        ({"period": 0}, ValueError, "period"),
        ({"scale": 1.5}, TypeError, "scale"),
        ({"period": True}, TypeError, "period"),
        ({"history_size": "8"}, TypeError, "history_size"),
    ],
)
def test_invalid_parameters_are_named(params: dict[str, object], error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        DensityPolicy(16, **params)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the rule


def test_evict_takes_the_lowest_density_per_block() -> None:
    policy = DensityPolicy(16, **SMALL)
    for key, size in (("a", 1), ("b", 4), ("c", 2)):
        policy.admit(key, size)
        policy.ready(key, size)
    # densities: a 4, b 1, c 2
    assert [policy.evict() for _ in range(3)] == ["b", "c", "a"]


def test_uses_raise_the_density_and_ties_go_to_the_earliest_joined() -> None:
    policy = density_with("a", "b", "c")
    use(policy, "a")
    assert order(policy) == ("b", "c", "a")
    assert policy.evict() == "b"  # b and c tie at count 1; b joined first
    assert policy.evict() == "c"
    assert policy.evict() == "a"


def test_a_count_is_capped() -> None:
    policy = density_with("a", max_count=2)
    for _ in range(5):
        use(policy, "a")
    assert policy.count["a"] == 2


# ---------------------------------------------------------------- the history


def test_an_evicted_count_comes_back_with_its_key() -> None:
    policy = density_with("a", "b")
    use(policy, "a")
    use(policy, "a")
    assert policy.evict() == "b"
    assert policy.evict() == "a"
    assert policy.history == {"b": 1, "a": 3}
    policy.admit("a", 1)
    assert policy.count["a"] == 4 and "a" not in policy.history


def test_a_forgotten_count_is_remembered_too() -> None:
    policy = DensityPolicy(16, **SMALL)
    policy.admit("a", 1)
    policy.forget("a")
    assert policy.history == {"a": 1} and "a" not in policy.count
    policy.admit("a", 1)
    assert policy.count["a"] == 2


def test_the_history_keeps_the_newest_keys_only() -> None:
    policy = DensityPolicy(16, **SMALL)
    for key in "abc":
        policy.admit(key, 1)
        policy.forget(key)
    assert list(policy.history) == ["b", "c"]  # history_size 2: a left


# ---------------------------------------------------------------- aging


def test_the_period_th_tick_halves_every_count_and_reprices() -> None:
    policy = density_with("a", "b", period=7)  # 2 ticks (admits)
    use(policy, "a")
    use(policy, "a")
    use(policy, "a")  # a: 4 (tick 5)
    policy.admit("c", 1)
    policy.forget("c")  # c remembered at 1
    policy.admit("d", 1)  # tick 7: halve
    assert policy.ticks == 0
    assert policy.count == {"a": 2, "b": 1, "d": 1}  # b and d stay >= 1
    assert policy.history == {}  # c's 1 halved to 0: forgotten
    assert policy.members["a"][0] == 4 * 2  # repriced from the halved count
    assert policy.checks().check({"a": 1, "b": 1}, {"a": 1, "b": 1}) is None


def test_aging_keeps_the_join_order() -> None:
    policy = density_with("a", "b", period=3)
    policy.admit("c", 1)  # tick 3: halve
    assert order(policy) == ("a", "b")
    assert policy.evict() == "a"


# ---------------------------------------------------------------- pins


def test_a_held_entry_is_not_evictable_and_rejoins_as_the_newest() -> None:
    policy = density_with("a", "b")
    policy.hold("a")
    policy.hit("a")
    assert "a" not in policy and len(policy) == 1
    assert tuple(policy.evictable_keys()) == ("b",)
    policy.release("a", 1)
    assert order(policy) == ("b", "a")
    assert policy.checks().joined_ok("a", 1) is None


def test_stale_heap_items_are_dropped_and_the_heap_stays_small() -> None:
    policy = density_with("a", "b")
    for _ in range(100):
        policy.hold("a")
        policy.release("a", 1)
    assert len(policy._heap) <= 2 * len(policy.members) + 9
    assert policy.evict() == "b"
    assert policy.evict() == "a"


# ---------------------------------------------------------------- verification


class Driver:
    """Random events on a policy, as the cache sends them: admits (some forgotten),
    first and nested pins, unpins, allocs. Every alloc's victims are the plan's, the
    plan holds afterwards, and ``check`` holds after every event."""

    def __init__(self, policy: DensityPolicy, rng: random.Random) -> None:
        self.policy, self.rng = policy, rng
        self.pins: dict[str, int] = {}
        self.sizes: dict[str, int] = {}
        self.fresh = 0

    def admit(self) -> None:
        key = f"k{self.rng.randint(0, self.fresh)}"  # sometimes a key seen before
        if key in self.pins:
            return
        self.fresh += 1
        self.sizes[key] = self.rng.randint(0, 3)
        self.policy.admit(key, self.sizes[key])
        if self.rng.random() < 0.1:
            self.policy.forget(key)
            return
        self.policy.ready(key, self.sizes[key])
        self.pins[key] = 0

    def pin(self) -> None:
        key = self.rng.choice(sorted(self.pins))
        if self.pins[key] == 0:
            self.policy.hold(key)
        self.policy.hit(key)
        self.pins[key] += 1

    def unpin(self) -> None:
        held = sorted(k for k, n in self.pins.items() if n > 0)
        if held:
            key = self.rng.choice(held)
            self.pins[key] -= 1
            if self.pins[key] == 0:
                self.policy.release(key, self.sizes[key])

    def alloc(self) -> None:
        evictable_blocks = sum(self.sizes[k] for k, n in self.pins.items() if n == 0)
        free = self.rng.randint(0, 2)
        n = self.rng.randint(0, free + evictable_blocks)
        plan = self.policy.checks().plan_victims(free, n, self.sizes.__getitem__)
        got: list[str] = []
        freed = 0
        while free + freed < n:
            key = self.policy.evict()
            got.append(key)
            freed += self.sizes.pop(key)
            del self.pins[key]
        assert plan.victims == tuple(got)
        assert self.policy.checks().plan_holds(plan)

    def run(self, steps: int) -> None:
        for _ in range(steps):
            roll = self.rng.random()
            if roll < 0.3 or not self.pins:
                self.admit()
            elif roll < 0.6:
                self.pin()
            elif roll < 0.8:
                self.unpin()
            else:
                self.alloc()
            sizes, pins = self.sizes, self.pins
            evictable = {k: sizes[k] for k, n in pins.items() if n == 0}
            assert self.policy.checks().check({k: sizes[k] for k in pins}, evictable) is None


@pytest.mark.parametrize("seed", range(30))
def test_plan_victims_is_what_evict_does(seed: int) -> None:
    params = {"scale": 4, "max_count": 3, "history_size": 2, "period": 5}
    Driver(DensityPolicy(64, **params), random.Random(seed)).run(300)


def test_joined_ok_wants_the_newest_at_its_density() -> None:
    policy = density_with("a", "b")
    assert policy.checks().joined_ok("b", 1) is None
    assert policy.checks().joined_ok("a", 1) is not None  # not the newest
    prio, seq, size = policy.members["b"]
    policy.members["b"] = (prio + 1, seq, size)
    assert "density" in (policy.checks().joined_ok("b", 1) or "")


@pytest.mark.parametrize(
    ("corrupt", "invariant"),
    [
        (lambda p: p.members.pop("a"), "EvictableSetInv"),
        (lambda p: p.members.__setitem__("a", (99, 1, 1)), "EvictableSetInv"),
        (lambda p: p.count.__setitem__("z", 0), "PolicyTypeOK"),  # z: not ready
        (lambda p: setattr(p, "ticks", 100), "PolicyTypeOK"),
        (lambda p: p.history.__setitem__("a", 1), "HistoryHoldsNoLiveKeyInv"),
        (lambda p: p.history.update(x=1, y=1, z=1), "HistoryBoundInv"),
    ],
)
def test_check_detects_a_corrupted_structure(corrupt, invariant) -> None:  # type: ignore[no-untyped-def]
    policy = density_with("a", "b")
    corrupt(policy)
    problem = policy.checks().check({"a": 1, "b": 1}, {"a": 1, "b": 1})
    assert problem is not None and problem.startswith(invariant), problem


def test_clone_is_independent() -> None:
    policy = density_with("a", "b")
    twin = policy.checks().clone()
    use(twin, "a")
    assert twin.evict() == "b"
    assert policy.count == {"a": 1, "b": 1} and order(policy) == ("a", "b")


# ---------------------------------------------------------------- in the cache


def test_the_cache_with_density_keeps_a_reused_entry_and_remembers_it() -> None:
    cache = EmbeddingCache(3, eviction="density")
    for key in "abc":
        cache.alloc(key, 1)
        cache.mark_ready(key)
    cache.pin("a")
    cache.unpin("a")
    cache.alloc("d", 1)
    assert cache.get("a") is not None and cache.get("b") is None
    cache.mark_ready("d")
    cache.alloc("e", 3)  # everything goes; a's count 2 is remembered
    cache.mark_ready("e")
    cache.alloc("a", 1)  # evicts e; a comes back at count 3
    cache.mark_ready("a")
    cache.alloc("f", 1)
    cache.mark_ready("f")
    cache.alloc("g", 2)  # 1 free: one victim, f (count 1), not a (count 3)
    assert cache.get("a") is not None and cache.get("f") is None


def test_the_cache_with_density_never_evicts_a_pinned_entry() -> None:
    cache = EmbeddingCache(2, eviction="density")
    for key in "ab":
        cache.alloc(key, 1)
        cache.mark_ready(key)
    cache.pin("b")
    cache.alloc("c", 1)
    assert cache.get("b") is not None and cache.get("a") is None
    assert cache.alloc("d", 1) is None
