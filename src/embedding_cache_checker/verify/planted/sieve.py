"""Planted bugs of sieve's order rule (the hand persists; a use sets a bit, never moves).

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its rule (``planted.bug.PlantedPolicy`` says why
no class adds a field); ``BUGS`` holds their catalogue entries, each naming
the TLA+ bug model of ``EmbeddingCacheSieveBugs`` planting the same mistake.
"""

from __future__ import annotations

from embedding_cache.policies.sieve import SievePolicy

from .bug import ORDER, Call, PlantedBug, PlantedPolicy, policy_bug


class SieveHandAtOldest(PlantedPolicy, SievePolicy):
    """PLANTED BUG (SieveHandAtOldest): the hand does not persist; every eviction starts
    again at the oldest entry (tla/: MCBugSieveHandAtOldest)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(1) amortized + 2 per held entry."""
        self.hand = None  # the bug: the hand kept from the last eviction is dropped
        return super().evict()


class SieveHitMoves(PlantedPolicy, SievePolicy):
    """PLANTED BUG (SieveHitMoves): a hit moves the entry to the newest end, as LRU would;
    SIEVE never moves an entry on a use (tla/: MCBugSieveHitMoves)."""

    __slots__ = ()

    def hit(self, key: str) -> None:
        """O(1)."""
        if self.hand == key:
            self.hand = self.newer[key]
        self._unlink(key)  # the bug: a use must leave the entry where it is
        self.ready(key, 0)  # back in at the newest end ...
        self.visited[key] = True  # ... visited


class SieveKeepsBits(PlantedPolicy, SievePolicy):
    """PLANTED BUG (SieveKeepsBits): the hand passes visited entries without clearing
    their bits, so a used entry is never demoted (tla/: MCBugSieveKeepsBits)."""

    __slots__ = ()

    def evict(self) -> str:
        """O(queued): at most one turn."""
        if len(self) == 0:
            raise KeyError("evict(): no evictable entry")
        key = self.hand if self.hand is not None else self.oldest
        first: str | None = None
        for _ in range(len(self.visited)):  # one turn
            assert key is not None
            if key not in self.pinned:
                if not self.visited[key]:
                    break
                first = first or key
                # the bug: self.visited[key] = False is missing
            step = self.newer[key]
            key = step if step is not None else self.oldest
        else:
            key = first  # every evictable entry visited: the first the hand met
        assert key is not None
        self.hand = self.newer[key]
        self._unlink(key)
        return key


class SieveHoldKeepsEvictable(PlantedPolicy, SievePolicy):
    """PLANTED BUG (SieveHoldKeepsEvictable): the first pin does not mark the entry held,
    so a pinned entry is still counted evictable (tla/: MCBugSieveHoldKeepsEvictable)."""

    __slots__ = ()

    def hold(self, key: str) -> None:
        """O(1)."""
        # the bug: self.pinned.add(key) is missing


#: Three ready one-block entries a, b, c (oldest first) in a pool of 3 blocks, a used.
USED_OLDEST: tuple[Call, ...] = (
    ("alloc", "a", 1), ("mark_ready", "a"),
    ("alloc", "b", 1), ("mark_ready", "b"),
    ("alloc", "c", 1), ("mark_ready", "c"),
    ("pin", "a"), ("unpin", "a"),
)  # fmt: skip


#: The sieve policy's planted bugs (catalogue entries).
BUGS: tuple[PlantedBug, ...] = (
    # alloc d evicts b (a's bit cleared) and leaves the hand at c; alloc e must take c.
    policy_bug(
        "SieveHandAtOldest", SieveHandAtOldest,
        (ORDER,), (*USED_OLDEST, ("alloc", "d", 1), ("mark_ready", "d"), ("alloc", "e", 1)),
        "MCBugSieveHandAtOldest",
    ),
    # pin b moves it behind c: the queue differs from the rule's a, b, c.
    policy_bug(
        "SieveHitMoves", SieveHitMoves,
        (), (("alloc", "a", 1), ("mark_ready", "a"), ("alloc", "b", 1), ("mark_ready", "b"),
             ("alloc", "c", 1), ("mark_ready", "c"), ("pin", "b")),
        "MCBugSieveHitMoves",
        why_blind="no contract states where a hit leaves a key: used_ok does, but it needs "
        "a copy of the policy from before the use, which no contract takes; the moved queue "
        "stays consistent, so plan_victims and joined_ok follow it",
    ),
    # alloc d passes the used a: its bit must be cleared (plan_holds).
    policy_bug(
        "SieveKeepsBits", SieveKeepsBits,
        (ORDER,), (*USED_OLDEST, ("alloc", "d", 1)),
        "MCBugSieveKeepsBits",
    ),
    policy_bug(
        "SieveHoldKeepsEvictable", SieveHoldKeepsEvictable,
        ("EvictableSetInv",), (("alloc", "a", 1), ("mark_ready", "a"), ("pin", "a")),
        "MCBugSieveHoldKeepsEvictable",
    ),
)  # fmt: skip
