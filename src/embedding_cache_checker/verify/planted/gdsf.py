"""Planted bugs of gdsf's order rule (lowest priority first, the clock raised).

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its order rule (``planted.bug.PlantedPolicy``
says why no class adds a field); ``BUGS`` holds their catalogue entries.

The same file holds ``ADAPTER``, how CrossHair builds this policy's states
(``embedding_cache_checker.policies.adapter``): a policy's checker side is one
file. gdsf's checker side: a clock, a use count per ready entry, and how far below the
clock each evictable entry joined, as CrossHair choices.

Layout (``MAX_ENTRIES`` = n): choice 0 is the clock; then per entry i its use
count (1..max_freq), how far below the clock it joined (0..clock, cut to its
weight, so its priority is anything from the clock to the clock plus its full
weight) and whether it left a stale heap item behind (pinned and released
before). Join order is key order. Built states use ``GDSF_SMALL`` (the planted
bugs' parameters), so priorities tie and use counts reach their cap within reach.

Besides: GdsfClockInv stated on one step of the code (``gdsf_clock``), for the replay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from embedding_cache.policies import EvictionPolicy, GdsfPolicy

from ...policies.base import MAX_ENTRIES, Bound, Entries, PolicyAdapter, pad
from ..transition_properties import CodeTransition, evicted
from .bug import ORDER, PlantedBug, PlantedPolicy, policy_bug


class GdsfEvictHighest(PlantedPolicy, GdsfPolicy):
    """PLANTED BUG (GdsfEvictHighest): ``evict`` takes the highest priority, not the lowest."""

    __slots__ = ()

    def evict(self) -> str:
        """O(E). (The victim's heap item goes stale, as after a hold.)"""
        members = self.members
        key = max(members, key=members.__getitem__)  # the bug: max, not min
        self.clock = members.pop(key)[0]
        del self.freq[key]
        return key


class GdsfEvictFirstJoined(PlantedPolicy, GdsfPolicy):
    """PLANTED BUG (GdsfEvictFirstJoined): ``evict`` takes the entry that joined first,
    ignoring priorities (tla/: the gdsf bug model of the same name)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(1). (Members are kept in join order; the victim's heap item goes stale.)"""
        key = next(iter(self.members))  # the bug: the lowest priority, not the first joined
        self.clock = self.members.pop(key)[0]
        del self.freq[key]
        return key


class GdsfHoldKeepsOrder(PlantedPolicy, GdsfPolicy):
    """PLANTED BUG (GdsfHoldKeepsOrder): the first pin leaves the key among the evictable
    members, so a pinned entry can be chosen as a victim."""

    __slots__ = ()

    def hold(self, key: str) -> None:
        """O(1)."""
        # the bug: del self.members[key] is missing


class GdsfForgetsClock(PlantedPolicy, GdsfPolicy):
    """PLANTED BUG (GdsfForgetsClock): ``evict`` never raises the clock, so entries that
    waited are never aged (the "greedy dual" inflation is lost)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(log E) amortized."""
        clock = self.clock
        key = super().evict()
        self.clock = clock  # the bug: the clock must become the victim's priority
        return key


class GdsfJoinIgnoresClock(PlantedPolicy, GdsfPolicy):
    """PLANTED BUG (GdsfJoinIgnoresClock): a joining entry is priced without the clock,
    so after any eviction it ranks below entries that waited."""

    __slots__ = ()

    def _join(self, key: str, size: int) -> None:
        clock, self.clock = self.clock, 0  # the bug: the price must start from the clock
        try:
            super()._join(key, size)
        finally:
            self.clock = clock


class GdsfIgnoresHits(PlantedPolicy, GdsfPolicy):
    """PLANTED BUG (GdsfIgnoresHits): uses are not counted; every entry keeps use count 1
    (size-only GreedyDual)."""

    __slots__ = ()

    def hit(self, key: str) -> None:
        """O(1)."""
        # the bug: self.freq[key] = min(self.freq[key] + 1, self.max_freq) is missing


#: Small gdsf parameters: priorities tie and use counts reach their cap within a few steps.
GDSF_SMALL: Mapping[str, int] = {"scale": 4, "max_freq": 2}


#: The gdsf policy's planted bugs (catalogue entries).
BUGS: tuple[PlantedBug, ...] = (
    policy_bug(
        "GdsfEvictHighest", GdsfEvictHighest,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 2), ("mark_ready", "b"),
         ("alloc", "c", 1)),
        params=GDSF_SMALL,
    ),
    policy_bug(
        "GdsfEvictFirstJoined", GdsfEvictFirstJoined,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 2), ("mark_ready", "b"),
         ("alloc", "c", 1)),
        "MCBugGdsfEvictFirstJoined", params=GDSF_SMALL,
    ),
    policy_bug(
        "GdsfHoldKeepsOrder", GdsfHoldKeepsOrder,
        ("EvictableSetInv",), (("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a")),
        "MCBugGdsfHoldKeepsOrder", params=GDSF_SMALL,
    ),
    policy_bug(
        "GdsfForgetsClock", GdsfForgetsClock,
        (ORDER,), (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 3)),
        "MCBugGdsfClockStuck", params=GDSF_SMALL,
    ),
    policy_bug(
        "GdsfJoinIgnoresClock", GdsfJoinIgnoresClock,
        (ORDER,),
        (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 3), ("mark_ready", "b")),
        params=GDSF_SMALL,
    ),
    policy_bug(
        "GdsfIgnoresHits", GdsfIgnoresHits,
        (), (("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a")),
        params=GDSF_SMALL,
        why_blind="no contract states the use count: the policy interface has no "
        "verification method for hit, and priorities are checked against the policy's "
        "own freq",
    ),
)  # fmt: skip


_N = MAX_ENTRIES
_CLOCK: Bound = (0, None)
_USE_COUNT: Bound = (1, GDSF_SMALL["max_freq"])
_BACK: Bound = (0, None)  # and at most the clock: see ``at_most``
_STALE: Bound = (0, 1)


def _build(policy: EvictionPolicy, entries: Entries, choices: Sequence[int]) -> None:
    """Use counts, then stale heap items, then the evictable entries' joins.
    O(entries log entries)."""
    assert isinstance(policy, GdsfPolicy)
    clock, freqs = choices[0], choices[1 : 1 + _N]
    backs, stales = choices[1 + _N : 1 + 2 * _N], choices[1 + 2 * _N :]
    for i, (key, _, pin) in enumerate(entries):
        if pin >= 0:
            policy.freq[key] = freqs[i]
    for i, (key, size, pin) in enumerate(entries):
        if pin >= 0 and stales[i]:  # joined, then pinned: its heap item stays queued
            # Joined earliest, at clock 0: a key's heap item is a lower bound of
            # its later joins (the clock never falls), as in every real run.
            policy.clock = 0
            policy.release(key, size)  # joins: priced from the clock
            policy.hold(key)
    for i, (key, size, pin) in enumerate(entries):
        if pin == 0:
            weight = policy.scale * freqs[i] // (size if size > 1 else 1)
            back = backs[i]
            if back > weight:
                back = weight  # joined further back would price it below the clock
            policy.clock = clock - back
            policy.release(key, size)
    policy.clock = clock


def _listed(policy: EvictionPolicy) -> list[str]:
    """The evictable keys in join order (the abstract ``order``). O(entries log entries)."""
    assert isinstance(policy, GdsfPolicy)
    return list(policy.checks().abstract()["order"])


def _preimage(
    policy: EvictionPolicy, order: Sequence[str], sizes: Sequence[int]
) -> tuple[list[int], dict[str, str]]:
    """The clock, use counts, each member's distance below the clock (from its
    priority), no stale items. O(entries)."""
    assert isinstance(policy, GdsfPolicy)
    freqs = pad([policy.freq.get(k, 1) for k in order], 1)
    backs = [0] * _N
    for i, key in enumerate(order):
        if key in policy.members:
            weight = policy.scale * policy.freq[key] // max(sizes[i], 1)
            backs[i] = policy.clock - (policy.members[key][0] - weight)
    return [policy.clock, *freqs, *backs, *([0] * _N)], {}


def gdsf_clock(step: CodeTransition) -> str | None:
    """GdsfClockInv: the clock is the priority of the last victim. Stated on the step
    (the code keeps no ghost of the last victim): an alloc that evicts raises the clock to
    the highest victim priority (victims leave lowest first); nothing else moves it.
    O(entries + the policy's abstract)."""
    was, now = step.before.checks.abstract(), step.after.checks.abstract()
    victims = evicted(step)
    want = max((was["prio"][v] for v in victims), default=was["clock"])
    if now["clock"] != want:
        whose = f"the last victim's priority {want}" if victims else f"unchanged at {want}"
        return f"the clock is {now['clock']}, not {whose}"
    return None


ADAPTER = PolicyAdapter(
    name=GdsfPolicy.name,
    factory=partial(GdsfPolicy, **GDSF_SMALL),
    choice_bounds=(_CLOCK, *[_USE_COUNT] * _N, *[_BACK] * _N, *[_STALE] * _N),
    build=_build,
    listed=_listed,
    preimage=_preimage,
    at_most=tuple((1 + _N + i, 0) for i in range(_N)),  # each "back" at most the clock
    transition_properties={"GdsfClockInv": gdsf_clock},
)
