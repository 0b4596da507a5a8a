"""Planted bugs of sieve's order rule (the hand persists; a use sets a bit, never moves).

NEVER used by the cache. Each class overrides one method of the real policy
with one plausible mistake in its rule (``planted.bug.PlantedPolicy`` says why
no class adds a field); ``BUGS`` holds their catalogue entries, each naming
the TLA+ bug model of ``EmbeddingCacheSieveBugs`` planting the same mistake.

The same file holds ``ADAPTER``, how CrossHair builds this policy's states
(``embedding_cache_checker.policies.adapter``): a policy's checker side is one
file. sieve's checker side: the queue, a visited bit per queued entry, and the hand, as
CrossHair choices.

Layout (``MAX_ENTRIES`` = n): per entry i its visited bit (0..1; ignored for a
pinned entry, which is always visited), then the hand's position (0: none,
else 1 .. n). The queue is the ready entries (pin count 0 or more) in key
order, oldest first: any queue is one up to key names, so no order needs
choosing. A pinned ready entry is queued and marked pinned where it stands
(SIEVE never moves an entry for a pin); a not-ready entry is not queued. A
hand past the queue's end means none, as 0 does: the bound is static and the
queue's length is not, and so every choice builds a well-formed state (the
hand always a queued entry or none).
"""

from __future__ import annotations

from collections.abc import Sequence

from embedding_cache.policies import EvictionPolicy
from embedding_cache.policies.sieve import SievePolicy

from ...policies.base import MAX_ENTRIES, Bound, Entries, PolicyAdapter, pad
from .bug import ORDER, PlantedBug, PlantedPolicy, WitnessCall, policy_bug


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
USED_OLDEST: tuple[WitnessCall, ...] = (
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


_N = MAX_ENTRIES
_VISITED: Bound = (0, 1)
_HAND: Bound = (0, MAX_ENTRIES)


def _build(policy: EvictionPolicy, entries: Entries, choices: Sequence[int]) -> None:
    """The ready entries join in key order, with their bits and pinned marks; then the
    hand. O(entries)."""
    assert isinstance(policy, SievePolicy)
    bits, hand = choices[:_N], choices[_N]
    queued: list[str] = []
    for i, (key, size, pin) in enumerate(entries):
        if pin < 0:
            continue  # not ready: never queued
        policy.ready(key, size)
        if pin > 0:
            # A pinned entry is visited: its first pin was a use, and the hand
            # passes a held entry without clearing its bit. (A pinned, unvisited
            # entry is unreachable: its release would break joined_ok.)
            policy.hold(key)
            policy.visited[key] = True
        else:
            # Bool, not the int choice: PolicyTypeOK wants a bool (a symbolic
            # int's truth value is a symbolic bool, so the solver branches here).
            policy.visited[key] = bool(bits[i])
        queued.append(key)
    # 0, or a position past the queue's end: none (start at the oldest).
    policy.hand = queued[hand - 1] if 0 < hand <= len(queued) else None


def _listed(policy: EvictionPolicy) -> list[str]:
    """Every queued key, pinned ones included, oldest first (the build's key order).
    O(queued)."""
    assert isinstance(policy, SievePolicy)
    return list(policy.checks().abstract()["queue"])


def _preimage(
    policy: EvictionPolicy, order: Sequence[str], sizes: Sequence[int]
) -> tuple[list[int], dict[str, str]]:
    """The bits of the keys in ``order`` (0 for a not-ready key), and the hand's
    position in the queue. No keys of its own. O(entries)."""
    assert isinstance(policy, SievePolicy)
    bits = pad([int(policy.visited.get(k, False)) for k in order], 0)
    hand = policy.checks().abstract()["hand"]
    return [*bits, hand], {}


ADAPTER = PolicyAdapter(
    name=SievePolicy.name,
    factory=SievePolicy,
    choice_bounds=(*[_VISITED] * _N, _HAND),
    build=_build,
    listed=_listed,
    preimage=_preimage,
)
