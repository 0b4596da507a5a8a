"""gdsf: GreedyDual-Size-Frequency, in integers. Evict the lowest frequency-per-block first.

Each ready entry has a use count ``freq`` (1 at ``mark_ready``, +1 per use,
capped at ``max_freq``). When an entry joins the evictable set its priority
is fixed at ``clock + scale * freq // max(size, 1)``; ``evict`` takes the
lowest priority (ties: the one that joined first) and raises ``clock`` to
the victim's priority, so entries that wait long enough age out however
often they were used (the "greedy dual" inflation). Small, often-used
entries stay; large, one-time entries go first, which is what raises hit
ratios for embeddings of 64 to thousands of blocks.

Integers, not floats, so that the TLA+ module computes the same priorities
(``scale`` and ``max_freq`` are that module's constants; the defaults keep
the integer division far finer than any real size difference).

The heap is lazy, which is what makes a pin/unpin cycle cheap. A key has at
most one heap item, and ``members`` holds its true (priority, sequence).
A key's true value only ever grows while it lives (the clock never falls,
use counts never fall, a later join has a later sequence number), so its
heap item is a lower bound: ``hold`` just forgets the truth, and a
``release`` of a key whose item is still queued pushes nothing. ``evict``
pops the minimum; an item below its key's truth is pushed back at the
truth, and an item of a key no longer evictable is dropped.

Cost: ``hit``, ``hold`` O(1); ``ready``/``release`` O(1) when the key still
has a heap item, else O(log K) (a push); ``evict`` O(log K) amortized (each
re-push pays for an earlier release). K, the heap's size, is at most the
number of live keys, never the pool size.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from typing import Any

from .base import MembersPolicy, MoreVictims, PolicyChecks, SizeOf, VictimPlan

#: Heap items: (priority, join sequence number, key).
_Item = tuple[int, int, str]


class GdsfPolicy(MembersPolicy[tuple[int, int]]):
    """GreedyDual-Size-Frequency over the evictable entries (see the module docstring)."""

    name = "gdsf"
    order_property = "EvictLowestPriorityProp"

    __slots__ = ("_heap", "_queued", "_seq", "clock", "freq", "max_freq", "scale")

    def __init__(
        self, num_blocks: int = 0, *, scale: int = 1 << 32, max_freq: int = 1 << 16
    ) -> None:
        if scale < 1 or max_freq < 1:
            raise ValueError(f"gdsf: scale and max_freq must be >= 1, got {scale}, {max_freq}")
        super().__init__(num_blocks)
        self.scale = scale
        self.max_freq = max_freq
        #: The inflation value L: the priority of the last victim.  (TLA+: clock)
        self.clock = 0
        #: Ready live key -> its use count, 1 .. max_freq.  (TLA+: freq)
        self.freq: dict[str, int] = {}
        # members (the base's): evictable key -> its true (priority, join sequence
        # number).  (TLA+: prio, order)
        #: Key -> its one heap item, a lower bound of its truth while it is evictable.
        self._queued: dict[str, _Item] = {}
        self._heap: list[_Item] = []
        self._seq = 0

    def _join(self, key: str, size: int) -> None:
        seq = self._seq = self._seq + 1
        prio = self.clock + self.scale * self.freq[key] // (size if size > 1 else 1)
        self.members[key] = (prio, seq)
        if key not in self._queued:  # else its queued item is a lower bound: evict fixes it
            item = (prio, seq, key)
            self._queued[key] = item
            heapq.heappush(self._heap, item)

    def ready(self, key: str, size: int) -> None:
        """First use count 1; join with a fresh priority. O(1) or O(log K) (a push)."""
        self.freq[key] = 1
        self._join(key, size)

    def release(self, key: str, size: int) -> None:
        """Rejoin with a priority from the current clock and use count. O(1) or O(log K)."""
        self._join(key, size)

    def hit(self, key: str) -> None:
        """One more use, up to ``max_freq``. O(1)."""
        count = self.freq[key]
        if count < self.max_freq:
            self.freq[key] = count + 1

    def evict(self) -> str:
        """Pop the lowest (priority, sequence); raise the clock to it. O(log K) amortized."""
        heap, members, queued = self._heap, self.members, self._queued
        while True:
            item = heap[0]
            key = item[2]
            truth = members.get(key)
            if truth is None:  # held (or gone) since it was queued: drop the item
                heapq.heappop(heap)
                del queued[key]
            elif truth[0] == item[0] and truth[1] == item[1]:
                heapq.heappop(heap)
                del queued[key], members[key], self.freq[key]
                self.clock = item[0]
                return key
            else:  # rejoined since: the item is a lower bound, requeue at the truth
                fresh = (truth[0], truth[1], key)
                queued[key] = fresh
                heapq.heapreplace(heap, fresh)


class GdsfChecks(PolicyChecks[GdsfPolicy]):
    """gdsf's verification side: the victims by priority, the clock, the joins' prices."""

    __slots__ = ()

    def _ascending(self) -> Iterator[_Item]:
        """The evictable keys' true items in ascending order, without changing anything:
        a best-first walk of the heap array as a tree (children of i at 2i+1, 2i+2),
        where an item below its key's truth stands for the truth (pushed back into
        the frontier, as ``evict`` would requeue it). O(k log k) for k items seen."""
        p = self.policy
        heap, members = p._heap, p.members
        frontier: list[tuple[_Item, int]] = [(heap[0], 0)] if heap else []
        while frontier:
            item, i = heapq.heappop(frontier)
            if i >= 0:
                for child in (2 * i + 1, 2 * i + 2):
                    if child < len(heap):
                        heapq.heappush(frontier, (heap[child], child))
            truth = members.get(item[2])
            if truth is None:
                continue
            if truth[0] == item[0] and truth[1] == item[1]:
                yield item
            else:
                heapq.heappush(frontier, ((truth[0], truth[1], item[2]), -1))

    def plan_victims(
        self, free: int, n: int, size_of: SizeOf, more: MoreVictims | None = None
    ) -> VictimPlan:
        """Lowest priority first (earliest joined on ties) until free + freed >= n.

        Expect: the clock ends at the last victim's priority. O(k log k).
        """
        victims: list[str] = []
        freed = 0
        clock = self.policy.clock
        items = self._ascending()
        while free + freed < n or (more is not None and more(victims)):
            item = next(items, None)
            if item is None:  # no victim left: contiguity's extras, or EvictableCountInv broken
                break
            victims.append(item[2])
            freed += size_of(item[2])
            clock = item[0]
        return VictimPlan(tuple(victims), freed, clock)

    def plan_holds(self, plan: VictimPlan) -> bool:
        """The clock is the last victim's priority (unchanged when none). O(1)."""
        return self.policy.clock == plan.expect

    def joined_ok(self, key: str, before: int) -> str | None:
        """``key`` joined once, priced from the current clock and its use count. O(1)."""
        p = self.policy
        if len(p.members) != before + 1:
            return f"the evictable set went from {before} to {len(p.members)} keys, not +1"
        truth = p.members.get(key)
        if truth is None or truth[1] != p._seq:
            return f"{key!r} is not the newest member of the evictable set"
        if truth[0] < p.clock:
            return f"{key!r} joined at priority {truth[0]}, below the clock {p.clock}"
        if key not in p._queued:
            return f"{key!r} joined but has no heap item"
        return None

    def abstract(self) -> dict[str, Any]:
        p = self.policy
        order = sorted(p.members, key=lambda k: p.members[k][1])
        return {
            "prio": {k: truth[0] for k, truth in p.members.items()},
            "freq": dict(p.freq),
            "order": tuple(order),
            "clock": p.clock,
        }

    def check(self, ready_sizes: Mapping[str, int], evictable: Mapping[str, int]) -> str | None:
        """EvictableSetInv (incl. the use counts' domain), PolicyTypeOK, ClockBelowPrioInv."""
        p = self.policy
        if p.members.keys() != evictable.keys():
            extra = sorted(p.members.keys() - evictable.keys())
            missing = sorted(evictable.keys() - p.members.keys())
            return f"EvictableSetInv: members have extra {extra}, lack {missing}"
        if p.freq.keys() != ready_sizes.keys():
            kept, ready = sorted(p.freq), sorted(ready_sizes)
            return f"EvictableSetInv: use counts kept for {kept}, ready keys {ready}"
        for key, count in p.freq.items():
            if not 1 <= count <= p.max_freq:
                return f"PolicyTypeOK: {key!r} has use count {count}, outside 1..{p.max_freq}"
        for key, (prio, seq) in p.members.items():
            if prio < p.clock:
                return f"ClockBelowPrioInv: {key!r} has priority {prio} < clock {p.clock}"
            item = p._queued.get(key)
            if item is None or (item[0], item[1]) > (prio, seq):
                return f"EvictableSetInv: {key!r}'s heap item {item} is not a lower bound"
        if len(p._heap) != len(p._queued) or any(
            p._queued.get(item[2]) is not item for item in p._heap
        ):
            return "EvictableSetInv: the heap and its index of queued items disagree"
        return None

    def clone(self) -> GdsfPolicy:
        p = self.policy
        twin = GdsfPolicy(scale=p.scale, max_freq=p.max_freq)
        twin.clock = p.clock
        twin.freq = dict(p.freq)
        twin.members = dict(p.members)
        twin._queued = dict(p._queued)
        twin._heap = list(p._heap)
        twin._seq = p._seq
        return twin


GdsfPolicy.checks_class = GdsfChecks
