"""sieve: SIEVE (Zhang et al., NSDI 2024), adapted to pinned entries.

One FIFO queue of the ready entries, oldest first, a visited bit per entry
and a hand that persists between evictions. A new entry joins at the newest
end, unvisited; a use sets its bit and never moves it. An eviction starts at
the hand (at first, or after the newest was evicted: the oldest) and walks
toward the newest, wrapping to the oldest: a visited entry has its bit
cleared and is passed over; the first unvisited one is evicted, and the hand
stays at its newer neighbour (none if it was the newest).

Pins (spec/POLICIES.md, "sieve"): a use never moves an entry, so a pinned
entry keeps its place too. The first pin marks it held: the hand passes it
without touching its bit, and it is not counted evictable; the last unpin
clears the mark where it stands (its bit is set: the pin was a use). So the
queue holds E plus the held ready entries, and ``__len__`` and
``__contains__`` report E only. The hand always points at a queued entry or
none: a pin leaves the entry in place, only ``evict`` removes a queued entry
(it moves the hand past the victim first), and ``discard`` only ever removes
not-ready entries, which are never queued.

Cost: ``ready``, ``hit``, ``hold``, ``release`` O(1); ``evict`` O(1 + bits
cleared + 2H) with H the held entries: each cleared bit was set by one use
(amortized O(1)), and one eviction walks at most two turns (after one turn
every evictable bit is clear), so it passes each held entry at most twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .base import EvictionPolicy, MoreVictims, PolicyChecks, SizeOf, VictimPlan


class SievePolicy(EvictionPolicy):
    """SIEVE over the ready entries, held ones kept in place (see the module docstring)."""

    name = "sieve"
    order_property = "EvictUnvisitedFromHandProp"

    __slots__ = ("hand", "newer", "newest", "older", "oldest", "pinned", "visited")

    def __init__(self, num_blocks: int = 0) -> None:
        #: Queued (ready) key -> its visited bit.  (TLA+: visited)
        self.visited: dict[str, bool] = {}
        #: The queued keys that are pinned (held): kept in place, not evictable.  (TLA+: pinned)
        self.pinned: set[str] = set()
        #: Queued key -> the next newer / older queued key (None at the ends).
        self.newer: dict[str, str | None] = {}
        self.older: dict[str, str | None] = {}
        self.oldest: str | None = None
        self.newest: str | None = None
        #: Where the next eviction starts; None: at the oldest.  (TLA+: hand, a position)
        self.hand: str | None = None

    # ------------------------------------------------------------ events

    def ready(self, key: str, size: int) -> None:
        """Join at the newest end, unvisited. O(1)."""
        self.visited[key] = False
        self.older[key], self.newer[key] = self.newest, None
        if self.newest is None:
            self.oldest = key
        else:
            self.newer[self.newest] = key
        self.newest = key

    def hit(self, key: str) -> None:
        """Set the visited bit; the entry stays where it is. O(1)."""
        self.visited[key] = True

    def hold(self, key: str) -> None:
        """The first pin: held in place (not evictable, the hand passes it). O(1)."""
        self.pinned.add(key)

    def release(self, key: str, size: int) -> None:
        """The last unpin: evictable again where it stands, its bit as the pin set it. O(1)."""
        self.pinned.discard(key)

    def evict(self) -> str:
        """The SIEVE walk from the hand; see the module docstring for its cost.

        Raises:
            KeyError: nothing is evictable (the cache never asks then).
        """
        if len(self.visited) == len(self.pinned):
            raise KeyError("evict(): no evictable entry")  # the walk would never end
        visited, pinned, newer = self.visited, self.pinned, self.newer
        key = self.hand if self.hand is not None else self.oldest
        while True:
            assert key is not None  # the queue is not empty
            if key not in pinned:
                if not visited[key]:
                    break
                visited[key] = False  # a second chance, spent
            step = newer[key]
            key = step if step is not None else self.oldest
        self.hand = newer[key]
        self._unlink(key)
        return key

    def _unlink(self, key: str) -> None:
        """Take ``key`` out of the queue. O(1)."""
        before, after = self.older.pop(key), self.newer.pop(key)
        del self.visited[key]
        if before is None:
            self.oldest = after
        else:
            self.newer[before] = after
        if after is None:
            self.newest = before
        else:
            self.older[after] = before

    def __len__(self) -> int:
        return len(self.visited) - len(self.pinned)

    def __contains__(self, key: object) -> bool:
        return key in self.visited and key not in self.pinned

    def evictable_keys(self) -> Iterable[str]:
        pinned = self.pinned
        return (key for key in self._walk() if key not in pinned)

    def _walk(self) -> Iterator[str]:
        """The queued keys, oldest first, stopping after as many steps as there are
        queued keys (a corrupt, cyclic link cannot make it loop). O(queued)."""
        key = self.oldest
        for _ in range(len(self.visited)):
            if key is None:
                return
            yield key
            key = self.newer.get(key)


class SieveChecks(PolicyChecks[SievePolicy]):
    """sieve's verification side: the victims by the hand rule, simulated on the links.

    Written from the rule's text, not from ``evict``, and every walk is bounded
    by the number of queued keys, so a corrupt (cyclic) structure cannot loop.
    """

    __slots__ = ()

    def plan_victims(
        self, free: int, n: int, size_of: SizeOf, more: MoreVictims | None = None
    ) -> VictimPlan:
        """The victims by the SIEVE rule, without changing anything.

        Simulates the hand on the links, with the bits it clears and the keys it
        takes kept aside: O(victims + entries passed over + victims x taken keys
        skipped). Expect: the hand afterwards and the keys whose bits the walk
        cleared (and kept).
        """
        p = self.policy
        cleared: set[str] = set()
        taken: list[str] = []
        gone: set[str] = set()
        freed, hand = 0, p.hand
        budget = 2 * len(p.visited) + 2  # two turns per victim, at most
        while free + freed < n or (more is not None and more(taken)):
            found = self._plan_one(hand, cleared, gone, budget)
            if found is None:  # no victim left: contiguity's extras, or EvictableCountInv broken
                break
            victim, hand = found
            taken.append(victim)
            gone.add(victim)
            freed += size_of(victim)
        return VictimPlan(tuple(taken), freed, (hand, frozenset(cleared - gone)))

    def _plan_one(
        self, hand: str | None, cleared: set[str], gone: set[str], budget: int
    ) -> tuple[str, str | None] | None:
        """One planned eviction from ``hand``: (victim, hand after), or None. O(budget)."""
        p = self.policy
        key = self._present(hand if hand is not None else p.oldest, gone)
        for _ in range(budget):
            if key is None:
                return None
            unheld = key not in p.pinned
            if unheld and not (p.visited.get(key, False) and key not in cleared):
                return key, self._present(p.newer.get(key), gone)
            if unheld:
                cleared.add(key)  # a second chance, spent
            nxt = self._present(p.newer.get(key), gone)
            key = nxt if nxt is not None else self._present(p.oldest, gone)
        return None

    def _present(self, key: str | None, gone: set[str]) -> str | None:
        """``key``, or the first newer key the plan has not taken. O(taken)."""
        newer = self.policy.newer
        for _ in range(len(gone) + 1):
            if key is None or key not in gone:
                return key
            key = newer.get(key)
        return key

    def plan_holds(self, plan: VictimPlan) -> bool:
        """The hand is where the plan left it, and every bit it cleared is clear. O(k)."""
        p = self.policy
        expect = plan.expect
        assert isinstance(expect, tuple)
        hand, cleared = expect
        return p.hand == hand and not any(p.visited.get(k, True) for k in cleared)

    def joined_ok(self, key: str, before: int) -> str | None:
        """After ``ready``: ``key`` is the newest and unvisited; after the last unpin:
        it is visited (the pin was a use), wherever it stood. E grew by one. O(1)."""
        p = self.policy
        if len(p) != before + 1:
            return f"the evictable set went from {before} to {len(p)} keys, not +1"
        if key not in p:
            return f"{key!r} joined, but the policy does not count it evictable"
        if not p.visited[key] and p.newest != key:
            return f"{key!r} joined unvisited, but the newest queued key is {p.newest!r}"
        return None

    def used_ok(self, key: str, before: SievePolicy) -> str | None:
        """A use never moves a key, nor the hand: ``key`` keeps its neighbours, the hand
        stays, and ``key`` is visited. O(1)."""
        p = self.policy
        now = (p.older.get(key), p.newer.get(key))
        was = (before.older.get(key), before.newer.get(key))
        if now != was:
            return f"a use moved {key!r}: its (older, newer) neighbours went from {was} to {now}"
        if p.hand != before.hand:
            return f"a use of {key!r} moved the hand from {before.hand!r} to {p.hand!r}"
        if not p.visited.get(key, False):
            return f"{key!r} was used, but its visited bit is not set"
        return None

    def abstract(self) -> dict[str, Any]:
        """queue (oldest first), visited, pinned, and hand as a 1-based position (0: none;
        -1: a hand off the queue). O(queued)."""
        p = self.policy
        queue = tuple(p._walk())
        position = {key: i for i, key in enumerate(queue, start=1)}
        return {
            "queue": queue,
            "visited": dict(p.visited),
            "pinned": {key: key in p.pinned for key in p.visited},
            "hand": 0 if p.hand is None else position.get(p.hand, -1),
        }

    def check(self, ready_sizes: Mapping[str, int], evictable: Mapping[str, int]) -> str | None:
        """EvictableSetInv (the queue holds the ready keys, linked both ways, the held
        ones are the pinned ones), PolicyTypeOK (bits, the hand). O(ready entries)."""
        p = self.policy
        problem = self._links_problem()
        if problem is not None:
            return f"EvictableSetInv: {problem}"
        if p.visited.keys() != ready_sizes.keys():
            queued, ready = sorted(p.visited), sorted(ready_sizes)
            return f"EvictableSetInv: the queue holds {queued}, the ready keys are {ready}"
        want = ready_sizes.keys() - evictable.keys()
        if p.pinned != want:
            return f"EvictableSetInv: held {sorted(p.pinned)}, pinned {sorted(want)}"
        if any(type(bit) is not bool for bit in p.visited.values()):
            return f"PolicyTypeOK: a visited bit is not a bool: {p.visited}"
        if p.hand is not None and p.hand not in p.visited:
            return f"PolicyTypeOK: the hand points at {p.hand!r}, which is not queued"
        return None

    def _links_problem(self) -> str | None:
        """What is wrong with the links, walking at most the queued keys. O(queued)."""
        p = self.policy
        count = len(p.visited)
        if p.newer.keys() != p.visited.keys() or p.older.keys() != p.visited.keys():
            return "the links and the bits are kept for different keys"
        seen: list[str] = []
        key, before = p.oldest, None
        while key is not None and len(seen) < count:
            if p.older.get(key) != before:
                return f"{key!r} links back to {p.older.get(key)!r}, not {before!r}"
            seen.append(key)
            key, before = p.newer.get(key), key
        if key is not None or len(set(seen)) != count or p.newest != before:
            return f"the walk from the oldest met {len(set(seen))} of {count} keys, not a line"
        return None

    def clone(self) -> SievePolicy:
        """An independent copy. O(queued)."""
        p = self.policy
        twin = SievePolicy()
        twin.visited, twin.pinned = dict(p.visited), set(p.pinned)
        twin.newer, twin.older = dict(p.newer), dict(p.older)
        twin.oldest, twin.newest, twin.hand = p.oldest, p.newest, p.hand
        return twin


SievePolicy.checks_class = SieveChecks
