"""Planted bugs of gdsf's order rule (lowest priority first, the clock raised).

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its order rule (``planted.bug.PlantedPolicy``
says why no class adds a field); ``BUGS`` holds their catalogue entries.
"""

from __future__ import annotations

from collections.abc import Mapping

from embedding_cache.policies import GdsfPolicy

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
