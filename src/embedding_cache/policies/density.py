"""density: evict the lowest use density (uses per block) first; counts outlive eviction.

Every live key has a use count: ``admit`` sets it to its count remembered in
the history plus one (1 for a key never seen), capped at ``max_count``; each
use (``hit``) adds one, capped. An evictable entry's priority is its density
``scale * count // max(size, 1)`` (integers, as gdsf computes its priorities,
so that the TLA+ module computes the same numbers); ``evict`` takes the lowest
(prio, join sequence): the least used per block, ties to the one that joined
the evictable set first. There is no greedy-dual inflation clock (unlike
gdsf): measured, inflating turned the order back into recency, which vLLM's
GPU encoder cache in front of this one has already filtered out.

Counts outlive eviction: an evicted (or forgotten, never ready) key's count
goes into ``history``, a bounded FIFO of non-live keys (newest last; beyond
``history_size`` keys the oldest leaves), so a key that comes back resumes its
popularity. Aging: ``ticks`` counts admits and hits; when it reaches
``period`` every count halves (floor; a live one stays >= 1, a history key at
0 leaves), ``ticks`` restarts at 0, and every evictable entry is repriced
from its halved count (its join sequence kept).

The heap is lazy: an item (prio, seq, key) is valid while ``members[key]`` is
(prio, seq, size); ``hold`` only forgets the member, a ``release`` pushes a
fresh item (a new sequence number), ``evict`` drops invalid items it meets,
and the heap is rebuilt when stale items outnumber live ones.

Cost: ``hold``, ``forget`` O(1); ``ready``/``release`` O(log K) (a push; a
rebuild, O(K), every K stale items: O(1) amortized); ``evict`` O(log K)
amortized (each stale item popped was pushed once); ``admit``, ``hit`` O(1),
but the tick that reaches ``period`` halves every count and reprices E: O(K +
H), K the live keys and H the history's keys. That is amortized O(1) per
event when ``period`` >= K + H; the worst case of one call is O(K + H).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from typing import Any

from .base import MembersPolicy, MoreVictims, PolicyChecks, SizeOf, VictimPlan, take_in_order

#: Heap items: (priority, join sequence number, key).
_Item = tuple[int, int, str]


def _positive(name: str, value: object, low: int) -> int:
    """``value`` if it is an int (not a bool) >= ``low``.

    Raises:
        TypeError: it is not an int.
        ValueError: it is below ``low``.
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"density: {name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"density: {name} must be >= {low}, got {value}")
    return value


def default_history_size(num_blocks: int) -> int:
    """The history's default bound: ``max(8, num_blocks // 16)`` keys (measured best)."""
    return max(8, num_blocks // 16)


def default_period(num_blocks: int) -> int:
    """The default aging period: ``max(16, num_blocks // 4)`` admits + hits (measured best)."""
    return max(16, num_blocks // 4)


class DensityPolicy(MembersPolicy[tuple[int, int, int]]):
    """Lowest use density first, counts kept in a history, periodic halving (module docstring)."""

    name = "density"
    order_property = "EvictLowestDensityProp"

    __slots__ = (
        "_heap",
        "_seq",
        "count",
        "history",
        "history_size",
        "max_count",
        "period",
        "scale",
        "ticks",
    )

    def __init__(
        self,
        num_blocks: int = 0,
        *,
        scale: int = 1 << 32,
        max_count: int = 1 << 16,
        history_size: int | None = None,
        period: int | None = None,
    ) -> None:
        """Raises ValueError (or TypeError) naming a parameter out of its range (type)."""
        super().__init__(num_blocks)
        self.scale = _positive("scale", scale, 1)
        self.max_count = _positive("max_count", max_count, 1)
        if history_size is None:
            history_size = default_history_size(num_blocks)
        self.history_size = _positive("history_size", history_size, 0)
        if period is None:
            period = default_period(num_blocks)
        self.period = _positive("period", period, 1)
        #: Live key -> its use count, 1 .. max_count.  (TLA+: count)
        self.count: dict[str, int] = {}
        #: Non-live key -> its remembered count, oldest first.  (TLA+: history)
        self.history: dict[str, int] = {}
        #: Admits and hits since the last halving, 0 .. period - 1.  (TLA+: ticks)
        self.ticks = 0
        # members (the base's): evictable key -> (priority, join sequence number,
        # size).  (TLA+: order)
        self._heap: list[_Item] = []
        self._seq = 0

    # ------------------------------------------------------------ helpers

    def _join(self, key: str, size: int) -> None:
        if len(self._heap) > 2 * len(self.members) + 8:  # mostly stale: O(K) per K pushes
            self._rebuild()
        seq = self._seq = self._seq + 1
        prio = self.scale * self.count[key] // (size if size > 1 else 1)
        self.members[key] = (prio, seq, size)
        heapq.heappush(self._heap, (prio, seq, key))

    def _rebuild(self) -> None:
        """The heap from the members' truths alone. O(K)."""
        heap = [(prio, seq, key) for key, (prio, seq, _) in self.members.items()]
        heapq.heapify(heap)
        self._heap = heap

    def _remember(self, key: str, count: int) -> None:
        """``key`` (no longer live) leaves ``count`` in the history; the oldest key
        beyond ``history_size`` leaves. O(1)."""
        history = self.history
        history[key] = count
        if len(history) > self.history_size:
            del history[next(iter(history))]

    def _tick(self) -> None:
        """One admit or hit; the ``period``-th halves every count. O(1), or O(K + H)."""
        ticks = self.ticks + 1
        if ticks >= self.period:
            self.ticks = 0
            self._age()
        else:
            self.ticks = ticks

    def _age(self) -> None:
        """Halve every count (a live one stays >= 1, a history key at 0 leaves) and
        reprice every evictable entry, its join sequence kept. O(K + H)."""
        count = self.count
        for key, c in count.items():
            count[key] = c // 2 or 1
        self.history = {key: c // 2 for key, c in self.history.items() if c >= 2}
        scale = self.scale
        members = self.members
        for key, (_, seq, size) in members.items():
            members[key] = (scale * count[key] // (size if size > 1 else 1), seq, size)
        self._rebuild()

    # ------------------------------------------------------------ events

    def admit(self, key: str, size: int) -> None:
        """Count: the remembered one (0 if none) + 1, capped; leaves the history; a tick.
        O(1) (O(K + H) when the tick halves)."""
        c = self.history.pop(key, 0) + 1
        self.count[key] = c if c < self.max_count else self.max_count
        self._tick()

    def forget(self, key: str) -> None:
        """A discarded (never ready) entry's count goes into the history. O(1)."""
        self._remember(key, self.count.pop(key))

    def ready(self, key: str, size: int) -> None:
        """Join E priced by the current count. O(log K) (a push)."""
        self._join(key, size)

    def release(self, key: str, size: int) -> None:
        """Rejoin E with a fresh price and a new join sequence number. O(log K)."""
        self._join(key, size)

    def hit(self, key: str) -> None:
        """One more use, up to ``max_count``; a tick. O(1) (O(K + H) when it halves)."""
        c = self.count[key]
        if c < self.max_count:
            self.count[key] = c + 1
        self._tick()

    def evict(self) -> str:
        """Pop the lowest valid (prio, seq); its count goes into the history. O(log K)
        amortized."""
        heap, members = self._heap, self.members
        while True:
            prio, seq, key = heapq.heappop(heap)
            truth = members.get(key)
            if truth is not None and truth[0] == prio and truth[1] == seq:
                del members[key]
                self._remember(key, self.count.pop(key))
                return key


class DensityChecks(PolicyChecks[DensityPolicy]):
    """density's verification side: the victims by density from the counts, the history."""

    __slots__ = ()

    def _density(self, key: str) -> int:
        """The rule's priority of evictable ``key``, from its count and size. O(1)."""
        p = self.policy
        size = p.members[key][2]
        return p.scale * p.count[key] // (size if size > 1 else 1)

    def _ascending(self) -> Iterator[str]:
        """The evictable keys by (density from the counts, join sequence), without
        changing anything: a best-first walk of the heap array as a tree (children of i
        at 2i+1, 2i+2), skipping items that are not a member's truth. O(k log k)."""
        p = self.policy
        heap, members = p._heap, p.members
        frontier: list[tuple[_Item, int]] = [(heap[0], 0)] if heap else []
        while frontier:
            item, i = heapq.heappop(frontier)
            for child in (2 * i + 1, 2 * i + 2):
                if child < len(heap):
                    heapq.heappush(frontier, (heap[child], child))
            truth = members.get(item[2])
            if truth is not None and truth[0] == item[0] and truth[1] == item[1]:
                yield item[2]

    def plan_victims(
        self, free: int, n: int, size_of: SizeOf, more: MoreVictims | None = None
    ) -> VictimPlan:
        """Lowest density first (earliest joined on ties) until free + freed >= n.

        Expect: the victims (none of them live afterwards). O(k log k).
        """
        keys = self._ascending()
        victims, freed = take_in_order(keys, free, n, size_of, more)
        return VictimPlan(tuple(victims), freed, tuple(victims))

    def plan_holds(self, plan: VictimPlan) -> bool:
        """After the alloc: no victim is counted as live; the victims still remembered
        are the history's newest keys, in eviction order (halving or the bound may have
        dropped some); the history is within its bound; and the key admitted last (the
        newest key of ``count``) is not in the history (HistoryHoldsNoLiveKeyInv, for
        the one key the alloc made live). O(victims)."""
        p = self.policy
        victims = plan.expect
        assert isinstance(victims, tuple)
        if any(key in p.count for key in victims) or len(p.history) > p.history_size:
            return False
        kept = [key for key in victims if key in p.history]
        newest = reversed(p.history)
        if any(next(newest, None) != key for key in reversed(kept)):
            return False
        admitted = next(reversed(p.count), None)
        return admitted is None or admitted not in p.history

    def joined_ok(self, key: str, before: int) -> str | None:
        """``key`` joined once, the newest, priced by its count and size. O(1)."""
        p = self.policy
        if len(p.members) != before + 1:
            return f"the evictable set went from {before} to {len(p.members)} keys, not +1"
        truth = p.members.get(key)
        if truth is None or truth[1] != p._seq:
            return f"{key!r} is not the newest member of the evictable set"
        if key not in p.count or truth[0] != self._density(key):
            return f"{key!r} joined at priority {truth[0]}, not its use density"
        return None

    def abstract(self) -> dict[str, Any]:
        p = self.policy
        order = sorted(p.members, key=lambda k: p.members[k][1])
        return {
            "count": dict(p.count),
            "history": tuple(p.history.items()),  # (key, count) pairs, as TLA+ <<k, c>>
            "order": tuple(order),
            "ticks": p.ticks,
        }

    def check(self, ready_sizes: Mapping[str, int], evictable: Mapping[str, int]) -> str | None:
        """EvictableSetInv (members, prices, heap items, counts' domain), PolicyTypeOK,
        HistoryHoldsNoLiveKeyInv, HistoryBoundInv. O(K + H + heap)."""
        p = self.policy
        if p.members.keys() != evictable.keys():
            extra = sorted(p.members.keys() - evictable.keys())
            missing = sorted(evictable.keys() - p.members.keys())
            return f"EvictableSetInv: members have extra {extra}, lack {missing}"
        if not ready_sizes.keys() <= p.count.keys():
            lacking = sorted(ready_sizes.keys() - p.count.keys())
            return f"EvictableSetInv: ready keys {lacking} have no use count"
        valid = set(p._heap)
        for key, (prio, seq, size) in p.members.items():
            if size != evictable[key]:
                return f"EvictableSetInv: {key!r} is priced at {size} blocks, has {evictable[key]}"
            if prio != self._density(key):
                return f"EvictableSetInv: {key!r} has priority {prio}, not its use density"
            if (prio, seq, key) not in valid:
                return f"EvictableSetInv: {key!r} has no valid heap item"
        for key, c in p.count.items():
            if not 1 <= c <= p.max_count:
                return f"PolicyTypeOK: {key!r} has use count {c}, outside 1..{p.max_count}"
        for key, c in p.history.items():
            if not 1 <= c <= p.max_count:
                return f"PolicyTypeOK: {key!r} is remembered with {c}, outside 1..{p.max_count}"
        if not 0 <= p.ticks < p.period:
            return f"PolicyTypeOK: ticks is {p.ticks}, outside 0..{p.period - 1}"
        live = (p.history.keys() & p.count.keys()) | (p.history.keys() & ready_sizes.keys())
        if live:
            return f"HistoryHoldsNoLiveKeyInv: live keys {sorted(live)} are in the history"
        if len(p.history) > p.history_size:
            return f"HistoryBoundInv: {len(p.history)} keys remembered, at most {p.history_size}"
        return None

    def clone(self) -> DensityPolicy:
        p = self.policy
        twin = DensityPolicy(
            scale=p.scale, max_count=p.max_count, history_size=p.history_size, period=p.period
        )
        twin.count = dict(p.count)
        twin.history = dict(p.history)
        twin.ticks = p.ticks
        twin.members = dict(p.members)
        twin._heap = list(p._heap)
        twin._seq = p._seq
        return twin


DensityPolicy.checks_class = DensityChecks
